import { type RunningCluster, type RunningRedis, type RunningServer, startRedis, startRedisCluster, startRedisSentinel } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    clusterNodes: { host: string; port: number }[];
    /** A Sentinel watching the standalone server as "mymaster"; undefined with REDIS_URL. */
    sentinel: { host: string; port: number; name: string } | undefined;
  }
}

/**
 * A real redis-server (REDIS_URL's, or one started here) and a real 3-master
 * Cluster (REDIS_CLUSTER_NODES="host:port,…", or one started here).
 */
export default async function setup(project: TestProject) {
  let server: RunningRedis | undefined;
  let cluster: RunningCluster | undefined;
  let sentinel: RunningServer | undefined;
  if (process.env.REDIS_URL) {
    project.provide("redisUrl", process.env.REDIS_URL);
    project.provide("sentinel", undefined);
  } else {
    server = await startRedis();
    project.provide("redisUrl", server.url);
    const started = await startRedisSentinel(server.port);
    sentinel = started;
    project.provide("sentinel", { host: "127.0.0.1", port: started.port, name: started.name });
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
    await sentinel?.stop();
    await Promise.all([server?.stop(), cluster?.stop()]);
  };
}
