/** The PostgreSQL store and LangChain's PostgreSQL history, for W13's worker processes. */
import { PostgresChatMessageHistory } from "@langchain/community/stores/message/postgres";
import { createPostgresStore } from "@memoria/sql";
import pg from "pg";

export const createStore = (url: string) => createPostgresStore({ connectionString: url, tablePrefix: "soak_" });

let pool: pg.Pool | undefined;
export function langchainHistory(url: string, sessionId: string) {
  pool ??= new pg.Pool({ connectionString: url, max: 10 }).on("error", () => {});
  return new PostgresChatMessageHistory({ sessionId, pool, tableName: "soak_langchain" });
}

/** Ends the pool `langchainHistory` opened in this process (the bench's audit), so the process can exit. */
export async function closeLangchainHistories(): Promise<void> {
  await pool?.end();
  pool = undefined;
}
