import { recallConversations } from "./recall-conversations.js";
import { recallQualityScores } from "./recall-quality.js";
const set = recallConversations();
console.log("turns", set.reduce((n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0), 0), "questions", set.reduce((n, c) => n + c.questions.length, 0));
const kinds: Record<string, number> = {};
for (const c of set) for (const q of c.questions) kinds[q.kind] = (kinds[q.kind] ?? 0) + 1;
console.log(kinds);
if (process.argv[2] === "show") { for (const s of set[0]!.sessions.slice(0, 3)) { console.log("--"); for (const t of s.turns) console.log(t.speaker, t.text); } console.log(set[0]!.questions.slice(0, 12)); process.exit(0); }
const t0 = Date.now();
for (const r of await recallQualityScores()) console.log(r.system.padEnd(30), r.kind.padEnd(10), String(r.questions).padStart(5), ...[5, 10, 20].map((k) => `r@${k} ${(100 * r.recall[k]!).toFixed(1)}`), ...[5, 10].map((k) => `h@${k} ${(100 * r.hit[k]!).toFixed(1)}`), r.queryMs.toFixed(3));
console.log("took", Date.now() - t0);
