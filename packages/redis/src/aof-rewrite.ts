import type { RedisClient } from "./scripts.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The masters to rewrite: every master of a Cluster, or the one server. */
function masters(client: RedisClient): RedisClient[] {
  return "nodes" in client && typeof client.nodes === "function" ? (client.nodes("master") as RedisClient[]) : [client];
}

async function rewriting(node: RedisClient): Promise<boolean> {
  const info = await node.info("persistence");
  return /aof_rewrite_in_progress:1|aof_rewrite_scheduled:1/.test(info);
}

/**
 * Rewrites the append-only file of every master (`BGREWRITEAOF`) and waits until
 * it is done, so keys deleted before the call are gone from the files on disk, not
 * only from memory. A server without AOF has nothing to rewrite. Costs a full
 * rewrite of the dataset: meant for erasure, not for every delete of a busy server.
 */
export async function rewriteAppendOnlyFiles(client: RedisClient, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await Promise.all(
    masters(client).map(async (node) => {
      const info = await node.info("persistence");
      if (!/aof_enabled:1/.test(info)) return;
      // A rewrite already running began before the delete; the one asked for here runs after it.
      await node.bgrewriteaof();
      while (await rewriting(node)) {
        if (Date.now() > deadline) throw new Error(`the append-only file rewrite did not finish within ${timeoutMs} ms`);
        await sleep(50);
      }
    }),
  );
}
