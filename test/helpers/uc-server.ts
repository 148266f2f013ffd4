/**
 * Silt's local server (lib/runtime/local-server.ts) in-process on a free loopback port with a
 * temporary data directory, for the real UC clients of test/uc-*.test.ts. The clients talk to a
 * recording pass-through proxy in front of it, so a test (or a failure message) can see exactly
 * which requests a client sent and what Silt answered.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SiltContext } from "../../lib/context.ts";
import { jsonLogger } from "../../lib/logger.ts";
import { startLocalServer } from "../../lib/runtime/local-server.ts";

export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status: number;
  /** The answer, cut at 2,000 characters. */
  response: string;
}

export interface UcTestServer {
  /** `http://127.0.0.1:<port>`: what the clients are given (the recording proxy). */
  url: string;
  /** Silt itself, bypassing the proxy. */
  siltUrl: string;
  ctx: SiltContext;
  dataDir: string;
  /** Every request that went through the proxy, in order. */
  requests: RecordedRequest[];
  /** The requests as `METHOD url -> status` lines, for failure messages. */
  trace(filter?: (r: RecordedRequest) => boolean): string;
  /**
   * Holds the next request through the proxy that `match` accepts: `held` resolves with it once
   * it arrives, and it goes on to Silt only when `release()` is called. Lets a test put a rival
   * commit between a client's load and its commit.
   */
  holdNext(match: (method: string, url: string, body: string) => boolean): HeldRequest;
  /** Silt's log lines (JSON), newest last. */
  log(): string[];
  /** Calls Silt's own API: `api("POST", "/api/v1/catalogs", {name: "inventory"})`. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>>;
  /** Creates each `catalog.schema` through `/api/v1` (201 expected). */
  createSchemas(...names: string[]): Promise<void>;
  /** `GET /api/v1/tables/<name>/rows[?version=]`: Silt's own read of a table. */
  rows(table: string, version?: number): Promise<SiltRows>;
  /** `GET /api/v1/tables/<name>/history` as [version, operation] pairs, oldest first. */
  history(table: string): Promise<Array<[number, string]>>;
  close(): Promise<void>;
}

export interface HeldRequest {
  held: Promise<{ method: string; url: string; body: string }>;
  release(): void;
}

export interface SiltRows {
  version: number;
  columns: Array<{ name: string; type: string }>;
  rows: unknown[][];
}

export interface ApiAnswer<T> {
  status: number;
  body: T;
}

export async function startUcTestServer(): Promise<UcTestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "silt-uc-"));
  const lines: string[] = [];
  const logger = jsonLogger({}, (line) => {
    lines.push(line);
    if (lines.length > 2_000) lines.splice(0, lines.length - 2_000);
  });
  const silt = await startLocalServer({ dataDir, port: 0, logger });
  const target = new URL(silt.url);
  const requests: RecordedRequest[] = [];
  const holds: Array<{
    match: (method: string, url: string, body: string) => boolean;
    arrived: (r: { method: string; url: string; body: string }) => void;
    released: Promise<void>;
  }> = [];

  const proxy: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks);
      const seen = { method: req.method ?? "?", url: req.url ?? "?", body: body.toString() };
      const k = holds.findIndex((h) => h.match(seen.method, seen.url, seen.body));
      if (k >= 0) {
        const [hold] = holds.splice(k, 1);
        hold.arrived(seen);
        await hold.released;
      }
      const headers = { ...req.headers, host: target.host };
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers,
        },
        (answer) => {
          const out: Buffer[] = [];
          answer.on("data", (c: Buffer) => out.push(c));
          answer.on("end", () => {
            const response = Buffer.concat(out);
            requests.push({
              method: req.method ?? "?",
              url: req.url ?? "?",
              headers: req.headers,
              body: body.toString(),
              status: answer.statusCode ?? 0,
              response: response.toString().slice(0, 2_000),
            });
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(response);
          });
        },
      );
      upstream.on("error", (e) => {
        requests.push({
          method: req.method ?? "?",
          url: req.url ?? "?",
          headers: req.headers,
          body: body.toString(),
          status: 502,
          response: String(e),
        });
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(String(e));
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    proxy.once("error", reject);
    proxy.listen(0, "127.0.0.1", () => resolve());
  });
  const address = proxy.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;

  async function api<T>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
    const res = await fetch(`${silt.url}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed as T };
  }

  return {
    url: `http://127.0.0.1:${port}`,
    siltUrl: silt.url,
    ctx: silt.ctx,
    dataDir,
    requests,
    trace: (filter = () => true) =>
      requests
        .filter(filter)
        .map((r) => `${r.method} ${r.url} -> ${r.status}`)
        .join("\n"),
    log: () => lines,
    holdNext(match) {
      let arrived!: (r: { method: string; url: string; body: string }) => void;
      let release!: () => void;
      const held = new Promise<{ method: string; url: string; body: string }>((resolve) => {
        arrived = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      holds.push({ match, arrived, released });
      return { held, release };
    },
    api,
    async createSchemas(...names: string[]) {
      const catalogs = new Set<string>();
      for (const full of names) {
        const [catalog, schema] = full.split(".");
        if (!catalogs.has(catalog)) {
          await expectStatus(api("POST", "/api/v1/catalogs", { name: catalog }), 201);
          catalogs.add(catalog);
        }
        const path = `/api/v1/catalogs/${catalog}/schemas`;
        await expectStatus(api("POST", path, { name: schema }), 201);
      }
    },
    async rows(table: string, version?: number) {
      const query = version === undefined ? "" : `?version=${version}`;
      const path = `/api/v1/tables/${encodeURIComponent(table)}/rows${query}`;
      return (await expectStatus(api<SiltRows>("GET", path), 200)).body;
    },
    async history(table: string) {
      const path = `/api/v1/tables/${encodeURIComponent(table)}/history`;
      const { body } = await expectStatus(
        api<{ columns: Array<{ name: string }>; rows: unknown[][] }>("GET", path),
        200,
      );
      const v = body.columns.findIndex((c) => c.name === "version");
      const op = body.columns.findIndex((c) => c.name === "operation");
      return body.rows.map((r) => [r[v], r[op]] as [number, string]).sort((a, b) => a[0] - b[0]);
    },
    async close() {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await silt.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function expectStatus<T>(answer: Promise<ApiAnswer<T>>, status: number) {
  const a = await answer;
  if (a.status !== status) {
    throw new Error(`expected HTTP ${status}, got ${a.status}: ${JSON.stringify(a.body)}`);
  }
  return a;
}
