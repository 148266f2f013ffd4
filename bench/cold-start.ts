/**
 * Cold start of a deployed function, measured the way Lambda pays it: the insert function is
 * bundled as the CDK stack bundles it (esbuild, ESM, minified, parquet-wasm's .wasm beside the
 * bundle), and each run is a fresh `node` process that loads the bundle and serves one request
 * against the stand-ins (s3rver, dynalite) the functions' tests use. Each process then serves
 * the same request again, warm. Times are from spawning the process to its answer; the runtime's
 * own start (a `node -e ""`) is measured alongside so it can be told apart.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { httpEvent, startLambdaEnv } from "../test/helpers/lambda-env.ts";
import { type CaseResult, peakRss, rssNow } from "./common.ts";

const RUNS = 5;
// Asynchronous: the stand-ins the child talks to run in this process's event loop.
const run = promisify(execFile);
const ROWS = 1000;
const WASM = "parquet_wasm_bg.wasm";
const GLUE = "parquet_wasm.cjs";

/** The bundle, the glue and the .wasm as the stack ships them (infra/silt-stack.ts bundling options). */
async function bundleInsert(dir: string): Promise<string> {
  const out = path.join(dir, "insert-bundle");
  mkdirSync(out, { recursive: true });
  const entry = path.join(import.meta.dirname, "..", "functions", "insert.ts");
  await build({
    entryPoints: [entry],
    outfile: path.join(out, "index.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    mainFields: ["module", "main"],
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    logLevel: "error",
  });
  const glue = createRequire(import.meta.url).resolve("parquet-wasm/node");
  copyFileSync(glue, path.join(out, GLUE));
  copyFileSync(path.join(path.dirname(glue), WASM), path.join(out, WASM));
  return out;
}

const CHILD = `
  const t0 = performance.now();
  const { handler } = await import(process.env.BUNDLE);
  const loaded = performance.now();
  const event = JSON.parse(process.env.EVENT);
  const first = await handler(event, {});
  const firstDone = performance.now();
  const second = await handler(event, {});
  const secondDone = performance.now();
  process.stdout.write("RESULT " + JSON.stringify({
    load: loaded - t0, first: firstDone - loaded, warm: secondDone - firstDone,
    status: [first.statusCode, second.statusCode],
  }) + "\\n");
`;

export async function coldStart(dir: string): Promise<CaseResult> {
  const env = await startLambdaEnv();
  try {
    const sql = (await import("../functions/sql.ts")).handler as unknown as (
      e: ReturnType<typeof httpEvent>,
    ) => Promise<{ statusCode: number; body: string }>;
    for (const statement of [
      "CREATE CATALOG cold",
      "CREATE SCHEMA cold.s",
      "CREATE TABLE cold.s.t (id BIGINT, name STRING, amount DOUBLE) USING DELTA",
    ]) {
      const res = await sql(httpEvent("POST", "/api/v1/sql", { statement }));
      if (res.statusCode !== 200) throw new Error(`${statement}: ${res.body}`);
    }
    const out = await bundleInsert(dir);
    const bundle = path.join(out, "index.mjs");
    const rows = Array.from({ length: ROWS }, (_, i) => [i, `name-${i % 97}`, i * 0.5]);
    const event = httpEvent("POST", "/api/v1/tables/cold.s.t/insert", { rows });
    const childEnv = {
      ...process.env,
      BUNDLE: pathToFileURL(bundle).href,
      EVENT: JSON.stringify(event),
      SILT_PARQUET_WASM_GLUE: path.join(out, GLUE),
      NODE_OPTIONS: "--enable-source-maps",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    };
    const total: number[] = [];
    const runtime: number[] = [];
    const parts: { load: number; first: number; warm: number }[] = [];
    let ok = true;
    for (let i = 0; i < RUNS; i++) {
      let t = performance.now();
      await run(process.execPath, ["-e", ""]);
      runtime.push(performance.now() - t);
      t = performance.now();
      const { stdout } = await run(process.execPath, ["--input-type=module", "-e", CHILD], {
        env: childEnv,
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
      });
      const line = stdout.split("\n").find((l) => l.startsWith("RESULT "));
      if (line === undefined) throw new Error(`no result from the function: ${stdout}`);
      const r = JSON.parse(line.slice(7)) as {
        load: number;
        first: number;
        warm: number;
        status: number[];
      };
      // From spawning to the first answer: the warm request is not part of the cold start.
      total.push(performance.now() - t - r.warm);
      parts.push(r);
      ok &&= r.status.every((s) => s === 200);
    }
    const sqlCount = await sql(
      httpEvent("POST", "/api/v1/sql", { statement: "SELECT count(*) FROM cold.s.t" }),
    );
    // Two inserts per process: every one of them must be in the table.
    ok &&= JSON.parse(sqlCount.body).rows[0][0] === 2 * RUNS * ROWS;
    return {
      case: "silt-cold-start",
      rows: ROWS,
      runs: total,
      peakRssMb: peakRss(),
      baseRssMb: rssNow(),
      ok,
      notes: [],
      extra: {
        runtimeMs: runtime,
        loadMs: parts.map((p) => p.load),
        firstMs: parts.map((p) => p.first),
        warmMs: parts.map((p) => p.warm),
        bundleBytes: statSync(bundle).size,
        wasmBytes: statSync(path.join(out, WASM)).size,
      },
    };
  } finally {
    await env.close();
  }
}
