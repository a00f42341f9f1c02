import { createHash, randomBytes } from "node:crypto";
import { link, mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { MemoriaError } from "@memoria/core";

/**
 * Where per-scope keys (one per user) are kept, outside the store they protect:
 * destroying a scope's entry makes every copy of its data in the store's engine
 * (logs, snapshots, free pages, backups) unreadable at once. Entries are opaque
 * text (the scope key sealed under a master key); names are the scope's field and
 * value as the store holds them. Back it with a file directory
 * ({@link fileKeyVault}), a KMS, or a secrets service; not with the store itself.
 */
export interface KeyVault {
  /** The entry stored under `name`, or undefined. */
  get(name: string): Promise<string | undefined>;
  /** Stores `value` under `name` unless an entry is there already; resolves to the entry stored then (the first writer's). */
  create(name: string, value: string): Promise<string>;
  /** Replaces the entry under `name` (a rekey wrapping it under another master key). */
  replace(name: string, value: string): Promise<void>;
  /** Destroys the entry under `name`; true if there was one. */
  destroy(name: string): Promise<boolean>;
}

/** A vault in this process's memory: for tests, and for apps whose data lives no longer than the process. */
export function memoryKeyVault(): KeyVault {
  const entries = new Map<string, string>();
  return {
    get: async (name) => entries.get(name),
    async create(name, value) {
      if (!entries.has(name)) entries.set(name, value);
      return entries.get(name) as string;
    },
    replace: async (name, value) => void entries.set(name, value),
    destroy: async (name) => entries.delete(name),
  };
}

const isCode = (error: unknown, code: string) => (error as NodeJS.ErrnoException | undefined)?.code === code;

/** Writes `text` to a new file and flushes it to disk before resolving. */
async function writeDurably(path: string, text: string): Promise<void> {
  const file = await open(path, "wx", 0o600);
  try {
    await file.writeFile(text, "utf8");
    await file.sync();
  } finally {
    await file.close();
  }
}

/** Flushes a directory's entries (a created, renamed or removed file) to disk. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * A vault kept as one small file per scope in `dir` (made if missing, mode 0600
 * files), named by a SHA-256 of the entry's name so no id reaches a file name.
 * Creation is atomic across processes (a hard link that fails if the file exists),
 * replacement is a rename, and every change is flushed to disk. `destroy`
 * overwrites the file with random bytes before unlinking it; on copy-on-write or
 * journalling file systems that overwrite is best effort, which is why the file
 * holds the scope key sealed under the master key and never in the clear.
 */
export function fileKeyVault(dir: string): KeyVault {
  if (typeof dir !== "string" || dir.length === 0) throw new MemoriaError("INVALID_ARGUMENT", "fileKeyVault needs a directory path.");
  let made: Promise<unknown> | undefined;
  const ready = () => {
    made ??= mkdir(dir, { recursive: true, mode: 0o700 }).catch((error) => {
      made = undefined;
      throw error;
    });
    return made;
  };
  const pathOf = (name: string) => join(dir, `${createHash("sha256").update(name).digest("hex")}.key`);
  const scratch = (path: string) => `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const get = async (name: string) => {
    try {
      return await readFile(pathOf(name), "utf8");
    } catch (error) {
      if (isCode(error, "ENOENT")) return undefined;
      throw error;
    }
  };
  return {
    get,
    async create(name, value) {
      await ready();
      const path = pathOf(name);
      const temp = scratch(path);
      await writeDurably(temp, value);
      try {
        for (;;) {
          try {
            await link(temp, path);
            await syncDirectory(dir);
            return value;
          } catch (error) {
            if (!isCode(error, "EEXIST")) throw error;
          }
          const stored = await get(name);
          if (stored !== undefined) return stored; // else destroyed meanwhile: try again
        }
      } finally {
        await unlink(temp).catch(() => {});
      }
    },
    async replace(name, value) {
      await ready();
      const path = pathOf(name);
      const temp = scratch(path);
      await writeDurably(temp, value);
      await rename(temp, path);
      await syncDirectory(dir);
    },
    async destroy(name) {
      const path = pathOf(name);
      let file: Awaited<ReturnType<typeof open>>;
      try {
        file = await open(path, "r+");
      } catch (error) {
        if (isCode(error, "ENOENT")) return false;
        throw error;
      }
      try {
        const { size } = await file.stat();
        await file.write(randomBytes(size), 0, size, 0);
        await file.sync();
      } finally {
        await file.close();
      }
      await unlink(path).catch((error) => {
        if (!isCode(error, "ENOENT")) throw error;
      });
      await syncDirectory(dir);
      return true;
    },
  };
}
