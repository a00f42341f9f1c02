/**
 * A scripted model for long-term memory's prompts, so tests (and the offline demo)
 * can run fact extraction, subject resolution and profile updates without a
 * network. It understands a few sentence shapes, not language:
 * "X lives in Y", "X moved to Y", "X works at Y", "my favourite T is Y",
 * "my name is X"; "she", "he" and "her" refer to the last person named.
 */

interface Statement {
  subject: string;
  statement: string;
  /** The known facts' prefix this one replaces ("Ada lives in"). */
  kind: string;
}

const PERSON = "([A-Z][a-z]+)";

/** The statements one line of human text makes. */
export function statementsIn(text: string, speaker = "the user"): Statement[] {
  const found: Statement[] = [];
  const push = (subject: string, verb: string, object: string) =>
    found.push({ subject, statement: `${subject} ${verb} ${object}`, kind: `${subject} ${verb}` });
  for (const m of text.matchAll(new RegExp(`${PERSON} (?:lives|live) in ${PERSON}`, "g"))) push(m[1] as string, "lives in", m[2] as string);
  for (const m of text.matchAll(new RegExp(`${PERSON} (?:has )?moved to ${PERSON}`, "g"))) push(m[1] as string, "lives in", m[2] as string);
  for (const m of text.matchAll(new RegExp(`${PERSON} works at ([A-Z][A-Za-z]+(?: [A-Z][A-Za-z]+)*)`, "g"))) push(m[1] as string, "works at", m[2] as string);
  for (const m of text.matchAll(/my favou?rite (\w+) is ([A-Z][\w ]*[\w])/gi)) push(speaker, `likes the ${(m[1] as string).toLowerCase()}`, m[2] as string);
  for (const m of text.matchAll(new RegExp(`my name is ${PERSON}`, "gi"))) push(speaker, "is named", m[1] as string);
  return found;
}

function section(prompt: string, title: string, end: RegExp): string {
  const start = prompt.indexOf(title);
  if (start < 0) return "";
  const rest = prompt.slice(start + title.length);
  const stop = rest.search(end);
  return stop < 0 ? rest : rest.slice(0, stop);
}

/** Facts JSON for memoria's extraction prompt (`FACT_EXTRACTION_PROMPT`). */
export function extractFactsAnswer(prompt: string): { facts: { subject: string; statement: string; message: number; replaces: string[] }[] } {
  const known = [...section(prompt, "Known facts:\n", /\n\n/).matchAll(/^(f\d+): (.*)$/gm)].map((m) => ({ id: m[1] as string, statement: m[2] as string }));
  const messages = [...section(prompt, "New messages (numbered):\n", /\n\nAnswer with JSON/).matchAll(/^(\d+)\. Human: (.*)$/gm)];
  const facts = messages.flatMap((m) =>
    statementsIn(m[2] as string).map((s) => ({
      subject: s.subject,
      statement: s.statement,
      message: Number(m[1]),
      replaces: known.filter((fact) => fact.statement.startsWith(`${s.kind} `) && fact.statement !== s.statement).map((fact) => fact.id),
    })),
  );
  return { facts };
}

/** The subjects a message refers to, for `SUBJECT_RESOLUTION_PROMPT`: named ones, or the last person named before "she"/"he". */
export function resolveSubjectsAnswer(prompt: string): string {
  const subjects = (/Known subjects: (.*)$/m.exec(prompt)?.[1] ?? "").split(", ").filter(Boolean);
  const input = /New message: (.*)$/m.exec(prompt)?.[1] ?? "";
  const named = subjects.filter((subject) => new RegExp(`\\b${subject}\\b`, "i").test(input));
  if (named.length > 0) return named.join(", ");
  if (/\b(she|he|her|him|they|them)\b/i.test(input)) {
    const recent = section(prompt, "Recent conversation:\n", /\n\nNew message:/);
    let last: string | undefined;
    let at = -1;
    for (const subject of subjects) {
      const index = recent.lastIndexOf(subject);
      if (index > at) [last, at] = [subject, index];
    }
    if (last) return last;
  }
  return "NONE";
}

/** The updated profile for `WORKING_MEMORY_PROMPT`: the current lines, with each new statement replacing the line it updates. */
export function updateProfileAnswer(prompt: string): string {
  const current = section(prompt, "Current profile:\n", /\n\nNew lines of conversation:/).trim();
  const lines = current === "(empty)" || current === "" ? [] : current.split("\n");
  const said = [...section(prompt, "New lines of conversation:\n", /\n\n/).matchAll(/^Human: (.*)$/gm)].flatMap((m) => statementsIn(m[1] as string));
  for (const s of said) {
    const at = lines.findIndex((line) => line.startsWith(`${s.kind} `));
    if (at >= 0) lines[at] = s.statement;
    else lines.push(s.statement);
  }
  return lines.join("\n");
}

/** What the scripted model answers to one of long-term memory's prompts, or undefined for any other prompt. */
export function answerMemoryPrompt(prompt: string): string | undefined {
  if (prompt.startsWith("You keep long-term memory")) return JSON.stringify(extractFactsAnswer(prompt));
  if (prompt.startsWith("Which of the known subjects")) return resolveSubjectsAnswer(prompt);
  if (prompt.startsWith("You keep a short profile")) return updateProfileAnswer(prompt);
  return undefined;
}
