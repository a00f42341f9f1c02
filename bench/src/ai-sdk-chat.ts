/**
 * W11: an AI SDK chat's persistence per turn. memoria's way: `loadChat` (the
 * whole chat, as UI messages) and `saveChat` (the list with the new question and
 * answer, planned from the loaded chat; it stores only those two, once). The bare store's way: `read`
 * and `append` of the same two messages as LangChain messages, with no UI
 * messages, no validation and no check of what is stored already.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { loadChat, saveChat } from "@memoria/ai-sdk";
import type { HistoryStore } from "@memoria/core";
import type { UIMessage } from "ai";
import { type Warmup, interleave, median } from "./measure.js";

export interface ChatRow {
  store: string;
  messages: number;
  memoriaMs: number;
  bareMs: number;
}

const QUESTION = "Could you tell me how the trip to the coast went last weekend, and whether the weather held up for the walk?";
const ANSWER = "It went well: we left early, the weather held until the afternoon, and the walk along the cliffs took about three hours with a stop for lunch.";

const ui = (id: string, role: "user" | "assistant", text: string): UIMessage =>
  role === "user" ? { id, role, parts: [{ type: "text", text }] } : { id, role, parts: [{ type: "step-start" }, { type: "text", text, state: "done" }] };

/**
 * One store, chats of the given sizes: the median turn of each side. Both sides
 * first run for `warmupMs` (a second) on a throwaway chat, so that what is compared is warm
 * code (a server's steady state), not which side has more code still to compile;
 * the measured chats grow by two messages a turn over the run, alike on both sides.
 */
export async function chatPersistence(name: string, store: HistoryStore, sizes: readonly number[], runs: number, warmupMs = 1_000): Promise<ChatRow[]> {
  await turns(store, "warm-up", 10, 0, { rounds: 3, ms: warmupMs });
  const rows: ChatRow[] = [];
  for (const size of sizes) {
    const { memoria, bare } = await turns(store, String(size), size, runs, 3);
    rows.push({ store: name, messages: size, memoriaMs: median(memoria), bareMs: median(bare) });
  }
  return rows;
}

/** Turns of both sides on a new chat of `size` messages each, interleaved; the chats are deleted after. */
async function turns(store: HistoryStore, label: string, size: number, runs: number, warmup: Warmup | number): Promise<{ memoria: number[]; bare: number[] }> {
  const tag = `${Date.now().toString(36)}-${label}`;
  const ours = { userId: "bench", sessionId: `ui-${tag}` };
  const bare = { userId: "bench", sessionId: `bare-${tag}` };
  const seed = Array.from({ length: size }, (_, i) => ui(`m${i}`, i % 2 === 0 ? "user" : "assistant", i % 2 === 0 ? QUESTION : ANSWER));
  await saveChat(store, ours, seed);
  await store.append(
    bare,
    seed.map((_, i) => (i % 2 === 0 ? new HumanMessage(QUESTION) : new AIMessage(ANSWER))),
  );
  let turn = 0;
  const samples = await interleave(
    {
      memoria: async () => {
        const loaded = await loadChat(store, ours);
        turn++;
        await saveChat(store, ours, [...loaded.messages, ui(`q${turn}`, "user", QUESTION), ui(`a${turn}`, "assistant", ANSWER)], { loaded });
      },
      bare: async () => {
        await store.read(bare);
        await store.append(bare, [new HumanMessage(QUESTION), new AIMessage(ANSWER)]);
      },
    },
    runs,
    warmup,
  );
  await store.delete({ userId: "bench" });
  return { memoria: samples.memoria ?? [], bare: samples.bare ?? [] };
}
