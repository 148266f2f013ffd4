/**
 * The middleware that checks a request against its route's schema (request-schemas.ts) before
 * the handler runs, and hands the handler the typed values (`c.req.valid("query")`,
 * `c.req.valid("json")`). The first problem found becomes a 400 naming the field by its path
 * (`whenMatched[0].condition`); nothing of the operation has run.
 */
import type { MiddlewareHandler } from "hono";
import type * as z from "zod";
import { siltError } from "../errors.ts";
import type { InputRows } from "../ops/input-rows.ts";
import { likelyMeant } from "../values/did-you-mean.ts";
import { ARROW_STREAM, arrowBody, type Env, jsonBody } from "./http.ts";
import type { RouteSpec } from "./request-schemas.ts";

type BodyOf<S extends RouteSpec> = S["body"] extends z.ZodObject
  ? S["arrowRows"] extends true
    ? Omit<z.output<S["body"]>, "rows"> & { input: InputRows }
    : z.output<S["body"]>
  : Record<string, never>;

export type Validated<S extends RouteSpec> = {
  out: { query: z.output<S["query"]>; json: BodyOf<S> };
};

export function validated<S extends RouteSpec>(
  spec: S,
): MiddlewareHandler<Env, S["path"], Validated<S>> {
  const arrowQuery = spec.arrowRows ? spec.body?.omit({ rows: true }) : undefined;
  return async (c, next) => {
    const arrow = arrowQuery !== undefined && isArrow(c.req.header("content-type"));
    if (arrow) {
      const params = check(arrowQuery, c.req.query(), "query string");
      const input: InputRows = { arrow: await arrowBody(c) };
      // The query string carried the body's fields, defaults included: none is left for it.
      c.req.addValidatedData("query", check(spec.query, {}, "query string"));
      c.req.addValidatedData("json", { ...params, input });
    } else {
      c.req.addValidatedData("query", check(spec.query, c.req.query(), "query string"));
      if (spec.body !== undefined) {
        const body = check(spec.body, await jsonBody(c, spec.bodyOptional), "request body");
        if (spec.arrowRows) {
          const { rows, ...params } = body as { rows: unknown[] };
          c.req.addValidatedData("json", { ...params, input: { rows } });
        } else {
          c.req.addValidatedData("json", body);
        }
      }
    }
    await next();
  };
}

const isArrow = (contentType: string | undefined) => (contentType ?? "").startsWith(ARROW_STREAM);

function check<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw problemOf(schema, result.error.issues[0] as z.core.$ZodIssue, [], where);
}

/**
 * The SiltError of one issue at `base`. A union that no branch accepts reports the branch the
 * value evidently meant, the one it failed only inside (a source `{"table": 1}` is a table
 * source with a bad `table`); with no such branch, the union's own message says what it takes.
 */
function problemOf(
  root: z.ZodType,
  issue: z.core.$ZodIssue,
  base: PropertyKey[],
  where: string,
): Error {
  const path = [...base, ...issue.path];
  if (issue.code === "unrecognized_keys") {
    const known = knownFields(root, path);
    const field = issue.keys[0] as string;
    const near = likelyMeant(field, known);
    return siltError("INVALID_REQUEST:UNKNOWN_FIELD", {
      field: pathText([...path, field]),
      where,
      suggestion: near === undefined ? "" : ` (did you mean '${near}'?)`,
      known: known.join(", ") || "none",
    });
  }
  if (issue.code === "invalid_union") {
    const meant = issue.errors.filter((branch) => branch.every((i) => failedInside(i)));
    if (meant.length === 1) {
      return problemOf(root, meant[0][0] as z.core.$ZodIssue, path, where);
    }
  }
  return siltError("INVALID_REQUEST:FIELD_INVALID", {
    field: pathText(path),
    problem: issue.message,
  });
}

/** Whether an issue lies inside a value of the right kind: not at its root, not a missing field. */
function failedInside(issue: z.core.$ZodIssue): boolean {
  const missing = issue.code === "invalid_type" && issue.input === undefined;
  return issue.path.length > 0 && !(missing && issue.path.length === 1);
}

/** `whenMatched[0].condition` */
function pathText(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) =>
      typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`,
    )
    .join("");
}

/**
 * The fields the object at `path` declares, found by walking the schema along the path; for a
 * union of objects (a merge source), those of every branch.
 */
function knownFields(root: z.ZodType, path: readonly PropertyKey[]): string[] {
  let schema: z.core.$ZodType | undefined = root;
  for (const key of path) schema = schema === undefined ? undefined : child(schema, key);
  return schema === undefined ? [] : objectKeys(schema);
}

function child(schema: z.core.$ZodType, key: PropertyKey): z.core.$ZodType | undefined {
  const def = schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
  switch (def.type) {
    case "object":
      return (def.shape as Record<string, z.core.$ZodType>)[String(key)];
    case "array":
      return def.element as z.core.$ZodType;
    case "record":
      return def.valueType as z.core.$ZodType;
    case "union":
      return (def.options as z.core.$ZodType[])
        .map((option) => child(option, key))
        .find((found) => found !== undefined);
    default: {
      const inner = unwrapped(schema);
      return inner === schema ? undefined : child(inner, key);
    }
  }
}

function objectKeys(schema: z.core.$ZodType): string[] {
  const def = schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
  if (def.type === "object") return Object.keys(def.shape as object);
  if (def.type === "union") {
    return [...new Set((def.options as z.core.$ZodType[]).flatMap(objectKeys))];
  }
  const inner = unwrapped(schema);
  return inner === schema ? [] : objectKeys(inner);
}

/** The schema inside an optional, nullable or pipe (what the input is checked against). */
function unwrapped(schema: z.core.$ZodType): z.core.$ZodType {
  const def = schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
  if (def.type === "optional" || def.type === "nullable") return def.innerType as z.core.$ZodType;
  if (def.type === "pipe") return def.in as z.core.$ZodType;
  return schema;
}
