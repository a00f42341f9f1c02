import { AIMessage, FunctionMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { everyKindOfMessage, fieldsOf, numbered, randomKey, transcript } from "../fixtures.js";
import { useStore } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** Ordered reads, windowed reads, and messages that come back with every field. */
export function messagesSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: messages`, () => {
    const store = useStore(setup);

    it("reads an unknown session as empty", async () => {
      expect(await store().read(randomKey())).toEqual([]);
      expect(await store().count(randomKey())).toBe(0);
    });

    it("reads messages back in the order they were appended, across appends", async () => {
      const key = randomKey();
      await store().append(key, numbered(3));
      await store().append(key, numbered(2, 3));
      await store().append(key, [new AIMessage("last")]);
      expect(transcript(await store().read(key))).toEqual(["human: m0", "human: m1", "human: m2", "human: m3", "human: m4", "ai: last"]);
      expect(await store().count(key)).toBe(6);
    });

    it("reads the last n messages, in order", async () => {
      const key = randomKey();
      await store().append(key, numbered(10));
      expect(transcript(await store().read(key, { last: 3 }))).toEqual(["human: m7", "human: m8", "human: m9"]);
      expect(transcript(await store().read(key, { last: 1 }))).toEqual(["human: m9"]);
      expect(await store().read(key, { last: 0 })).toEqual([]);
      expect(await store().read(key, { last: 50 })).toHaveLength(10);
    });

    it("refuses a window that is not a whole number >= 0", async () => {
      for (const last of [-1, 1.5, Number.NaN]) {
        await expect(store().read(randomKey(), { last })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      }
    });

    it("keeps a function message without a name readable (the classic openai-functions agent makes them)", async () => {
      const key = randomKey();
      await store().append(key, [new HumanMessage("what is 6 x 7?"), new FunctionMessage({ content: "42" } as never), new AIMessage("42")]);
      const back = await store().read(key);
      expect(back.map((m) => [m.getType(), m.content, m.name])).toEqual([
        ["human", "what is 6 x 7?", undefined],
        ["function", "42", undefined],
        ["ai", "42", undefined],
      ]);
    });

    it("keeps every field of every message class", async () => {
      const key = randomKey();
      const messages = everyKindOfMessage();
      await store().append(key, messages);
      const stored = await store().read(key);
      expect(stored.map(fieldsOf)).toEqual(messages.map(fieldsOf));
    });

    it("keeps unicode, empty content and a 1 MB message intact", async () => {
      const key = randomKey();
      const big = "ü🎉x".repeat(262_144); // 1 MiB of UTF-16 code units, more in UTF-8
      const odd = ["", "null", "\u0000 and \ud83d\ude00", "🇳🇴 ʕ•ᴥ•ʔ 𝕏", "'; DROP TABLE messages; --", '{"$gt": ""}'];
      await store().append(key, [new HumanMessage(big), ...odd.map((text) => new AIMessage(text))]);
      const stored = await store().read(key);
      expect(stored[0]!.content).toBe(big);
      expect(stored.slice(1).map((m) => m.content)).toEqual(odd);
    });

    const changes = setup.frozenReads ? "returns frozen messages in a new array: changing one throws" : "returns copies";
    it(`${changes}: changing what a read returned changes nothing stored`, async () => {
      const key = randomKey();
      await store().append(key, [new HumanMessage({ content: [{ type: "text", text: "x" }], additional_kwargs: { tags: ["a"] } })]);
      const first = await store().read(key);
      const message = first[0]! as HumanMessage & { content: { text: string }[] };
      const edits = [
        () => (message.additional_kwargs.tags as string[]).push("mutated"),
        () => Object.assign(message.content[0]!, { text: "mutated" }),
        () => Object.assign(message, { id: "mutated" }),
      ];
      for (const edit of edits) {
        if (setup.frozenReads) expect(edit).toThrow(TypeError);
        else edit();
      }
      first.push(new HumanMessage("pushed"));
      const second = await store().read(key);
      expect(second).toHaveLength(1);
      expect(second[0]!.additional_kwargs.tags).toEqual(["a"]);
      expect(second[0]!.content).toEqual([{ type: "text", text: "x" }]);
      expect(second[0]!.id).toBeUndefined();
    });

    it("does not keep a reference to the appended messages", async () => {
      const key = randomKey();
      const message = new HumanMessage({ content: "before", additional_kwargs: { n: 1 } });
      await store().append(key, [message]);
      message.additional_kwargs.n = 2;
      (message as { content: string }).content = "after";
      const [stored] = await store().read(key);
      expect(stored!.content).toBe("before");
      expect(stored!.additional_kwargs.n).toBe(1);
    });
  });
}
