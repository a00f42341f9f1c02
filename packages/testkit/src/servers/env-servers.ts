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

/** Servers for a test run, each the one its variable names or one started here; `stop` stops only those started here. */
export interface EnvServers {
  /** The URL in `variable`, or the URL of a server `start` starts. */
  url(variable: string, start: () => Promise<RunningServer>): Promise<string>;
  stop(): Promise<void>;
}

export function envServers(): EnvServers {
  const started: RunningServer[] = [];
  return {
    async url(variable, start) {
      const given = process.env[variable];
      if (given) return given;
      const running = await start();
      started.push(running);
      return running.url;
    },
    async stop() {
      await Promise.all(started.map((server) => server.stop()));
    },
  };
}

/**
 * PostgreSQL, Redis and MongoDB for a test run: the servers DATABASE_URL, REDIS_URL
 * and MONGODB_URL name, or ones started here on free loopback ports (MongoDB: the
 * compatible test server, whose binary `require` resolves from the caller's package).
 * `stop` stops only what was started here.
 */
export async function serversFromEnv(require: NodeJS.Require): Promise<{ urls: ServerUrls; stop(): Promise<void> }> {
  const servers = envServers();
  const urls: ServerUrls = {
    databaseUrl: await servers.url("DATABASE_URL", () => startPostgres()),
    redisUrl: await servers.url("REDIS_URL", () => startRedis()),
    mongoUrl: await servers.url("MONGODB_URL", () => startJongodb(jongodbBinary(require))),
  };
  return { urls, stop: () => servers.stop() };
}
