import type { BaseMessage } from "@langchain/core/messages";
import type { SessionInfo } from "@memoria/core";
import { showKey } from "./session-arg.js";

/** A date as `2026-11-23 07:50:12` (UTC), or "—" when unknown. */
export function showTime(ms: number | undefined): string {
  if (!ms) return "—";
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19);
}

function contentText(content: BaseMessage["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((block) => {
      if (typeof block === "string") return block;
      const b = block as { type?: string; text?: string };
      return b.type === "text" && typeof b.text === "string" ? b.text : `[${b.type ?? "block"}]`;
    })
    .join(" ");
}

function role(message: BaseMessage): string {
  const type = message.getType();
  if (type === "generic") return (message as unknown as { role?: string }).role ?? "chat";
  if (type === "tool" || type === "function") return `${type} ${message.name ?? ""}`.trim();
  return type;
}

const indent = (text: string, by: string) => text.replace(/\n/g, `\n${by}`);

/**
 * One message as readable lines: its role, its text, and what a plain text view
 * would hide: tool calls (name, id, arguments), which call a tool result answers,
 * and an answer cut short (`memoria_partial`).
 */
export function showMessage(message: BaseMessage, position: number): string {
  const m = message as BaseMessage & {
    tool_calls?: { id?: string; name: string; args: unknown }[];
    invalid_tool_calls?: { id?: string; name?: string; args?: string; error?: string }[];
    tool_call_id?: string;
    status?: string;
  };
  const marks: string[] = [];
  if ((m.response_metadata as { memoria_partial?: unknown } | undefined)?.memoria_partial) marks.push("partial");
  if (m.tool_call_id) marks.push(`answers ${m.tool_call_id}`);
  if (m.status === "error") marks.push("error");
  const head = `[${position}] ${role(message)}${marks.length ? ` (${marks.join(", ")})` : ""}:`;
  const lines = [`${head} ${indent(contentText(message.content), "    ")}`.trimEnd()];
  for (const call of m.tool_calls ?? []) lines.push(`    → tool call ${call.name} (${call.id ?? "no id"}) ${JSON.stringify(call.args)}`);
  for (const call of m.invalid_tool_calls ?? [])
    lines.push(`    ✗ invalid tool call ${call.name ?? "?"} (${call.id ?? "no id"}): ${call.error ?? "malformed"} ${call.args ?? ""}`.trimEnd());
  return lines.join("\n");
}

/** The heading of a transcript: key, title, count and times. */
export function showHeading(key: SessionInfo["key"], info: SessionInfo | undefined, count: number): string {
  const parts = [showKey(key)];
  if (info?.title) parts.push(JSON.stringify(info.title));
  parts.push(`${count} message${count === 1 ? "" : "s"}`);
  if (info) parts.push(`created ${showTime(info.createdAt)}`, `last active ${showTime(info.lastActiveAt)}`);
  return parts.join(" · ");
}
