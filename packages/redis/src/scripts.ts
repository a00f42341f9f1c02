import { createHash } from "node:crypto";
import type { Cluster, Redis } from "ioredis";

export type RedisClient = Redis | Cluster;

export const isCluster = (client: RedisClient): boolean => (client as { isCluster?: boolean }).isCluster === true;

/** A Lua script run by EVALSHA, falling back to EVAL the first time a server lacks it. */
export class Script {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash("sha1").update(source).digest("hex");
  }

  async run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
      return client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

/** Lua: stops a fenced write (returning -1) unless the lock key KEYS[5] holds the token ARGV[i] ("" when unfenced). */
const FENCE = (i: number) => `if ARGV[${i}] ~= '' and redis.call('GET', KEYS[5]) ~= ARGV[${i}] then return -1 end`;

/**
 * Lua: adds the session ARGV[member] to the index sets in KEYS[first], KEYS[first + 2],
 * … and their activity twins in KEYS[first + 1], …, renewing their TTL (ARGV[ttl]).
 * When `active` (a Lua condition: true for an append) holds, its activity score becomes
 * ARGV[now]; otherwise it is set only if missing. The entry by name is written only
 * when `named` (a Lua condition) holds: an append writes it with the session's first
 * write, since nothing removes it while the session lives (erasure and a listing's
 * clean-up take a session's entries in the same step as its keys, ERASE and
 * DROP_STALE). A standalone server's writes pass the session's index keys after their
 * own, so this runs in the write's script; a Cluster's sit in other slots, so there
 * the store runs INDEX for each first, on every write.
 */
const INDEXED = (first: number, member: number, ttl: number, now: number, active: string, named = "true") => `
for i = ${first}, #KEYS, 2 do
  if ${named} then redis.call('ZADD', KEYS[i], 0, ARGV[${member}]) end
  if ${active} then redis.call('ZADD', KEYS[i + 1], ARGV[${now}], ARGV[${member}]) else redis.call('ZADD', KEYS[i + 1], 'NX', ARGV[${now}], ARGV[${member}]) end
  if tonumber(ARGV[${ttl}]) > 0 then
    redis.call('EXPIRE', KEYS[i], ARGV[${ttl}])
    redis.call('EXPIRE', KEYS[i + 1], ARGV[${ttl}])
  end
end`;

/**
 * Appends a turn atomically: records its turn id (a turn stored already writes
 * nothing), checks the fence, pushes its messages, notes the session's activity,
 * renews the TTL, and, when asked, gives the fencing lock back in the same step. What
 * never changes while a session lives (its key, creation time and index entries by
 * name) is written by its first write only, so a later turn neither runs those calls
 * nor adds them to the append-only file again. The turn
 * id comes before the fence: ioredis sends a command again after a reconnect, and
 * a repeat of an append that was applied (and so released its lock) must say
 * "stored already", never "lock lost".
 * KEYS: messages, turns, key, state, lock, info, then index and activity set pairs
 * (see INDEXED). ARGV: turn id, ttl seconds (0: none), key JSON, lock token, "1" to
 * release, now (epoch ms), the session's encoded key (its index member), messages…
 * Returns 1 when appended, 0 when the turn id was stored before, -1 when the lock is not the token's.
 */
export const APPEND = new Script(`
local release = ARGV[5] == '1' and ARGV[4] ~= ''
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  if release and redis.call('GET', KEYS[5]) == ARGV[4] then redis.call('DEL', KEYS[5]) end
  return 0
end
${FENCE(4)}
redis.call('SADD', KEYS[2], ARGV[1])
local new = redis.call('EXISTS', KEYS[3]) == 0${INDEXED(7, 7, 2, 6, "true", "new")}
for i = 8, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if new then
  redis.call('SET', KEYS[3], ARGV[3])
  redis.call('HSETNX', KEYS[6], 'c', ARGV[6])
end
redis.call('HSET', KEYS[6], 'a', ARGV[6])
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  for _, i in ipairs({1, 2, 3, 4, 6}) do redis.call('EXPIRE', KEYS[i], ttl) end
end
if release then redis.call('DEL', KEYS[5]) end
return 1
`);

/** Lua: creates the session (its key and creation time) if needed, writing neither again, and renews its TTL; ARGV[1] ttl, ARGV[2] key JSON, ARGV[3] now. */
const TOUCH = `
redis.call('SET', KEYS[3], ARGV[2], 'NX')
redis.call('HSETNX', KEYS[6], 'c', ARGV[3])
redis.call('HSETNX', KEYS[6], 'a', ARGV[3])
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  for _, i in ipairs({1, 2, 3, 4, 6}) do redis.call('EXPIRE', KEYS[i], ttl) end
end`;

/**
 * Sets derived-state values (one, or several together: a script runs whole),
 * creating the session if needed, and renews the session's TTL. KEYS: messages,
 * turns, key, state, lock, info, then index pairs (INDEXED). ARGV: ttl seconds (0:
 * none), key JSON, now, lock token, the session's encoded key, then pairs of name
 * and JSON value. Returns 1, or -1 when the lock is not the token's.
 */
export const SET_STATE = new Script(`
${FENCE(4)}
for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1]) end
${TOUCH}${INDEXED(7, 5, 1, 3, "false")}
return 1
`);

/**
 * Sets or removes a session's title and metadata, or sets its times, creating the
 * session if needed. KEYS: as SET_STATE. ARGV: ttl, key JSON, now, lock token, the
 * session's encoded key, then pairs of field ("ti", "md", "c", "a") and value (""
 * removes it). A last-activity time ("a") is passed as `now` too, so that the
 * activity sets order the session by it. Returns 1, or -1 when the lock is not the
 * token's.
 */
export const SET_INFO = new Script(`
${FENCE(4)}
local active = false
for i = 6, #ARGV, 2 do
  if ARGV[i] == 'a' then active = true end
  if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[6], ARGV[i]) else redis.call('HSET', KEYS[6], ARGV[i], ARGV[i + 1]) end
end
${TOUCH}${INDEXED(7, 5, 1, 3, "active")}
return 1
`);

/**
 * Adds a session to an index set (by name) and its activity twin, renewing both
 * TTLs: a Cluster's index writes, each in its own slot. KEYS: index, activity set.
 * ARGV: member, ttl seconds (0: none), now, "1" when this is activity (an append),
 * else the activity score is set only if missing.
 */
export const INDEX = new Script(`${INDEXED(1, 1, 2, 3, "ARGV[4] == '1'")}
return 1
`);

/**
 * Takes the turn lock (absent, or this owner's already: a try whose reply was lost)
 * and reads the session's messages in the same step, so the read sees every turn
 * stored before the lock was taken. KEYS: lock, messages. ARGV: owner token, ttl ms,
 * how many of the last messages ("" for all). Returns the messages, or nil when
 * another owner holds the lock.
 */
export const TAKE_AND_READ = new Script(`
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') and redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
if ARGV[3] == '' then return redis.call('LRANGE', KEYS[2], 0, -1) end
return redis.call('LRANGE', KEYS[2], -tonumber(ARGV[3]), -1)
`);

/** Deletes the lock only if this owner holds it. KEYS: lock. ARGV: owner token. */
export const RELEASE = new Script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** Extends the lock's expiry if this owner holds it; 1 if so. KEYS: lock. ARGV: owner token, ttl ms. */
export const RENEW = new Script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);

/** Removes the list's first ARGV[1] items; returns how many went. KEYS: messages. */
export const TRIM = new Script(`
local before = redis.call('LLEN', KEYS[1])
local n = math.min(tonumber(ARGV[1]), before)
if n > 0 then redis.call('LTRIM', KEYS[1], n, -1) end
return n
`);

/**
 * An edit's tail replacement: if the list still holds ARGV[2] items, keeps its first
 * ARGV[3] and pushes the new ones after them. KEYS: messages, turns, key, state, lock.
 * ARGV: lock token, expected length, from, messages…
 * Returns 1, -1 when the lock is not the token's, or -2 - the length found when it changed.
 */
export const REPLACE_TAIL = new Script(`
${FENCE(1)}
local found = redis.call('LLEN', KEYS[1])
if found ~= tonumber(ARGV[2]) then return -2 - found end
local from = tonumber(ARGV[3])
if from == 0 then redis.call('DEL', KEYS[1]) elseif from < found then redis.call('LTRIM', KEYS[1], 0, from - 1) end
for i = 4, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return 1
`);

/**
 * Erases a session on a standalone server in one step: its keys, and its entries in
 * the index sets and their activity twins. Done in two steps, an append landing
 * between them would leave a session that no index set names, which
 * `delete({ userId })` could not find. KEYS: messages, turns, key, state, lock, info,
 * then index and activity set pairs. ARGV: the session's encoded key (its member).
 * Returns how many of the session's keys existed.
 */
export const ERASE = new Script(`
local n = redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
for i = 7, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return n
`);

/**
 * Drops a session's entry from an index or activity set when the session is gone (its
 * key record missing), in one step: checked and dropped apart, a session created in
 * between would lose its entry. KEYS: the set, the session's key record. ARGV: the
 * session's encoded key. Returns 1 when the entry was dropped.
 */
const DROP_STALE = new Script(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
return redis.call('ZREM', KEYS[1], ARGV[1])
`);

/**
 * Drops the entry `id` from `set` if its session (key record `keyRecord`) is gone. A
 * Cluster keeps the set in another slot than the session, so there the two cannot be
 * one step: the entry is dropped, and a session created meanwhile gets it back from
 * its next append (a Cluster's appends write their index entries every time).
 */
export async function dropStaleEntry(r: RedisClient, set: string, keyRecord: string, id: string): Promise<void> {
  if (isCluster(r)) await r.zrem(set, id);
  else await DROP_STALE.run(r, [set, keyRecord], [id]);
}
