import { MemoriaError, StoreUnavailableError, type WriteOutcome } from "@memoria/core";

/** Errors of the disk rather than of the call: out of space, quota, I/O, read-only, no file handles left. */
const STORAGE_CODES = new Set(["ENOSPC", "EDQUOT", "EIO", "EROFS", "EMFILE", "ENFILE", "EACCES", "EPERM", "ERR_STRING_TOO_LONG"]);

/**
 * A file-system failure as `StoreUnavailableError` that says what to do (a full
 * disk, a file too large to read at once); other errors as they are.
 */
export function fileError(error: unknown, outcome: WriteOutcome): unknown {
  if (MemoriaError.isInstance(error)) return error;
  const code = (error as NodeJS.ErrnoException)?.code;
  if (!code || !STORAGE_CODES.has(code)) return error;
  const hint = code === "ENOSPC" || code === "EDQUOT" ? " The disk is full: free space, then retry." : "";
  return new StoreUnavailableError(`The file store could not use the disk: ${(error as Error).message}.${hint}`, { cause: error, outcome });
}

/** Runs `body`, turning file-system failures into typed errors. */
export async function onDisk<T>(outcome: WriteOutcome, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw fileError(error, outcome);
  }
}
