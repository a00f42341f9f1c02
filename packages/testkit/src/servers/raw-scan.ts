import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** How many times `bytes` stand in the file at `path` (0 for a folder, or a file removed while we looked). */
function timesIn(path: string, bytes: Buffer): number {
  let content: Buffer;
  try {
    if (!statSync(path).isFile()) return 0;
    content = readFileSync(path);
  } catch {
    return 0; // removed while we looked
  }
  let times = 0;
  for (let at = content.indexOf(bytes); at !== -1; at = content.indexOf(bytes, at + bytes.length)) times++;
  return times;
}

const filesUnder = (dir: string) => readdirSync(dir, { recursive: true }) as string[];

/**
 * The files under `dir` (recursively, relative paths) whose raw bytes contain
 * `needle`: how erasure tests look for a sentinel in a store's files on disk.
 */
export function filesHolding(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle);
  return filesUnder(dir).filter((name) => timesIn(join(dir, name), bytes) > 0);
}

/** How many times `needle` stands in the raw bytes of all files under `dir`: how a test counts what a server wrote to disk. */
export function timesHolding(dir: string, needle: string): number {
  const bytes = Buffer.from(needle);
  return filesUnder(dir).reduce((sum, name) => sum + timesIn(join(dir, name), bytes), 0);
}
