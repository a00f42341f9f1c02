import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { createSqliteStore } from "@memoria/sql";
import { freePort } from "@memoria/testkit/servers";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..", "..");

describe("pnpm studio at a terminal", () => {
  const dir = mkdtempSync(join(tmpdir(), "memoria-studio-terminal-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Ctrl-C at a terminal signals pnpm, the build wrapper and the studio at once. The
  // studio closes and exits 0; pnpm's script shell must not then end by the same
  // signal, which pnpm reported as "ELIFECYCLE Command failed". util-linux's `script`
  // gives the command a real terminal; the ETX byte written to it is the Ctrl-C.
  // `script` starts the command through $SHELL -c; `exec` makes pnpm the terminal's
  // foreground job as it is under a user's shell, since dash (the shell when SHELL is
  // unset, as in CI) waits for its child and then ends itself by the same signal.
  it("stops on Ctrl-C with exit code 0 and nothing from pnpm", { timeout: 180_000 }, async () => {
    mkdirSync(join(dir, ".memoria"));
    const store = createSqliteStore({ path: join(dir, ".memoria", "history.db") });
    await store.append({ sessionId: "s1" }, [new HumanMessage("hello")]);
    await store.close();
    const port = await freePort();
    const child = spawn("script", ["-qfec", `exec pnpm --dir ${ROOT} studio --port ${port}`, "/dev/null"], {
      cwd: dir,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, FORCE_COLOR: "0" },
    });
    let output = "";
    const ready = new Promise<void>((resolve, reject) => {
      const seen = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ctrl-C stops the studio")) resolve();
      };
      child.stdout.on("data", seen);
      child.stderr.on("data", seen);
      child.once("exit", () => reject(new Error(`pnpm studio ended before it was ready:\n${output}`)));
    });
    await ready;
    const exited = new Promise<number | string | null>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
    child.stdin.write("\x03");
    // The exit first, then what was printed: a failure's first line says how it ended.
    const exit = await exited;
    expect(exit, `pnpm studio ended with ${exit}; it printed:\n${output}`).toBe(0);
    expect(output).toContain(`http://127.0.0.1:${port}/`);
    expect(output).not.toContain("ELIFECYCLE");
    expect(output).not.toMatch(/error/i);
  });
});
