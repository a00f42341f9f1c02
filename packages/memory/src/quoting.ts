import type { BaseMessage } from "@langchain/core/messages";

/**
 * The one sanitiser every piece of stored text passes on its way to a model (memory
 * blocks, recalled passages, tool answers, middleware). It does three things:
 *
 * - splits lines at every break a model may read as one (`\n`, `\r`, `\v`, `\f`,
 *   U+0085, U+2028, U+2029, U+001C–U+001E);
 * - drops characters a reader cannot see: controls, bidi controls, zero-width and
 *   Unicode tag characters (ZWJ and ZWNJ stay: emoji and several scripts need them);
 * - marks a line whose start reads as a role or speaker label as `(quoted)`, and
 *   escapes text that reads as the memory block's own tag, judged on the line's
 *   skeleton: fullwidth forms folded (NFKC), Cyrillic and Greek look-alikes read as
 *   Latin letters, look-alike colons and angle brackets read as `:` and `<`.
 *
 * The skeleton is only looked at, never shown: the text the model reads is the
 * stored text, minus what it could not see.
 */

/** Role and speaker labels at a line's start ("SYSTEM:", "### Assistant:", "AI (admin):", "<|im_start|>"), on the skeleton. */
const ROLE_LABEL = /^[^\p{L}\p{N}]*(?:(?:system|developer|assistant|user|human|ai|tool|function|model)(?:\s*[([][^)\]]{0,24}[)\]])?\s*:|<\|[a-z_]+\|>)/u;
/** The memory block's tag, opening or closing, on the skeleton. */
const BLOCK_TAG = /<\s*\/?\s*memory/g;
const BREAKS = /\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029]/;
const ANY_BREAK = /[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029]/;
/** Invisible characters dropped from stored text: C0/C1 controls but tab and breaks, and format characters (`\p{Cf}`) but ZWNJ and ZWJ. */
const INVISIBLE = /[\u0000-\u0008\u000e-\u001b\u001f\u007f-\u0084\u0086-\u009f]|(?![\u200c\u200d])\p{Cf}/gu;
const QUOTED = "(quoted) ";

/** Letters of other scripts that read as Latin ones, and signs that read as `:` or `<` / `>`. */
const LOOK_ALIKES: Record<string, string> = {
  // Cyrillic
  а: "a",
  в: "b",
  е: "e",
  ё: "e",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  р: "p",
  с: "c",
  т: "t",
  у: "y",
  х: "x",
  ѕ: "s",
  і: "i",
  ї: "i",
  ј: "j",
  һ: "h",
  ԁ: "d",
  ԛ: "q",
  ԝ: "w",
  ѵ: "v",
  ү: "y",
  ӏ: "l",
  ɡ: "g",
  // Greek
  Α: "a",
  Β: "b",
  Ε: "e",
  Ζ: "z",
  Η: "h",
  Ι: "i",
  Κ: "k",
  Μ: "m",
  Ν: "n",
  Ο: "o",
  Ρ: "p",
  Τ: "t",
  Υ: "y",
  Χ: "x",
  α: "a",
  β: "b",
  ε: "e",
  η: "n",
  ι: "i",
  κ: "k",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
  γ: "y",
  μ: "u",
  ϲ: "c",
  ϳ: "j",
  // Latin small capitals
  ᴀ: "a",
  ʙ: "b",
  ᴄ: "c",
  ᴅ: "d",
  ᴇ: "e",
  ꜰ: "f",
  ɢ: "g",
  ʜ: "h",
  ɪ: "i",
  ᴊ: "j",
  ᴋ: "k",
  ʟ: "l",
  ᴍ: "m",
  ɴ: "n",
  ᴏ: "o",
  ᴘ: "p",
  ǫ: "q",
  ʀ: "r",
  ꜱ: "s",
  ᴛ: "t",
  ᴜ: "u",
  ᴠ: "v",
  ᴡ: "w",
  ʏ: "y",
  ᴢ: "z",
  // Signs
  "\u02d0": ":",
  "\u02f8": ":",
  "\u0589": ":",
  "\u05c3": ":",
  "\u16ec": ":",
  "\u2236": ":",
  "\ua789": ":",
  "\u205a": ":",
  "\u2039": "<",
  "\u203a": ">",
  "\u2329": "<",
  "\u232a": ">",
  "\u27e8": "<",
  "\u27e9": ">",
  "\u3008": "<",
  "\u3009": ">",
  "\u1438": "<",
  "\u1433": ">",
  "\u02c2": "<",
  "\u02c3": ">",
};

/** What one character reads as, lower-cased and in Latin letters where it looks like one; "" for one nobody sees. */
function readAs(char: string): string {
  if (char === "\u200c" || char === "\u200d") return "";
  const lower = char.toLowerCase();
  const alike = LOOK_ALIKES[char] ?? LOOK_ALIKES[lower];
  if (alike !== undefined) return alike;
  if (lower.charCodeAt(0) < 0x80) return lower;
  const folded = lower.normalize("NFKC").toLowerCase();
  return folded.length === 1 ? (LOOK_ALIKES[folded] ?? folded) : lower;
}

/** A line's skeleton, and for each of its characters the index in the line it came from. */
function skeletonOf(line: string): { text: string; from: number[] } {
  let text = "";
  const from: number[] = [];
  let index = 0;
  for (const char of line) {
    const read = readAs(char);
    for (let i = 0; i < read.length; i += 1) from.push(index);
    text += read;
    index += char.length;
  }
  return { text, from };
}

/** Most lines of chat hold none of these: such a line is its own skeleton's twin and needs no fold. */
const PLAIN = /^[\x20-\x3b\x3d-\x7e\t]*$/;

/**
 * One line of stored text made safe inside a block: invisible characters dropped, a
 * role-like label at its start marked `(quoted)`, text that reads as the block's tag
 * escaped, so a stored line can neither forge a turn nor end the block.
 */
export function quoteLine(line: string): string {
  const visible = line.replace(INVISIBLE, "");
  if (PLAIN.test(visible)) return ROLE_LABEL.test(visible.toLowerCase()) ? QUOTED + visible : visible;
  const { text, from } = skeletonOf(visible);
  let escaped = visible;
  const tags = [...text.matchAll(BLOCK_TAG)].map((match) => from[match.index] as number);
  // From the last to the first, so earlier indexes stay true.
  for (const at of tags.reverse()) escaped = `${escaped.slice(0, at)}&lt;${escaped.slice(at + (escaped.codePointAt(at)! > 0xffff ? 2 : 1))}`;
  return ROLE_LABEL.test(text) ? QUOTED + escaped : escaped;
}

/** The lines of stored text, split at every kind of line break. */
function linesOf(text: string): string[] {
  return ANY_BREAK.test(text) ? text.split(BREAKS) : [text];
}

/** Stored text, every line quoted with {@link quoteLine}. */
export function quoteText(text: string): string {
  return linesOf(text).map(quoteLine).join("\n");
}

/** Stored text as one line of a list: breaks folded to spaces, then quoted. */
export function quoteItem(text: string): string {
  return quoteLine(oneLine(text));
}

/** Text with its line breaks (and the space around them) folded to single spaces. */
function oneLine(text: string): string {
  if (!ANY_BREAK.test(text)) return text.trim();
  return text
    .split(BREAKS)
    .map((part) => part.trim())
    .filter(Boolean)
    .join(" ");
}

const SPEAKERS: Record<string, string> = { human: "Human", ai: "AI", system: "System", tool: "Tool", function: "Function", generic: "Message" };
/** A generic message's role shown as its speaker: a plain name only. */
const PLAIN_ROLE = /^[\p{L}\p{N}][\p{L}\p{N} _-]{0,31}$/u;

/**
 * Who said a message, as memoria writes it. A generic message's role is stored text:
 * a plain name that reads as no role label is the speaker itself; anything else is
 * shown, quoted, after a speaker of memoria's own (`Message (role "…")`).
 */
function speakerOf(message: BaseMessage): string {
  const type = message.getType();
  if (type !== "generic" || !("role" in message)) return SPEAKERS[type] ?? "Message";
  const role = oneLine(String(message.role)).replace(INVISIBLE, "");
  if (PLAIN_ROLE.test(role) && !ROLE_LABEL.test(`${skeletonOf(role).text}:`)) return role;
  return `Message (role ${JSON.stringify(quoteLine(role))})`;
}

/**
 * Stored messages as lines of a block: the speaker label is memoria's, written
 * once at the start of each message; the message's own lines follow it, indented
 * and quoted, so none of them reads as a new speaker.
 */
export function quoteMessages(messages: readonly BaseMessage[]): string {
  return messages
    .map((message) => {
      const [first = "", ...rest] = linesOf(typeof message.content === "string" ? message.content : message.text);
      return [`${speakerOf(message)}: ${quoteLine(first)}`, ...rest.map((line) => `  ${quoteLine(line)}`)].join("\n");
    })
    .join("\n");
}
