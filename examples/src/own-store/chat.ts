/**
 * The store from docs/write-your-own-store.md behind a chat that remembers: two
 * turns on a SQLite file, then the file opened again, as a restarted app would.
 *
 *   pnpm --filter @memoria/examples own-store
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunnableWithMessageHistory } from "@memoria/core";
import { OfflineChatModel } from "../offline-model.js";
import { createSqliteEngineStore } from "./sqlite-engine-store.js";

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), "memoria-own-store-"));
  const path = join(folder, "history.db");
  const config = { configurable: { sessionId: "ada" } };
  try {
    const store = createSqliteEngineStore(path);
    const chat = new RunnableWithMessageHistory({ runnable: new OfflineChatModel({}), store });
    log(`> ${(await chat.invoke("Hi! My name is Ada.", config)).content}`);
    await store.close();

    const reopened = createSqliteEngineStore(path);
    const again = new RunnableWithMessageHistory({ runnable: new OfflineChatModel({}), store: reopened });
    log(`> ${(await again.invoke("What is my name?", config)).content}`);
    log(`(session "ada" holds ${await reopened.count({ sessionId: "ada" })} messages)`);
    await reopened.close();
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
