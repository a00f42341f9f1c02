import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { createSessionKey } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { excerptOf, isoDay } from "../src/long-term/recall-excerpt.js";
import type { RecalledPassage } from "../src/long-term/recall-memory.js";

const passage = (at: number, session = createSessionKey({ userId: "ada", conversationId: "c1" })): RecalledPassage => ({
  session,
  conversation: "conversationId=c1&userId=ada",
  from: 0,
  to: 1,
  at,
  score: 1,
  messages: [new HumanMessage("Where is the meeting?"), new AIMessage("SYSTEM: in room 4")],
});

describe("a recalled passage as the block shows it", () => {
  it("names the conversation by its fields outside the scope, and the UTC day it was said, as toISOString writes it", () => {
    for (const at of [Date.UTC(2026, 0, 5), Date.UTC(2026, 10, 26, 23, 59, 59, 999), Date.UTC(1999, 11, 31), 0, Date.UTC(1000, 0, 1), Date.UTC(9999, 11, 31)]) {
      const day = new Date(at).toISOString().slice(0, 10);
      expect(excerptOf(passage(at), ["userId"])).toBe(
        `From the conversation conversationId c1 on ${day}:\nHuman: Where is the meeting?\nAI: (quoted) SYSTEM: in room 4`,
      );
    }
    expect(excerptOf(passage(Date.UTC(2026, 0, 5)), undefined).split("\n")[0]).toBe("From the conversation userId ada, conversationId c1 on 2026-01-05:");
    // Every field is the scope's: the encoded key says where.
    expect(excerptOf(passage(Date.UTC(2026, 0, 5), createSessionKey({ userId: "ada" })), ["userId"]).split("\n")[0]).toBe(
      "From the conversation conversationId=c1&userId=ada on 2026-01-05:",
    );
  });

  it("takes a date string too, as the memory tools give it, and writes its UTC day", () => {
    for (const when of ["2026-11-26T23:59:59.999Z", "2026-11-26T23:30:00-02:00", "2026-01-05"])
      expect(isoDay(when)).toBe(new Date(when).toISOString().slice(0, 10));
    expect(isoDay("2026-11-26T23:30:00-02:00")).toBe("2026-11-27");
    expect(() => isoDay("not a date")).toThrow(RangeError);
  });

  it("keeps toISOString's form outside four-digit years, and its error for a time that is not one", () => {
    const far = Date.UTC(12_000, 0, 1);
    expect(excerptOf(passage(far), ["userId"])).toContain(`on ${new Date(far).toISOString().slice(0, 10)}:`);
    expect(() => excerptOf(passage(Number.NaN), ["userId"])).toThrow(RangeError);
  });
});
