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

/** Everything the store holds of a user (conversations and scope records), as text to compare. */
async function holdingsOf(store: HistoryStore, userId: string): Promise<string> {
  const held: [string, string[], Record<string, JsonValue>][] = [];
  for await (const key of everySession(store, { userId }, { scopes: [["userId"]] })) {
    const messages = (await store.read(key)).map((message) => JSON.stringify(serializeMessage(message)));
    held.push([JSON.stringify(Object.entries(key).sort()), messages, (await store.getAllState?.(key)) ?? {}]);
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
      return { alice, bob, ids, secrets, close: async () => void (await Promise.all([alice.close?.(), bob.close?.()])) };
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
