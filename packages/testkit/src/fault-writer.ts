/**
 * A writer in a process of its own, for the fault scenarios that kill or freeze
 * a writer rather than a server:
 *
 *   node --import tsx fault-writer.js <store module> <target> <sessionId> forever
 *     runs turns `c-0`, `c-1`, … until killed; prints "turn <i>" after each;
 *   node --import tsx fault-writer.js <store module> <target> <sessionId> one-long-turn <ttlMs>
 *     runs one turn with a lock lease of <ttlMs>; prints "inside" once its model
 *     runs, waits for a line on stdin, then answers; prints the outcome as JSON.
 *
 * The store module exports `createStore(target)`.
 */
import { createInterface } from "node:readline";
import { RunnableLambda } from "@langchain/core/runnables";
import type { BaseMessage } from "@langchain/core/messages";
import { type HistoryStore, MemoriaError, RunnableWithMessageHistory } from "@memoria/core";

async function main(): Promise<void> {
  const [storeModule, target, sessionId, mode, ttl] = process.argv.slice(2) as [string, string, string, string, string | undefined];
  const { createStore } = (await import(storeModule)) as { createStore(target: string): HistoryStore | Promise<HistoryStore> };
  const store = await createStore(target);
  const say = (line: string) => process.stdout.write(`${line}\n`);

  if (mode === "forever") {
    const chain = new RunnableWithMessageHistory({
      store,
      lockOptions: { ttlMs: 2_000 },
      runnable: RunnableLambda.from(async (messages: BaseMessage[]) => `${messages[messages.length - 1]?.content} saw ${messages.length} #1`),
    });
    for (let i = 0; ; i++) {
      await chain.invoke(`c-${i}`, { configurable: { sessionId, turnId: `c-${i}` } });
      say(`turn ${i}`);
    }
  } else if (mode === "one-long-turn") {
    const release = new Promise<void>((resolve) => createInterface({ input: process.stdin }).once("line", () => resolve()));
    const chain = new RunnableWithMessageHistory({
      store,
      lockOptions: { ttlMs: Number(ttl) },
      runnable: RunnableLambda.from(async (messages: BaseMessage[]) => {
        say("inside");
        await release;
        return `late saw ${messages.length}`;
      }),
    });
    const result = await chain.invoke("late", { configurable: { sessionId } }).then(
      () => ({ resolved: true }),
      (error: unknown) => ({
        resolved: false,
        code: MemoriaError.isInstance(error) ? error.code : String(error),
        cause: (error as { cause?: { code?: string } }).cause?.code,
        outcome: (error as { outcome?: string }).outcome,
      }),
    );
    say(JSON.stringify(result));
    await store.close();
    process.exit(0);
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
