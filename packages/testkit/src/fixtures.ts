import { AIMessage, type BaseMessage, ChatMessage, FunctionMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";

/** A session key no other test uses. */
export function randomKey(prefix = "s"): { sessionId: string } {
  return { sessionId: `${prefix}-${crypto.randomUUID()}` };
}

/** One message of each class, with every field each class can carry set. */
export function everyKindOfMessage(): BaseMessage[] {
  return [
    new SystemMessage({ content: "be brief", id: "sys-1", name: "rules" }),
    new HumanMessage({
      content: [
        { type: "text", text: "what is in this picture?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
      ],
      id: "h-1",
      name: "ada",
      additional_kwargs: { locale: "en-GB", nested: { list: [1, 2.5, null, true, "ü"] } },
    }),
    new AIMessage({
      content: "",
      id: "ai-1",
      additional_kwargs: {
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }],
      },
      response_metadata: { model_name: "gpt-x", finish_reason: "tool_calls", logprobs: null },
      tool_calls: [{ id: "call_1", name: "lookup", args: { q: "x" }, type: "tool_call" }],
      invalid_tool_calls: [{ id: "call_2", name: "broken", args: "{not json", error: "bad json", type: "invalid_tool_call" }],
      usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_token_details: { cache_read: 4 } },
    }),
    new ToolMessage({
      content: [{ type: "text", text: "result" }],
      tool_call_id: "call_1",
      name: "lookup",
      artifact: { rows: [{ id: 1 }], raw: "…" },
      status: "error",
      id: "t-1",
    }),
    new FunctionMessage({ content: '{"ok":true}', name: "legacy_fn" }),
    new ChatMessage({ content: "a note", role: "narrator", id: "c-1" }),
  ];
}

const EXTRA_FIELDS = ["tool_calls", "invalid_tool_calls", "usage_metadata", "tool_call_id", "artifact", "status", "role"];

/** The fields of a message that storage must keep, as plain JSON for comparison. */
export function fieldsOf(message: BaseMessage): Record<string, unknown> {
  const m = message as unknown as Record<string, unknown>;
  const fields: Record<string, unknown> = {
    class: message.constructor.name,
    type: message.getType(),
    content: m.content,
    id: m.id,
    name: m.name,
    additional_kwargs: m.additional_kwargs,
    response_metadata: m.response_metadata,
  };
  for (const extra of EXTRA_FIELDS) if (m[extra] !== undefined) fields[extra] = m[extra];
  return JSON.parse(JSON.stringify(fields));
}

/** `type: content` lines, to compare histories at a glance. */
export function transcript(messages: readonly BaseMessage[]): string[] {
  return messages.map((m) => `${m.getType()}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);
}

/** `n` human messages numbered from `from`. */
export function numbered(n: number, from = 0): BaseMessage[] {
  return Array.from({ length: n }, (_, i) => new HumanMessage(`m${from + i}`));
}

/**
 * Checks the outcome of several writers (`<writer>-<n>` questions) taking turns on
 * one session through the wrapper with a model that answers `<writer> saw <count>`:
 * every turn stored once, human then AI, and each turn saw exactly the messages
 * before it, so no two turns interleaved. Returns a list of problems (empty: fine).
 */
export function serializedTurnProblems(stored: readonly BaseMessage[], expectedTurns: number): string[] {
  const problems: string[] = [];
  if (stored.length !== 2 * expectedTurns) problems.push(`${stored.length} messages stored, expected ${2 * expectedTurns}`);
  const questions = new Set<string>();
  for (let i = 0; i < stored.length; i += 2) {
    const question = String(stored[i]?.content);
    if (stored[i]?.getType() !== "human") problems.push(`message ${i} is not the human message of a turn`);
    questions.add(question);
    const writer = question.split("-")[0];
    if (stored[i + 1]?.content !== `${writer} saw ${i + 1}`) {
      problems.push(`turn at ${i} (${question}) answered "${stored[i + 1]?.content}", expected "${writer} saw ${i + 1}"`);
    }
  }
  if (questions.size !== stored.length / 2) problems.push(`${stored.length / 2 - questions.size} turns stored twice`);
  return problems;
}
