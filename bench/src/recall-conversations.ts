/**
 * The recall-quality set: long two-person conversations over many sessions, with
 * the turns that answer each later question labelled (as public conversational
 * memory benchmarks do). Generated from a seed, the same on every run. It is
 * built to be hard in the ways real chats are: the speakers' names recur in small
 * talk far more often than in the turns that matter, small talk reuses the
 * questions' everyday words (work, week, class, friend), answers are phrased
 * differently from the questions, facts change (a new job, a move), and some
 * questions need two turns said sessions apart.
 */
import { EVENTS, type Life, type Pick, type QuestionKind } from "./recall-events.js";

export interface SetTurn {
  /** `self` of the conversation is speaker A, stored as the human; B as the AI. */
  speaker: "A" | "B";
  text: string;
}

export interface SetSession {
  /** Midday of the session's day (epoch ms). */
  at: number;
  turns: SetTurn[];
}

export interface SetQuestion {
  kind: QuestionKind;
  question: string;
  /** The answering turns, as [session, turn] positions. */
  evidence: [number, number][];
}

export interface SetConversation {
  id: string;
  names: { A: string; B: string };
  sessions: SetSession[];
  questions: SetQuestion[];
}

const PAIRS: [string, string][] = [
  ["Maya", "Tom"],
  ["Joanna", "Nate"],
  ["Calvin", "Dave"],
  ["Audrey", "Andrew"],
  ["Gina", "Jon"],
  ["Evan", "Sam"],
  ["Deborah", "Jolene"],
  ["Melanie", "Caroline"],
  ["James", "John"],
  ["Tim", "Priscilla"],
];

/** Small talk: `{me}` is the speaker, `{you}` the friend. Most of the lines name someone, or say an everyday word a question also says. */
const GREETINGS = [
  "Hey {you}! How was your week?",
  "Hi {you}, good to hear from you.",
  "{you}! I was just thinking about you.",
  "Morning {you}! Got a minute?",
  "Hey {you}, long time no talk!",
];
const REPLIES = [
  "Hi {you}! Busy, but good.",
  "Hey {you}! Not bad at all, work has been busy though.",
  "{you}! Perfect timing, I am on my break.",
  "Hi {you}, same old here.",
];
const CLOSINGS = ["Talk soon {you}, take care!", "Bye {you}, have a good weekend!", "Night {you}!", "Catch you later {you}.", "Speak soon, {you}!"];
const SMALL_TALK = [
  "Not bad at all, {you}, work has been busy though.",
  "Haha {you}, you always say that.",
  "Same old here, {you}. Long week at work.",
  "Honestly {you}, I needed this chat.",
  "You are the best, {you}.",
  "Did you catch the game on Sunday?",
  "The weather has been grey all week.",
  "I need a holiday so badly.",
  "My phone battery keeps dying before lunch.",
  "We tried a new ramen place near the station, it was fine.",
  "Work is work, you know how it is.",
  "I slept for eleven hours on Saturday, no regrets.",
  "Traffic this morning was awful.",
  "What are you up to this weekend, {you}?",
  "That is so true, {you}.",
  "Love that for you, {you}.",
  "Anyway, enough about me. How is your family?",
  "I keep meaning to start reading more.",
  "My friend from school called me last night, we talked for hours.",
  "Class photos came out today, I look terrible in mine.",
  "I should really cook more instead of ordering in.",
  "The new neighbours are nice, they have a dog that never stops barking.",
  "Still dreaming about that trip we never took, {you}.",
  "Can you believe it is already {month}?",
  "I keep forgetting to water my plants.",
];

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** A small seeded generator (mulberry32): the set is the same on every run. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `conversations` conversations of `sessions` sessions each; about 24 turns and 4 questions per session. */
export function recallConversations(conversations = 10, sessions = 24): SetConversation[] {
  return Array.from({ length: conversations }, (_, c) => {
    const random = generator(0x5eed + c);
    const pick: Pick = (list) => list[Math.floor(random() * list.length)] as (typeof list)[number];
    const [nameA, nameB] = PAIRS[c % PAIRS.length] as [string, string];
    const labels = new Map<string, [number, number]>();
    const lives: Record<"A" | "B", Life> = {
      A: { name: nameA, label: (what) => `A:${what}:${labels.size}`, done: new Set() },
      B: { name: nameB, label: (what) => `B:${what}:${labels.size}`, done: new Set() },
    };
    const out: SetConversation = { id: `conv-${c + 1}`, names: { A: nameA, B: nameB }, sessions: [], questions: [] };
    let day = Date.UTC(2023, 0, 7 + c * 3, 12);
    for (let s = 0; s < sessions; s++) {
      day += (4 + Math.floor(random() * 10)) * 86_400_000;
      const month = MONTHS[new Date(day).getUTCMonth()] as string;
      const turns: SetTurn[] = [];
      const say = (speaker: "A" | "B", text: string, label?: string) => {
        if (label) labels.set(label, [s, turns.length]);
        turns.push({ speaker, text });
      };
      const other = (speaker: "A" | "B") => (speaker === "A" ? "B" : "A");
      const chat = (speaker: "A" | "B", lines = SMALL_TALK) =>
        say(speaker, pick(lines).replaceAll("{you}", out.names[other(speaker)]).replaceAll("{me}", out.names[speaker]).replaceAll("{month}", month));
      chat("B", GREETINGS);
      chat("A", REPLIES);
      for (const speaker of random() < 0.5 ? (["A", "B", "A"] as const) : (["B", "A", "B"] as const)) {
        let event: ReturnType<(typeof EVENTS)[number]>;
        for (let tries = 0; !event && tries < 8; tries++) event = pick(EVENTS)(lives[speaker], pick);
        if (!event) continue;
        for (const turn of event.turns) say(turn.by === "self" ? speaker : other(speaker), turn.text, turn.evidence);
        for (const q of event.questions)
          out.questions.push({ kind: q.kind, question: q.question, evidence: q.evidence.map((label) => labels.get(label) as [number, number]) });
        for (let n = 0; n < 1 + Math.floor(random() * 4); n++) chat(n % 2 === 0 ? other(speaker) : speaker);
      }
      chat("A", CLOSINGS);
      chat("B", CLOSINGS);
      out.sessions.push({ at: day, turns });
    }
    return out;
  });
}
