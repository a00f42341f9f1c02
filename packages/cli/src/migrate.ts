import type { SessionKey, SessionKeyFilter } from "@memoria/core";
import cliProgress from "cli-progress";
import { showKey } from "./session-arg.js";
import { inParallel, sessionsOf } from "./sessions-of.js";
import { compareSnapshots, readSnapshot, writeSnapshot } from "./snapshot.js";
import type { OpenedStore } from "./store-url.js";

export interface MigrateOptions {
  filter: SessionKeyFilter;
  /** Sessions copied at once. */
  width: number;
  /** Read both sides back at the end and compare them. */
  verify: boolean;
}

/** How often a copy without a terminal says how far it got. */
const LOG_EVERY_MS = 10_000;

/**
 * A bar on a terminal; elsewhere (a log, a pipe) a line at each tenth of a copy of 50
 * sessions or more, or after ten seconds without one, and one at the end: a line per
 * session was the log's whole length.
 */
function progress(label: string, total: number) {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar({ format: `${label} [{bar}] {value}/{total} sessions`, stream: process.stderr }, cliProgress.Presets.shades_classic);
    bar.start(total, 0);
    return { tick: () => bar.increment(), stop: () => bar.stop() };
  }
  let done = 0;
  let said = Date.now();
  const every = total >= 50 ? Math.ceil(total / 10) : total;
  return {
    tick: () => {
      done++;
      if (done % every === 0 || done === total || Date.now() - said >= LOG_EVERY_MS) {
        said = Date.now();
        process.stderr.write(`${label}: ${done}/${total} sessions\n`);
      }
    },
    stop: () => {},
  };
}

export class VerificationError extends Error {
  override readonly name = "VerificationError";
}

/**
 * Copies every matching session from one store to another: its messages, state,
 * title and metadata, several sessions at once. Each session is copied so that a
 * second run skips what the first stored (see `writeSnapshot`), so an interrupted
 * migration is finished by running it again. With `verify`, both stores are read
 * back and compared session by session.
 */
export async function migrate(from: OpenedStore, to: OpenedStore, options: MigrateOptions): Promise<void> {
  const keys: SessionKey[] = [];
  for await (const key of sessionsOf(from.store, options.filter)) keys.push(key);
  async function* each() {
    yield* keys;
  }
  let appended = 0;
  let messages = 0;
  const copying = progress("copying", keys.length);
  try {
    await inParallel(each(), options.width, async (key) => {
      const snapshot = await readSnapshot(from.store, key);
      // Not `appended += await …`: that reads `appended` before the wait, losing the other sessions' additions.
      const added = await writeSnapshot(to.store, snapshot);
      appended += added;
      messages += snapshot.messages.length;
      copying.tick();
    });
  } finally {
    copying.stop();
  }
  process.stdout.write(
    `copied ${keys.length} sessions from ${from.label} to ${to.label}: ${appended} messages appended, ${messages - appended} already there\n`,
  );
  if (!options.verify) return;
  const problems: string[] = [];
  const checking = progress("verifying", keys.length);
  try {
    await inParallel(each(), options.width, async (key) => {
      const [source, target] = await Promise.all([readSnapshot(from.store, key), readSnapshot(to.store, key)]);
      for (const problem of compareSnapshots(source, target)) problems.push(`${showKey(key)}: ${problem}`);
      checking.tick();
    });
  } finally {
    checking.stop();
  }
  if (problems.length > 0) {
    for (const problem of problems.slice(0, 20)) process.stderr.write(`  ${problem}\n`);
    throw new VerificationError(
      `verification found ${problems.length} differences (the first ${Math.min(20, problems.length)} above); run the migration again to finish it`,
    );
  }
  process.stdout.write(`verified ${keys.length} sessions: messages, state, titles, metadata and times are equal\n`);
}
