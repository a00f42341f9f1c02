import { createRequire } from "node:module";
import { type RunningCluster, type ServerUrls, serversFromEnv, startRedisCluster } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext extends ServerUrls {
    clusterNodes: { host: string; port: number }[];
  }
}

/**
 * Real PostgreSQL, Redis and MongoDB (the *_URL variables' servers, or ones started
 * here), and a real 3-master Redis Cluster (REDIS_CLUSTER_NODES="host:port,…", or one
 * started here); what was started here is stopped after.
 */
export default async function setup(project: TestProject) {
  const { urls, stop } = await serversFromEnv(createRequire(import.meta.url));
  project.provide("databaseUrl", urls.databaseUrl);
  project.provide("redisUrl", urls.redisUrl);
  project.provide("mongoUrl", urls.mongoUrl);
  const given = process.env.REDIS_CLUSTER_NODES;
  const cluster: RunningCluster | undefined = given ? undefined : await startRedisCluster(3);
  const nodes = given
    ? given.split(",").map((node) => ({ host: node.split(":")[0] as string, port: Number(node.split(":")[1]) }))
    : (cluster as RunningCluster).nodes;
  project.provide("clusterNodes", nodes);
  return async () => {
    await Promise.all([stop(), cluster?.stop()]);
  };
}
