import { StoreClosedError } from "@memoria/core";

/** A driver's connection pool as a dialect holds it. */
export interface PoolHolder<P> {
  /** The pool: the one given, or one created on first use. */
  get(): P;
  /** Ends the pool if the dialect created it (a given one is its owner's to end). Safe twice. */
  close(): Promise<void>;
}

/**
 * Holds the pool a dialect was given, or creates one with `create` when first needed.
 * After `close`, no pool is created: a lock released after close (its holder outlived
 * the store) must not open a new pool, whose idle connections would keep the process alive.
 */
export function poolHolder<P extends { end(): Promise<void> }>(engine: string, given: P | undefined, create: () => P): PoolHolder<P> {
  let pool = given;
  let closed = false;
  return {
    get() {
      if (pool) return pool;
      if (closed) throw new StoreClosedError(engine);
      pool = create();
      return pool;
    },
    async close() {
      closed = true;
      if (given === undefined && pool) {
        const closing = pool;
        pool = undefined;
        await closing.end();
      }
    },
  };
}
