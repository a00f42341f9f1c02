import { readFileSync, rmSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStore } from "@memoria/sql";
import { type OpenAICompatibleServer, launchChromium } from "@memoria/testkit/servers";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadChat } from "../src/index.js";
import { type ChatApp, startChatApp, startModel } from "./chat-app.js";

// A chat page on the AI SDK's chat client, driven in Debian's Chromium: send, stop, reload.

const dir = mkdtempSync(join(tmpdir(), "memoria-ai-sdk-page-"));
const store = createSqliteStore({ path: join(dir, "chat.db") });
let model: OpenAICompatibleServer;
let app: ChatApp;
let browser: Browser;

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [join(import.meta.dirname, "page/chat-page.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
  });
  const page = { html: readFileSync(join(import.meta.dirname, "page/index.html"), "utf8"), script: bundle.outputFiles[0]?.text ?? "" };
  model = await startModel();
  app = await startChatApp(store, model.baseURL, { onDisconnect: "stop", page });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await model?.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a chat page in Chromium", () => {
  it("sends, stops a streaming answer, and after a reload the whole chat is there", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`${app.url}/?chat=browser`);
    await page.waitForSelector("body[data-ready=true]");
    const items = page.locator("#messages li");

    await page.fill("#input", "hello there");
    await page.click("button[type=submit]");
    await expect.poll(() => items.allTextContents(), { timeout: 20_000, message: "the first answer" }).toEqual(["hello there", "You said: hello there"]);

    await page.fill("#input", "tell me a long story");
    await page.click("button[type=submit]");
    await expect
      .poll(
        () =>
          items
            .nth(3)
            .textContent()
            .catch(() => ""),
        { timeout: 20_000, message: "the long answer starts streaming" },
      )
      .toMatch(/^Once upon/);
    await page.click("#stop");
    await expect.poll(() => page.textContent("#status"), { timeout: 20_000, message: "the chat is ready after Stop" }).toBe("ready");
    await app.saved(2);
    const shown = await items.allTextContents();

    await page.reload();
    await page.waitForSelector("body[data-ready=true]");
    // The server may have generated a few words more than reached the page before the stop did: the stored answer starts with what was shown.
    const reloaded = await items.allTextContents();
    expect(reloaded.slice(0, 3)).toEqual(shown.slice(0, 3));
    expect(reloaded[3]?.startsWith(shown[3] as string)).toBe(true);
    expect(await items.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-role")))).toEqual(["user", "assistant", "user", "assistant"]);
    expect((await loadChat(store, { userId: "u1", sessionId: "browser" })).partial).toHaveLength(1);
    expect(errors).toEqual([]);
    // Its own budget: three waits of up to 20 s each and a browser on a loaded two-core CI machine (the default 30 s ran out there once).
  }, 120_000);
});
