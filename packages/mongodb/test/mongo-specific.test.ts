import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { encodeSessionKey } from "@memoria/core";
import { numbered, transcript } from "@memoria/testkit";
import { MongoClient } from "mongodb";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createMongoStore } from "../src/index.js";

const url = inject("mongoUrl");
const dbName = `memoria_specific_${process.pid}`;
const admin = new MongoClient(url);
afterAll(() => admin.close());

describe("mongodb store", () => {
  it("keeps keys holding $ and . as data, in messages and state", async () => {
    const store = createMongoStore({ url, dbName });
    const key = { sessionId: "$where" };
    const kwargs = { $set: { admin: true }, "a.b": 1, nested: { $gt: "" } };
    await store.append(key, [new HumanMessage({ content: "x", additional_kwargs: kwargs })]);
    await store.setState(key, "s", { $inc: 1, "dotted.name": true });
    expect((await store.read(key))[0]!.additional_kwargs).toEqual(kwargs);
    expect(await store.getState(key, "s")).toEqual({ $inc: 1, "dotted.name": true });
    await store.close();
  });

  it("gives a session's key with its fields in the order they were written, in list, recent and info", async () => {
    const store = createMongoStore({ url, dbName, collectionName: `order_${crypto.randomUUID().slice(0, 8)}` });
    await store.append({ userId: "bob", conversationId: "intro" }, numbered(2));
    const order = (key: object | undefined) => Object.keys(key ?? {}).join(",");
    expect((await store.list({ userId: "bob" })).sessions.map(order)).toEqual(["userId,conversationId"]);
    expect((await store.recent({ userId: "bob" })).sessions.map((info) => order(info.key))).toEqual(["userId,conversationId"]);
    expect(order((await store.info({ conversationId: "intro", userId: "bob" }))?.key)).toBe("userId,conversationId");
    await store.close();
  });

  it("stores one document per message, keyed by (session, seq)", async () => {
    const store = createMongoStore({ url, dbName });
    const key = { sessionId: `docs-${crypto.randomUUID()}` };
    await store.append(key, numbered(3));
    await admin.connect();
    const docs = await admin
      .db(dbName)
      .collection("memoria_messages")
      .find({ s: encodeSessionKey(key) })
      .sort({ q: 1 })
      .toArray();
    expect(docs.map((d) => d.q)).toEqual([0, 1, 2]);
    await store.close();
  });

  it("never shows a half-written turn, and the next append cleans it up", async () => {
    const store = createMongoStore({ url, dbName });
    const key = { sessionId: `crash-${crypto.randomUUID()}` };
    await store.append(key, [new HumanMessage("q0"), new AIMessage("a0")]);
    // A writer died after reserving seq 2..4 and inserting one of its two messages.
    await admin.connect();
    const db = admin.db(dbName);
    const id = encodeSessionKey(key);
    await db.collection("memoria_sessions").updateOne({ _id: id as never }, { $set: { pending: { t: "dead-turn", from: 2, to: 4 } } });
    await db.collection("memoria_messages").insertOne({ s: id, q: 2, p: JSON.stringify({ v: 1, type: "human", data: { content: "half" } }) });
    expect(transcript(await store.read(key))).toEqual(["human: q0", "ai: a0"]);
    expect(await store.count(key)).toBe(2);
    await store.append(key, [new HumanMessage("q1"), new AIMessage("a1")]);
    expect(transcript(await store.read(key))).toEqual(["human: q0", "ai: a0", "human: q1", "ai: a1"]);
    // The dead turn, retried with its id, is stored now (its marker was never written).
    expect(await store.append(key, numbered(1), { turnId: "dead-turn" })).toEqual({ appended: true });
    await store.close();
  });

  it("prunes expired sessions with their messages", async () => {
    const store = createMongoStore({ url, dbName, collectionName: "memoria_prune", ttlSeconds: 1 });
    await store.append({ sessionId: "old" }, numbered(2));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await store.append({ sessionId: "new" }, numbered(1));
    expect(await store.prune()).toBe(1);
    await admin.connect();
    expect(await admin.db(dbName).collection("memoria_prune_messages").countDocuments({})).toBe(1);
    await store.close();
  });

  it("fails fast with STORE_UNAVAILABLE when the server is down", async () => {
    const store = createMongoStore({ url: "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=500", dbName });
    await expect(store.read({ sessionId: "x" })).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await store.close();
  });
});
