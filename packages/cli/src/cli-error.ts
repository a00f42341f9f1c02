import { MemoriaError } from "@memoria/core";
import { CommanderError } from "commander";

/** A mistake the user can fix: printed as one line that says what to do, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

const HELP_SHOWN = new Set(["commander.help", "commander.helpDisplayed", "commander.version"]);

/** The one line a failure prints, and the exit code it ends with (2: usage, 1: anything else). */
export function describeFailure(error: unknown): { line: string; code: number } {
  if (error instanceof UsageError) return { line: `memoria: ${error.message}`, code: 2 };
  if (error instanceof CommanderError) {
    // --help, --version and a bare `memoria` end this way too, having printed the help or the version: nothing to add.
    if (HELP_SHOWN.has(error.code)) return { line: "", code: error.exitCode === 0 ? 0 : 2 };
    return { line: `memoria: ${error.message.replace(/^error: /, "")} (run memoria --help for usage)`, code: 2 };
  }
  if (MemoriaError.isInstance(error)) return { line: `memoria: ${error.message} (${error.code})`, code: 1 };
  const message = (error as Error)?.message ?? String(error);
  return { line: `memoria: ${message.split("\n")[0]}`, code: 1 };
}
