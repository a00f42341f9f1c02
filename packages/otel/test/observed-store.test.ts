import { HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, createInMemoryStore } from "@memoria/core";
import { combineMemory, memoryBudget, windowMemory } from "@memoria/memory";
import { HashingEmbeddings, factMemory, recallMemory } from "@memoria/memory/long-term";
import { runHistoryStoreSuite } from "@memoria/testkit";
import { answerMemoryPrompt } from "@memoria/testkit/scripted-model";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { budgetMeter, observeStore } from "../src/index.js";

/** A reader the test collects from when it likes. */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

function telemetry() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return { spans, tracerProvider, reader, meterProvider };
}

describe("observeStore", () => {
  it("makes each call of a turn a span under the app's own span, with the draft memory conventions' attributes and no text or ids", async () => {
    const { spans, tracerProvider, reader, meterProvider } = telemetry();
    const store = observeStore(createInMemoryStore(), { tracerProvider, meterProvider });
    const chain = new RunnableWithMessageHistory({ runnable: RunnableLambda.from(() => "Noted: the sentinel word is heliotrope."), store });
    const config = { configurable: { sessionId: "alice-private-session" } };
    const tracer = tracerProvider.getTracer("app");
    await tracer.startActiveSpan("POST /chat", async (request) => {
      await chain.invoke([new HumanMessage("My secret word is heliotrope.")], config);
      request.end();
    });

    const finished = spans.getFinishedSpans();
    const request = finished.find((span) => span.name === "POST /chat") as ReadableSpan;
    const memory = finished.filter((span) => span !== request);
    // The turn: its lock, with the history read under it, then its save.
    expect(memory.map((span) => span.name)).toEqual(["lock in-memory", "update_memory in-memory"]);
    for (const span of memory) {
      expect(span.parentSpanContext?.spanId, span.name).toBe(request.spanContext().spanId);
      expect(span.attributes["gen_ai.memory.store.name"]).toBe("in-memory");
      expect(span.status.code).toBe(1); // OK
    }
    const append = memory.find((span) => span.attributes["memoria.store.call"] === "save") as ReadableSpan;
    expect(append.attributes).toMatchObject({ "gen_ai.operation.name": "update_memory", "gen_ai.memory.scope": "conversation", "memoria.messages.written": 2 });
    const id = append.attributes["gen_ai.conversation.id"];
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    // The same session, the same hashed id, in every span that names it.
    for (const span of memory) if (span.attributes["gen_ai.conversation.id"] !== undefined) expect(span.attributes["gen_ai.conversation.id"]).toBe(id);

    const { resourceMetrics } = await reader.collect();
    const instruments = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const moved = instruments.find((metric) => metric.descriptor.name === "memoria.store.messages");
    expect(moved?.dataPoints.find((point) => point.attributes["memoria.direction"] === "written")?.value).toBe(2);
    expect(moved?.dataPoints.find((point) => point.attributes["memoria.direction"] === "read")?.value).toBe(0); // a new session
    const durations = instruments.find((metric) => metric.descriptor.name === "memoria.store.duration");
    expect(durations?.descriptor.unit).toBe("s");
    expect(durations?.dataPoints.map((point) => point.attributes["memoria.store.call"])).toEqual(["openTurn", "save"]);

    // Nothing said, and no session id, anywhere in what was exported.
    const exported = JSON.stringify([memory.map((span) => [span.name, span.attributes, span.status, span.events]), resourceMetrics.scopeMetrics]);
    for (const secret of ["heliotrope", "alice-private-session", "secret word"]) expect(exported).not.toContain(secret);
    await store.close();
  });

  it("follows a turn with long-term memory: the turn's calls and the facts and recall work after it, all under the request, nothing said in the clear", async () => {
    const { spans, tracerProvider, meterProvider, reader } = telemetry();
    const store = observeStore(createInMemoryStore(), { tracerProvider, meterProvider });
    // The extraction model: scripted answers in the form the facts memory asks for; its calls counted by a budget with no limit.
    const extractor = RunnableLambda.from(async (prompt: string) => answerMemoryPrompt(prompt) ?? "");
    const budget = memoryBudget({ scope: ["userId"], onSpend: budgetMeter({ meterProvider }) });
    const facts = factMemory({ model: extractor, scope: ["userId"], budget });
    const memory = combineMemory(facts, recallMemory({ embeddings: new HashingEmbeddings(), scope: ["userId"] }), windowMemory({ k: 5 }));
    const chain = new RunnableWithMessageHistory({ runnable: RunnableLambda.from(() => "Noted."), store, memory, sessionFields: ["userId", "conversationId"] });
    const key = { userId: "zoe-private", conversationId: "trip-to-portugal" };
    const request = await tracerProvider.getTracer("app").startActiveSpan("POST /chat", async (span) => {
      await chain.invoke([new HumanMessage("Zoe lives in Lisbon.")], { configurable: key });
      span.end();
      return span;
    });
    await memory.idle();
    const memorySpans = spans.getFinishedSpans().filter((span) => span.name !== "POST /chat");
    expect((await facts.facts(store, { userId: key.userId })).map((fact) => fact.statement)).toEqual(["Zoe lives in Lisbon"]);

    const turnId = memorySpans.find((span) => span.attributes["memoria.store.call"] === "save")?.attributes["gen_ai.conversation.id"];
    // The work after the turn wrote the user's scope record: another session, another hashed id, the same trace.
    const scopeWrites = memorySpans.filter(
      (span) => span.attributes["gen_ai.operation.name"] === "update_memory" && span.attributes["gen_ai.conversation.id"] !== turnId,
    );
    expect(scopeWrites.length).toBeGreaterThan(0);
    for (const span of memorySpans) {
      expect(span.spanContext().traceId, span.name).toBe(request.spanContext().traceId);
      expect(span.parentSpanContext?.spanId, span.name).toBe(request.spanContext().spanId);
    }
    // The metrics of the same turn: the turn's and the work's store calls, the two messages written, the extraction's model call and tokens.
    const { resourceMetrics } = await reader.collect();
    const instruments = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const byName = (name: string) => instruments.find((metric) => metric.descriptor.name === name);
    expect(byName("memoria.store.duration")?.dataPoints.map((point) => point.attributes["memoria.store.call"])).toEqual(
      expect.arrayContaining(["openTurn", "save", "getState", "setState"]),
    );
    expect(byName("memoria.store.messages")?.dataPoints.find((point) => point.attributes["memoria.direction"] === "written")?.value).toBe(2);
    expect(
      byName("memoria.memory.calls")?.dataPoints.map((point) => [
        point.attributes["memoria.memory.work"],
        point.attributes["memoria.budget.outcome"],
        point.value,
      ]),
    ).toEqual([["facts", "allowed", 1]]);
    expect(byName("memoria.memory.tokens")?.dataPoints[0]?.value).toBeGreaterThan(0);
    const exported = JSON.stringify([memorySpans.map((span) => [span.name, span.attributes, span.status]), resourceMetrics.scopeMetrics]);
    for (const secret of ["Lisbon", "Zoe", "zoe-private", "trip-to-portugal"]) expect(exported).not.toContain(secret);
    await store.close();
  });

  it("counts memory work's model calls and tokens, and what a spent budget refused (budgetMeter), naming no user", async () => {
    const { reader, meterProvider } = telemetry();
    const store = createInMemoryStore();
    const budget = memoryBudget({ scope: ["userId"], calls: 1, onSpend: budgetMeter({ meterProvider }) });
    const extractor = RunnableLambda.from(async (prompt: string) => answerMemoryPrompt(prompt) ?? "");
    const facts = factMemory({ model: extractor, scope: ["userId"], budget, onError: () => {} });
    const chain = new RunnableWithMessageHistory({
      runnable: RunnableLambda.from(() => "Noted."),
      store,
      memory: facts,
      sessionFields: ["userId", "conversationId"],
    });
    for (const text of ["Zoe lives in Lisbon.", "Zoe works at Azul Studio."]) {
      await chain.invoke([new HumanMessage(text)], { configurable: { userId: "zoe-private", conversationId: "c1" } });
      await facts.idle();
    }
    const { resourceMetrics } = await reader.collect();
    const instruments = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const calls = instruments.find((metric) => metric.descriptor.name === "memoria.memory.calls");
    expect(calls?.dataPoints.map((point) => [point.attributes["memoria.budget.outcome"], point.value]).sort()).toEqual([
      ["allowed", 1],
      ["refused", 1],
    ]);
    const tokens = instruments.find((metric) => metric.descriptor.name === "memoria.memory.tokens");
    expect(tokens?.dataPoints[0]?.value).toBe((await budget.spent(store, { userId: "zoe-private" })).tokens);
    expect(JSON.stringify(resourceMetrics.scopeMetrics)).not.toContain("zoe");
    await store.close();
  });

  it("marks a failed call with memoria's error code, never its message, and counts it", async () => {
    const { spans, tracerProvider, reader, meterProvider } = telemetry();
    const store = observeStore(createInMemoryStore(), { tracerProvider, meterProvider });
    await expect(store.read({ sessionId: "bad\u0000id" })).rejects.toMatchObject({ code: "INVALID_SESSION_KEY" });
    await store.close();
    await expect(store.append({ sessionId: "carol" }, [new HumanMessage("after close")])).rejects.toMatchObject({ code: "STORE_CLOSED" });
    const failed = spans.getFinishedSpans();
    expect(failed.map((span) => [span.attributes["memoria.store.call"], span.attributes["error.type"], span.status])).toEqual([
      ["read", "INVALID_SESSION_KEY", { code: 2, message: "INVALID_SESSION_KEY" }],
      ["append", "STORE_CLOSED", { code: 2, message: "STORE_CLOSED" }],
    ]);
    expect(JSON.stringify(failed.map((span) => span.attributes))).not.toContain("carol");
    const { resourceMetrics } = await reader.collect();
    const durations = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === "memoria.store.duration");
    expect(durations?.dataPoints.map((point) => point.attributes["error.type"]).sort()).toEqual(["INVALID_SESSION_KEY", "STORE_CLOSED"]);
    // The append that failed wrote nothing, and no message is counted as written.
    const counted = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === "memoria.store.messages");
    expect(counted?.dataPoints.filter((point) => point.attributes["memoria.direction"] === "written") ?? []).toEqual([]);
  });

  it("says a filter's field names only, for calls across sessions", async () => {
    const { spans, tracerProvider, meterProvider } = telemetry();
    const store = observeStore(createInMemoryStore(), { tracerProvider, meterProvider });
    await store.append({ userId: "dave", sessionId: "d1" }, [new HumanMessage("hi")]);
    await store.recent({ userId: "dave" });
    await store.delete({ userId: "dave" });
    const byFilter = spans.getFinishedSpans().filter((span) => span.attributes["memoria.filter.fields"] !== undefined);
    expect(byFilter.map((span) => [span.name, span.attributes["memoria.filter.fields"], span.attributes["gen_ai.memory.scope"]])).toEqual([
      ["search_memory in-memory", ["userId"], "user"],
      ["delete_memory in-memory", ["userId"], "user"],
    ]);
    expect(JSON.stringify(spans.getFinishedSpans().map((span) => span.attributes))).not.toContain("dave");
    await store.close();
  });
});

// The wrapper changes nothing a store does: the whole contract through it.
runHistoryStoreSuite({
  name: "observeStore(in-memory)",
  frozenReads: true,
  createStore: async () => observeStore(createInMemoryStore(), telemetry()),
  createStoreWithTtl: async (ttlSeconds) => observeStore(createInMemoryStore({ ttlSeconds }), telemetry()),
});
