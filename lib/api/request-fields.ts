/**
 * The field types of Silt's request schemas (request-schemas.ts), with the lenient forms the API
 * has always taken: booleans and integers as strings (a query string has nothing else),
 * comma-separated lists, and null for an absent optional field. Each failure says what the field
 * must be, so the message tells the caller what to fix (request-validation.ts adds the path).
 */
import * as z from "zod";

/** The problem a field's failed check reports: "is required: …" when it is missing. */
export function mustBe(what: string) {
  return {
    error: (issue: { input?: unknown }) =>
      issue.input === undefined ? `is required: ${what}` : `must be ${what}`,
  };
}

/** An optional field: absent or null reads as undefined. */
export function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => v ?? undefined);
}

/** An object refusing fields it does not declare: a typo must never widen an operation. */
export function fields<S extends z.ZodRawShape>(shape: S) {
  return z.strictObject(shape, mustBe("a JSON object"));
}

export const text = () => z.string(mustBe("a string"));

export const nonEmptyText = () =>
  z.string(mustBe("a non-empty string")).min(1, mustBe("a non-empty string"));

/** SQL text (a condition, a SET value), parsed by the route so errors carry their position. */
export const sqlText = () =>
  z
    .string(mustBe("a SQL expression string"))
    .refine((s) => s.trim() !== "", mustBe("a SQL expression string"));

export function flag() {
  const problem = mustBe("true or false");
  return z
    .union([z.boolean(problem), z.enum(["true", "false"], problem)], problem)
    .transform((v) => v === true || v === "true");
}

/** An integer >= min; in a query string its digits, and `?limit=` (empty) as absent. */
export function count(min = 0) {
  const problem = mustBe(`an integer >= ${min}`);
  const integer = () => z.int(problem).min(min, problem);
  return z.union(
    [
      integer(),
      z.string(problem).regex(/^\d+$/, problem).transform(Number).pipe(integer()),
      z.literal("", problem).transform(() => undefined),
    ],
    problem,
  );
}

/** Names as an array of strings or as one comma-separated string. */
export function names() {
  const problem = mustBe("a list of names: an array of strings, or one comma-separated string");
  return z.union(
    [
      z.array(z.string(problem), problem),
      z.string(problem).transform((s) =>
        s
          .split(",")
          .map((part) => part.trim())
          .filter((part) => part !== ""),
      ),
    ],
    problem,
  );
}

/** A map of settings (conf, table properties): any keys, values as strings. */
export function textMap() {
  const problem = mustBe("a string");
  return z.record(
    z.string(),
    z.union([z.string(problem), z.number(problem), z.boolean(problem)], problem).transform(String),
    mustBe("an object of string values"),
  );
}

/** A column a request declares: a merge source's (and, with a comment, CREATE TABLE's). */
export const columnSpec = () =>
  fields({ name: nonEmptyText(), type: nonEmptyText(), nullable: optional(flag()) });
