/**
 * The import graph of lib/ and functions/ points one way (ARCHITECTURE.md): no module imports
 * itself back through others, and no layer imports a layer above it. Type-only imports count:
 * they tie the modules' designs together as much as value imports do.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");

/** ARCHITECTURE.md's layers, top first: a module may import from its own layer and those below. */
const LAYERS = [
  "functions/",
  "lib/cli/",
  "lib/runtime/",
  "lib/api/",
  "lib/sql/",
  "lib/ops/",
  "lib/auth/",
  "lib/context.ts",
  "lib/catalog/",
  "lib/commit/",
  "lib/expr/",
  "lib/data/",
  "lib/delta/",
  "lib/kv/",
  "lib/storage/",
  "lib/values/",
  "lib/",
];

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => path.posix.join(dir, f.split(path.sep).join("/")));
}

/** Each module's relative imports (static, type-only, re-exports and dynamic), as repo paths. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of [...sourceFiles("lib"), ...sourceFiles("functions")]) {
    const text = readFileSync(path.join(ROOT, file), "utf8");
    const { importedFiles } = ts.preProcessFile(text, true, true);
    graph.set(
      file,
      importedFiles
        .map((ref) => ref.fileName)
        .filter((name) => name.startsWith("."))
        .map((name) => path.posix.join(path.posix.dirname(file), name)),
    );
  }
  return graph;
}

const layerOf = (file: string) => LAYERS.findIndex((prefix) => file.startsWith(prefix));

/** Strongly connected components of more than one module (Tarjan), each as a sorted list. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("the import graph of lib/ and functions/", () => {
  const graph = importGraph();

  it("resolves every relative import to a module it walks", () => {
    const unresolved = [...graph].flatMap(([file, deps]) =>
      deps.filter((d) => !graph.has(d)).map((d) => `${file} -> ${d}`),
    );
    expect(unresolved).toEqual([]);
  });

  it("places every module in a layer", () => {
    expect([...graph.keys()].filter((f) => layerOf(f) < 0)).toEqual([]);
  });

  it("has no cycles", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("never imports from a layer above the importer's", () => {
    const upward = [...graph].flatMap(([file, deps]) =>
      deps.filter((d) => layerOf(d) < layerOf(file)).map((d) => `${file} -> ${d}`),
    );
    expect(upward).toEqual([]);
  });
});
