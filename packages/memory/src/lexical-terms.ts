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
