import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI } from "@langchain/openai";
import { OfflineChatModel } from "../offline-model.js";

export interface ChosenModel {
  model: BaseChatModel;
  /** Shown to the person at start, e.g. "gpt-4o-mini at https://…". */
  description: string;
}

/**
 * `ChatOpenAI` when `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set (any
 * OpenAI-compatible server: Ollama, llama.cpp, vLLM), otherwise the offline model.
 */
export function chooseModel(env: NodeJS.ProcessEnv = process.env): ChosenModel {
  const apiKey = env.OPENAI_API_KEY;
  const baseURL = env.OPENAI_BASE_URL;
  if (!apiKey && !baseURL) {
    return { model: new OfflineChatModel({}), description: "offline model (set OPENAI_API_KEY or OPENAI_BASE_URL for a real one)" };
  }
  const name = env.OPENAI_MODEL ?? "gpt-4o-mini";
  return {
    // Local servers such as Ollama take any key.
    model: new ChatOpenAI({ model: name, apiKey: apiKey ?? "not-needed", configuration: baseURL ? { baseURL } : undefined }),
    description: `${name}${baseURL ? ` at ${baseURL}` : ""}`,
  };
}
