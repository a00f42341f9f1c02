import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { faultSuite } from "@memoria/testkit";
import { createFileStore } from "../src/index.js";

const noServer = "the file store has no server to";
faultSuite({
  name: "file",
  async start() {
    const dir = mkdtempSync(join(tmpdir(), "memoria-file-faults-"));
    return { url: dir, stop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
  createStore: (directory) => createFileStore({ directory, fsync: "none" }),
  storeModule: join(import.meta.dirname, "fixtures", "file-store.ts"),
  skip: {
    restart: `${noServer} restart (a full disk and a writer killed mid-turn are its faults)`,
    crash: `${noServer} kill`,
    pause: `${noServer} freeze`,
    terminateConnections: `${noServer} cut off`,
  },
});
