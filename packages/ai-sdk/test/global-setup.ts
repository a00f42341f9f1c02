import { type RunningServer, startPostgres, startRedis } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

/** A real PostgreSQL and Redis: DATABASE_URL's and REDIS_URL's servers, or ones started here and stopped after. */
export default async function setup(project: TestProject) {
  const started: RunningServer[] = [];
  const url = async (variable: string, start: () => Promise<RunningServer>) => {
    const given = process.env[variable];
    if (given) return given;
    const server = await start();
    started.push(server);
    return server.url;
  };
  project.provide("databaseUrl", await url("DATABASE_URL", () => startPostgres()));
  project.provide("redisUrl", await url("REDIS_URL", () => startRedis()));
  return async () => {
    await Promise.all(started.map((server) => server.stop()));
  };
}
