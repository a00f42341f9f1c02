import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type HistoryStore, scopeKeyOf } from "@memoria/core";
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from "vitest";
import { memoryBudget } from "@memoria/memory";
import { openStore } from "../src/store-url.js";
import { memoria } from "./run-cli.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tag = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10);

/** Each kind of store the command is tested on, as a fresh, empty store URL. */
const stores: [string, () => string][] = [
  ["sqlite", () => `sqlite:${join(dir, `${tag()}.db`)}`],
  ["postgres", () => `${inject("databaseUrl")}?prefix=t${tag()}_`],
  ["redis", () => `${inject("redisUrl")}?prefix=cli:${tag()}:`],
  // The MariaDB the tests start, under the mariadb:// spelling of its URL.
  ["mysql (a mariadb:// URL)", () => `${inject("mysqlUrl").replace(/^mysql:/, "mariadb:")}?prefix=t${tag()}_`],
];

/** Two users' conversations: one with a tool call, its result, and an answer cut short. */
async function seed(store: HistoryStore): Promise<void> {
  const ada1 = { userId: "ada", conversationId: "c1" };
  await store.append(ada1, [
    new HumanMessage("What is the weather in Paris?"),
    new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "weather", args: { city: "Paris" }, type: "tool_call" }] }),
    new ToolMessage({ content: "18°C, sunny", tool_call_id: "call_1", name: "weather" }),
    new AIMessage({ content: "It is 18°C and sun", response_metadata: { memoria_partial: true } }),
  ]);
  await store.setInfo?.(ada1, { title: "Weather in Paris", metadata: { pinned: true } });
  await store.setState(ada1, "summary", { text: "Ada asked about the weather" });
  await new Promise((resolve) => setTimeout(resolve, 5));
  await store.append({ userId: "ada", conversationId: "c2" }, [new HumanMessage("Hello again"), new AIMessage("Hi Ada!")]);
  await store.append({ userId: "bob", conversationId: "c1" }, [new HumanMessage("I am Bob")]);
}

describe.each(stores)("memoria on %s", (_name, freshUrl) => {
  let url: string;
  beforeAll(async () => {
    url = freshUrl();
    const { store } = await openStore(url, { create: true });
    try {
      await seed(store);
    } finally {
      await store.close();
    }
  });

  it("sessions: a user's conversations, newest first, with titles and counts", async () => {
    const table = await memoria(["sessions", "--store", url, "--user", "ada"]);
    expect(table.stderr).toBe("");
    expect(table.code).toBe(0);
    expect(table.stdout.indexOf("conversationId=c2")).toBeLessThan(table.stdout.indexOf("conversationId=c1"));
    expect(table.stdout).toContain("Weather in Paris");
    const json = await memoria(["sessions", "--store", url, "--json"]);
    expect(json.code).toBe(0);
    const rows = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => [row.key.userId, row.key.conversationId, row.messageCount])).toEqual([
      ["bob", "c1", 1],
      ["ada", "c2", 2],
      ["ada", "c1", 4],
    ]);
    expect(rows[2]).toMatchObject({ id: "conversationId=c1&userId=ada", title: "Weather in Paris", metadata: { pinned: true } });
  });

  it("show: a transcript with the tool call, its result and the partial answer marked", async () => {
    const shown = await memoria(["show", "conversationId=c1&userId=ada", "--store", url]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('"Weather in Paris" · 4 messages');
    expect(shown.stdout).toContain('→ tool call weather (call_1) {"city":"Paris"}');
    expect(shown.stdout).toContain("[3] tool weather (answers call_1): 18°C, sunny");
    expect(shown.stdout).toContain("[4] ai (partial): It is 18°C and sun");
    const last = await memoria(["show", '{"userId":"ada","conversationId":"c1"}', "--store", url, "--last", "1", "--json"]);
    expect(last.code).toBe(0);
    expect(JSON.parse(last.stdout)).toMatchObject({ type: "ai", data: { content: "It is 18°C and sun" } });
  });

  it("show takes a session as `sessions` prints it, and a bare sessionId when one session has it", async () => {
    const table = await memoria(["sessions", "--store", url, "--user", "ada"]);
    const printed = table.stdout
      .split("\n")
      .find((line) => line.includes("conversationId=c1"))!
      .match(/conversationId=c1 userId=ada/)![0];
    for (const args of [[printed], printed.split(" ")]) {
      const shown = await memoria(["show", ...args, "--store", url]);
      expect(shown.stderr).toBe("");
      expect(shown.stdout).toContain('"Weather in Paris" · 4 messages');
    }
    // Sessions of this test only, removed at its end: the tests after it count the seeded ones.
    const added = [
      { sessionId: "trip planning", userId: "ada lovelace" },
      { sessionId: "twice", userId: "ada" },
      { sessionId: "twice", userId: "bob" },
    ];
    const { store } = await openStore(url);
    onTestFinished(async () => {
      for (const key of added) await store.clear(key);
      await store.close();
    });
    for (const key of added) await store.append(key, [new HumanMessage(`hello from ${key.sessionId}`)]);
    // Values with spaces print escaped, and read back.
    const listed = await memoria(["sessions", "--store", url, "--user", "ada lovelace"]);
    expect(listed.stdout).toContain("sessionId=trip%20planning userId=ada%20lovelace");
    const escaped = await memoria(["show", "sessionId=trip%20planning", "userId=ada%20lovelace", "--store", url]);
    expect(escaped.stdout).toContain("[1] human: hello from trip planning");
    const bare = await memoria(["show", "trip planning", "--store", url]);
    expect(bare.stdout).toContain("[1] human: hello from trip planning");
    const ambiguous = await memoria(["show", "twice", "--store", url]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('sessionId "twice" is in 2 sessions; name one with its fields:');
    expect(ambiguous.stderr).toContain("sessionId=twice userId=bob");
  });

  it("an unknown command or option, or a missing argument, is one line and exit code 2", async () => {
    for (const [args, line] of [
      [["frobnicate"], "memoria: unknown command 'frobnicate' (run memoria --help for usage)"],
      [["sessions", "--nope", "--store", url], "memoria: unknown option '--nope' (run memoria --help for usage)"],
      [["show", "--store", url], "memoria: missing required argument 'session' (run memoria --help for usage)"],
    ] as const) {
      const result = await memoria([...args]);
      expect([result.code, result.stderr.trim().split("\n")]).toEqual([2, [line]]);
    }
    const help = await memoria(["--help"]);
    expect([help.code, help.stderr]).toEqual([0, ""]);
    expect(help.stdout).toContain("Usage: memoria");
  });

  it("show: an unknown session or a bad argument is one line and exit code 2", async () => {
    const missing = await memoria(["show", "nobody", "--store", url]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split("\n")).toEqual(["memoria: no session sessionId=nobody in this store (see memoria sessions)."]);
    const bad = await memoria(["show", "userId=a\u0001", "--store", url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^memoria: .* does not name a session/);
  });

  it("stats counts sessions, messages and users", async () => {
    const stats = await memoria(["stats", "--store", url, "--json"]);
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ sessions: 3, messages: 7, users: 2, largestSession: 4 });
  });

  it("export then import into another store keeps everything, and importing again adds nothing", async () => {
    const file = join(dir, `${tag()}.jsonl`);
    const exported = await memoria(["export", "--store", url, "--user", "ada", "--out", file]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toBe("exported 2 sessions, 6 messages\n");
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ format: "memoria-export", version: 1, codec: 1 });
    expect(lines).toHaveLength(1 + 2 + 6);
    const target = `sqlite:${join(dir, `${tag()}.db`)}`;
    const imported = await memoria(["import", file, "--store", target]);
    expect(imported.stdout).toBe("imported 2 sessions: 6 messages appended, 0 already there\n");
    const again = await memoria(["import", file, "--store", target]);
    expect(again.stdout).toBe("imported 2 sessions: 0 messages appended, 6 already there\n");
    const shown = await memoria(["show", "conversationId=c1&userId=ada", "--store", target]);
    expect(shown.stdout).toContain("[4] ai (partial): It is 18°C and sun");
    const { store } = await openStore(target);
    try {
      expect(await store.getState({ userId: "ada", conversationId: "c1" }, "summary")).toEqual({ text: "Ada asked about the weather" });
      expect(await store.info!({ userId: "ada", conversationId: "c1" })).toMatchObject({ title: "Weather in Paris", metadata: { pinned: true } });
    } finally {
      await store.close();
    }
  });

  it("import is all or nothing per file: a bad line anywhere leaves the target as it was, and names the line", async () => {
    const file = join(dir, `${tag()}.jsonl`);
    expect((await memoria(["export", "--store", url, "--out", file])).code).toBe(0);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    const target = freshUrl();
    const { store } = await openStore(target, { create: true });
    const kept = { userId: "ada", conversationId: "c1" };
    try {
      await store.append(kept, [new HumanMessage("What is the weather in Paris?")]); // a prefix of the file's c1: importable
      const last = lines.length;
      const broken: [string, number, string][] = [
        ["not JSON", 3, "{not json"],
        ["a message the codec refuses", last, JSON.stringify({ message: { type: "human", data: { content: 42 } } })],
        ["a session key with a control character", 2, JSON.stringify({ session: { userId: "a\u0001" }, state: {}, messages: 0 })],
        ["a state name a store refuses", 2, JSON.stringify({ ...JSON.parse(lines[1] as string), state: { "9lives": 1 } })],
      ];
      for (const [what, line, text] of broken) {
        const bad = join(dir, `${tag()}.jsonl`);
        writeFileSync(bad, [...lines.slice(0, line - 1), text, ...lines.slice(line)].join("\n"));
        const result = await memoria(["import", bad, "--store", target]);
        expect(result.code, `${what}: ${result.stderr}`).toBe(2);
        expect(result.stderr, what).toContain(`${bad}:${line} `);
        expect((await store.list()).sessions, what).toEqual([kept]);
        expect(await store.count(kept), what).toBe(1);
      }
      // A conflict with what the target holds is found before anything is written, too.
      await store.append({ userId: "bob", conversationId: "c1" }, [new HumanMessage("Someone else")]);
      const conflict = await memoria(["import", file, "--store", target]);
      expect(conflict.code).toBe(1);
      expect(conflict.stderr).toMatch(/differs from the source at message 1/);
      expect(await store.count(kept)).toBe(1);
      await store.clear({ userId: "bob", conversationId: "c1" });
      // The file as it is imports, adding only what the interrupted copy lacked.
      const imported = await memoria(["import", file, "--store", target]);
      expect(imported.stdout).toBe("imported 3 sessions: 6 messages appended, 1 already there\n");
    } finally {
      await store.close();
    }
  });

  it("erase refuses without --yes, shows what would go, then erases the user's sessions only", async () => {
    const refused = await memoria(["erase", "--store", url, "--user", "bob"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe("memoria: this would erase 1 session, 1 message; run again with --yes to erase them.\n");
    const dry = await memoria(["erase", "--store", url, "--user", "bob", "--dry-run"]);
    expect(dry.stdout).toBe("  conversationId=c1 userId=bob\nwould erase 1 session, 1 message\n");
    const everything = await memoria(["erase", "--store", url]);
    expect(everything.code).toBe(2);
    const erased = await memoria(["erase", "--store", url, "--user", "bob", "--yes"]);
    expect(erased.code).toBe(0);
    expect(erased.stdout).toContain("erased 1 session (1 message)");
    const left = await memoria(["sessions", "--store", url, "--json"]);
    expect(
      left.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).key.userId),
    ).toEqual(["ada", "ada"]);
  });

  it("stats sums what memory budgets counted this period, apart from long-term memory", async () => {
    const { store } = await openStore(url);
    try {
      await store.append({ userId: "dora", conversationId: "c1" }, [new HumanMessage("Dora lives in Rome")]);
      const budget = memoryBudget({ scope: ["userId"], calls: 1 });
      await budget.spend(store, { userId: "dora" }, { name: "facts", prompt: "p".repeat(40) }, async () => "ok"); // 11 tokens, estimated
      await expect(budget.spend(store, { userId: "dora" }, { name: "facts", prompt: "p" }, async () => "ok")).rejects.toThrow(/budget is spent/);
    } finally {
      await store.close();
    }
    const stats = await memoria(["stats", "--store", url, "--user", "dora", "--json"]);
    expect(JSON.parse(stats.stdout)).toMatchObject({ sessions: 1, scopeRecords: 0, memoryWork: { budgets: 1, calls: 1, tokens: 11, refused: 1 } });
    const text = await memoria(["stats", "--store", url, "--user", "dora"]);
    expect(text.stdout).toContain("; memory work this period: 1 model call, 11 tokens, 1 refused (1 budget)\n");
    // The budget's record travels with the user: exported, imported elsewhere, counted there alike.
    const file = join(dir, `${tag()}.jsonl`);
    expect((await memoria(["export", "--store", url, "--user", "dora", "--out", file])).code).toBe(0);
    const target = `sqlite:${join(dir, `${tag()}.db`)}`;
    expect((await memoria(["import", file, "--store", target])).code).toBe(0);
    expect(JSON.parse((await memoria(["stats", "--store", target, "--json"])).stdout)).toMatchObject({
      memoryWork: { budgets: 1, calls: 1, tokens: 11, refused: 1 },
    });
  });

  it("export, import, stats and erase carry a user's long-term memory (their scope record)", async () => {
    const { store } = await openStore(url);
    try {
      await store.append({ userId: "cleo", conversationId: "c1" }, [new HumanMessage("Cleo lives in Nice")]);
      await store.setState(scopeKeyOf({ userId: "cleo" }), "facts", { data: { facts: [{ statement: "Cleo lives in Nice" }] }, cursors: {} });
    } finally {
      await store.close();
    }
    const stats = await memoria(["stats", "--store", url, "--user", "cleo", "--json"]);
    expect(JSON.parse(stats.stdout)).toMatchObject({ sessions: 1, messages: 1, scopeRecords: 1 });
    const file = join(dir, `${tag()}.jsonl`);
    expect((await memoria(["export", "--store", url, "--user", "cleo", "--out", file])).stderr).toBe(
      "exported 1 session, 1 message, 1 scope record (long-term memory)\n", // counted as stats counts
    );
    const target = `sqlite:${join(dir, `${tag()}.db`)}`;
    expect((await memoria(["import", file, "--store", target])).code).toBe(0);
    const copy = (await openStore(target)).store;
    try {
      expect(await copy.getState(scopeKeyOf({ userId: "cleo" }), "facts")).toEqual({ data: { facts: [{ statement: "Cleo lives in Nice" }] }, cursors: {} });
    } finally {
      await copy.close();
    }
    const dry = await memoria(["erase", "--store", url, "--user", "cleo", "--dry-run"]);
    expect(dry.stdout).toBe(
      "  conversationId=c1 userId=cleo\n  memoriaScope=userId userId=cleo\nwould erase 1 session, 1 message, 1 scope record (facts, profiles)\n",
    );
    expect((await memoria(["erase", "--store", url, "--user", "cleo", "--yes"])).stdout).toContain("erased 2 sessions and scope records (1 message)");
    const { store: after } = await openStore(url);
    try {
      expect(await after.getState(scopeKeyOf({ userId: "cleo" }), "facts")).toBeUndefined();
    } finally {
      await after.close();
    }
  });

  it("prune runs", async () => {
    const pruned = await memoria(["prune", "--store", url]);
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toMatch(/^(pruned 0 expired sessions|the redis store expires sessions by itself: nothing to prune)\n$/);
  });
});

describe("memoria: store URLs and failures", () => {
  it("refuses an unknown store URL, or none, in one line with exit code 2", async () => {
    const unknown = await memoria(["sessions", "--store", "ftp://example"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'memoria: cannot open "ftp://example": use one of sqlite:./file.db, postgres://…, mysql://…, redis://…, mongodb://…, file:./folder.\n',
    );
    // A bare path or a near-miss scheme gets the URL it most likely meant.
    const bare = await memoria(["sessions", "--store", "./history.db"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/ Did you mean sqlite:\.\/history\.db\?\n$/);
    expect((await memoria(["sessions", "--store", dir])).stderr).toContain(` Did you mean file:${dir}?`);
    expect((await memoria(["sessions", "--store", "sqlite3:./x.db"])).stderr).toContain(" Did you mean sqlite:./x.db?");
    const none = await memoria(["sessions"], { env: { MEMORIA_STORE: "" } });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^memoria: no store given: pass --store URL/);
  });

  it("refuses a SQLite file or folder that does not exist instead of making an empty store, except to write into", async () => {
    const path = join(dir, "typo.db");
    const typo = await memoria(["sessions", "--store", `sqlite:${path}`]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(`memoria: there is no store at ${path}; check the path (only import, migrate --to and mcp create one).\n`);
    expect((await memoria(["stats", "--store", `file:${join(dir, "nowhere")}`])).code).toBe(2);
  });

  it("a store that cannot be reached fails in one line with exit code 1, naming the error", async () => {
    const down = await memoria(["sessions", "--store", "postgres://memoria@127.0.0.1:1/none"]);
    expect(down.code).toBe(1);
    expect(down.stderr.trim().split("\n")).toHaveLength(1);
    expect(down.stderr).toMatch(/^memoria: .*(STORE_UNAVAILABLE)/);
  });

  it("reads the store from MEMORIA_STORE and works on a file store", async () => {
    const folder = join(dir, `files-${tag()}`);
    const { store } = await openStore(`file:${folder}`, { create: true });
    await seed(store);
    await store.close();
    const listed = await memoria(["sessions", "--json"], { env: { MEMORIA_STORE: `file:${folder}` } });
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split("\n")).toHaveLength(3);
  });
});
