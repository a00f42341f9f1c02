import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type HistoryStore, type JsonValue, everySession, serializeMessage } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { useStore } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** One user's hold on a door (a checkpointer, a tool set, an MCP client, a chat route), bound as the app binds it for a request of theirs. */
export interface UserDoor {
  /** Writes `secret` through every call of the door that writes: a turn, a checkpoint, an item, a fact, a profile, a chat. */
  write(secret: string): Promise<void>;
  /** Runs every call of the door that reads (get, list, search, resources, load) and gives back all the text they returned. */
  read(): Promise<string>;
  /**
   * Runs every call of the door that changes or removes (delete a thread, an item, a
   * fact; edit a chat; update a profile), naming what the other user's data is named too:
   * the same thread, item, fact and chat ids.
   */
  change(): Promise<void>;
  close?(): Promise<void>;
}

/** A door onto memoria's memory, as the isolation suite drives it. */
export interface DoorSetup {
  /** Shown in test titles, e.g. `"MemoriaSaver (keyFields: userId)"`. */
  name: string;
  /** The door over `store` for `userId`. Every user names their threads, items, conversations and chats alike. */
  open(store: HistoryStore, userId: string): UserDoor | Promise<UserDoor>;
}

/** Runs one memory tool (`search_memory`, `remember`, …) as the door binds it for one user. */
export type ToolCall = (name: string, args: Record<string, unknown>) => Promise<unknown>;

/**
 * The memory tools as one user's door, whichever way they are reached (LangChain tools
 * bound by the call's config, an MCP client bound by the server's scope): a conversation
 * as an app's turn stores it, then every tool that writes, reads or changes, with the fact
 * ids and conversation names every user shares. `extra` adds reads of the door's own (MCP
 * resources) and a close.
 */
export function memoryToolsUser(
  store: HistoryStore,
  userId: string,
  call: ToolCall,
  extra: { reads?: () => Promise<unknown[]>; close?: () => Promise<void> } = {},
): UserDoor {
  let said = "";
  return {
    async write(secret) {
      said = secret;
      await store.append({ userId, conversationId: "c1" }, [new HumanMessage(`c1 says ${secret}`), new AIMessage("noted")]);
      await call("remember", { subject: "user", statement: `the fact ${secret}` });
      await call("update_profile", { field: "note", value: `profile ${secret}` });
    },
    async read() {
      const seen: unknown[] = [];
      // "fact" and "profile" match both users' words: only the caller's may come back.
      for (const query of ["fact", "profile", said]) seen.push(await call("search_memory", { query, include_past: true }));
      for (const conversation of ["conversationId=c1", "c1", `conversationId=c1&userId=${userId}`])
        seen.push(await call("read_conversation", { conversation }));
      seen.push(...((await extra.reads?.()) ?? []));
      return JSON.stringify(seen);
    },
    async change() {
      await call("remember", { subject: "user", statement: "a correction", replaces: ["f1"] });
      await call("update_profile", { field: "note", value: "changed" });
      await call("forget", { id: "f1" });
      await call("forget", { id: "f2" });
    },
    ...(extra.close ? { close: extra.close } : {}),
  };
}

/** Everything the store holds of a user (conversations and scope records), as text to compare. */
async function holdingsOf(store: HistoryStore, userId: string): Promise<string> {
  const held: [string, string[], Record<string, JsonValue>][] = [];
  for await (const key of everySession(store, { userId }, { scopes: [["userId"]] })) {
    const messages = (await store.read(key)).map((message) => JSON.stringify(serializeMessage(message)));
    held.push([JSON.stringify(Object.entries(key).sort()), messages, await store.getAllState(key)]);
  }
  return JSON.stringify(held.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Two users on one store, through one door: nothing either does through it reads
 * or changes the other's data. Run it from the door's package over every kind of
 * store, as the store suites run.
 */
export function doorIsolationSuite(setup: StoreSuiteSetup, door: DoorSetup): void {
  describe(`${setup.name}: ${door.name} keeps two users apart`, () => {
    const store = useStore(setup);

    async function twoUsers(): Promise<{
      alice: UserDoor;
      bob: UserDoor;
      ids: { alice: string; bob: string };
      secrets: { alice: string; bob: string };
      close(): Promise<void>;
    }> {
      const tag = crypto.randomUUID().slice(0, 8);
      const ids = { alice: `alice-${tag}`, bob: `bob-${tag}` };
      const secrets = { alice: `alicesecret${tag}`, bob: `bobsecret${tag}` };
      const alice = await door.open(store(), ids.alice);
      const bob = await door.open(store(), ids.bob);
      await alice.write(secrets.alice);
      await bob.write(secrets.bob);
      const close = async () => {
        await Promise.all([alice.close?.(), bob.close?.()]);
      };
      return { alice, bob, ids, secrets, close };
    }

    it("reads back each user's own data, and none of the other's, through every read", async () => {
      const { alice, bob, secrets, close } = await twoUsers();
      try {
        const [seenByAlice, seenByBob] = [await alice.read(), await bob.read()];
        expect(seenByAlice).toContain(secrets.alice);
        expect(seenByAlice).not.toContain(secrets.bob);
        expect(seenByBob).toContain(secrets.bob);
        expect(seenByBob).not.toContain(secrets.alice);
      } finally {
        await close();
      }
    });

    it("changes nothing of the other user's through every call that changes or removes, ids alike", async () => {
      const { alice, bob, ids, secrets, close } = await twoUsers();
      try {
        const before = await holdingsOf(store(), ids.bob);
        expect(before).toContain(secrets.bob);
        await alice.change();
        expect(await holdingsOf(store(), ids.bob)).toBe(before);
        expect(await bob.read()).toContain(secrets.bob);
        expect(await alice.read()).not.toContain(secrets.bob);
      } finally {
        await close();
      }
    });
  });
}
