export { memoriaProgram } from "./program.js";
export { type OpenedStore, openStore } from "./store-url.js";
export { type SessionSnapshot, CopyConflictError, compareSnapshots, readSnapshot, writeSnapshot } from "./snapshot.js";
export { EXPORT_FORMAT, EXPORT_VERSION, readExport, snapshotLines } from "./export-format.js";
export { type LangChainLayout, type LangChainSourceOptions, langChainSessions } from "./langchain-sources.js";
export { UsageError } from "./cli-error.js";
export { type MemoriaMcpOptions, conversationUri, memoriaMcpServer } from "./mcp/mcp-server.js";
export { type McpHttpOptions, type McpHttpServer, bearerScope, startMcpHttp } from "./mcp/mcp-http.js";
