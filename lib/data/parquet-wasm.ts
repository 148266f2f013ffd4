/**
 * The parquet-wasm instance Silt encodes and decodes on, retired when it traps.
 *
 * parquet-rs panics on some corrupt pages, and a panic in wasm is a trap (`RuntimeError:
 * unreachable`) that leaves the instance's stack pointer, heap and borrow flags mid-operation:
 * nothing may run on it again. The glue keeps its instance in module state (the ESM build's
 * initSync refuses to run twice), so a fresh instance needs a fresh copy of the glue: the Node
 * build (CommonJS) is loaded through `require`, and after a trap it is evicted from require's
 * cache so the next call loads a new copy, which reads and compiles the parquet_wasm_bg.wasm
 * beside it (about 15 ms: only at start-up and after a trap, never per call).
 *
 * The glue is found at (in order) `$SILT_PARQUET_WASM_GLUE`, the installed package (resolved
 * through `createRequire`, so it works unbundled), or `parquet_wasm.cjs` next to the running
 * module: what a bundle ships, beside parquet_wasm_bg.wasm, since bundling the glue would
 * rewrite the `__dirname` it finds the wasm through and leave a single, unreplaceable copy.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type * as pw from "parquet-wasm/node";

export type ParquetWasm = typeof pw;

const requireGlue = createRequire(import.meta.url);
let gluePath: string | undefined;
let current: ParquetWasm | undefined;

function resolveGlue(): string {
  const fromEnv = process.env.SILT_PARQUET_WASM_GLUE;
  if (fromEnv) return fromEnv;
  try {
    return requireGlue.resolve("parquet-wasm/node");
  } catch {
    const sibling = fileURLToPath(new URL("./parquet_wasm.cjs", import.meta.url));
    if (existsSync(sibling)) return sibling;
    throw new Error(
      "parquet-wasm: cannot find its Node build (install parquet-wasm, set " +
        "SILT_PARQUET_WASM_GLUE, or ship parquet_wasm.cjs and parquet_wasm_bg.wasm next to the bundle)",
    );
  }
}

function instance(): ParquetWasm {
  if (current) return current;
  gluePath ??= resolveGlue();
  current = requireGlue(gluePath) as ParquetWasm;
  forget(gluePath);
  return current;
}

/**
 * Drops require's references to the copy just loaded, so that the next load is a new copy and a
 * retired one (its wasm memory included) can be collected: the cache entry, and the entry in
 * the requiring module's children (without that, each trap leaked about 2 MB).
 */
function forget(path: string): void {
  const loaded = requireGlue.cache[path];
  const siblings = loaded?.parent?.children;
  if (loaded && siblings) siblings.splice(siblings.indexOf(loaded), 1);
  delete requireGlue.cache[path];
}

/**
 * Runs `fn` on the current instance. Every wasm call goes through here and is synchronous, so
 * a trap surfaces as an exception of this call (not of some later microtask) and retires the
 * instance it happened on; the exception is rethrown for the caller to classify.
 */
export function onParquetWasm<T>(fn: (wasm: ParquetWasm) => T): T {
  const wasm = instance();
  try {
    return fn(wasm);
  } catch (e) {
    if (isTrap(e) && current === wasm) current = undefined;
    throw e;
  }
}

// The project's lib (ES2023, no DOM) declares no WebAssembly global, though Node has it.
const WasmRuntimeError = (
  globalThis as unknown as { WebAssembly: { RuntimeError: ErrorConstructor } }
).WebAssembly.RuntimeError;

/** A wasm trap: what a panic in parquet-rs becomes. */
export function isTrap(e: unknown): boolean {
  return e instanceof WasmRuntimeError;
}
