import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * The files under `dir` (recursively, relative paths) whose raw bytes contain
 * `needle`: how erasure tests look for a sentinel in a store's files on disk.
 */
export function filesHolding(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle);
  return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => {
    const path = join(dir, name);
    try {
      return statSync(path).isFile() && readFileSync(path).includes(bytes);
    } catch {
      return false; // removed while we looked
    }
  });
}
