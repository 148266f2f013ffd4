/**
 * JSON routes for row-level changes, shaped like the DeltaTable API (seed 003): conditions and
 * SET values are SQL expression strings, as `DeltaTable.update(condition, set)` takes them.
 *
 * - POST /api/v1/tables/{name}/update  {condition?, set: {column: expr}}
 * - POST /api/v1/tables/{name}/delete  {condition?}
 * - POST /api/v1/tables/{name}/merge   {source, sourceAlias?, targetAlias?, on, whenMatched?,
 *   whenNotMatched?, whenNotMatchedBySource?, schemaEvolution?, conf?}
 *
 * Each clause list keeps the caller's order (first matching clause wins per row), as the
 * builder's whenMatchedUpdate(…).whenMatchedDelete(…) chain does.
 */
import type { Hono } from "hono";
import type * as z from "zod";
import { siltError } from "../errors.ts";
import type { Assignment, Expr, MergeClause, Name } from "../expr/ast.ts";
import { parseExpression } from "../expr/parse.ts";
import { deleteRows } from "../ops/delete.ts";
import { mergeInto } from "../ops/merge.ts";
import { updateRows } from "../ops/update.ts";
import type { SqlSession } from "../sql/session.ts";
import { AUTO_MERGE_CONF, checkConf } from "../sql/session.ts";
import { defaultsOf, type Env } from "./http.ts";
import { loadMergeSource } from "./merge-source.ts";
import type { Operation } from "./operations.ts";
import { ROUTES } from "./request-schemas.ts";
import { validated } from "./request-validation.ts";

export function registerDmlRoutes(app: Hono<Env>, serves: ReadonlySet<Operation>): void {
  if (serves.has("update")) {
    app.post(ROUTES.update.path, validated(ROUTES.update), async (c) => {
      const body = c.req.valid("json");
      if (Object.keys(body.set).length === 0) {
        throw siltError("INVALID_REQUEST:FIELD_SET_EMPTY");
      }
      return c.json(
        await updateRows(c.get("ctx"), c.req.param("name"), {
          assignments: assignments(body.set, "set"),
          condition: optionalExpression(body.condition),
          defaults: defaultsOf(c.req.valid("query"), body),
        }),
      );
    });
  }
  if (serves.has("delete")) {
    app.post(ROUTES.delete.path, validated(ROUTES.delete), async (c) => {
      const body = c.req.valid("json");
      return c.json(
        await deleteRows(c.get("ctx"), c.req.param("name"), {
          condition: optionalExpression(body.condition),
          defaults: defaultsOf(c.req.valid("query"), body),
        }),
      );
    });
  }
  if (serves.has("merge")) {
    app.post(ROUTES.merge.path, validated(ROUTES.merge), async (c) => {
      const ctx = c.get("ctx");
      const body = c.req.valid("json");
      const defaults = defaultsOf(c.req.valid("query"), body);
      const conf = checkConf(body.conf ?? {}, [AUTO_MERGE_CONF]);
      const session: SqlSession = { defaults, conf, now: ctx.clock() };
      const sourceAlias = body.sourceAlias ?? "source";
      const clauses: MergeClause[] = [
        ...(body.whenMatched ?? []).map(matchedClause),
        ...(body.whenNotMatched ?? []).map(notMatchedClause),
        ...(body.whenNotMatchedBySource ?? []).map(notMatchedBySourceClause),
      ];
      const result = await mergeInto(ctx, c.req.param("name"), {
        source: (target) =>
          loadMergeSource(ctx, body.source, { alias: sourceAlias, target: target.schema, session }),
        targetAlias: body.targetAlias ?? "target",
        on: parseExpression(body.on),
        clauses,
        schemaEvolution:
          body.schemaEvolution === true || (conf[AUTO_MERGE_CONF] ?? "").toLowerCase() === "true",
        defaults,
        now: session.now,
      });
      return c.json(result);
    });
  }
}

type MergeRequest = z.output<typeof ROUTES.merge.body>;
type Clause<K extends "whenMatched" | "whenNotMatched" | "whenNotMatchedBySource"> = NonNullable<
  MergeRequest[K]
>[number];

function optionalExpression(text: string | undefined): Expr | undefined {
  return text === undefined ? undefined : parseExpression(text);
}

/** A column as a SET/INSERT key names it: `status`, `a.b`, `` `odd name` ``. */
function columnName(text: string, field: string): Name {
  const e = text.trim() === "" ? undefined : parseExpression(text);
  if (e?.kind !== "column") {
    throw siltError("INVALID_REQUEST:FIELD_KEY_NOT_COLUMN", { field, text: JSON.stringify(text) });
  }
  return e.name;
}

function assignments(map: Record<string, string>, field: string): Assignment[] {
  return Object.entries(map).map(([column, value]) => ({
    column: columnName(column, field),
    value: parseExpression(value),
  }));
}

/** Exactly one of the action fields is set. */
function actionOf<C extends object>(clause: C, allowed: (keyof C & string)[], field: string) {
  const present = allowed.filter((k) => clause[k] !== undefined && clause[k] !== false);
  if (present.length !== 1) {
    throw siltError("INVALID_REQUEST:CLAUSE_ACTION", {
      field,
      allowed: allowed.map((k) => `'${k}'`).join(", "),
    });
  }
  return present[0];
}

function matchedClause(clause: Clause<"whenMatched">): MergeClause {
  const condition = optionalExpression(clause.condition);
  const action = actionOf(clause, ["update", "updateAll", "delete"], "whenMatched");
  return {
    kind: "matched",
    ...(condition ? { condition } : {}),
    action:
      action === "update"
        ? { kind: "update", assignments: assignments(clause.update ?? {}, "update") }
        : action === "updateAll"
          ? { kind: "updateStar" }
          : { kind: "delete" },
  };
}

function notMatchedClause(clause: Clause<"whenNotMatched">): MergeClause {
  const condition = optionalExpression(clause.condition);
  const action = actionOf(clause, ["insert", "insertAll"], "whenNotMatched");
  if (action === "insertAll") {
    return {
      kind: "notMatched",
      ...(condition ? { condition } : {}),
      action: { kind: "insertStar" },
    };
  }
  const values = assignments(clause.insert ?? {}, "insert");
  return {
    kind: "notMatched",
    ...(condition ? { condition } : {}),
    action: {
      kind: "insert",
      columns: values.map((a) => a.column),
      values: values.map((a) => a.value),
    },
  };
}

function notMatchedBySourceClause(clause: Clause<"whenNotMatchedBySource">): MergeClause {
  const condition = optionalExpression(clause.condition);
  const action = actionOf(clause, ["update", "delete"], "whenNotMatchedBySource");
  return {
    kind: "notMatchedBySource",
    ...(condition ? { condition } : {}),
    action:
      action === "update"
        ? { kind: "update", assignments: assignments(clause.update ?? {}, "update") }
        : { kind: "delete" },
  };
}
