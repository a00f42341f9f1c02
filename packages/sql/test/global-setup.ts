import { type RunningServer, startPostgres } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/** A real PostgreSQL for the tests: DATABASE_URL's, or one started here and stopped after. */
export default async function setup(project: TestProject) {
  let server: RunningServer | undefined;
  if (process.env.DATABASE_URL) {
    project.provide("databaseUrl", process.env.DATABASE_URL);
  } else {
    server = await startPostgres();
    project.provide("databaseUrl", server.url);
  }
  return async () => {
    await server?.stop();
  };
}
