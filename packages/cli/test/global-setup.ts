import { createRequire } from "node:module";
import { type ServerUrls, serversFromEnv } from "@memoria/testkit/servers";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext extends ServerUrls {}
}

/** Real PostgreSQL, Redis and MongoDB: the *_URL variables' servers, or ones started here and stopped after. */
export default async function setup(project: TestProject) {
  const { urls, stop } = await serversFromEnv(createRequire(import.meta.url));
  project.provide("databaseUrl", urls.databaseUrl);
  project.provide("redisUrl", urls.redisUrl);
  project.provide("mongoUrl", urls.mongoUrl);
  return stop;
}
