/**
 * The error registry: complete (every condition raised in lib/ is registered, every registered
 * one is raised), templates whose placeholders are parameter names, and `siltError` rendering
 * exactly the registered template with the parameters the error then carries. That a raise
 * passes exactly its template's parameters, and names a registered condition, is checked by the
 * compiler (the @ts-expect-error cases below fail `npm run typecheck` if that guarantee goes).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_CLASSES, type ErrorClassEntry } from "../lib/error-classes.ts";
import { SiltError, siltError } from "../lib/errors.ts";

const LIB = path.join(import.meta.dirname, "..", "lib");
const REGISTRY = path.join(LIB, "error-classes.ts");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) return sources(file);
    return e.name.endsWith(".ts") && file !== REGISTRY ? [file] : [];
  });
}

const entries = Object.entries(ERROR_CLASSES as Record<string, ErrorClassEntry>);
const conditions = entries.flatMap(([errorClass, entry]) =>
  entry.messages === undefined
    ? [{ condition: errorClass, template: entry.message ?? "" }]
    : Object.entries(entry.messages).map(([variant, template]) => ({
        condition: `${errorClass}:${variant}`,
        template,
      })),
);
const placeholders = (template: string) =>
  [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

/** Condition names as string literals anywhere in lib/ (raises, and maps of conditions). */
const literals = new Set(
  sources(LIB).flatMap((file) =>
    [
      ...readFileSync(file, "utf8").matchAll(
        /"([A-Z_][A-Z0-9_]*(?:\.[A-Z0-9_]+)*(?::[A-Z0-9_]+)?)"/g,
      ),
    ].map((m) => m[1]),
  ),
);

/** First arguments of siltError(…) and parseError(pos, …) calls that are literals. */
const raised = new Set(
  sources(LIB).flatMap((file) =>
    [
      ...readFileSync(file, "utf8").matchAll(
        /\b(?:siltError\(|parseError\([^,()]+(?:\([^()]*\))?,)\s*"([^"]+)"/g,
      ),
    ].map((m) => m[1]),
  ),
);

describe("the error registry", () => {
  it("registers every condition lib/ raises", () => {
    expect(raised.size).toBeGreaterThan(300);
    const registered = new Set(conditions.map((c) => c.condition));
    expect([...raised].filter((c) => !registered.has(c))).toEqual([]);
  });

  it("has no condition that nothing raises", () => {
    expect(conditions.filter((c) => !literals.has(c.condition)).map((c) => c.condition)).toEqual(
      [],
    );
  });

  it("gives every class a status, and a message or several", () => {
    for (const [errorClass, entry] of entries) {
      // An HTTP status, or the exit code of the CLI's own INVALID_ARGUMENT.
      expect(Number.isInteger(entry.status) && entry.status > 0, errorClass).toBe(true);
      expect((entry.message === undefined) !== (entry.messages === undefined), errorClass).toBe(
        true,
      );
      if (entry.sqlstate !== undefined) expect(entry.sqlstate, errorClass).toMatch(/^[0-9A-Z]{5}$/);
    }
  });

  it("renders each template from exactly its parameters, which the error carries", () => {
    for (const { condition, template } of conditions) {
      const names = placeholders(template);
      const params = Object.fromEntries(names.map((n) => [n, `<${n}>`]));
      const raise = siltError as (c: string, p: Record<string, string>) => SiltError;
      const err = raise(condition, params);
      expect(err.parameters).toEqual(params);
      expect(err.message).toBe(template.replace(/\{(\w+)\}/g, (_, n: string) => `<${n}>`));
      expect(err.errorClass).toBe(condition.split(":")[0]);
    }
  });
});

describe("siltError", () => {
  it("takes the status and SQLSTATE from the registry", () => {
    const err = siltError("DELTA_VERSION_NOT_FOUND", { userVersion: 5, earliest: 0, latest: 3 });
    expect(err).toBeInstanceOf(SiltError);
    expect(err).toMatchObject({
      errorClass: "DELTA_VERSION_NOT_FOUND",
      status: 400,
      sqlstate: "22003",
      parameters: { userVersion: 5, earliest: 0, latest: 3 },
      message: "Cannot time travel Delta table to version 5. Available versions: [0, 3].",
    });
    expect(err.toJSON()).toEqual({
      error_class: "DELTA_VERSION_NOT_FOUND",
      message: err.message,
      sqlstate: "22003",
      message_parameters: { userVersion: "5", earliest: "0", latest: "3" },
    });
    expect(siltError("MERGE_WITHOUT_WHEN").toJSON()).not.toHaveProperty("message_parameters");
  });

  it("reports a variant as its class", () => {
    const err = siltError("TABLE_OR_VIEW_NOT_FOUND:BY_ID", { tableId: "`t1`" });
    expect(err.errorClass).toBe("TABLE_OR_VIEW_NOT_FOUND");
    expect(err.message).toMatch(/^The table with id `t1` cannot be found\./);
  });

  it("checks conditions and parameters at compile time", () => {
    const compileOnly = (raise: () => SiltError) => raise;
    // @ts-expect-error an unknown class does not compile
    compileOnly(() => siltError("NO_SUCH_ERROR_CLASS"));
    // @ts-expect-error a parameter the template names is required
    compileOnly(() => siltError("DELTA_VERSION_NOT_FOUND", { userVersion: 5, earliest: 0 }));
    compileOnly(() =>
      // @ts-expect-error a parameter the template does not name is rejected
      siltError("DELTA_VERSION_NOT_FOUND", { userVersion: 5, earliest: 0, latest: 3, at: 1 }),
    );
    // @ts-expect-error a class with several messages is raised by one of them
    compileOnly(() => siltError("TABLE_OR_VIEW_NOT_FOUND", { tableId: "t" }));
    // @ts-expect-error a template without parameters takes none
    compileOnly(() => siltError("MERGE_WITHOUT_WHEN", { clause: "x" }));
  });
});
