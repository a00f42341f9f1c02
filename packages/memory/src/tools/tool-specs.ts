import { z } from "zod";

const factId = z.string().regex(/^f\d+$/, 'a fact id looks like "f3"');

/**
 * The memory tools' contract: name, what the model is told, and the schema its
 * arguments are checked against. The same specs serve the LangChain tools and
 * the MCP server.
 */
export const MEMORY_TOOL_SPECS = {
  search_memory: {
    description:
      "Search what you remember about the user from earlier conversations: facts that hold (each with its id, date and source conversation) and, when recall is on, passages of earlier conversations. Set include_past to also see facts that no longer hold.",
    schema: z.object({
      query: z.string().min(1).max(2000).describe("What to look for, in a few words."),
      include_past: z.boolean().optional().describe("Also list facts that held before, with their dates."),
      limit: z.number().int().min(1).max(50).optional().describe("The most facts to list (10 unless given)."),
    }),
  },
  remember: {
    description:
      "Remember a fact the user stated about themselves or someone, for later conversations. To correct a fact you were given, name its id in replaces.",
    schema: z.object({
      subject: z.string().min(1).max(200).describe('Who or what the fact is about, e.g. "the user" or a name.'),
      statement: z.string().min(1).max(2000).describe('The fact as one short sentence, e.g. "Ada lives in Lisbon".'),
      replaces: z.array(factId).max(20).optional().describe("Ids of facts this one corrects (they stop holding)."),
    }),
  },
  update_profile: {
    description:
      "Rewrite part of the user's profile, the notes every conversation starts from: set one field (or line) to a new value, or, without a field, replace the whole text.",
    schema: z.object({
      field: z.string().min(1).max(100).optional().describe('The part to set, e.g. "home city".'),
      value: z.string().max(4000).describe("Its new value."),
    }),
  },
  forget: {
    description: "Forget a fact when the user asks you to, or when it was wrong: name its id, as search_memory shows it.",
    schema: z.object({ id: factId.describe('The fact\'s id, e.g. "f3".') }),
  },
  read_conversation: {
    description: "Read an earlier conversation of the user, a page at a time, by the conversation name that search_memory gives. Without from, the last page.",
    schema: z.object({
      conversation: z.string().min(1).max(1000).describe('The conversation, as search_memory names it (e.g. "conversationId=c1&userId=ada").'),
      from: z.number().int().min(0).optional().describe("The position of the first message to read."),
      limit: z.number().int().min(1).max(100).optional().describe("How many messages to read (20 unless given)."),
    }),
  },
} as const;

export type MemoryToolName = keyof typeof MEMORY_TOOL_SPECS;
export type MemoryToolInput<N extends MemoryToolName> = z.infer<(typeof MEMORY_TOOL_SPECS)[N]["schema"]>;

/** The tools, in the order they are given. */
export const MEMORY_TOOL_NAMES = Object.keys(MEMORY_TOOL_SPECS) as MemoryToolName[];
