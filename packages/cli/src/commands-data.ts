import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { Writable } from "node:stream";
import type { Command } from "commander";
import { isScopeKey } from "@memoria/core";
import type { EncryptedStore, ErasureReceipt } from "@memoria/privacy";
import { UsageError } from "./cli-error.js";
import { counted } from "./counted.js";
import { filterOptions, storeAndFilter, storeOptions } from "./options.js";
import { headerLine, readExport, snapshotLines } from "./export-format.js";
import { type LangChainLayout, langChainSessions } from "./langchain-sources.js";
import { importLangGraph } from "./langgraph-sources.js";
import { migrate } from "./migrate.js";
import { parseFilter, showKey } from "./session-arg.js";
import { sessionsOf } from "./sessions-of.js";
import { type SessionSnapshot, readSnapshot, storedPrefix, writeSnapshot } from "./snapshot.js";
import { withStore } from "./with-store.js";

const LAYOUTS = ["memoria", "langchain-redis", "langchain-postgres", "langchain-file", "langgraph-sqlite", "langgraph-postgres"] as const;

/** Writes a line, waiting when the stream's buffer is full (a large export to a pipe). */
async function writeLine(out: Writable, line: string): Promise<void> {
  if (!out.write(`${line}\n`)) await once(out, "drain");
}

/** What `import <source>` reads when `--from` is not given. */
function inferLayout(source: string): (typeof LAYOUTS)[number] {
  if (/^rediss?:\/\//i.test(source)) return "langchain-redis";
  if (/^postgres(ql)?:\/\//i.test(source)) return "langchain-postgres";
  if (source.endsWith(".json")) return "langchain-file";
  return "memoria";
}

/** `export`, `import`, `migrate`, `prune` and `erase`. */
export function dataCommands(program: Command): void {
  storeAndFilter(program.command("export").description("write sessions as JSON Lines (lossless: every message field, state, title and metadata)"))
    .option("--out <file>", "write to a file instead of standard output")
    .action(async (options) => {
      const filter = parseFilter(options);
      await withStore(
        options.store,
        async ({ store }) => {
          const out: Writable = options.out ? createWriteStream(options.out, { mode: 0o600 }) : process.stdout;
          let sessions = 0;
          let scopeRecords = 0;
          let messages = 0;
          await writeLine(out, headerLine());
          for await (const key of sessionsOf(store, filter)) {
            const snapshot = await readSnapshot(store, key);
            for (const line of snapshotLines(snapshot)) await writeLine(out, line);
            // Counted as `stats` counts them: a scope record is a user's long-term memory, not a conversation.
            if (isScopeKey(key)) scopeRecords++;
            else sessions++;
            messages += snapshot.messages.length;
          }
          if (options.out) {
            out.end();
            await once(out, "finish");
          }
          const records = scopeRecords ? `, ${counted(scopeRecords, "scope record")} (long-term memory)` : "";
          process.stderr.write(`exported ${counted(sessions, "session")}, ${counted(messages, "message")}${records}\n`);
        },
        { keys: options.keys },
      );
    });

  storeOptions(program.command("import"))
    .description(
      "read sessions into a store: a memoria export, LangChain's Redis, PostgreSQL or file histories, or LangGraph's SQLite or PostgreSQL checkpoints",
    )
    .argument("<source>", "an export file (.jsonl), LangChain's history file (.json), SqliteSaver's database file, or a redis:// or postgres:// URL")
    .option("--from <layout>", `what the source holds: ${LAYOUTS.join(", ")} (guessed from the source)`)
    .option("--pattern <glob>", "langchain-redis: which keys hold histories", "*")
    .option("--strip-prefix <prefix>", "langchain-redis: cut this off each key to give the sessionId")
    .option("--table <name>", "langchain-postgres: the table", "langchain_chat_histories")
    .option("--schema <name>", "langgraph-postgres: the schema of PostgresSaver's tables", "public")
    .action(async (source: string, options) => {
      const layout = options.from ?? inferLayout(source);
      if (!LAYOUTS.includes(layout)) throw new UsageError(`--from must be one of ${LAYOUTS.join(", ")}, got ${JSON.stringify(layout)}.`);
      if (layout === "langgraph-sqlite" || layout === "langgraph-postgres") {
        // Threads copied checkpoint by checkpoint; again, nothing is stored twice.
        await withStore(
          options.store,
          async ({ store }) => process.stdout.write(`${await importLangGraph(layout, source, store, { schema: options.schema })}\n`),
          {
            create: true,
            keys: options.keys,
          },
        );
        return;
      }
      const snapshots = (): AsyncIterable<SessionSnapshot> =>
        layout === "memoria"
          ? readExport(source)
          : langChainSessions(layout as LangChainLayout, source, { pattern: options.pattern, stripPrefix: options.stripPrefix, table: options.table });
      await withStore(
        options.store,
        async ({ store }) => {
          // All or nothing: the whole source is read and checked against the store
          // before the first write, so a bad line anywhere leaves the store as it was.
          for await (const snapshot of snapshots()) await storedPrefix(store, snapshot);
          let sessions = 0;
          let seen = 0;
          let appended = 0;
          for await (const snapshot of snapshots()) {
            appended += await writeSnapshot(store, snapshot);
            seen += snapshot.messages.length;
            sessions++;
          }
          process.stdout.write(`imported ${counted(sessions, "session")}: ${counted(appended, "message")} appended, ${seen - appended} already there\n`);
        },
        { create: true, keys: options.keys },
      );
    });

  filterOptions(
    program
      .command("migrate")
      .description("copy every session (messages, state, title, metadata) to another store; safe to stop and run again")
      .requiredOption("--from <url>", "the store to copy from")
      .requiredOption("--to <url>", "the store to copy into")
      .option("--from-keys <file>", "the master keys of the source, if it is encrypted (its sessions are opened)")
      .option("--to-keys <file>", "the master keys to seal the copies with, if the target is to be encrypted"),
  )
    .option("--concurrency <n>", "sessions copied at once", "8")
    .option("--no-verify", "skip reading everything back to compare")
    .action(async (options) => {
      const width = Number(options.concurrency);
      if (!Number.isSafeInteger(width) || width < 1 || width > 64)
        throw new UsageError(`--concurrency takes 1 to 64, got ${JSON.stringify(options.concurrency)}.`);
      await withStore(
        options.from,
        (from) =>
          withStore(options.to, (to) => migrate(from, to, { filter: parseFilter(options), width, verify: options.verify !== false }), {
            create: true,
            keys: options.toKeys,
          }),
        { keys: options.fromKeys },
      );
    });

  program
    .command("prune")
    .description("delete expired sessions now (stores with a TTL); Redis expires them by itself")
    .option("--store <url>", "the store (no keys needed: expiry is in the clear)")
    .action(async (options) => {
      await withStore(options.store, async ({ store }) => {
        if (!store.capabilities.prune) {
          process.stdout.write(`the ${store.name} store expires sessions by itself: nothing to prune\n`);
          return;
        }
        process.stdout.write(`pruned ${await store.prune()} expired sessions\n`);
      });
    });

  storeAndFilter(program.command("erase").description("erase every session of a user (or matching --where), with their state, titles and locks"), "erase")
    .option("--dry-run", "only show what would go")
    .option("--yes", "erase without asking (needed when not run from a terminal)")
    .action(async (options) => {
      const filter = parseFilter(options);
      if (Object.keys(filter).length === 0) throw new UsageError("erase needs --user or --where: it never erases a whole store.");
      await withStore(
        options.store,
        async ({ store }) => {
          const doomed: string[] = [];
          let messages = 0;
          let scopeRecords = 0;
          for await (const key of sessionsOf(store, filter)) {
            doomed.push(showKey(key));
            if (isScopeKey(key)) scopeRecords++;
            else messages += await store.count(key);
          }
          const what = `${counted(doomed.length - scopeRecords, "session")}, ${counted(messages, "message")}${scopeRecords ? `, ${counted(scopeRecords, "scope record")} (facts, profiles)` : ""}`;
          for (const line of doomed) process.stdout.write(`  ${line}\n`);
          if (options.dryRun) {
            process.stdout.write(`would erase ${what}\n`);
            return;
          }
          if (!options.yes) throw new UsageError(`this would erase ${what}; run again with --yes to erase them.`);
          // An encrypted store (--keys) erases with a receipt: whether a per-user key was shredded too.
          const receipt: Pick<ErasureReceipt, "deleted" | "shredded" | "notShredded"> =
            "erase" in store ? await (store as EncryptedStore).erase(filter) : { deleted: await store.delete(filter) };
          const records = scopeRecords
            ? counted(receipt.deleted, "session or scope record", "sessions and scope records")
            : counted(receipt.deleted, "session");
          process.stdout.write(`erased ${records} (${counted(messages, "message")}), with their state, titles, metadata and locks\n`);
          if (receipt.shredded && !receipt.notShredded) {
            process.stdout.write(`shredded the key of ${showKey(receipt.shredded)}: every copy of its data the store kept is unreadable\n`);
          } else if (receipt.shredded) {
            process.stdout.write(
              `shredded the key of ${showKey(receipt.shredded)}, but ${counted(receipt.notShredded!, "session was", "sessions were")} sealed before per-user keys were on: ` +
                "deleted, not shredded; a copy taken before now still opens with the master key (to close that, make a new key active, run memoria rekey, then drop the old key)\n",
            );
          }
        },
        { keys: options.keys },
      );
    });
}
