import { envServers, startPostgres, startRedis } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

/** A real PostgreSQL and Redis: DATABASE_URL's and REDIS_URL's servers, or ones started here and stopped after. */
export default async function setup(project: TestProject) {
  const servers = envServers();
  project.provide("databaseUrl", await servers.url("DATABASE_URL", () => startPostgres()));
  project.provide("redisUrl", await servers.url("REDIS_URL", () => startRedis()));
  return () => servers.stop();
}
