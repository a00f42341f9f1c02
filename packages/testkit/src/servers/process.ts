import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:net";

/** A free TCP port on the loopback interface, chosen by the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** The uid/gid to run a server as: the given system user when we are root (servers refuse root). */
export function runAs(user: string): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const uid = Number(execFileSync("id", ["-u", user]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", user]).toString().trim());
  return { uid, gid };
}

/** The newest `/usr/lib/postgresql/N/bin` (Debian's layout), or the directory of `pg_ctl` on PATH. */
export function postgresBinDir(): string {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(`${root}/${v}/bin/postgres`))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return `${root}/${versions[0]}/bin`;
  }
  try {
    return execFileSync("pg_config", ["--bindir"]).toString().trim();
  } catch {
    throw new Error(
      "PostgreSQL server binaries not found (looked in /usr/lib/postgresql/*/bin and pg_config). " +
        "Install them (apt-get install postgresql) or set DATABASE_URL to an existing server.",
    );
  }
}

/** Finds an executable on PATH, or explains how to get it. */
export function which(command: string, hint: string): string {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(`${dir}/${command}`)) return `${dir}/${command}`;
  }
  throw new Error(`${command} not found on PATH. ${hint}`);
}

/** Starts a long-running server process whose output is kept for error messages. */
export function startProcess(command: string, args: string[], options: { uid?: number; gid?: number; cwd?: string } = {}) {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** Sends `signal` to the process and waits for it to exit (SIGKILL after `graceMs`). */
export async function stopProcess(child: ChildProcess, exited: Promise<unknown>, signal: NodeJS.Signals = "SIGTERM", graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Polls `check` until it resolves true, or throws with `describe()` after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
}

/** The process and every descendant of it (a server's workers), from /proc. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const tree: number[] = [];
  const visit = (p: number) => {
    tree.push(p);
    for (const child of children.get(p) ?? []) visit(child);
  };
  visit(pid);
  return tree;
}

/** Sends `signal` to a server and all its workers (SIGSTOP freezes a whole server, not only its parent). */
export function signalTree(pid: number, signal: NodeJS.Signals): void {
  for (const p of processTree(pid)) {
    try {
      process.kill(p, signal);
    } catch {
      // gone meanwhile
    }
  }
}

/** True while the process exists and is not a zombie. */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
