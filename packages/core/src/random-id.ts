import { randomBytes } from "node:crypto";

/** Each byte's two lowercase hex digits, as character codes: byte `b` at `2b` and `2b + 1`. */
const HEX_DIGITS = new Uint8Array(512);
for (let byte = 0; byte < 256; byte++) {
  const digits = byte.toString(16).padStart(2, "0");
  HEX_DIGITS[2 * byte] = digits.charCodeAt(0);
  HEX_DIGITS[2 * byte + 1] = digits.charCodeAt(1);
}

/** Random bytes drawn 4 KiB at a time (256 ids), as `crypto.randomUUID()` draws its own. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let taken = POOL_BYTES;

/** Where an id is written before it becomes a string; a longer prefix gets a buffer of its own. */
const scratch = Buffer.allocUnsafe(128);
const DASH = 0x2d;

/**
 * A random id (a version 4 UUID, after `prefix`) as one flat string: written as
 * latin1 bytes from pooled random bytes and read back once. `crypto.randomUUID()`
 * builds its text as a rope of small strings, about 490 bytes of heap wherever it
 * is kept (a store's turn-id set, a stored message's id), and flattening it by a
 * round trip through a `Buffer` cost a turn more than the UUID itself.
 */
export function randomId(prefix = ""): string {
  if (taken + 16 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    taken = 0;
  }
  const length = prefix.length + 36;
  const text = length <= scratch.length ? scratch : Buffer.allocUnsafe(length);
  let at = text.write(prefix, 0, "latin1");
  for (let i = 0; i < 16; i++) {
    let byte = pool[taken + i] as number;
    if (i === 6)
      byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // RFC 9562 variant
    if (i === 4 || i === 6 || i === 8 || i === 10) text[at++] = DASH;
    text[at++] = HEX_DIGITS[2 * byte] as number;
    text[at++] = HEX_DIGITS[2 * byte + 1] as number;
  }
  taken += 16;
  return text.toString("latin1", 0, at);
}
