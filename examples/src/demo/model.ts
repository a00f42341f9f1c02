import type { Embeddings } from "@langchain/core/embeddings";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HashingEmbeddings } from "@memoria/memory/long-term";
import { OfflineChatModel } from "../offline-model.js";

// `@langchain/openai` is loaded only when a server is named: it was a third of the
// offline demo's start.

export interface ChosenModel {
  model: BaseChatModel;
  /** Shown to the person at start, e.g. "gpt-4o-mini at https://…". */
  description: string;
}

/**
 * `ChatOpenAI` when `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set (any
 * OpenAI-compatible server: Ollama, llama.cpp, vLLM), otherwise the offline model.
 */
export async function chooseModel(env: NodeJS.ProcessEnv = process.env): Promise<ChosenModel> {
  const apiKey = env.OPENAI_API_KEY;
  const baseURL = env.OPENAI_BASE_URL;
  if (!apiKey && !baseURL) {
    return { model: new OfflineChatModel({}), description: "offline model (set OPENAI_API_KEY or OPENAI_BASE_URL for a real one)" };
  }
  const { ChatOpenAI } = await import("@langchain/openai");
  const name = env.OPENAI_MODEL ?? "gpt-4o-mini";
  return {
    // Local servers such as Ollama take any key.
    model: new ChatOpenAI({ model: name, apiKey: apiKey ?? "not-needed", configuration: baseURL ? { baseURL } : undefined }),
    description: `${name}${baseURL ? ` at ${baseURL}` : ""}`,
  };
}

/** OpenAI-compatible embeddings when OPENAI_EMBEDDINGS_MODEL names one; otherwise offline hashing embeddings. */
export async function chooseEmbeddings(env: NodeJS.ProcessEnv = process.env): Promise<Embeddings> {
  const model = env.OPENAI_EMBEDDINGS_MODEL;
  if (!model) return new HashingEmbeddings();
  const { OpenAIEmbeddings } = await import("@langchain/openai");
  return new OpenAIEmbeddings({
    model,
    apiKey: env.OPENAI_API_KEY ?? "not-needed",
    configuration: env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : undefined,
  });
}
