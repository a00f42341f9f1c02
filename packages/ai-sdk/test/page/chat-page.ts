/// <reference lib="dom" />
import { AbstractChat, type ChatState, type ChatStatus, DefaultChatTransport, type UIMessage } from "ai";

// A chat page on the AI SDK's own chat client (what useChat wraps), rendered by hand:
// the list of messages, a text box, Send and Stop. It loads the stored chat first.

const chatId = new URL(location.href).searchParams.get("chat") ?? "page";
const list = document.querySelector("#messages") as HTMLOListElement;
const status = document.querySelector("#status") as HTMLOutputElement;

function render(messages: UIMessage[], state: ChatStatus): void {
  list.replaceChildren(
    ...messages.map((message) => {
      const item = document.createElement("li");
      item.dataset.role = message.role;
      item.dataset.id = message.id;
      item.textContent = message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
      return item;
    }),
  );
  status.value = state;
}

class PageState implements ChatState<UIMessage> {
  #status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  #messages: UIMessage[];
  constructor(messages: UIMessage[]) {
    this.#messages = messages;
    render(messages, this.#status);
  }
  get status(): ChatStatus {
    return this.#status;
  }
  set status(next: ChatStatus) {
    this.#status = next;
    render(this.#messages, next);
  }
  get messages(): UIMessage[] {
    return this.#messages;
  }
  set messages(next: UIMessage[]) {
    this.#messages = next;
    render(next, this.#status);
  }
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.#messages, message];
  };
  popMessage = () => {
    this.messages = this.#messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.#messages.map((old, at) => (at === index ? message : old));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class PageChat extends AbstractChat<UIMessage> {}

const stored = (await (await fetch(`/api/chat/${encodeURIComponent(chatId)}`)).json()) as UIMessage[];
const chat = new PageChat({ id: chatId, transport: new DefaultChatTransport({ api: "/api/chat" }), state: new PageState(stored) });
const form = document.querySelector("form") as HTMLFormElement;
const input = document.querySelector("#input") as HTMLInputElement;
form.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = input.value;
  input.value = "";
  void chat.sendMessage({ text });
});
(document.querySelector("#stop") as HTMLButtonElement).addEventListener("click", () => void chat.stop());
document.body.dataset.ready = "true";
