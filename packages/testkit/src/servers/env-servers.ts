import { jongodbBinary, startJongodb } from "./jongodb.js";
import { startPostgres } from "./postgres.js";
import type { RunningServer } from "./postgres.js";
import { startRedis } from "./redis.js";

/** The URLs of the three servers most packages' tests talk to. */
export interface ServerUrls {
  databaseUrl: string;
  redisUrl: string;
  mongoUrl: string;
}

/**
 * PostgreSQL, Redis and MongoDB for a test run: the servers DATABASE_URL, REDIS_URL
 * and MONGODB_URL name, or ones started here on free loopback ports (MongoDB: the
 * compatible test server, whose binary `require` resolves from the caller's package).
 * `stop` stops only what was started here.
 */
export async function serversFromEnv(require: NodeJS.Require): Promise<{ urls: ServerUrls; stop(): Promise<void> }> {
  const started: RunningServer[] = [];
  const url = async (variable: string, start: () => Promise<RunningServer>) => {
    const given = process.env[variable];
    if (given) return given;
    const running = await start();
    started.push(running);
    return running.url;
  };
  const urls: ServerUrls = {
    databaseUrl: await url("DATABASE_URL", () => startPostgres()),
    redisUrl: await url("REDIS_URL", () => startRedis()),
    mongoUrl: await url("MONGODB_URL", () => startJongodb(jongodbBinary(require))),
  };
  return {
    urls,
    stop: async () => {
      await Promise.all(started.map((server) => server.stop()));
    },
  };
}
