/**
 * What `MemoriaStore.search({ query })` costs a scope of 1,000 and 10,000 items on the
 * embedded default (SQLite, one file): the first search of the scope (it reads and
 * opens every item), a search of the scope held since (one small state read, then a
 * scan of the held unit vectors), and the same search on LangGraph's `InMemoryStore`
 * (everything in memory) as a reference. Offline `HashingEmbeddings` (256 numbers)
 * for both; medians of 30 searches; asserts nothing.
 *
 *   pnpm --filter @memoria/bench store-search
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryStore } from "@langchain/langgraph-checkpoint";
import { MemoriaStore } from "@memoria/langgraph";
import { HashingEmbeddings } from "@memoria/memory/long-term";
import { createSqliteStore } from "@memoria/sql";
import { median } from "./measure.js";

const embeddings = new HashingEmbeddings();
const namespace = ["memories", "ada"];
const text = (i: number) => `memory number ${i}: Ada mentioned topic ${i % 37} while talking about thing ${i % 101}`;
const query = "what did Ada say about topic 5 and thing 7";

async function timed(search: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await search();
  return performance.now() - start;
}

const dir = mkdtempSync(join(tmpdir(), "memoria-store-search-"));
try {
  for (const count of [1_000, 10_000]) {
    const store = createSqliteStore({ path: join(dir, `items-${count}.db`) });
    const ours = new MemoriaStore({ store, index: { embeddings, fields: ["text"] } });
    const theirs = new InMemoryStore({ index: { embeddings, dims: 256, fields: ["text"] } });
    for (let i = 0; i < count; i++) {
      await ours.put(namespace, `m${i}`, { text: text(i) });
      await theirs.put(namespace, `m${i}`, { text: text(i) });
    }
    const first = await timed(() => new MemoriaStore({ store, index: { embeddings, fields: ["text"] } }).search(namespace, { query }));
    const held: number[] = [];
    const reference: number[] = [];
    for (let i = 0; i < 30; i++) {
      held.push(await timed(() => ours.search(namespace, { query })));
      reference.push(await timed(() => theirs.search(namespace, { query })));
    }
    const ms = (value: number) => `${value.toFixed(2)} ms`;
    console.log(`${count.toLocaleString("en")} items: first search ${ms(first)}, held ${ms(median(held))}, InMemoryStore ${ms(median(reference))}`);
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
