import { MemoriaError, StoreClosedError, StoreUnavailableError, loadPeerDependency, withTimeout } from "@memoria/core/store-kit";
import type { RedisClient } from "./scripts.js";

type IORedisModule = { default?: new (url: string, options: object) => RedisClient } & (new (url: string, options: object) => RedisClient);

const CONNECTION_ERRORS =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Connection is closed|MaxRetriesPerRequest|Reached the max retries|All sentinels are unreachable|Failed to refresh slots cache|Stream isn't writeable|Command timed out|did not answer within|LOADING|MISCONF|OOM command not allowed|CLUSTERDOWN|TRYAGAIN/i;

/** Errors ioredis and its parser make (redis-errors' classes and ioredis's own), by name. */
const DRIVER_ERRORS = new Set([
  "ReplyError",
  "RedisError",
  "ParserError",
  "AbortError",
  "InterruptError",
  "MaxRetriesPerRequestError",
  "ClusterAllFailedError",
]);

/**
 * Every error of the driver as `StoreUnavailableError`: a lost, hung or refusing
 * server, or an error reply (a replica after a failover answering READONLY, a
 * server out of memory). Other errors pass as they are. ioredis resends commands
 * after a reconnect, and a script that failed part way keeps what it wrote, so a
 * write that failed may still be applied: its outcome is unknown.
 */
function unavailable(error: unknown, where: string): unknown {
  if (MemoriaError.isInstance(error)) return error;
  const name = (error as Error)?.name;
  const message = (error as Error)?.message ?? String(error);
  if (CONNECTION_ERRORS.test(`${name} ${message}`)) {
    return new StoreUnavailableError(`Redis at ${where} is unreachable: ${message.replace(/\.$/, "")}.`, { cause: error, outcome: "unknown" });
  }
  if (DRIVER_ERRORS.has(name)) return new StoreUnavailableError(`Redis at ${where} refused the command: ${message}`, { cause: error, outcome: "unknown" });
  return error;
}

/**
 * The store's connection: the given client, or one made on first use (and closed
 * by `close`); every call bounded by the operation timeout, with a lost, hung or
 * refusing server turned into `STORE_UNAVAILABLE`.
 */
export function redisConnection(given: RedisClient | undefined, url: string | undefined, timeoutMs: number) {
  const owned = given === undefined;
  let current = given;
  let closed = false;

  function client(): RedisClient {
    if (closed) throw new StoreClosedError("redis");
    if (current) return current;
    const IORedis = loadPeerDependency<IORedisModule>("ioredis", "The Redis store", import.meta.url);
    const Redis = IORedis.default ?? IORedis;
    const created = new Redis(url ?? "redis://127.0.0.1:6379", {
      // Fail a command after two reconnect attempts instead of queueing it
      // forever: a turn fails with a clear error while the server is down.
      maxRetriesPerRequest: 2,
      retryStrategy: (times: number) => Math.min(times * 100, 1000),
    });
    // Connection errors reach callers through the failed commands; without a
    // listener ioredis would also log each one as an unhandled error event.
    created.on("error", () => {});
    current = created;
    return created;
  }

  /** Runs `body` against the client within the operation timeout, turning lost connections into STORE_UNAVAILABLE. */
  async function guarded<T>(body: (r: RedisClient) => Promise<T>): Promise<T> {
    try {
      return await withTimeout(body(client()), timeoutMs, () => new Error(`Redis did not answer within ${timeoutMs} ms (operationTimeoutMs)`));
    } catch (error) {
      throw unavailable(error, address());
    }
  }

  /** Where the server is, for errors: the URL's host (never its credentials), or the client's host and port. */
  function address(): string {
    if (url !== undefined) {
      try {
        return new URL(url).host || "the given URL";
      } catch {
        return "the given URL";
      }
    }
    const options = (current as { options?: { host?: string; port?: number } } | undefined)?.options;
    return options?.host ? `${options.host}:${options.port ?? 6379}` : "the cluster"; // a Cluster's options name no host
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    if (owned && current) await current.quit().catch(() => current?.disconnect());
  }

  return { client, guarded, close };
}
