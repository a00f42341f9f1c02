import { createRequire } from "node:module";
import { type ServerUrls, envServers, serversFromEnv, startMariadb } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext extends ServerUrls {
    mysqlUrl: string;
  }
}

/** Real PostgreSQL, Redis, MongoDB and MariaDB: the *_URL variables' servers, or ones started here and stopped after. */
export default async function setup(project: TestProject) {
  const { urls, stop } = await serversFromEnv(createRequire(import.meta.url));
  const mysql = envServers();
  try {
    project.provide("mysqlUrl", await mysql.url("MYSQL_URL", () => startMariadb()));
  } catch (error) {
    await stop();
    throw error;
  }
  project.provide("databaseUrl", urls.databaseUrl);
  project.provide("redisUrl", urls.redisUrl);
  project.provide("mongoUrl", urls.mongoUrl);
  return async () => {
    await Promise.all([stop(), mysql.stop()]);
  };
}
