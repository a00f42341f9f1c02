/**
 * A chat service over HTTP, with conversations kept per user in SQLite.
 *
 *   pnpm --filter @memoria/examples http-service        (PORT=3000 by default)
 *   curl -N -H "Authorization: Bearer alice-token" -d '{"conversationId":"c1","message":"My name is Alice"}' localhost:3000/chat
 *   curl -H "Authorization: Bearer alice-token" localhost:3000/conversations
 *
 * Tokens come from MEMORIA_DEMO_TOKENS ("token:user,token:user"); the defaults are
 * alice-token, bob-token and support-token. Users named in MEMORIA_DEMO_SUPPORT ("support" by
 * default) may read anyone's conversations, and write none but
 * their own. Uses ChatOpenAI when OPENAI_API_KEY or OPENAI_BASE_URL
 * is set, the offline model otherwise. Listens on 127.0.0.1 only.
 */
import { createSqliteStore } from "@memoria/sql";
import { chooseModel } from "../demo/model.js";
import { createChatService, supportMayRead } from "./chat-service.js";

const tokens = new Map(
  (process.env.MEMORIA_DEMO_TOKENS ?? "alice-token:alice,bob-token:bob,support-token:support").split(",").map((pair) => pair.split(":") as [string, string]),
);
const store = createSqliteStore({ path: process.env.MEMORIA_DB ?? "./.memoria/http-service.db" });
const { model, description } = await chooseModel();
const support = new Set((process.env.MEMORIA_DEMO_SUPPORT ?? "support").split(","));
const server = createChatService({
  store,
  model,
  authenticate: (token) => tokens.get(token),
  authorize: supportMayRead(support), // support staff read any conversation; everyone writes only their own
});
const port = Number(process.env.PORT ?? 3000);
server.listen(port, "127.0.0.1", () => {
  console.log(`chat service on http://127.0.0.1:${port} with ${description}; users: ${[...tokens.values()].join(", ")}`);
});
const stop = () => server.close(() => store.close().then(() => process.exit(0)));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
