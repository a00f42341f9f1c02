import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** The page's own files: beside this module when run from the sources, copied to dist/studio-app by the build. */
const APP = [join(here, "app"), join(here, "studio-app")].find((dir) => existsSync(dir)) ?? join(here, "app");

const require = createRequire(import.meta.url);
/** The frontend libraries, served from the installed packages: nothing comes from a CDN. */
const VENDOR: Record<string, () => string> = {
  "/vendor/preact.js": () => require.resolve("preact").replace(/preact\.js$|[^/]+$/, "preact.module.js"),
  "/vendor/hooks.js": () => require.resolve("preact/hooks").replace(/[^/]+$/, "hooks.module.js"),
  "/vendor/htm.js": () => require.resolve("htm").replace(/[^/]+$/, "htm.module.js"),
};

const FILES: Record<string, [string, string]> = {
  "/": ["index.html", "text/html; charset=utf-8"],
  "/app.js": ["app.js", "text/javascript; charset=utf-8"],
  "/views.js": ["views.js", "text/javascript; charset=utf-8"],
  "/app.css": ["app.css", "text/css; charset=utf-8"],
};

/** The file a path names, or undefined: only these fixed paths are served. */
export async function assetFile(pathname: string): Promise<{ path: string; type: string } | undefined> {
  const vendor = VENDOR[pathname];
  if (vendor) return { path: vendor(), type: "text/javascript; charset=utf-8" };
  const file = FILES[pathname];
  return file && { path: join(APP, file[0]), type: file[1] };
}
