// LangGraph's own checkpointer conformance suite, run verbatim
// (@langchain/langgraph-checkpoint-validation: validate(), and the opt-in
// deltaChannelHistoryTests its own savers run), against MemoriaSaver on each server
// store: a real PostgreSQL, a real Redis and Redis Cluster, and MongoDB.
import { inject } from "vitest";
import { type ServerKind, conformance, serverStore } from "./stores.js";

const urls: Record<ServerKind, string> = { postgres: inject("databaseUrl"), redis: inject("redisUrl"), "redis cluster": "", mongodb: inject("mongoUrl") };

for (const kind of ["postgres", "redis", "redis cluster", "mongodb"] as ServerKind[])
  conformance(kind, () => serverStore(kind, urls[kind], inject("clusterNodes")));
