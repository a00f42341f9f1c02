/**
 * The file store's whole reads of sessions of chat-length messages (about 280 bytes
 * a line), against the bare read of the same messages (the file read whole, each
 * line parsed, LangChain's `mapStoredMessagesToChatMessages`), and the heap the
 * store's tail cache holds for each session (what closing the store frees). One
 * process, medians of 50 reads after 10 untimed; asserts nothing.
 *
 *   pnpm --filter @memoria/bench file-cache           # 1,000, 10,000 and 20,000 messages
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage, mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages } from "@langchain/core/messages";
import { createFileStore } from "@memoria/file";
import { collectGarbage, formatMs, median, timed } from "./measure.js";

const SIZES = (process.argv[2] ?? "1000,10000,20000").split(",").map(Number);
const text = (i: number) => `message ${i}: ${"a chat-length sentence about plans, places and people, ".repeat(3)}`;
const messages = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ((from + i) % 2 === 0 ? new HumanMessage(text(from + i)) : new AIMessage(text(from + i))));

const dir = mkdtempSync(join(tmpdir(), "memoria-bench-file-cache-"));
try {
  console.log(
    "| messages | their JSON lines | memoria whole read | bare read | memoria ÷ bare | heap the cache holds |\n| --- | --- | --- | --- | --- | --- |",
  );
  for (const size of SIZES) {
    const key = { sessionId: `s${size}` };
    const seeder = createFileStore({ directory: join(dir, "memoria"), fsync: "none" });
    for (let from = 0; from < size; from += 2) await seeder.append(key, messages(2, from));
    await seeder.close(); // its cache must not be counted
    const store = createFileStore({ directory: join(dir, "memoria") });
    const bare = join(dir, `bare-${size}.jsonl`);
    writeFileSync(
      bare,
      `${mapChatMessagesToStoredMessages(messages(size))
        .map((m) => JSON.stringify(m))
        .join("\n")}\n`,
    );
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < 60; round++) {
      const o = await timed(() => store.read(key));
      const t = await timed(async () =>
        mapStoredMessagesToChatMessages(
          (await readFile(bare, "utf8"))
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line)),
        ),
      );
      if (round < 10) continue;
      ours.push(o);
      theirs.push(t);
    }
    const [o, t] = [median(ours), median(theirs)];
    // What the cache holds: the heap that closing the store frees.
    collectGarbage();
    const open = process.memoryUsage().heapUsed;
    await store.close();
    collectGarbage();
    const held = open - process.memoryUsage().heapUsed;
    console.log(
      `| ${size.toLocaleString("en")} | ${(statSync(bare).size / 2 ** 20).toFixed(1)} MiB | ${formatMs(o)} | ${formatMs(t)} | ${(o / t).toFixed(2)} | ${(held / 2 ** 20).toFixed(1)} MiB |`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
