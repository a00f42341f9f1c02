import { MemoriaError } from "@memoria/core";

/** A mistake the user can fix: printed as one line that says what to do, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The one line a failure prints, and the exit code it ends with (2: usage, 1: anything else). */
export function describeFailure(error: unknown): { line: string; code: number } {
  if (error instanceof UsageError) return { line: `memoria: ${error.message}`, code: 2 };
  if (MemoriaError.isInstance(error)) return { line: `memoria: ${error.message} (${error.code})`, code: 1 };
  const message = (error as Error)?.message ?? String(error);
  return { line: `memoria: ${message.split("\n")[0]}`, code: 1 };
}
