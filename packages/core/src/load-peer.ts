import { createRequire } from "node:module";
import { MemoriaError } from "./errors.js";

/**
 * Loads an optional peer dependency (a database driver) when a store first needs
 * it, resolving from the calling package (`fromUrl`: its `import.meta.url`), so
 * that installing a store package does not pull in every driver. A missing one is a
 * `MISSING_DEPENDENCY` error that says what to install.
 */
export function loadPeerDependency<T>(packageName: string, forWhat: string, fromUrl: string): T {
  const require = createRequire(fromUrl);
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
