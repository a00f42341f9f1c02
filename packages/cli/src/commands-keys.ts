import type { Command } from "commander";
import type { EncryptedStore } from "@memoria/privacy";
import { UsageError } from "./cli-error.js";
import { storeAndFilter } from "./options.js";
import { parseFilter } from "./session-arg.js";
import { withStore } from "./with-store.js";

/** `rekey`: what rotating an encrypted store's master key needs. */
export function keyCommands(program: Command): void {
  storeAndFilter(
    program
      .command("rekey")
      .description("rewrap every session's and scope record's data key under the key file's active master key (--keys); safe to stop and run again"),
  ).action(async (options) => {
    const filter = parseFilter(options);
    if (options.keys === undefined)
      throw new UsageError("rekey needs --keys: a file with the active master key and every key that sealed data not yet rewrapped.");
    await withStore(
      options.store,
      async ({ store }) => {
        const report = await (store as EncryptedStore).rekey({
          filter,
          onProgress: ({ seen }) => {
            if (seen % 100 === 0) process.stderr.write(`rekey: ${seen} sessions\n`);
          },
        });
        process.stdout.write(`rekeyed: ${report.rewrapped} of ${report.seen} sessions rewrapped under the active key; the others were under it already\n`);
      },
      { keys: options.keys },
    );
  });
}
