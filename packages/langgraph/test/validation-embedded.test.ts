// LangGraph's own checkpointer conformance suite, run verbatim
// (@langchain/langgraph-checkpoint-validation: validate(), and the opt-in
// deltaChannelHistoryTests its own savers run), against MemoriaSaver on each
// embedded store. Server stores run it in validation-servers.test.ts.
import { type EmbeddedKind, conformance, freshStore } from "./stores.js";

for (const kind of ["memory", "sqlite", "file", "sqlite, encrypted", "sqlite, guarded, redacted and encrypted"] as EmbeddedKind[])
  conformance(kind, () => freshStore(kind));
