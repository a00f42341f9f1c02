/** A model's name for a report: the provider's model id where it has one (`gpt-4o-mini`), else its class's name. */
export function modelName(model: unknown): string | undefined {
  if (typeof model !== "object" || model === null) return undefined;
  const named = model as { model?: unknown; modelName?: unknown; getName?: () => string };
  if (typeof named.model === "string") return named.model;
  if (typeof named.modelName === "string") return named.modelName;
  return typeof named.getName === "function" ? named.getName() : undefined;
}
