import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, resolve } from "node:path";
import type { HistoryStore } from "@memoria/core";
import { UsageError } from "./cli-error.js";

/** A store the command opened, with the clean-up calls its kind has. */
export interface OpenedStore {
  store: HistoryStore;
  /** The URL without its password, for messages. */
  label: string;
}

const SCHEMES = "sqlite:./file.db, postgres://…, mysql://…, redis://…, mongodb://…, file:./folder";

/** True for the error an import throws when `name` (a package, or a file of it) is not installed. */
export function isMissingModule(error: unknown, name: string): boolean {
  const code = (error as NodeJS.ErrnoException)?.code;
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && String((error as Error).message).includes(name);
}

/**
 * The store package of a kind of URL, loaded only when a URL needs it: the stores
 * and their drivers are optional peers of @memoria/cli, so a missing one is a
 * usage error naming what to install, not a stack trace. `needs` is the store
 * package, then its driver.
 */
async function storePackage<T>(what: string, needs: readonly [string, string], load: () => Promise<T>): Promise<T> {
  const [store, driver] = needs;
  const missing: string[] = [];
  let loaded: T | undefined;
  try {
    loaded = await load();
  } catch (error) {
    if (!isMissingModule(error, store)) throw error;
    missing.push(store);
  }
  try {
    createRequire(import.meta.url).resolve(driver);
  } catch {
    missing.push(driver);
  }
  if (missing.length > 0) {
    throw new UsageError(
      `${what} needs ${store} and ${driver} beside @memoria/cli, and ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not installed: npm install ${needs.join(" ")}`,
    );
  }
  return loaded as T; // loaded: its package was not missing
}

/**
 * Relative paths are taken from where the user ran the command: the working
 * directory, or MEMORIA_CWD, which `pnpm memoria` sets (it runs from the repo's
 * root). Not INIT_CWD: npm and pnpm leave it set in every child process, so a
 * command run from any npm script would resolve paths against that script's folder.
 * Unless the command writes (`create`), a path that does not exist is a typo, not
 * a new, empty store.
 */
function localPath(path: string, create: boolean): string {
  if (path === ":memory:") return path;
  const full = isAbsolute(path) ? path : resolve(process.env.MEMORIA_CWD || process.cwd(), path);
  if (!create && !existsSync(full)) throw new UsageError(`there is no store at ${full}; check the path (only import, migrate --to and mcp create one).`);
  return full;
}

function withoutPassword(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, "//$1:***@");
}

/**
 * Opens a store from a URL:
 * `sqlite:./x.db`, `postgres://…`, `mysql://…` (MySQL or MariaDB), `redis://…`, `mongodb://…`, `file:./dir`.
 * A `?prefix=` parameter names the table or key prefix (default `memoria_` /
 * `memoria:`), for stores an app created with another prefix.
 */
export async function openStore(url: string | undefined, options: { create?: boolean } = {}): Promise<OpenedStore> {
  const create = options.create ?? false;
  const target = url ?? process.env.MEMORIA_STORE;
  if (!target) throw new UsageError(`no store given: pass --store URL (${SCHEMES}) or set MEMORIA_STORE.`);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(target)?.[1]?.toLowerCase();
  const label = withoutPassword(target);
  const [base, query = ""] = target.split("?", 2) as [string, string?];
  const prefix = new URLSearchParams(query).get("prefix") ?? undefined;
  switch (scheme) {
    case "sqlite": {
      const { createSqliteStore } = await storePackage("a sqlite: URL", ["@memoria/sql", "better-sqlite3"], () => import("@memoria/sql"));
      const path = base.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
      if (!path) throw new UsageError("a sqlite URL needs a path, e.g. sqlite:./history.db");
      return { store: createSqliteStore({ path: localPath(path, create), tablePrefix: prefix }), label };
    }
    case "postgres":
    case "postgresql": {
      const { createPostgresStore } = await storePackage("a postgres:// URL", ["@memoria/sql", "pg"], () => import("@memoria/sql"));
      return { store: createPostgresStore({ connectionString: base, tablePrefix: prefix, maxConnections: 4 }), label };
    }
    case "mysql":
    case "mariadb": {
      const { createMysqlStore } = await storePackage("a mysql:// URL", ["@memoria/sql", "mysql2"], () => import("@memoria/sql"));
      return { store: createMysqlStore({ uri: `mysql:${base.slice(scheme.length + 1)}`, tablePrefix: prefix, maxConnections: 4 }), label };
    }
    case "redis":
    case "rediss": {
      const { createRedisStore } = await storePackage("a redis:// URL", ["@memoria/redis", "ioredis"], () => import("@memoria/redis"));
      return { store: createRedisStore({ url: base, keyPrefix: prefix }), label };
    }
    case "mongodb":
    case "mongodb+srv": {
      const { createMongoStore } = await storePackage("a mongodb:// URL", ["@memoria/mongodb", "mongodb"], () => import("@memoria/mongodb"));
      const dbName = new URL(base).pathname.slice(1) || undefined;
      return { store: createMongoStore({ url: base, dbName, collectionName: prefix }), label };
    }
    case "file": {
      const { createFileStore } = await import("@memoria/file");
      const directory = base.slice("file:".length).replace(/^\/\/(?=\/)/, "");
      if (!directory) throw new UsageError("a file URL needs a folder, e.g. file:./sessions");
      return { store: createFileStore({ directory: localPath(directory, create) }), label };
    }
    default:
      throw new UsageError(`cannot open ${JSON.stringify(label)}: use one of ${SCHEMES}.${schemeHint(target, scheme)}`);
  }
}

/** What a store URL without a known scheme most likely meant. */
function schemeHint(target: string, scheme: string | undefined): string {
  const known: Record<string, string> = {
    sqlite3: "sqlite",
    postgre: "postgres",
    pg: "postgres",
    maria: "mariadb",
    mongo: "mongodb",
    dir: "file",
    folder: "file",
  };
  if (scheme && known[scheme]) return ` Did you mean ${known[scheme]}:${target.slice(scheme.length + 1)}?`;
  if (scheme && scheme.length > 1) return ""; // another scheme: the list says what there is
  // A bare path (or a Windows drive letter): a folder is a file store, anything else an SQLite file.
  let folder = false;
  try {
    folder = statSync(target).isDirectory();
  } catch {
    // not there yet: judged by its name
  }
  return folder || target.endsWith("/") ? ` Did you mean file:${target}?` : ` Did you mean sqlite:${target}?`;
}
