import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { dotProduct, unitVector } from "./vectors.js";

/**
 * A question, the line that answers it without one word of it, and lines that share
 * its words and not its meaning ("support" a team, a roof, a helpdesk). Words find the
 * wrong lines here and only meaning finds the right one: what an embedding adds to
 * recall's lexical ranking. Written for this check, on everyday topics; nothing in
 * recall's ranking or lexicon was chosen with it, nor it with the bench's sets.
 */
export interface TrustProbe {
  question: string;
  answer: string;
  decoys: readonly [string, string, string];
}

export const TRUST_PROBES: readonly TrustProbe[] = [
  {
    question: "What instrument does your sister play?",
    answer: "She has practised the cello every evening for years.",
    decoys: ["My sister lives in Leeds now.", "The surgeon cleaned every instrument after the operation.", "Let us play cards tonight."],
  },
  {
    question: "Where did you go on holiday?",
    answer: "We spent two weeks on a Greek island, swimming every morning.",
    decoys: ["I go to the gym on Mondays.", "Holiday pay is calculated monthly at my firm.", "Did you go to the council meeting?"],
  },
  {
    question: "What pet do you keep at home?",
    answer: "Our cat sleeps on my keyboard all day.",
    decoys: ["My pet peeve is loud chewing.", "Pet projects rarely ship on time.", "Keep the receipt until the refund arrives."],
  },
  {
    question: "How is the new job going?",
    answer: "The office is lovely and my manager is really supportive.",
    decoys: ["The job of the kidneys is filtering blood.", "Going out tonight?", "Is that new paint still wet?"],
  },
  {
    question: "What are you cooking for dinner?",
    answer: "Probably a pasta bake with whatever vegetables are left.",
    decoys: ["Dinner jackets are required at the gala.", "Cooking the books is a crime.", "The dinner theatre sold out in an hour."],
  },
  {
    question: "Why did you move house?",
    answer: "The rent kept rising and we wanted a garden for the kids.",
    decoys: ["Do not move, there is a wasp on your arm.", "The house always wins at the casino.", "That chess move was brilliant."],
  },
  {
    question: "Which football team do you support?",
    answer: "I have followed Liverpool since I was a boy.",
    decoys: ["Tech support never answered my email.", "Our team meeting ran long again.", "These steel beams support the roof."],
  },
  {
    question: "What is wrong with your car?",
    answer: "The engine grinds loudly whenever I brake.",
    decoys: ["Sorry, wrong number.", "The car park was full by nine.", "Wrong answers lose a point in this quiz."],
  },
  {
    question: "When is your cousin getting married?",
    answer: "The wedding is in June, at a barn near York.",
    decoys: ["My cousin borrowed my phone charger.", "Getting there takes an hour by train.", "Married couples file taxes jointly here."],
  },
  {
    question: "How did you hurt your knee?",
    answer: "I slipped on the ice while jogging.",
    decoys: ["Knee socks are back in fashion.", "Did the scandal hurt his chances?", "The knee of the curve shows where growth slowed."],
  },
];

/** The share of probes an embedding must pass for its ranking to count fully, and the share at or below which it counts for nothing (a guess among four lines passes a quarter). */
const FULL_TRUST = 0.8;
const NO_TRUST = 0.4;

/**
 * How far recall trusts an embedding's ranking beside its words, from 0 to 1: the
 * share of {@link TRUST_PROBES} where the question's vector is nearer its answer than
 * each decoy's, mapped from 0 at 40 % to 1 at 80 %. An embedding that hashes words
 * passes none (its answers share no word with their questions), so it weighs 0 and
 * cannot pull recall below the words alone; one that reads meaning weighs fully. One
 * batch of documents and one query per probe, once per embeddings object; a probe that
 * fails is not kept, so the next search tries again.
 */
export function embeddingTrust(embeddings: EmbeddingsInterface): Promise<number> {
  const held = trusts.get(embeddings);
  if (held) return held;
  const measured = measureTrust(embeddings);
  trusts.set(embeddings, measured);
  measured.catch(() => trusts.delete(embeddings));
  return measured;
}

const trusts = new WeakMap<EmbeddingsInterface, Promise<number>>();

async function measureTrust(embeddings: EmbeddingsInterface): Promise<number> {
  const [documents, questions] = await Promise.all([
    embeddings.embedDocuments(TRUST_PROBES.flatMap((probe) => [probe.answer, ...probe.decoys])),
    Promise.all(TRUST_PROBES.map((probe) => embeddings.embedQuery(probe.question))),
  ]);
  let passed = 0;
  TRUST_PROBES.forEach((_, p) => {
    const question = unitVector(questions[p] ?? []);
    const [answer, ...decoys] = documents.slice(p * 4, p * 4 + 4).map((vector) => dotProduct(question, unitVector(vector)));
    if (answer !== undefined && decoys.every((decoy) => answer > decoy)) passed++;
  });
  const share = passed / TRUST_PROBES.length;
  return Math.min(1, Math.max(0, (share - NO_TRUST) / (FULL_TRUST - NO_TRUST)));
}
