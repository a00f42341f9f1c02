import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";

/** A graph whose one node echoes the last message, with a stable id per reply: threads to copy and compare. */
export function echoGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => ({
      messages: [new AIMessage({ content: `echo: ${(state.messages.at(-1) as BaseMessage).content}`, id: `ai-${state.messages.length}` })],
    }))
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile({ checkpointer });
}
