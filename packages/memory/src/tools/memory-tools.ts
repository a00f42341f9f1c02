import { ToolMessage } from "@langchain/core/messages";
import { type StructuredToolInterface, type ToolRunnableConfig, tool } from "@langchain/core/tools";
import { MemoryToolRunner, type MemoryToolsOptions } from "./tool-calls.js";
import { MEMORY_TOOL_SPECS, type MemoryToolInput, type MemoryToolName } from "./tool-specs.js";

/**
 * Memory an agent reaches by itself: LangChain tools to search what it knows,
 * remember or correct a fact, rewrite part of the user's profile, forget a fact,
 * and page through an earlier conversation of the user. Each call works in the
 * scope its config names, never one the model names; a bad argument is answered
 * as an error result the model can read (`status: "error"`), and nothing is written.
 */
export function memoryTools(options: MemoryToolsOptions): StructuredToolInterface[] {
  const runner = new MemoryToolRunner(options);
  return runner.names.map((name) => langChainTool(runner, name));
}

function langChainTool<N extends MemoryToolName>(runner: MemoryToolRunner, name: N): StructuredToolInterface {
  const spec = MEMORY_TOOL_SPECS[name];
  return tool(
    async (input: MemoryToolInput<N>, config?: ToolRunnableConfig) => {
      const answer = await runner.run(name, input, runner.bind(config));
      const call = config?.toolCall;
      if (!answer.error || !call?.id) return answer.text;
      return new ToolMessage({ content: answer.text, tool_call_id: call.id, name, status: "error" });
    },
    { name, description: spec.description, schema: spec.schema },
  ) as unknown as StructuredToolInterface;
}
