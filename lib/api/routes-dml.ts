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
import { siltError } from "../errors.ts";
import type { Assignment, Expr, MergeClause, Name } from "../expr/ast.ts";
import { parseExpression } from "../expr/parse.ts";
import { deleteRows } from "../ops/delete.ts";
import { mergeInto } from "../ops/merge.ts";
import { updateRows } from "../ops/update.ts";
import type { SqlSession } from "../sql/session.ts";
import { AUTO_MERGE_CONF, checkConf } from "../sql/session.ts";
import { defaultsOf, type Env, jsonBody } from "./http.ts";
import { loadMergeSource, type SourceSpec } from "./merge-source.ts";
import type { Operation } from "./operations.ts";
import {
  asObject,
  type Json,
  optionalBoolean,
  optionalString,
  optionalStringMap,
  requiredString,
} from "./request.ts";

export function registerDmlRoutes(app: Hono<Env>, serves: ReadonlySet<Operation>): void {
  if (serves.has("update")) {
    app.post("/api/v1/tables/:name/update", async (c) => {
      const ctx = c.get("ctx");
      const body = await jsonBody(c);
      const set = asObject(body.set, "field 'set'");
      if (Object.keys(set).length === 0) {
        throw siltError("INVALID_REQUEST:FIELD_SET_EMPTY");
      }
      const assignments: Assignment[] = Object.entries(set).map(([column, value]) => ({
        column: columnName(column, "set"),
        value: expression(value, `set.${column}`),
      }));
      return c.json(
        await updateRows(ctx, c.req.param("name"), {
          assignments,
          condition: optionalExpression(body, "condition"),
          defaults: defaultsOf(c, body),
        }),
      );
    });
  }
  if (serves.has("delete")) {
    app.post("/api/v1/tables/:name/delete", async (c) => {
      const ctx = c.get("ctx");
      const body = await jsonBody(c, true);
      return c.json(
        await deleteRows(ctx, c.req.param("name"), {
          condition: optionalExpression(body, "condition"),
          defaults: defaultsOf(c, body),
        }),
      );
    });
  }
  if (serves.has("merge")) {
    app.post("/api/v1/tables/:name/merge", async (c) => {
      const ctx = c.get("ctx");
      const body = await jsonBody(c);
      const name = c.req.param("name");
      const defaults = defaultsOf(c, body);
      const conf = checkConf(optionalStringMap(body, "conf") ?? {}, [AUTO_MERGE_CONF]);
      const session: SqlSession = { defaults, conf, now: ctx.clock() };
      const sourceAlias = optionalString(body, "sourceAlias") ?? "source";
      const targetAlias = optionalString(body, "targetAlias") ?? "target";
      const spec = asObject(body.source, "field 'source'") as SourceSpec;
      const clauses: MergeClause[] = [
        ...clauseList(body, "whenMatched").map(matchedClause),
        ...clauseList(body, "whenNotMatched").map(notMatchedClause),
        ...clauseList(body, "whenNotMatchedBySource").map(notMatchedBySourceClause),
      ];
      const result = await mergeInto(ctx, name, {
        source: (target) =>
          loadMergeSource(ctx, spec, { alias: sourceAlias, target: target.schema, session }),
        targetAlias,
        on: expression(requiredString(body, "on"), "on"),
        clauses,
        schemaEvolution:
          optionalBoolean(body, "schemaEvolution") === true ||
          (conf[AUTO_MERGE_CONF] ?? "").toLowerCase() === "true",
        defaults,
        now: session.now,
      });
      return c.json(result);
    });
  }
}

function expression(text: unknown, field: string): Expr {
  if (typeof text !== "string" || text.trim() === "") {
    throw siltError("INVALID_REQUEST:FIELD_NOT_EXPRESSION", { field });
  }
  return parseExpression(text);
}

function optionalExpression(body: Json, field: string): Expr | undefined {
  const text = optionalString(body, field);
  return text === undefined ? undefined : expression(text, field);
}

/** A column as a SET/INSERT key names it: `status`, `a.b`, `` `odd name` ``. */
function columnName(text: string, field: string): Name {
  const e = expression(text, `${field} key`);
  if (e.kind !== "column") {
    throw siltError("INVALID_REQUEST:FIELD_KEY_NOT_COLUMN", { field, text: JSON.stringify(text) });
  }
  return e.name;
}

function clauseList(body: Json, field: string): Json[] {
  const v = body[field];
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.map((x, i) => asObject(x, `${field}[${i}]`));
}

function assignments(map: unknown, field: string): Assignment[] {
  const obj = asObject(map, `field '${field}'`);
  return Object.entries(obj).map(([column, value]) => ({
    column: columnName(column, field),
    value: expression(value, `${field}.${column}`),
  }));
}

/** Exactly one of the action fields is set. */
function actionOf(clause: Json, allowed: string[], field: string): string {
  const present = allowed.filter((k) => clause[k] !== undefined && clause[k] !== false);
  if (present.length !== 1) {
    throw siltError("INVALID_REQUEST:CLAUSE_ACTION", {
      field,
      allowed: allowed.map((k) => `'${k}'`).join(", "),
    });
  }
  return present[0];
}

function matchedClause(clause: Json): MergeClause {
  const condition = optionalExpression(clause, "condition");
  const action = actionOf(clause, ["update", "updateAll", "delete"], "whenMatched");
  return {
    kind: "matched",
    ...(condition ? { condition } : {}),
    action:
      action === "update"
        ? { kind: "update", assignments: assignments(clause.update, "update") }
        : action === "updateAll"
          ? { kind: "updateStar" }
          : { kind: "delete" },
  };
}

function notMatchedClause(clause: Json): MergeClause {
  const condition = optionalExpression(clause, "condition");
  const action = actionOf(clause, ["insert", "insertAll"], "whenNotMatched");
  if (action === "insertAll") {
    return {
      kind: "notMatched",
      ...(condition ? { condition } : {}),
      action: { kind: "insertStar" },
    };
  }
  const values = assignments(clause.insert, "insert");
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

function notMatchedBySourceClause(clause: Json): MergeClause {
  const condition = optionalExpression(clause, "condition");
  const action = actionOf(clause, ["update", "delete"], "whenNotMatchedBySource");
  return {
    kind: "notMatchedBySource",
    ...(condition ? { condition } : {}),
    action:
      action === "update"
        ? { kind: "update", assignments: assignments(clause.update, "update") }
        : { kind: "delete" },
  };
}
