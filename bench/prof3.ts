import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs"; import { tmpdir } from "node:os"; import { join } from "node:path";
import type { HistoryStore } from "@memoria/core";
import { encryptStore } from "@memoria/privacy";
import { createSqliteStore } from "@memoria/sql";
import { memoriaSide } from "./src/systems.ts";
const dir = mkdtempSync(join(tmpdir(), "p3-"));
const times: Record<string, number[]> = {};
function counted(store: HistoryStore, label: string): HistoryStore {
  return new Proxy(store, { get(t, name, r) { const v = Reflect.get(t, name, r); if (typeof v !== "function" || name === "history") return v;
    return async (...a: unknown[]) => { const s = performance.now(); try { return await v.apply(t, a); } finally { (times[`${label}.${String(name)}`] ??= []).push(performance.now() - s); } }; } });
}
const plain = memoriaSide(counted(createSqliteStore({ path: join(dir, "a.db") }), "plain"), { turnSize: 2 });
const inner = counted(createSqliteStore({ path: join(dir, "a.db") }), "inner");
const enc = memoriaSide(counted(encryptStore(inner, { keys: { A: randomBytes(32) }, activeKeyId: "A" }), "enc"), { turnSize: 2 });
await plain.seed("p", 1000); await enc.seed("e", 1000);
for (const k of Object.keys(times)) delete times[k];
const tt: Record<string, number[]> = { plain: [], enc: [] };
for (let i = 0; i < 400; i++) { for (const [n, side, id] of [["plain", plain, "p"], ["enc", enc, "e"]] as const) { const s = performance.now(); await side.turn(id); tt[n].push(performance.now() - s); } }
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
for (const [k, v] of Object.entries(tt)) console.log(k, med(v).toFixed(3));
for (const [k, v] of Object.entries(times)) console.log(k, v.length, med(v).toFixed(3));
