// LangGraph's own checkpointer conformance suite, run verbatim
// (@langchain/langgraph-checkpoint-validation: validate(), and the opt-in
// deltaChannelHistoryTests its own savers run), against MemoriaSaver
// on each embedded store. Server stores run it in validation-servers.test.ts.
import { type CheckpointSaverTestInitializer, deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { MemoriaSaver } from "../src/index.js";
import { type EmbeddedKind, type FreshStore, freshStore } from "./stores.js";

for (const kind of ["memory", "sqlite", "file", "sqlite, encrypted"] as EmbeddedKind[]) {
  const open = new Map<MemoriaSaver, FreshStore>();
  const initializer: CheckpointSaverTestInitializer<MemoriaSaver> = {
    checkpointerName: `MemoriaSaver on ${kind}`,
    createCheckpointer() {
      const fresh = freshStore(kind);
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
