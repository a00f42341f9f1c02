// Memory an agent reaches by itself: the five tools, and the runner the MCP server shares.
export { memoryTools } from "./tools/memory-tools.js";
export { type MemoryCall, MemoryToolRunner, type MemoryToolsOptions, ToolArgumentError } from "./tools/tool-calls.js";
export { MEMORY_TOOL_NAMES, MEMORY_TOOL_SPECS, type MemoryToolInput, type MemoryToolName } from "./tools/tool-specs.js";
