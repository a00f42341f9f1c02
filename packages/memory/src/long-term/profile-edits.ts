import { type HistoryStore, type JsonValue, MemoriaError, type SessionKeyFilter, scopeKeyOf } from "@memoria/core";
import { editScopeData, readScopeRecord } from "./scope-record.js";

/** The state name `workingMemory` keeps its profile under, unless given another. */
export const PROFILE_STATE = "profile";

/** What `workingMemory` keeps in its scope record. */
export interface ProfileData {
  profile: JsonValue;
  updatedAt: number;
}

/** A change to a profile: one field (or line `field: …` of a text profile) set to `value`, or, without `field`, a text profile replaced. */
export interface ProfileChange {
  field?: string;
  value: string;
}

/** The scope's profile as stored (text, or the schema's object), or undefined. */
export async function readProfile(store: HistoryStore, scope: SessionKeyFilter, stateName = PROFILE_STATE): Promise<JsonValue | undefined> {
  return (await readScopeRecord<ProfileData>(store, scopeKeyOf(scope), stateName))?.data?.profile;
}

/**
 * Rewrites part of the scope's working memory, under the lock the background
 * updates take: in a profile kept as an object (a schema was given), `field` is
 * set to `value`; in a text profile, the line `field: …` is replaced (or added),
 * or the whole text when no field is named. Returns the new profile.
 */
export async function updateProfile(store: HistoryStore, scope: SessionKeyFilter, change: ProfileChange, stateName = PROFILE_STATE): Promise<JsonValue> {
  const field = change.field?.trim();
  if (typeof change.value !== "string") throw new MemoriaError("INVALID_ARGUMENT", "A profile change needs a text value.");
  if (change.field !== undefined && !field) throw new MemoriaError("INVALID_ARGUMENT", "A profile field name cannot be empty.");
  const data = await editScopeData<ProfileData>(store, scope, stateName, (current) => ({
    profile: changed(current?.profile, field, change.value),
    updatedAt: Date.now(),
  }));
  return (data as ProfileData).profile;
}

function changed(profile: JsonValue | undefined, field: string | undefined, value: string): JsonValue {
  if (profile !== undefined && profile !== null && typeof profile === "object" && !Array.isArray(profile)) {
    if (field === undefined) {
      throw new MemoriaError(
        "INVALID_ARGUMENT",
        `This profile is kept as fields (${Object.keys(profile).join(", ") || "none yet"}): name the field to change.`,
      );
    }
    return { ...profile, [field]: value };
  }
  const text = typeof profile === "string" ? profile : "";
  if (field === undefined) return value.trim();
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const label = `${field.toLowerCase()}:`;
  const at = lines.findIndex((line) => line.trim().toLowerCase().startsWith(label));
  const line = `${field}: ${value.trim()}`;
  if (at === -1) lines.push(line);
  else lines[at] = line;
  return lines.join("\n");
}
