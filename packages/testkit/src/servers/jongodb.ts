import { spawn } from "node:child_process";
import type { RunningServer } from "./postgres.js";
import { stopProcess } from "./process.js";

/**
 * Starts the MongoDB-wire-compatible test server from the npm package
 * `@jongodb/memory-server-bin-linux-x64-gnu` (pass its binary's path) on a free
 * loopback port; it prints its URI when ready. Stopped by its own process id.
 */
export async function startJongodb(binary: string): Promise<RunningServer> {
  const child = spawn(binary, ["--host=127.0.0.1", "--port=0"], { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`jongodb did not start within 30 s: ${output}`)), 30_000);
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /JONGODB_URI=(\S+)/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found[1] as string);
      }
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("exit", (code) => reject(new Error(`jongodb exited (${code}): ${output}`)));
  });
  return { url, pid: child.pid as number, stop: () => stopProcess(child, exited, "SIGTERM") };
}

/** The binary of `@jongodb/memory-server-bin-linux-x64-gnu`, resolved by the caller's `require`. */
export function jongodbBinary(require: NodeJS.Require): string {
  const manifest = require.resolve("@jongodb/memory-server-bin-linux-x64-gnu/package.json");
  const { jongodb } = require("@jongodb/memory-server-bin-linux-x64-gnu/package.json") as { jongodb: { binary: string } };
  return manifest.replace(/package\.json$/, jongodb.binary);
}
