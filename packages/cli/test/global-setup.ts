import { createRequire } from "node:module";
import { type RunningServer, jongodbBinary, startJongodb, startPostgres, startRedis } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    mongoUrl: string;
  }
}

/** Real servers for the command to open: the *_URL variables' servers, or ones started here and stopped after. */
export default async function setup(project: TestProject) {
  const started: RunningServer[] = [];
  const server = async (variable: string, start: () => Promise<RunningServer>) => {
    const url = process.env[variable];
    if (url) return url;
    const running = await start();
    started.push(running);
    return running.url;
  };
  project.provide("databaseUrl", await server("DATABASE_URL", () => startPostgres()));
  project.provide("redisUrl", await server("REDIS_URL", () => startRedis()));
  project.provide("mongoUrl", await server("MONGODB_URL", () => startJongodb(jongodbBinary(createRequire(import.meta.url)))));
  return async () => {
    await Promise.all(started.map((s) => s.stop()));
  };
}
