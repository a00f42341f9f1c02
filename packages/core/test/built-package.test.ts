import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/** Runs a snippet against the built package (dist), as an installed copy would load it. */
function runBuilt(kind: "module" | "commonjs", code: string): string {
  return execFileSync(process.execPath, ["--input-type", kind, "-e", code], { cwd: import.meta.dirname, encoding: "utf8" }).trim();
}

describe("the built package", () => {
  const names =
    "[new m.MemoriaError('STORE_CLOSED', 'x'), new m.SaveError({ sessionId: 's' }, 't', 1), new m.LockLostError({ sessionId: 's' }), new m.InvalidSessionKeyError('f', 'r')].map((e) => e.name + ':' + (e instanceof m.MemoriaError)).join(' ')";
  const expected = "MemoriaError:true SaveError:true LockLostError:true InvalidSessionKeyError:true";

  it("keeps its error classes' names in the ESM build", () => {
    expect(runBuilt("module", `const m = await import("@memoria/core"); console.log(${names});`)).toBe(expected);
  });

  it("keeps its error classes' names in the CommonJS build", () => {
    expect(runBuilt("commonjs", `const m = require("@memoria/core"); console.log(${names});`)).toBe(expected);
  });

  // Both entries load one copy of the code they share (shared chunks), so a class or a
  // registry is the same object through either; a second bundled copy would break that.
  it("hands out the same classes through @memoria/core and @memoria/core/store-kit, in both builds", () => {
    const same =
      "[m.MemoriaError === k.MemoriaError, m.StoreChatMessageHistory === k.StoreChatMessageHistory, m.encodeSessionKey === k.encodeSessionKey].join(' ')";
    expect(runBuilt("module", `const m = await import("@memoria/core"); const k = await import("@memoria/core/store-kit"); console.log(${same});`)).toBe(
      "true true true",
    );
    expect(runBuilt("commonjs", `const m = require("@memoria/core"); const k = require("@memoria/core/store-kit"); console.log(${same});`)).toBe(
      "true true true",
    );
  });
});
