import { type RunningCluster, type RunningRedis, startRedis, startRedisCluster } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    clusterNodes: { host: string; port: number }[];
  }
}

/**
 * A real redis-server (REDIS_URL's, or one started here) and a real 3-master
 * Cluster (REDIS_CLUSTER_NODES="host:port,…", or one started here).
 */
export default async function setup(project: TestProject) {
  let server: RunningRedis | undefined;
  let cluster: RunningCluster | undefined;
  if (process.env.REDIS_URL) project.provide("redisUrl", process.env.REDIS_URL);
  else {
    server = await startRedis();
    project.provide("redisUrl", server.url);
  }
  if (process.env.REDIS_CLUSTER_NODES) {
    project.provide(
      "clusterNodes",
      process.env.REDIS_CLUSTER_NODES.split(",").map((node) => {
        const [host, port] = node.split(":");
        return { host: host as string, port: Number(port) };
      }),
    );
  } else {
    cluster = await startRedisCluster(3);
    project.provide("clusterNodes", cluster.nodes);
  }
  return async () => {
    await Promise.all([server?.stop(), cluster?.stop()]);
  };
}
