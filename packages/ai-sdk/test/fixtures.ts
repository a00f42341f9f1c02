import type { UIMessage } from "ai";

/** A user message as useChat sends it. */
export function userMessage(id: string, text: string): UIMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** An answer of one step, as the AI SDK builds it. */
export function answer(id: string, text: string): UIMessage {
  return { id, role: "assistant", parts: [{ type: "step-start" }, { type: "text", text, state: "done" }] };
}

/** A chat holding every kind of part, in every tool state, with metadata: what must come back exactly. */
export function everyPart(): UIMessage[] {
  return [
    { id: "sys", role: "system", parts: [{ type: "text", text: "Be brief." }] },
    {
      id: "u1",
      role: "user",
      metadata: { createdAt: 1764000000000, client: { tab: 2 } },
      parts: [
        { type: "text", text: "What is the weather in Paris? Look at this." },
        { type: "file", mediaType: "image/png", filename: "sky.png", url: "data:image/png;base64,iVBORw0KGgo=" },
        { type: "data-mood", data: { mood: "curious", level: 3 } },
        { type: "text", text: "And a second paragraph." },
      ] as UIMessage["parts"],
    },
    {
      id: "a1",
      role: "assistant",
      metadata: { model: "local", tokens: 42 },
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "The user wants the weather.", state: "done", providerMetadata: { local: { signature: "abc" } } },
        { type: "text", text: "Let me look.", state: "done" },
        { type: "tool-weather", toolCallId: "call-1", state: "output-available", input: { city: "Paris" }, output: { temperature: 18, sky: "clear" } },
        { type: "tool-search", toolCallId: "call-2", state: "output-error", input: { query: "paris weather" }, errorText: "search is down" },
        { type: "step-start" },
        { type: "dynamic-tool", toolName: "clock", toolCallId: "call-3", state: "output-available", input: { zone: "CET" }, output: "14:02" },
        { type: "tool-delete", toolCallId: "call-4", state: "output-denied", input: { path: "/" }, approval: { id: "ap-1", approved: false, reason: "never" } },
        { type: "step-start" },
        { type: "text", text: "It is 18 degrees and clear.", state: "done", providerMetadata: { local: { cached: true } } },
        { type: "source-url", sourceId: "s1", url: "https://weather.example/paris", title: "Paris weather" },
        { type: "source-document", sourceId: "s2", mediaType: "application/pdf", title: "Forecast" },
        { type: "data-progress", id: "p1", data: { done: true } },
        { type: "tool-book", toolCallId: "call-5", state: "approval-requested", input: { table: 2 }, approval: { id: "ap-2" } },
      ] as UIMessage["parts"],
    },
  ];
}
