/**
 * How many SQL statements a turn runs on SQLite, with buffer memory and with fact and
 * recall memory on top (scope `userId`, hashing embeddings, a scripted extraction
 * model), as W8 sets them up: 20 earlier conversations of the user, processed. Counts
 * the statements better-sqlite3 runs during one call, and those the background work
 * after it runs. Deterministic: a count, not a time; asserts nothing.
 *
 *   pnpm --filter @memoria/bench turn-statements
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type MemoryStrategy, RunnableWithMessageHistory } from "@memoria/core";
import { bufferMemory, combineMemory } from "@memoria/memory";
import { type ExtractionModel, HashingEmbeddings, factMemory, recallMemory } from "@memoria/memory/long-term";
import { createSqliteStore } from "@memoria/sql";
import { watchStatements } from "@memoria/testkit/sqlite-statements";
import { answerMemoryPrompt } from "@memoria/testkit/scripted-model";
import Database from "better-sqlite3";

const dir = mkdtempSync(join(tmpdir(), "memoria-turn-statements-"));
let counted = 0;
const db = watchStatements(new Database(join(dir, "history.db")), () => counted++);
db.pragma("journal_mode = WAL");

try {
  const store = createSqliteStore({ database: db });
  const model = RunnableLambda.from(async (prompt: string) => answerMemoryPrompt(prompt) ?? "NONE") as unknown as ExtractionModel;
  const variants: Record<string, MemoryStrategy & { idle?: () => Promise<void> }> = {
    "buffer memory": bufferMemory(),
    "buffer + facts + recall": combineMemory(
      factMemory({ model, scope: ["userId"] }),
      recallMemory({ embeddings: new HashingEmbeddings(), scope: ["userId"] }),
      bufferMemory(),
    ),
  };
  for (const [i, [name, memory]] of Object.entries(variants).entries()) {
    const chain = new RunnableWithMessageHistory({
      runnable: RunnableLambda.from(async () => new AIMessage("Noted.")),
      store,
      sessionFields: ["userId", "conversationId"],
      memory,
    });
    const say = async (text: string, conversationId: string) => {
      await chain.invoke([new HumanMessage(text)], { configurable: { userId: `user-${i}`, conversationId } });
      await memory.idle?.();
    };
    for (let n = 0; n < 20; n++)
      for (const text of [`Bench${n} lives in City${n}.`, `Note ${n}: the meeting moved to room ${n}.`]) await say(text, `past-${n}`);
    for (let round = 0; round < 3; round++) await say(`Where is meeting ${round} now?`, "now");
    counted = 0;
    await chain.invoke([new HumanMessage("Where is meeting 7 now?")], { configurable: { userId: `user-${i}`, conversationId: "now" } });
    const during = counted;
    counted = 0;
    await memory.idle?.();
    console.log(`${name}: ${during} SQL statements during the call, ${counted} after it (background work)`);
  }
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
