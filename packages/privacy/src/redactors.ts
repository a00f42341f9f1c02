/** A function that masks what must not be stored in a piece of text. */
export type Redactor = (text: string) => string;

/** The kinds of data the built-in redactor finds. */
export type PatternKind = "email" | "card" | "iban" | "phone" | "ssn";

const digitsOf = (text: string) => text.replace(/[^0-9]/g, "");

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function ibanValid(candidate: string): boolean {
  const iban = candidate.replace(/ /g, "").toUpperCase();
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const value = ch >= "A" ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    rest = (value > 9 ? rest * 100 + value : rest * 10 + value) % 97;
  }
  return rest === 1;
}

interface Pattern {
  regex: RegExp;
  /** A check on the match, where it stands in `text`, that rules out look-alikes (checksums, parts of ids). */
  valid?: (match: string, offset: number, text: string) => boolean;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * True when `text[from, to)` overlaps a UUID: two of a UUID's groups can be all digits
 * and pass the Luhn check ("…-8003-006177869457" does), and a checkpoint or run id
 * masked in part is an id broken. Only the text around the match is searched.
 */
function insideUuid(text: string, from: number, to: number): boolean {
  const start = Math.max(0, from - 36);
  for (const found of text.slice(start, to + 36).matchAll(UUID)) {
    const at = start + (found.index as number);
    if (at < to && from < at + found[0].length) return true;
  }
  return false;
}

const PATTERNS: Record<PatternKind, Pattern> = {
  email: { regex: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g },
  // 13 to 19 digits, grouped by spaces or dashes, passing the Luhn check.
  card: { regex: /\b\d(?:[ -]?\d){12,18}\b/g, valid: (m, at, text) => luhn(digitsOf(m)) && !insideUuid(text, at, at + m.length) },
  // Country, check digits, then 11 to 30 letters and digits (grouped by fours or not), passing mod 97.
  iban: { regex: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g, valid: ibanValid },
  // International numbers: "+", then 8 to 15 digits, grouped by spaces, dots or dashes.
  phone: { regex: /\+\d(?:[ .-]?\(?\d\)?){7,14}(?!\d)/g },
  ssn: { regex: /\b\d{3}-\d{2}-\d{4}\b/g },
};

export const PATTERN_KINDS: readonly PatternKind[] = Object.freeze(Object.keys(PATTERNS) as PatternKind[]);

export interface PatternRedactorOptions {
  /** @default every kind */
  kinds?: readonly PatternKind[];
  /** What a match becomes. @default `[email removed]`, `[card removed]`, … */
  replacement?: (kind: PatternKind, match: string) => string;
}

/**
 * A redactor for common personal data: e-mail addresses, payment card numbers
 * (Luhn-checked), IBANs (mod-97-checked), international phone numbers and US social
 * security numbers. Patterns find what is written in the usual forms; they cannot
 * find a name, an address, or a number spelt out in words.
 */
export function patternRedactor(options: PatternRedactorOptions = {}): Redactor {
  const kinds = options.kinds ?? PATTERN_KINDS;
  for (const kind of kinds) {
    if (!Object.hasOwn(PATTERNS, kind)) throw new TypeError(`Unknown redaction pattern ${JSON.stringify(kind)}; known: ${PATTERN_KINDS.join(", ")}.`);
  }
  const replace = options.replacement ?? ((kind: PatternKind) => `[${kind} removed]`);
  return (text) => {
    let out = text;
    for (const kind of kinds) {
      const { regex, valid } = PATTERNS[kind];
      out = out.replace(regex, (match: string, at: number, whole: string) => (valid && !valid(match, at, whole) ? match : replace(kind, match)));
    }
    return out;
  };
}
