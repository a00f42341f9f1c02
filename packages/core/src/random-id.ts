/**
 * A random id (a UUID, after `prefix`) as one flat string. `crypto.randomUUID()`
 * builds its text as a rope of small strings, about 530 bytes of heap wherever it
 * is kept (a store's turn-id set, a stored message's id); copied out of a buffer it
 * is one string of about 50.
 */
export function randomId(prefix = ""): string {
  return Buffer.from(`${prefix}${crypto.randomUUID()}`, "latin1").toString("latin1");
}
