import type { Callbacks } from "@langchain/core/callbacks/manager";
import type { BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { randomId } from "./random-id.js";
import type { SessionKey } from "./session-key.js";

/**
 * Runs `body` as a child run named `name` when the call is traced (it has
 * callbacks), so LangSmith and other tracers show the history's load and save as
 * runs of their own, like LangChain's `insertHistory` → `loadHistory`; without
 * callbacks it just runs `body`, at no cost. `body` gets the callbacks for runs
 * nested under this one.
 */
export function childRun<T>(
  callbacks: Callbacks | undefined,
  name: string,
  sessionKey: SessionKey,
  input: unknown,
  body: (callbacks?: Callbacks) => Promise<T>,
  metadata: Record<string, unknown> = {},
): Promise<T> {
  if (!callbacks) return body(undefined);
  const run = RunnableLambda.from((_: unknown, config?: { callbacks?: Callbacks }) => body(config?.callbacks));
  return run.invoke(input, { callbacks, runName: name, metadata: { memoria_session_key: { ...sessionKey }, ...metadata } });
}

/**
 * Gives every AI message without an id one (`run-<uuid>`), as LangChain's chat
 * models do from their run id when a call has callbacks (and LangChain's wrapper
 * always has them), so stored answers can be told apart and edited later.
 */
export function ensureMessageIds(messages: readonly BaseMessage[]): void {
  for (const message of messages) {
    if (message.id != null || message.getType() !== "ai") continue;
    const id = randomId("run-");
    // LangChain's own way (it also records the id in lc_kwargs); a plain field where it is missing.
    const updatable = message as BaseMessage & { _updateId?: (value: string) => void };
    if (typeof updatable._updateId === "function") updatable._updateId(id);
    else message.id = id;
  }
}
