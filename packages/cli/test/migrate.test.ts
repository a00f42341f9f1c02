import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { SessionKey } from "@memoria/core";
import { BudgetSpentError, memoryBudget } from "@memoria/memory";
import { HashingEmbeddings, recallMemory } from "@memoria/memory/long-term";
import { everyKindOfMessage } from "@memoria/testkit";
import { afterAll, describe, expect, inject, it } from "vitest";
import { compareSnapshots, readSnapshot } from "../src/snapshot.js";
import { openStore } from "../src/store-url.js";
import { memoria } from "./run-cli.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-migrate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SESSIONS = 1_000;
const keyOf = (i: number): SessionKey => ({ userId: `u${i % 40}`, conversationId: `c${i}` });

/** When session `i` was made: a minute apart, in 2024, so that a copy made now that lost them would show. */
const madeAt = (i: number) => Date.UTC(2024, 2, 1) + i * 60_000;

/** 1,000 sessions: every tenth with one message of every kind and every field, all with state and dated, most with a title and metadata. */
async function seed(url: string): Promise<void> {
  const { store } = await openStore(url, { create: true });
  try {
    for (let i = 0; i < SESSIONS; i++) {
      const key = keyOf(i);
      const messages = i % 10 === 0 ? everyKindOfMessage() : [new HumanMessage(`question ${i} ✓`), new AIMessage({ content: `answer ${i}`, id: `ai-${i}` })];
      await store.append(key, messages);
      if (i % 3 === 0) await store.append(key, [new HumanMessage(`follow-up ${i}`)]);
      await store.setState(key, "summary", { text: `summary ${i}`, folded: i });
      if (i % 4 !== 1) await store.setInfo(key, { title: `Conversation ${i}`, metadata: { n: i, tags: ["a", "ü"], nested: { ok: i % 2 === 0 } } });
      await store.setInfo(key, { createdAt: madeAt(i), lastActiveAt: madeAt(i) + (i % 7) * 1_000 });
    }
  } finally {
    await store.close();
  }
}

function migrateArgs(from: string, to: string): string[] {
  return ["migrate", "--from", from, "--to", to];
}

describe("memoria migrate", () => {
  it("carries 1,000 sessions SQLite → Redis → PostgreSQL → MySQL → MongoDB → file → SQLite, every message, field, state, title and time, finishing an interrupted step without duplicates", async () => {
    const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 10);
    const chain = [
      `sqlite:${join(dir, "first.db")}`,
      `${inject("redisUrl")}?prefix=mig:${tag}:`,
      `${inject("databaseUrl")}?prefix=m${tag}_`,
      `${inject("mysqlUrl")}?prefix=m${tag}_`,
      `${inject("mongoUrl").replace(/\/?(\?|$)/, `/mig_${tag}$1`)}`,
      `file:${join(dir, "files")}`,
      `sqlite:${join(dir, "last.db")}`,
    ];
    await seed(chain[0] as string);

    // The first step is killed part way, then run again: it finishes and stores nothing twice.
    let killed = false;
    const interrupted = memoria(migrateArgs(chain[0] as string, chain[1] as string), {
      env: { MEMORIA_TEST: "1" },
      onStderr: (text) => {
        const done = Math.max(0, ...[...text.matchAll(/copying: (\d+)\//g)].map((m) => Number(m[1])));
        if (!killed && done >= 200) {
          killed = true;
          interrupted.kill();
        }
      },
    });
    const stopped = await interrupted;
    expect(killed).toBe(true);
    expect(stopped.code).toBeNull(); // killed
    const resumed = await memoria(migrateArgs(chain[0] as string, chain[1] as string));
    expect(resumed.stderr).not.toMatch(/memoria:/);
    expect(resumed.code).toBe(0);
    const [, appended, already] = /copied 1000 sessions .*: (\d+) messages appended, (\d+) already there/.exec(resumed.stdout) ?? [];
    expect(Number(already)).toBeGreaterThan(0);
    expect(resumed.stdout).toContain("verified 1000 sessions");

    for (let step = 1; step < chain.length - 1; step++) {
      const done = await memoria(migrateArgs(chain[step] as string, chain[step + 1] as string));
      expect(done.stderr).not.toMatch(/memoria:/);
      expect(done.code).toBe(0);
      expect(done.stdout).toMatch(/copied 1000 sessions .*: \d+ messages appended, 0 already there\n/);
      expect(done.stdout).toContain("verified 1000 sessions");
    }

    // Both ends hold the same: each session's messages (every field, in the codec's form), state, title, metadata and times.
    const first = await openStore(chain[0] as string);
    const last = await openStore(chain[chain.length - 1] as string);
    try {
      let total = 0;
      for (let i = 0; i < SESSIONS; i++) {
        const [source, target] = await Promise.all([readSnapshot(first.store, keyOf(i)), readSnapshot(last.store, keyOf(i))]);
        expect(compareSnapshots(source, target), JSON.stringify(keyOf(i))).toEqual([]);
        total += target.messages.length;
      }
      expect(Number(appended) + Number(already)).toBe(total);
      // So a user's conversations are listed in the order they were, newest activity first.
      const [before, after] = await Promise.all([first.store.recent({ userId: "u7" }), last.store.recent({ userId: "u7" })]);
      expect(after.sessions.map((info) => [info.key, info.createdAt, info.lastActiveAt])).toEqual(
        before.sessions.map((info) => [info.key, info.createdAt, info.lastActiveAt]),
      );
      expect(after.sessions[0]?.key).toEqual(keyOf(967));
    } finally {
      await Promise.all([first.store.close(), last.store.close()]);
    }
  }, 900_000);

  it("without a terminal, a small copy says how far it got once, not once a session", async () => {
    const from = `sqlite:${join(dir, "few-from.db")}`;
    const { store } = await openStore(from, { create: true });
    for (let i = 0; i < 5; i++) await store.append({ sessionId: `s${i}` }, [new HumanMessage(`hello ${i}`)]);
    await store.close();
    const done = await memoria(migrateArgs(from, `sqlite:${join(dir, "few-to.db")}`));
    expect(done.code).toBe(0);
    expect(done.stderr.split("\n").filter((line) => line.startsWith("copying"))).toEqual(["copying: 5/5 sessions"]);
  });

  it("recall on the target finds what was said before the migration: the copied progress names the source's index, so the target indexes the scope again", async () => {
    const [from, to] = [`sqlite:${join(dir, "recall-from.db")}`, `sqlite:${join(dir, "recall-to.db")}`];
    const scope = { userId: "ada" };
    const said = "My sister's wedding is in Porto on the fourth of June.";
    const recallIn = async (url: string) => {
      const recall = recallMemory({ embeddings: new HashingEmbeddings(), scope: ["userId"], range: { before: 0, after: 0 } });
      const { store } = await openStore(url, { create: true });
      try {
        if (url === from) {
          await store.append({ ...scope, conversationId: "c1" }, [new HumanMessage(said), new AIMessage("Noted.")]);
          await store.append({ ...scope, conversationId: "c2" }, [new HumanMessage("The bus was late again."), new AIMessage("Sorry.")]);
        }
        await recall.resume(store, scope);
        return (await recall.search(store, scope, "Where is my sister's wedding?", { k: 1 })).flatMap((passage) =>
          passage.messages.map((message) => message.content),
        );
      } finally {
        await store.close();
      }
    };
    expect(await recallIn(from)).toEqual([said]);
    const done = await memoria(migrateArgs(from, to));
    expect(done.code).toBe(0);
    expect(await recallIn(to)).toEqual([said]);
  });

  it("a memory budget's spending goes with its scope: on the target, the period counts on from what the source spent", async () => {
    const from = `sqlite:${join(dir, "budget-from.db")}`;
    const to = `${inject("redisUrl")}?prefix=mig:budget:${crypto.randomUUID().slice(0, 8)}:`;
    const budget = memoryBudget({ scope: ["userId"], calls: 3, now: () => Date.UTC(2026, 5, 1, 12) });
    const session = { userId: "ada", conversationId: "c1" };
    const work = { name: "facts", prompt: "Ada likes tea." };
    const source = (await openStore(from, { create: true })).store;
    try {
      await source.append(session, [new HumanMessage("I like tea."), new AIMessage("Noted.")]);
      for (let i = 0; i < 2; i++) await budget.spend(source, session, work, async () => "done");
    } finally {
      await source.close();
    }
    const done = await memoria(migrateArgs(from, to));
    expect(done.code).toBe(0);
    const target = (await openStore(to)).store;
    try {
      expect(await budget.spent(target, { userId: "ada" })).toMatchObject({ calls: 2, refused: 0, byWork: { facts: { calls: 2 } } });
      await budget.spend(target, session, work, async () => "done");
      const refused = await budget.spend(target, session, work, async () => "done").catch((error: unknown) => error);
      expect(BudgetSpentError.isInstance(refused) && refused.limit).toBe("calls");
    } finally {
      await target.close();
    }
  });
});
