import { spawn } from "node:child_process";
import { join } from "node:path";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const BIN = join(import.meta.dirname, "..", "src", "bin.ts");

/** Runs `memoria …` as its own process (as a shell would), with no standard input. */
export function memoria(
  args: string[],
  options: { env?: Record<string, string>; onStderr?: (text: string) => void } = {},
): Promise<CliResult> & { kill(): void } {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, ...args], {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    options.onStderr?.(stderr);
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return Object.assign(done, { kill: () => void child.kill("SIGKILL") });
}
