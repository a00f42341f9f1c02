/**
 * How a driver call is treated: `fail` says how the armed call fails (a promise
 * that rejects, a synchronous throw as better-sqlite3's, or a cursor that fails
 * when it fetches, as MongoDB's `find`); `wrap` names the kind of object the call
 * returns (or resolves to), whose calls are then counted too. Neither: passed
 * through, uncounted (event listeners, releasing a pooled client).
 */
export interface CallTreatment {
  fail?: "reject" | "throw" | "cursor";
  wrap?: string;
}

/** For an object of kind `owner`, how its method `name` is treated. */
export type TreatCall = (owner: string, name: string) => CallTreatment | undefined;

const CURSOR_FETCHES = new Set(["toArray", "next", "hasNext", "tryNext", "forEach"]);

/**
 * A real driver object (a client, a pool, a database handle), with the calls that
 * reach the server counted; armed, the N-th such call fails with an error made as
 * the driver makes it, instead of reaching the server. What the call would have
 * done is not done: the fault is the driver giving out at that call, as a network
 * cut, a full disk or a failover does. Objects the driver hands back (a pooled
 * client, a collection, a pipeline, a prepared statement) are wrapped the same way.
 */
export class DriverFaults {
  #failAt = 0;
  #calls = 0;
  #error: () => Error = () => new Error("driver fault");
  /** Whether the armed call was reached since the last `arm`. */
  fired = false;

  constructor(private readonly treat: TreatCall) {}

  /** Fails the `at`-th counted call from now with `error()`; 0 disarms. */
  arm(at: number, error: () => Error): void {
    this.#failAt = at;
    this.#calls = 0;
    this.fired = false;
    this.#error = error;
  }

  disarm(): void {
    this.#failAt = 0;
  }

  /** `real`, as an object of kind `kind` (the name `treat` gets as its owner). */
  wrap<T extends object>(real: T, kind: string): T {
    const proxy: T = new Proxy(real, {
      get: (target, name) => {
        const value = Reflect.get(target, name, target);
        if (typeof value !== "function" || typeof name !== "string") return value;
        const treatment = this.treat(kind, name) ?? {};
        return (...args: unknown[]) => {
          if (treatment.fail && this.#failAt > 0 && ++this.#calls === this.#failAt) {
            this.fired = true;
            const error = this.#error();
            if (treatment.fail === "throw") throw error;
            if (treatment.fail === "reject") return Promise.reject(error);
            return this.#failingCursor(value.apply(target, args) as object, error);
          }
          const result: unknown = value.apply(target, args);
          if (result === target) return proxy; // chained calls: the same object
          return treatment.wrap ? this.#wrapResult(result, treatment.wrap) : result;
        };
      },
    });
    return proxy;
  }

  #wrapResult(result: unknown, kind: string): unknown {
    if (result instanceof Promise) return result.then((value: unknown) => this.#wrapResult(value, kind));
    return typeof result === "object" && result !== null ? this.wrap(result, kind) : result;
  }

  /** A cursor whose first fetch fails with `error`; its builder calls (sort, limit, project) keep it. */
  #failingCursor(cursor: object, error: Error): object {
    const proxy: object = new Proxy(cursor, {
      get: (target, name) => {
        if (typeof name === "string" && CURSOR_FETCHES.has(name)) return () => Promise.reject(error);
        const value = Reflect.get(target, name, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          return result === target ? proxy : result;
        };
      },
    });
    return proxy;
  }
}
