export { type WindowMemoryOptions, windowMemory } from "./window-memory.js";
export { readLastTurns, startOfLastTurns } from "./turn-window.js";
