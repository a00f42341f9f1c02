import { dotProduct } from "./vectors.js";
import { VECTOR_SCAN_WASM } from "./vector-scan-wasm.js";

/** Floats a row holds: the scan takes 16 at a time, so rows are padded with zeros to a multiple of 16. */
const LANES = 16;
const PAGE = 65_536;

/** What the slab uses of WebAssembly (the project's compiler settings have no types for it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface Wasm {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasmRuntime = (globalThis as { WebAssembly?: Wasm }).WebAssembly;

let compiled: object | null | undefined;

/** The scan compiled once, where the runtime has WebAssembly with 128-bit SIMD; undefined elsewhere. */
function scanModule(): object | undefined {
  if (compiled === undefined) {
    compiled = null;
    try {
      const bytes = Uint8Array.from(atob(VECTOR_SCAN_WASM), (c) => c.charCodeAt(0));
      if (wasmRuntime?.validate(bytes)) compiled = new wasmRuntime.Module(bytes);
    } catch {
      // No WebAssembly here (or it is switched off): the scan runs in JavaScript.
    }
  }
  return compiled ?? undefined;
}

type Dots = (query: number, rows: number, n: number, stride: number, out: number) => void;

/**
 * Vectors of 32-bit floats held one after another in one block of memory, so a
 * query is scored against all of them in one pass: by WebAssembly's 128-bit SIMD
 * where the runtime has it and the block fills a page of it (about 6 ms for 100,000
 * vectors of 256 floats here, where a JavaScript loop over separate arrays takes 50),
 * by a JavaScript loop elsewhere.
 * Layout, in floats: the query (one row), then the rows, then the scores (one per
 * row), so the rows grow in place. A removed row is zeroed at once and its slot
 * reused. A score is the dot product over the shorter of the two vectors, as
 * `dotProduct` computes it.
 */
export class VectorSlab {
  /** @param options.wasm false: score in JavaScript even where WebAssembly is there (tests run both). */
  constructor(private readonly options: { wasm?: boolean } = {}) {}

  #stride = 0;
  #capacity = 0;
  #used = 0;
  readonly #free: number[] = [];
  #memory: WasmMemory | undefined;
  #dots: Dots | undefined;
  #floats = new Float32Array(0);

  /** Bytes of the block it holds now. */
  get bytes(): number {
    return this.#floats.byteLength;
  }

  /** Slots handed out so far, free ones included: scores come back for each. */
  get slots(): number {
    return this.#used;
  }

  /** Holds `vector` in a free slot; gives the slot. */
  add(vector: Float32Array): number {
    const slot = this.#free.pop() ?? this.#used;
    if (slot === this.#used) {
      this.#fit(this.#used + 1, vector.length);
      this.#used++;
    }
    this.set(slot, vector);
    return slot;
  }

  /** Puts `vector` in `slot` in place of what it held. */
  set(slot: number, vector: Float32Array): void {
    this.#fit(this.#used, vector.length);
    const at = this.#rowAt(slot);
    this.#floats.fill(0, at, at + this.#stride);
    this.#floats.set(vector, at);
  }

  /** Zeroes `slot` and frees it for the next `add`. */
  remove(slot: number): void {
    const at = this.#rowAt(slot);
    this.#floats.fill(0, at, at + this.#stride);
    this.#free.push(slot);
  }

  /** A copy of the first `length` floats of `slot` (its vector's length: a row is padded). */
  read(slot: number, length: number): Float32Array {
    const at = this.#rowAt(slot);
    return this.#floats.slice(at, at + length);
  }

  /** Each slot's score against `query` (free slots score 0), valid until the slab next changes. */
  scores(query: Float32Array): Float32Array {
    const stride = this.#stride;
    const n = this.#used;
    if (n === 0) return new Float32Array(0);
    const floats = this.#floats;
    floats.fill(0, 0, stride);
    floats.set(query.length > stride ? query.subarray(0, stride) : query, 0);
    const out = stride + this.#capacity * stride;
    if (this.#dots) {
      this.#dots(0, stride * 4, n, stride, out * 4);
    } else {
      const padded = floats.subarray(0, stride);
      for (let row = 0; row < n; row++) floats[out + row] = dotProduct(floats.subarray(stride * (row + 1), stride * (row + 2)), padded);
    }
    return floats.subarray(out, out + n);
  }

  #rowAt(slot: number): number {
    return this.#stride * (slot + 1);
  }

  /** Room for `rows` rows of at least `length` floats: a wider stride re-lays every row; more rows grow the block in place. */
  #fit(rows: number, length: number): void {
    const stride = Math.max(this.#stride, Math.ceil(Math.max(length, 1) / LANES) * LANES);
    if (stride === this.#stride && rows <= this.#capacity) return;
    const capacity = rows <= this.#capacity ? this.#capacity : Math.max(8, this.#capacity * 2, rows);
    const bytes = (stride + capacity * stride + capacity) * 4;
    const old = this.#floats;
    const oldStride = this.#stride;
    if (stride === oldStride && this.#memory) {
      this.#memory.grow(Math.max(0, Math.ceil(bytes / PAGE) - this.#memory.buffer.byteLength / PAGE));
      this.#floats = new Float32Array(this.#memory.buffer);
    } else {
      this.#allocate(bytes);
      for (let row = 0; row < this.#used; row++) {
        this.#floats.set(old.subarray(oldStride * (row + 1), oldStride * (row + 2)), stride * (row + 1));
      }
      old.fill(0); // what the old block held is not left behind in it
    }
    this.#stride = stride;
    this.#capacity = capacity;
  }

  /**
   * A new block of `bytes`: WebAssembly memory bound to a new instance of the scan,
   * or, below one page of it (64 KiB, its least) or without WebAssembly, an
   * ArrayBuffer scanned in JavaScript: a small scope (most are) costs no more than its rows.
   */
  #allocate(bytes: number): void {
    const module = this.options.wasm === false || bytes < PAGE ? undefined : scanModule();
    if (!module || !wasmRuntime) {
      this.#memory = undefined;
      this.#dots = undefined;
      this.#floats = new Float32Array(bytes / 4);
      return;
    }
    this.#memory = new wasmRuntime.Memory({ initial: Math.ceil(bytes / PAGE) });
    const instance = new wasmRuntime.Instance(module, { env: { memory: this.#memory } });
    this.#dots = instance.exports.dots as Dots;
    this.#floats = new Float32Array(this.#memory.buffer);
  }
}
