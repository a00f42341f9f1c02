import { type BaseMessage, FunctionMessage, ToolMessage, isBaseMessage } from "@langchain/core/messages";

/** One step of a classic `AgentExecutor` run (`returnIntermediateSteps: true`), as far as memoria reads it. */
interface AgentStep {
  action?: { tool?: string; toolCallId?: string; messageLog?: unknown[] };
  observation?: unknown;
}

function observationText(observation: unknown): string {
  if (typeof observation === "string") return observation;
  return JSON.stringify(observation) ?? String(observation);
}

/**
 * The messages of a classic `AgentExecutor`'s tool steps, in order: each model
 * message that asked for tools (an action's `messageLog`; one message may ask for
 * several, and is kept once), followed by each tool's result as a `ToolMessage`
 * with its call's id, or, for the openai-functions agent, a `FunctionMessage` named
 * after the tool. Steps of agents that log no messages (text ReAct agents) add
 * nothing. Undefined when `steps` is not a list of agent steps.
 */
export function agentStepMessages(steps: unknown): BaseMessage[] | undefined {
  if (!Array.isArray(steps)) return undefined;
  const messages: BaseMessage[] = [];
  const seen = new Set<BaseMessage>();
  for (const step of steps as AgentStep[]) {
    const action = step?.action;
    if (!action) return undefined;
    const log = (action.messageLog ?? []).filter(isBaseMessage);
    if (log.length === 0) continue;
    for (const message of log) {
      if (seen.has(message)) continue;
      seen.add(message);
      messages.push(message);
    }
    const content = observationText(step.observation);
    if (action.toolCallId) messages.push(new ToolMessage({ content, tool_call_id: action.toolCallId, name: action.tool }));
    else messages.push(new FunctionMessage({ content, name: action.tool ?? "" }));
  }
  return messages;
}
