import type { QueryTerm } from "@memoria/core";
import { CONCEPTS } from "./concept-lexicon.js";

/**
 * Stop words: function words, and the words questions are made of ("when did",
 * "which", "who"). Questions say those and statements rarely do, so left in they
 * match the few small-talk lines that ask something ("Did you catch the game?")
 * above the turn that holds the answer (measured on the recall-quality set).
 */
const STOP = new Set(
  "a about after again all also am an and any are as at be been before being but by can could did do does doing done for from had has have he her here hers him his how i if in into is it its just me more most my no not now of on or our out over she so some such than that the their them then there these they this those to too up us very was we were what when where which who whom whose why will with would you your yours".split(
    " ",
  ),
);

/** Doubled final consonants a suffix leaves ("running" → "runn"), undone; ll, ss and zz stay. */
const DOUBLED = /([b-df-hj-kmnp-rt-y])\1$/;

/**
 * A light English stemmer: plurals ("studies" → "study", "classes" → "class"), then
 * "-ing" and "-ed", then a final "e", so "name", "named" and "naming" meet, as do
 * "hike" and "hiked". Words of 3 letters or fewer, and words with digits, stay.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  let suffix = false;
  if (w.length > 5 && w.endsWith("ing")) [w, suffix] = [w.slice(0, -3), true];
  else if (w.length > 4 && w.endsWith("ed")) [w, suffix] = [w.slice(0, -2), true];
  if (suffix && DOUBLED.test(w)) w = w.slice(0, -1);
  return w.length > 3 && w.endsWith("e") ? w.slice(0, -1) : w;
}

/** A text's content words, lowercased and stemmed ("visited" and "visits" → "visit"), stop words left out: the terms recall's lexical index keeps. */
export function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => !STOP.has(word)).map(stem);
}

/** Each stemmed word's topics, as the terms recall indexes for them ("~pet" for "puppy" and "dog"). */
const TOPICS = (() => {
  const topics = new Map<string, string[]>();
  for (const [topic, words] of Object.entries(CONCEPTS)) {
    for (const word of words.split(" ")) {
      const held = topics.get(stem(word)) ?? [];
      if (!held.includes(`~${topic}`)) topics.set(stem(word), [...held, `~${topic}`]);
    }
  }
  return topics;
})();

/**
 * What a topic match counts against the word's own: chosen on the recall-quality
 * set (`pnpm bench --only W8`), where at 0.8 a question finds turns that never say
 * its words without pushing out the turns that do.
 */
export const TOPIC_WEIGHT = 0.8;

/**
 * The terms recall keeps for a message: its content words, then a term for each
 * topic of `concept-lexicon.ts` they touch, once per topic ("~" cannot start a
 * word, so no word meets a topic by chance).
 */
export function recallTerms(text: string): string[] {
  const words = contentWords(text);
  return [...words, ...new Set(words.flatMap((word) => TOPICS.get(word) ?? []))];
}

/** A question as recall asks its lexical index: each content word, or failing it one of its topics at `TOPIC_WEIGHT`. */
export function recallQuery(text: string): QueryTerm[] {
  return contentWords(text).map((term) => ({ term, alternatives: (TOPICS.get(term) ?? []).map((topic) => ({ term: topic, weight: TOPIC_WEIGHT })) }));
}
