export { type MemoriaMiddlewareOptions, memoriaMiddleware } from "./agent/memoria-middleware.js";
