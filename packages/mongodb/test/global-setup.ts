import { createRequire } from "node:module";
import { jongodbBinary, startJongodb } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    mongoUrl: string;
    /** "mongod" when MONGODB_URL points at a real server; "jongodb" for the compatible test server. */
    mongoServer: string;
  }
}

/**
 * A real mongod when MONGODB_URL is set; otherwise the MongoDB-wire-compatible
 * server shipped in @jongodb/memory-server-bin-linux-x64-gnu.
 */
export default async function setup(project: TestProject) {
  if (process.env.MONGODB_URL) {
    project.provide("mongoUrl", process.env.MONGODB_URL);
    project.provide("mongoServer", "mongod");
    return;
  }
  const server = await startJongodb(jongodbBinary(createRequire(import.meta.url)));
  project.provide("mongoUrl", server.url);
  project.provide("mongoServer", "jongodb");
  return () => server.stop();
}
