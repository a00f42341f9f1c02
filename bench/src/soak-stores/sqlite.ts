/** The SQLite store for W13's worker processes (LangChain.js has no SQLite chat history). */
import { createSqliteStore } from "@memoria/sql";

export const createStore = (path: string) => createSqliteStore({ path });
