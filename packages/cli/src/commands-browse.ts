import type { Command } from "commander";
import Table from "cli-table3";
import { type SessionInfo, encodeMessage, encodeSessionKey, isScopeKey } from "@memoria/core";
import { UsageError } from "./cli-error.js";
import { counted } from "./counted.js";
import { positive, storeAndFilter, storeOptions } from "./options.js";
import { parseFilter, parseSession, resolveSession, showKey } from "./session-arg.js";
import { sessionsOf } from "./sessions-of.js";
import { withStore } from "./with-store.js";
import { isBudgetKey, liveSpend } from "@memoria/memory";
import { showHeading, showMessage, showTime } from "./transcript.js";

/** `sessions`, `show` and `stats`: looking, never changing. */
export function browseCommands(program: Command): void {
  storeAndFilter(program.command("sessions").description("list conversations, newest activity first, with title, message count and last activity"))
    .option("--limit <n>", "how many to show", "50")
    .option("--json", "one JSON object per line instead of a table")
    .action(async (options) => {
      const filter = parseFilter(options);
      const limit = positive("--limit", options.limit);
      await withStore(
        options.store,
        async ({ store }) => {
          const infos: SessionInfo[] = (await store.recent(filter, { limit })).sessions;
          if (options.json) {
            for (const info of infos) process.stdout.write(`${JSON.stringify({ ...info, id: encodeSessionKey(info.key) })}\n`);
            return;
          }
          if (infos.length === 0) {
            process.stdout.write("no sessions\n");
            return;
          }
          const table = new Table({ head: ["session", "title", "messages", "last active (UTC)"], style: { head: [], border: [] } });
          for (const info of infos) table.push([showKey(info.key), info.title ?? "", String(info.messageCount), showTime(info.lastActiveAt)]);
          process.stdout.write(`${table.toString()}\n`);
        },
        { keys: options.keys },
      );
    });

  storeOptions(program.command("show"))
    .description("print one conversation as a readable transcript (tool calls and partial answers marked)")
    .argument("<session...>", "a sessionId (unique in the store), field=value field=value (as `sessions` prints it), field=value&field=value, or JSON")
    .option("--last <n>", "only the last n messages")
    .option("--json", "the messages as stored, one JSON object per line")
    .action(async (session: string[], options) => {
      const text = session.join(" ");
      parseSession(text); // a malformed name is a usage error before the store is opened
      const last = options.last === undefined ? undefined : positive("--last", options.last);
      await withStore(
        options.store,
        async ({ store }) => {
          const key = await resolveSession(store, text);
          const [messages, count, info] = await Promise.all([store.read(key, { last }), store.count(key), store.info(key)]);
          if (count === 0 && !info) throw new UsageError(`no session ${showKey(key)} in this store (see memoria sessions).`);
          if (options.json) {
            for (const [i, message] of messages.entries()) process.stdout.write(`${JSON.stringify(encodeMessage(message, i))}\n`);
            return;
          }
          const first = count - messages.length + 1;
          const lines = [showHeading(key, info, count), ...messages.map((message, i) => showMessage(message, first + i))];
          process.stdout.write(`${lines.join("\n")}\n`);
        },
        { keys: options.keys },
      );
    });

  storeAndFilter(program.command("stats").description("how many sessions and messages the store holds"))
    .option("--json", "print JSON")
    .action(async (options) => {
      const filter = parseFilter(options);
      await withStore(
        options.store,
        async ({ store, label }) => {
          let sessions = 0;
          let messages = 0;
          let largest = 0;
          let scopeRecords = 0;
          // What memory budgets counted in their current periods (memoryBudget), summed over scopes.
          const memoryWork = { budgets: 0, calls: 0, tokens: 0, refused: 0 };
          const users = new Set<string>();
          for await (const key of sessionsOf(store, filter)) {
            if (isBudgetKey(key)) {
              const spend = await liveSpend(store, key);
              if (spend) {
                memoryWork.budgets++;
                memoryWork.calls += spend.calls;
                memoryWork.tokens += spend.tokens;
                memoryWork.refused += spend.refused;
              }
              continue;
            }
            if (isScopeKey(key)) {
              scopeRecords++; // long-term memory of a user (facts, profile), not a conversation
              continue;
            }
            const count = await store.count(key);
            sessions++;
            messages += count;
            largest = Math.max(largest, count);
            if (key.userId !== undefined) users.add(key.userId);
          }
          const stats = { store: label, sessions, messages, users: users.size, largestSession: largest, scopeRecords, memoryWork };
          const work = memoryWork.budgets
            ? `; memory work this period: ${counted(memoryWork.calls, "model call")}, ${counted(memoryWork.tokens, "token")}, ${memoryWork.refused} refused (${counted(memoryWork.budgets, "budget")})`
            : "";
          if (options.json) process.stdout.write(`${JSON.stringify(stats)}\n`);
          else
            process.stdout.write(
              `${label}: ${counted(sessions, "session")}, ${counted(messages, "message")}, ${counted(users.size, "user")} (userId), largest session ${counted(largest, "message")}${scopeRecords ? `, ${counted(scopeRecords, "scope record")} (long-term memory)` : ""}${work}\n`,
            );
        },
        { keys: options.keys },
      );
    });
}
