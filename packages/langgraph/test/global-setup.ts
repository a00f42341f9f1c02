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

/**
 * The real servers the saver is checked on: PostgreSQL, Redis and MongoDB (a real
 * mongod with MONGODB_URL, else the wire-compatible test server), each the URL
 * from the environment or one started here on a free loopback port and stopped after.
 */
export default async function setup(project: TestProject) {
  const started: RunningServer[] = [];
  const start = async (env: string | undefined, launch: () => Promise<RunningServer>): Promise<string> => {
    if (env) return env;
    const server = await launch();
    started.push(server);
    return server.url;
  };
  const [databaseUrl, redisUrl, mongoUrl] = await Promise.all([
    start(process.env.DATABASE_URL, () => startPostgres()),
    start(process.env.REDIS_URL, () => startRedis()),
    start(process.env.MONGODB_URL, () => startJongodb(jongodbBinary(createRequire(import.meta.url)))),
  ]);
  project.provide("databaseUrl", databaseUrl);
  project.provide("redisUrl", redisUrl);
  project.provide("mongoUrl", mongoUrl);
  return async () => {
    await Promise.all(started.map((server) => server.stop()));
  };
}
