import { envServers, startMariadb, startPostgres } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    mysqlUrl: string;
  }
}

/** A real PostgreSQL and a real MariaDB for the tests: DATABASE_URL's and MYSQL_URL's, or ones started here and stopped after. */
export default async function setup(project: TestProject) {
  const servers = envServers();
  try {
    project.provide("databaseUrl", await servers.url("DATABASE_URL", () => startPostgres()));
    project.provide("mysqlUrl", await servers.url("MYSQL_URL", () => startMariadb()));
  } catch (error) {
    await servers.stop(); // one that started must not outlive a run that could not begin
    throw error;
  }
  return () => servers.stop();
}
