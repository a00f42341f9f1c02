import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

const BIN = join(import.meta.dirname, "..", "src", "bin.ts");

export interface StudioProcess {
  url: string;
  base: string;
  token: string;
  stop(): Promise<void>;
}

/** Runs `memoria studio …` as its own process and waits for the URL it prints. */
export async function runStudio(args: string[]): Promise<StudioProcess> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", BIN, "studio", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the studio printed no URL in 60 s:\n${output}`)), 60_000);
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/.exec(output)?.[0];
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", seen);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the studio exited (${code}) before printing its URL:\n${output}`));
    });
  });
  const { origin } = new URL(url);
  return {
    url,
    base: origin,
    token: new URL(url).searchParams.get("token") as string,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
