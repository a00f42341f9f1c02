import type { BaseMessage } from "@langchain/core/messages";

/** One line the model was given inside a memory block: a fact, a profile entry, a recalled human line. */
export interface RememberedLine {
  kind: string;
  text: string;
}

/** `<memory kind="…">`, its label line, its body, `</memory>` (as @memoria/memory writes them). */
const BLOCK = /<memory kind="([a-z]+)">\n[^\n]*\n([\s\S]*?)\n<\/memory>/g;
/** A list item's date, "(since 2026-11-25)" or "(2026-11-25 to 2026-11-26)". */
const DATES = /\s*\((?:since|from|until|\d{4}-)[^)]*\)\s*$/;

function textOf(message: BaseMessage): string {
  return typeof message.content === "string" ? message.content : message.text;
}

/**
 * The lines of every memory block in `messages`: list items of facts, profile,
 * entities and knowledge (their dates dropped), what the human said in recalled
 * conversations, and the sentences of a summary. A recalled AI line is left out:
 * it is what a model answered, not what the user said.
 */
export function rememberedLines(messages: readonly BaseMessage[]): RememberedLine[] {
  const lines: RememberedLine[] = [];
  for (const message of messages) {
    for (const [, kind = "", body = ""] of textOf(message).matchAll(BLOCK)) {
      for (const line of body.split("\n")) {
        if (kind === "recall") {
          if (line.startsWith("Human: ")) lines.push({ kind, text: line.slice(7) });
        } else if (kind === "summary") {
          for (const sentence of line.split(/(?<=[.!?])\s+/)) if (sentence.trim()) lines.push({ kind, text: sentence.trim() });
        } else if (line.startsWith("- ")) {
          lines.push({ kind, text: line.slice(2).replace(DATES, "") });
        }
      }
    }
  }
  return lines;
}

const STOP_WORDS = new Set(
  "a an and are am be did do does for from have has i in is it me my of on or the to was what when where which who why how you your".split(" "),
);

/** The content words of `text`, lower-cased, with a plain English ending dropped ("lives" and "lived" are "liv"). */
function contentWords(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(words.filter((word) => !STOP_WORDS.has(word)).map((word) => word.replace(/(?:ing|ed|es|e|s)$/u, "")));
}

/** Facts and profile before recalled lines, when they match as well. */
const KIND_ORDER = ["facts", "profile", "entities", "knowledge", "summary", "recall"];

/**
 * The remembered line that shares the most content words with `question`, or
 * undefined when none shares one: how the offline model answers from memory.
 */
export function bestRemembered(question: string, lines: readonly RememberedLine[]): RememberedLine | undefined {
  const asked = contentWords(question);
  let best: { line: RememberedLine; score: number; rank: number } | undefined;
  for (const line of lines) {
    const words = contentWords(line.text);
    let score = 0;
    for (const word of asked) if (words.has(word)) score += 1;
    const rank = KIND_ORDER.includes(line.kind) ? KIND_ORDER.indexOf(line.kind) : KIND_ORDER.length;
    if (score > 0 && (!best || score > best.score || (score === best.score && rank < best.rank))) best = { line, score, rank };
  }
  return best?.line;
}
