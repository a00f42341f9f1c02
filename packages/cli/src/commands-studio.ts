import type { Command } from "commander";
import { UsageError } from "./cli-error.js";
import { positive, storeOptions } from "./options.js";
import { throughKeys } from "./encryption-keys.js";
import { openStore } from "./store-url.js";
import { startStudio } from "./studio/studio-server.js";

/** `studio`: a local web page over a store, until the command is stopped. */
export function studioCommand(program: Command): void {
  storeOptions(program.command("studio").description("browse a store in your web browser (served on 127.0.0.1, behind a random token)"))
    .option("--write", "allow the actions that change or copy data: export, delete a message, branch, erase a user")
    .option("--port <n>", "the port (default: a free one)")
    .action(async (options) => {
      const port = options.port === undefined ? undefined : positive("--port", options.port);
      if (port !== undefined && port > 65_535) throw new UsageError(`--port takes 1 to 65535, got ${port}.`);
      const opened = await openStore(options.store);
      const store = await throughKeys(opened.store, options.keys);
      const studio = await startStudio({ store, label: opened.label, write: options.write === true, port });
      // Listening before the line that says Ctrl-C stops it: a Ctrl-C right after that line would otherwise end the process by the signal.
      const stopped = new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      process.stdout.write(
        `memoria studio for ${opened.label}${options.write ? " (write actions on)" : ""}:\n  ${studio.url}\n(open it in a browser; Ctrl-C stops the studio)\n`,
      );
      await stopped;
      await studio.close();
      await store.close();
    });
}
