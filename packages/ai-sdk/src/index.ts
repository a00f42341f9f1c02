export { type ChatSaverOptions, chatSaver } from "./chat-saver.js";
export { type LoadChatOptions, type LoadedChat, loadChat } from "./load-chat.js";
export { type MemoriaMemoryOptions, memoriaMemory } from "./memory-middleware.js";
export { type SaveChatOptions, type SaveChatResult, saveChat } from "./save-chat.js";
export { UI_FIELD } from "./ui-segments.js";
