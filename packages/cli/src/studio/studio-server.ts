import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { HistoryStore } from "@memoria/core";
import { type ApiResult, studioApi } from "./studio-api.js";
import { assetFile } from "./studio-assets.js";

export interface StudioOptions {
  store: HistoryStore;
  /** Shown in the page's header. */
  label: string;
  /** Allow the actions that change or copy data (export, delete a message, branch, erase a user). @default false */
  write?: boolean;
  /** @default a free port */
  port?: number;
}

export interface RunningStudio {
  /** The page's address, with the token: the only way in. */
  url: string;
  port: number;
  close(): Promise<void>;
}

const COOKIE = "memoria_studio";

function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieToken(request: IncomingMessage): string | undefined {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const [name, value] = part.trim().split("=");
    if (name === COOKIE) return value;
  }
  return undefined;
}

function send(response: ServerResponse, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  response.writeHead(status, {
    "content-type": type,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "content-security-policy":
      "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
    ...headers,
  });
  response.end(body);
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) throw Object.assign(new Error("request body too large"), { status: 413 });
    chunks.push(chunk as Buffer);
  }
  try {
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
  } catch {
    throw Object.assign(new Error("the request body is not JSON"), { status: 400 });
  }
}

/**
 * memoria studio: a local web page over one store. It listens on 127.0.0.1 only,
 * and every request needs the random token printed in its URL (the first visit
 * trades it for a same-site, HTTP-only cookie); a request naming another host is
 * refused, so a web page elsewhere cannot reach it through DNS rebinding.
 */
export async function startStudio(options: StudioOptions): Promise<RunningStudio> {
  const token = randomBytes(24).toString("base64url");
  const api = studioApi(options.store, { label: options.label, write: options.write === true });
  let port = 0;
  const server = createServer(async (request, response) => {
    try {
      const url = new URL(request.url ?? "/", "http://127.0.0.1");
      const host = request.headers.host ?? "";
      if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
        return send(response, 403, "text/plain; charset=utf-8", "memoria studio answers only on 127.0.0.1\n");
      const fromUrl = url.searchParams.get("token") ?? undefined;
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
      if (!sameToken(fromUrl ?? bearer ?? cookieToken(request), token)) {
        return send(response, 401, "text/plain; charset=utf-8", "memoria studio: open the URL the command printed (it holds the token)\n");
      }
      const cookie = fromUrl ? { "set-cookie": `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/` } : undefined;
      if (url.pathname.startsWith("/api/")) {
        if (request.method === "POST" && !(request.headers["content-type"] ?? "").startsWith("application/json")) {
          return send(response, 415, "application/json", JSON.stringify({ error: "POST bodies are JSON" }));
        }
        const body = request.method === "POST" ? await bodyOf(request) : undefined;
        const result: ApiResult = await api(request.method ?? "GET", url.pathname.slice(5), url.searchParams, body);
        return send(
          response,
          result.status,
          result.type ?? "application/json",
          result.type ? (result.body as string) : JSON.stringify(result.body),
          result.headers,
        );
      }
      const asset = await assetFile(url.pathname);
      if (!asset) return send(response, 404, "text/plain; charset=utf-8", "not found\n");
      return send(response, 200, asset.type, await readFile(asset.path), cookie);
    } catch (error) {
      const status = (error as { status?: number }).status ?? 500;
      if (!response.headersSent) send(response, status, "application/json", JSON.stringify({ error: (error as Error)?.message ?? String(error) }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
