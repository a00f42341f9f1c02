import { type FileHandle, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { type SessionKey, createSessionKey, encodeSessionKey } from "@memoria/core";
import { type Header, openIfExists } from "./session-file.js";

/** Every session file under `root` (`<root>/<shard>/<hash>.jsonl`), a folder at a time. */
export async function* sessionFiles(root: string): AsyncGenerator<string> {
  let shards: string[];
  try {
    shards = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  for (const shard of shards) {
    const names = await readdir(join(root, shard)).catch(() => [] as string[]); // not a folder of ours
    for (const name of names) if (name.endsWith(".jsonl")) yield join(root, shard, name);
  }
}

/** A session found on disk: its key, encoded key, creation time and last write (the file's modification time). */
export interface FoundSession {
  key: SessionKey;
  id: string;
  createdAt: number;
  lastActiveAt: number;
}

/** The header line of an open session file. */
export async function readHeader(handle: FileHandle, size: number): Promise<Header> {
  const head = Buffer.alloc(Math.min(size, 8_192));
  await handle.read(head, 0, head.length, 0);
  return JSON.parse(head.toString("utf8").split("\n")[0] ?? "") as Header;
}

/** Every live session under `root`, by the header line of its file, sorted by encoded key. */
export async function liveSessions(root: string, expired: (mtimeMs: number) => boolean): Promise<FoundSession[]> {
  const found: FoundSession[] = [];
  for await (const file of sessionFiles(root)) {
    const handle = await openIfExists(file);
    if (!handle) continue;
    try {
      const info = await handle.stat();
      if (expired(info.mtimeMs)) continue;
      const header = await readHeader(handle, info.size);
      const key = createSessionKey(header.key);
      found.push({ key, id: encodeSessionKey(key), createdAt: header.created ?? info.birthtimeMs, lastActiveAt: Math.floor(info.mtimeMs) });
    } catch {
      // a file still being created, or not ours
    } finally {
      await handle.close();
    }
  }
  return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The session files under `root` whose modification time has expired. */
export async function expiredFiles(root: string, expired: (mtimeMs: number) => boolean): Promise<string[]> {
  const found: string[] = [];
  for await (const file of sessionFiles(root)) {
    const info = await stat(file).catch(() => undefined);
    if (info && expired(info.mtimeMs)) found.push(file);
  }
  return found;
}
