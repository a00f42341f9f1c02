import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseMessage } from "@langchain/core/messages";
import type { HistoryStore } from "./history-store.js";
import type { SessionKey } from "./session-key.js";

/**
 * One session of a {@link HistoryStore}, as LangChain's
 * `BaseListChatMessageHistory`: it plugs into `@langchain/core`'s own
 * `RunnableWithMessageHistory`, classic memory classes and anything else that
 * takes a chat history. `addMessages` is one atomic append.
 */
export class StoreChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ["memoria", "stores", "message"];

  constructor(
    readonly store: HistoryStore,
    readonly sessionKey: SessionKey,
  ) {
    super();
  }

  async getMessages(): Promise<BaseMessage[]> {
    return this.store.read(this.sessionKey);
  }

  /** The last `last` messages, read from the end of the store. */
  async getLastMessages(last: number): Promise<BaseMessage[]> {
    return this.store.read(this.sessionKey, { last });
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.store.append(this.sessionKey, [message]);
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    await this.store.append(this.sessionKey, messages);
  }

  override async clear(): Promise<void> {
    await this.store.clear(this.sessionKey);
  }
}

export function isStoreChatMessageHistory(value: unknown): value is StoreChatMessageHistory {
  return value instanceof StoreChatMessageHistory;
}
