import { Transform } from "node:stream";
import { MemoriaError } from "@memoria/core";

/** The longest message memoria mcp reads, over stdio as over HTTP (the MCP SDK's own body limit). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * A message longer than the server reads. Over stdio nothing can answer it (its id
 * was never read), so the server stops with this error on stderr and a non-zero exit.
 */
export class MessageTooLargeError extends MemoriaError {
  readonly maxBytes: number;

  constructor(maxBytes: number) {
    super(
      "INVALID_INPUT",
      `A message on stdin ran past ${maxBytes} bytes without its closing line break; memoria mcp reads messages of up to ${maxBytes} bytes. Stopped.`,
    );
    this.maxBytes = maxBytes;
  }
}

/**
 * Newline-delimited input passed through while each line stays within `maxBytes`;
 * the first line to run past it is never passed on: `onTooLong` is called instead,
 * and nothing after it is read.
 */
export function boundedLines(maxBytes: number, onTooLong: (error: MessageTooLargeError) => void): Transform {
  let open = 0; // bytes of the line not yet ended
  let stopped = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (stopped) return done();
      for (let start = 0; ; ) {
        const end = chunk.indexOf(10, start);
        open += (end === -1 ? chunk.length : end) - start;
        if (open > maxBytes) {
          stopped = true;
          onTooLong(new MessageTooLargeError(maxBytes));
          return done();
        }
        if (end === -1) break;
        open = 0;
        start = end + 1;
      }
      done(null, chunk);
    },
  });
}
