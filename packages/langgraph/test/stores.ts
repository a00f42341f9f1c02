import { type HistoryStore, createInMemoryStore } from "@memoria/core";
import { createFileStore } from "@memoria/file";
import { createMongoStore } from "@memoria/mongodb";
import { createRedisStore } from "@memoria/redis";
import { createPostgresStore, createSqliteStore } from "@memoria/sql";
import { randomBytes, randomUUID } from "node:crypto";
import { encryptStore, guardStore, redactStore } from "@memoria/privacy";
import { Cluster } from "ioredis";
import { type CheckpointSaverTestInitializer, deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { MemoriaSaver, THREAD_FIELD } from "../src/index.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A store of a kind, made fresh, and how to throw it away with everything it wrote. */
export interface FreshStore {
  store: HistoryStore;
  dispose(): Promise<void>;
}

export type EmbeddedKind = "memory" | "sqlite" | "file" | "sqlite, encrypted" | "sqlite, guarded, redacted and encrypted";

export function freshStore(kind: EmbeddedKind): FreshStore {
  if (kind === "sqlite, guarded, redacted and encrypted") {
    const encrypted = freshStore("sqlite, encrypted");
    return { store: guardStore(redactStore(encrypted.store), () => true), dispose: encrypted.dispose };
  }
  if (kind === "sqlite, encrypted") {
    const plain = freshStore("sqlite");
    const store = encryptStore(plain.store, { keys: { k1: randomBytes(32) }, activeKeyId: "k1", hashIds: { secret: randomBytes(32) } });
    return { store, dispose: plain.dispose };
  }
  if (kind === "memory") {
    const store = createInMemoryStore();
    return { store, dispose: () => store.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), `memoria-langgraph-${kind}-`));
  const store = kind === "sqlite" ? createSqliteStore({ path: join(dir, "history.db") }) : createFileStore({ directory: dir });
  return {
    store,
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type ServerKind = "postgres" | "redis" | "redis cluster" | "mongodb";

/** A store on a server, in a namespace of its own (tables, key prefix, database), emptied after. */
export async function serverStore(kind: ServerKind, url: string, clusterNodes: { host: string; port: number }[] = []): Promise<FreshStore> {
  const tag = `lg${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const cluster = kind === "redis cluster" ? new Cluster(clusterNodes) : undefined;
  const store =
    kind === "postgres"
      ? createPostgresStore({ connectionString: url, tablePrefix: `${tag}_`, maxConnections: 2 })
      : kind === "redis"
        ? createRedisStore({ url, keyPrefix: `${tag}:` })
        : cluster
          ? createRedisStore({ client: cluster, keyPrefix: `${tag}:` })
          : createMongoStore({ url, dbName: tag });
  return {
    store,
    dispose: async () => {
      await eraseThreads(store);
      await store.close();
      await cluster?.quit();
    },
  };
}

/** Erases every thread the store holds, so a server used by many runs is left as found. */
async function eraseThreads(store: HistoryStore): Promise<void> {
  for (;;) {
    const { sessions } = await store.list({}, { limit: 100 });
    const threads = new Set(sessions.map((key) => key[THREAD_FIELD]).filter((id): id is string => id !== undefined));
    if (threads.size === 0) return;
    for (const threadId of threads) await store.delete({ [THREAD_FIELD]: threadId });
  }
}

/** LangGraph's conformance suite, verbatim, on MemoriaSaver over fresh stores of one kind. */
export function conformance(name: string, open: () => FreshStore | Promise<FreshStore>): void {
  const stores = new Map<MemoriaSaver, FreshStore>();
  const initializer: CheckpointSaverTestInitializer<MemoriaSaver> = {
    checkpointerName: `MemoriaSaver on ${name}`,
    async createCheckpointer() {
      const fresh = await open();
      const saver = new MemoriaSaver({ store: fresh.store });
      stores.set(saver, fresh);
      return saver;
    },
    async destroyCheckpointer(saver) {
      await stores.get(saver)?.dispose();
      stores.delete(saver);
    },
  };
  validate(initializer);
  deltaChannelHistoryTests(initializer);
}
