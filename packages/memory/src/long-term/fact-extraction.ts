import type { BaseMessage } from "@langchain/core/messages";
import type { Runnable } from "@langchain/core/runnables";
import { MemoriaError } from "@memoria/core";
import { linesOf } from "../extraction.js";
import { textOf } from "../summarizer.js";
import type { ExtractedFact, Fact } from "./facts.js";

/**
 * A model that extracts facts: any chat model (with `withStructuredOutput` where it
 * can call tools), an LLM, or a runnable from prompt text to a message or text.
 */
export type ExtractionModel = Pick<Runnable<string, unknown>, "invoke"> & {
  withStructuredOutput?: (schema: Record<string, unknown>, config?: Record<string, unknown>) => Pick<Runnable<string, unknown>, "invoke">;
  bindTools?: unknown;
};

export const FACT_EXTRACTION_PROMPT = `You keep long-term memory about a user and the people, places and things in their life. Read the new messages and list the facts worth remembering across conversations: who someone is, where they live, what they prefer, plans, relationships. Write each as a short sentence that names its subject (never "she" or "he"). Skip small talk and anything already known unchanged.

When a new fact contradicts or updates a known fact (someone moved, changed jobs, changed their mind), give the known fact's id in "replaces".

Known facts:
{facts}

New messages (numbered):
{messages}

Answer with JSON only: {"facts": [{"subject": "...", "statement": "...", "message": 0, "replaces": ["f1"]}]}, or {"facts": []}.`;

/** The JSON schema of the extraction's answer, for `withStructuredOutput`. */
export const EXTRACTION_SCHEMA = {
  type: "object",
  title: "record_facts",
  description: "Facts to remember from the new messages",
  properties: {
    facts: {
      type: "array",
      items: {
        type: "object",
        properties: {
          subject: { type: "string", description: "Who or what the fact is about, by name" },
          statement: { type: "string", description: "The fact as a short sentence naming its subject" },
          message: { type: "integer", description: "The number of the message it came from" },
          replaces: { type: "array", items: { type: "string" }, description: "Ids of known facts it contradicts or updates" },
        },
        required: ["subject", "statement"],
      },
    },
  },
  required: ["facts"],
} as const;

/** True when the model can answer in a schema through tool calling. */
export function canStructure(model: ExtractionModel): boolean {
  return typeof model.withStructuredOutput === "function" && typeof model.bindTools === "function";
}

export function extractionPrompt(template: string, known: readonly Fact[], messages: readonly BaseMessage[]): string {
  const facts = known.length ? known.map((fact) => `${fact.id}: ${fact.statement}`).join("\n") : "(none)";
  const numbered = messages.map((message, i) => `${i}. ${linesOf([message])}`).join("\n");
  return template.replace("{facts}", facts).replace("{messages}", numbered);
}

/**
 * The model's answer to `prompt` as a JSON value following `schema`: through
 * `withStructuredOutput` (tool calling, named `name`) when `structured`, else parsed
 * from the JSON in its text.
 */
export async function askForJson(model: ExtractionModel, prompt: string, schema: Record<string, unknown>, name: string, structured: boolean): Promise<unknown> {
  if (!structured) return parseJson(textOf(await model.invoke(prompt)));
  const withSchema = model.withStructuredOutput as NonNullable<ExtractionModel["withStructuredOutput"]>;
  return withSchema.call(model, schema, { name, method: "functionCalling" }).invoke(prompt);
}

/** Asks the model for the batch's facts; an answer that is not the expected JSON is a typed error (the batch is retried later). */
export async function extractFacts(model: ExtractionModel, prompt: string, structured: boolean): Promise<ExtractedFact[]> {
  return factsOf(await askForJson(model, prompt, EXTRACTION_SCHEMA as unknown as Record<string, unknown>, "record_facts", structured));
}

/** The first JSON object in a model's text (models wrap JSON in prose or code fences). */
export function parseJson(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end < start) throw new MemoriaError("INVALID_OUTPUT", `The model did not answer with JSON: ${JSON.stringify(text.slice(0, 200))}`);
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch (error) {
    throw new MemoriaError("INVALID_OUTPUT", `The model's JSON does not parse: ${(error as Error).message}`, { cause: error });
  }
}

function factsOf(answer: unknown): ExtractedFact[] {
  const list = (answer as { facts?: unknown })?.facts;
  if (!Array.isArray(list)) throw new MemoriaError("INVALID_OUTPUT", 'The extraction model\'s answer has no "facts" list.');
  return list.flatMap((item): ExtractedFact[] => {
    const { subject, statement, message, replaces } = (item ?? {}) as Record<string, unknown>;
    if (typeof subject !== "string" || typeof statement !== "string") return [];
    const fact: ExtractedFact = { subject, statement };
    if (typeof message === "number") fact.message = message;
    if (Array.isArray(replaces)) fact.replaces = replaces.filter((id): id is string => typeof id === "string");
    return [fact];
  });
}
