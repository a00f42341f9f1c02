// LangGraph's own checkpointer conformance suite, run verbatim
// (@langchain/langgraph-checkpoint-validation: validate(), and the opt-in
// deltaChannelHistoryTests its own savers run), against MemoriaSaver
// on each server store: a real PostgreSQL, a real Redis, and MongoDB.
import { type CheckpointSaverTestInitializer, deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { inject } from "vitest";
import { MemoriaSaver } from "../src/index.js";
import { type FreshStore, type ServerKind, serverStore } from "./stores.js";

const urls: Record<ServerKind, string> = { postgres: inject("databaseUrl"), redis: inject("redisUrl"), mongodb: inject("mongoUrl") };

for (const kind of ["postgres", "redis", "mongodb"] as ServerKind[]) {
  const open = new Map<MemoriaSaver, FreshStore>();
  const initializer: CheckpointSaverTestInitializer<MemoriaSaver> = {
    checkpointerName: `MemoriaSaver on ${kind}`,
    async createCheckpointer() {
      const fresh = await serverStore(kind, urls[kind]);
      const saver = new MemoriaSaver({ store: fresh.store });
      open.set(saver, fresh);
      return saver;
    },
    async destroyCheckpointer(saver) {
      await open.get(saver)?.dispose();
      open.delete(saver);
    },
  };
  validate(initializer);
  deltaChannelHistoryTests(initializer);
}
