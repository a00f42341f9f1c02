import { createRequire } from "node:module";
import { MemoriaError } from "@memoria/core";

/**
 * Loads an optional peer dependency when a store first needs it, so that
 * installing `@memoria/sql` does not pull in both database drivers.
 */
export function loadPeer<T>(packageName: string, forWhat: string): T {
  const require = createRequire(import.meta.url);
  try {
    return require(packageName) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code !== "MODULE_NOT_FOUND") throw error;
    throw new MemoriaError(
      "MISSING_DEPENDENCY",
      `${forWhat} needs the "${packageName}" package. Install it: pnpm add ${packageName} (or npm install ${packageName}).`,
      { cause: error },
    );
  }
}
