import type { Browser } from "playwright-core";

/**
 * Debian's Chromium (or `CHROMIUM_PATH`), headless, through playwright-core (an
 * optional peer), with what a machine without outside network needs: no sandbox
 * (tests run as root), no GPU, and none of the browser's own calls home.
 */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
