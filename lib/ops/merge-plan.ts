/**
 * MERGE analysis: everything that can fail before a file is read, in Delta's order and with its
 * error classes (ResolveDeltaMergeInto).
 *
 * 1. Scopes: the ON condition and MATCHED clauses see the target and the source (target columns
 *    first), NOT MATCHED clauses the source only, NOT MATCHED BY SOURCE clauses the target only.
 *    An unknown column is DELTA_MERGE_UNRESOLVED_EXPRESSION naming the clause and the columns in
 *    scope. Within each kind of clause only the last may omit its condition.
 * 2. Actions: `UPDATE SET *` and `INSERT *` expand to one assignment per target column from the
 *    source column of the same name (a target column missing from the source is an error; extra
 *    source columns are ignored, as Delta does). With schema evolution (the session's
 *    `spark.databricks.delta.schema.autoMerge.enabled` or MERGE WITH SCHEMA EVOLUTION) they expand
 *    over the source's columns instead, and a SET or INSERT target that only the source has is
 *    allowed.
 * 3. Schema evolution: the source columns and nested struct fields that some action assigns and
 *    the target lacks are added to the target schema (top level at the end, nested at the end of
 *    their struct), nullable, with column-mapping ids and physical names when the table maps
 *    columns.
 * 4. Plans: for each clause, the new value of every column of the final schema (assignments.ts);
 *    unassigned columns keep the target row's value in updates and are NULL in inserts.
 * 5. Spark's history parameters: the predicate and each clause kind's predicates and actions.
 */
import type * as arrow from "apache-arrow";
import type { Metadata } from "../delta/actions.ts";
import {
  assignColumnMapping,
  COLUMN_MAPPING_MAX_ID_KEY,
  configuredMaxColumnId,
} from "../delta/column-mapping.ts";
import {
  type DataType,
  type StructField,
  type StructType,
  serializeSchema,
} from "../delta/schema.ts";
import { type ErrorCondition, SiltError, siltError } from "../errors.ts";
import {
  analyze,
  analyzePredicate,
  containsAggregate,
  expressionSql,
  prettySql,
  type Scope,
  type ScopeRelation,
} from "../expr/analyze.ts";
import type { Expr, MergeClause, Name, SqlType } from "../expr/ast.ts";
import type { Typed } from "../expr/typed.ts";
import { quoteIfNeeded } from "../values/identifiers.ts";
import { type Assignment, type ColumnPlan, fieldOf, planColumns } from "./assignments.ts";

/** The merge source, already materialized: typed columns and their rows. */
export interface MergeSource {
  fields: { name: string; type: SqlType; nullable: boolean }[];
  table: arrow.Table;
  /** How its columns may be qualified: the alias, or a table's catalog.schema.table. */
  qualifier?: string[];
}

export interface PlannedClause {
  kind: MergeClause["kind"];
  action: "update" | "delete" | "insert";
  /** Analysed in the clause's scope; undefined = always. */
  condition?: Typed;
  /** One per column of the final schema, for update and insert actions. */
  plans?: ColumnPlan[];
}

export interface MergePlan {
  /** ON, over the target (relation 0) and the source (relation 1). */
  on: Typed;
  matched: PlannedClause[];
  notMatched: PlannedClause[];
  notMatchedBySource: PlannedClause[];
  /** The schema rows are written in (the target's, or the evolved one). */
  finalFields: StructField[];
  /** The metadata to commit when the schema evolved. */
  newMetadata?: Metadata;
  parameters: Record<string, string>;
  /** A target row matched by several source rows is an error unless this holds. */
  multipleMatchesAllowed: boolean;
  insertOnly: boolean;
}

export interface PlanInput {
  targetFields: StructField[];
  targetQualifier: string[];
  metadata: Metadata;
  source: MergeSource;
  on: Expr;
  clauses: MergeClause[];
  schemaEvolution: boolean;
}

export function planMerge(input: PlanInput): MergePlan {
  const { targetFields, source, clauses } = input;
  checkClauseOrder(clauses);
  const targetRel: ScopeRelation = {
    qualifier: input.targetQualifier,
    columns: targetFields.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable })),
  };
  const sourceRel: ScopeRelation = {
    qualifier: source.qualifier,
    columns: source.fields.map((f) => ({
      name: f.name,
      type: f.type as DataType,
      nullable: f.nullable,
    })),
  };
  const joined: Scope = { relations: [targetRel, sourceRel] };
  const targetOnly: Scope = { relations: [targetRel] };
  const sourceOnly: Scope = { relations: [sourceRel] };
  const scopeOfKind = (k: MergeClause["kind"]) =>
    k === "matched" ? joined : k === "notMatched" ? sourceOnly : targetOnly;

  // Step 1.
  const on = condition(input.on, joined, "search condition");
  const evolve = input.schemaEvolution;

  // Step 2: every clause's assignments as (target path, value), plus which name the source
  // contributes when the target lacks it.
  const resolved = clauses.map((c) => {
    const scope = scopeOfKind(c.kind);
    const type = actionName(c).toUpperCase();
    const cond =
      c.condition === undefined ? undefined : condition(c.condition, scope, `${type} condition`);
    const assignments = resolveActions(c, {
      scope,
      targetRel,
      sourceRel,
      sourceOnly,
      evolve,
      clause: `${type} clause`,
    });
    return { clause: c, condition: cond, assignments };
  });

  // Step 3.
  let finalFields = targetFields;
  let newMetadata: Metadata | undefined;
  if (evolve) {
    const stars = resolved.some(
      (r) =>
        r.clause.kind !== "notMatchedBySource" &&
        (r.clause.action.kind === "updateStar" || r.clause.action.kind === "insertStar"),
    );
    const assigned = resolved
      .filter((r) => r.clause.kind !== "notMatchedBySource")
      .flatMap((r) => (r.assignments ?? []).map((a) => a.path));
    const migration = filterSchema(sourceStruct(source), assigned, stars);
    const merged = mergeStructs(targetFields, migration.fields);
    if (merged.changed) {
      const metadata = input.metadata;
      let schema: StructType = { type: "struct", fields: merged.fields };
      const configuration = { ...metadata.configuration };
      if ((configuration["delta.columnMapping.mode"] ?? "none") !== "none") {
        const mapped = assignColumnMapping(schema, configuredMaxColumnId(configuration));
        schema = mapped.schema;
        configuration[COLUMN_MAPPING_MAX_ID_KEY] = String(mapped.maxColumnId);
      }
      finalFields = schema.fields;
      newMetadata = { ...metadata, schemaString: serializeSchema(schema), configuration };
    }
  }

  // Step 4.
  const targetColumn = (i: number): Typed | undefined => {
    const f = targetFields[i];
    if (f === undefined) return undefined;
    return {
      kind: "column",
      type: f.type,
      nullable: f.nullable,
      relation: 0,
      index: i,
      ordinal: i,
      name: f.name,
      qualifier: input.targetQualifier,
    };
  };
  const planned = resolved.map((r): PlannedClause => {
    const action = actionName(r.clause);
    const out: PlannedClause = { kind: r.clause.kind, action, condition: r.condition };
    if (r.assignments !== undefined) {
      out.plans = planColumns(finalFields, r.assignments, {
        base: (_f, i) => (action === "insert" ? undefined : targetColumn(i)),
        allowStructEvolution: evolve,
      });
    }
    return out;
  });

  // Step 5.
  const predicates = (kind: MergeClause["kind"]) =>
    JSON.stringify(
      clauses
        .filter((c) => c.kind === kind)
        .map((c) =>
          c.condition === undefined
            ? { actionType: actionName(c) }
            : { predicate: expressionSql(c.condition), actionType: actionName(c) },
        ),
    );
  const matched = planned.filter((p) => p.kind === "matched");
  const notMatchedBySource = planned.filter((p) => p.kind === "notMatchedBySource");
  return {
    on,
    matched,
    notMatched: planned.filter((p) => p.kind === "notMatched"),
    notMatchedBySource,
    finalFields,
    newMetadata,
    parameters: {
      predicate: JSON.stringify([expressionSql(input.on)]),
      matchedPredicates: predicates("matched"),
      notMatchedPredicates: predicates("notMatched"),
      notMatchedBySourcePredicates: predicates("notMatchedBySource"),
    },
    // MergeIntoCommandBase.isOnlyOneUnconditionalDelete: every match is deleted anyway.
    multipleMatchesAllowed:
      matched.length === 1 && matched[0].action === "delete" && matched[0].condition === undefined,
    insertOnly: matched.length === 0 && notMatchedBySource.length === 0,
  };
}

function actionName(c: MergeClause): "update" | "delete" | "insert" {
  switch (c.action.kind) {
    case "update":
    case "updateStar":
      return "update";
    case "delete":
      return "delete";
    default:
      return "insert";
  }
}

/** The error of a clause without a condition that is not the last of its kind. */
export const NON_LAST_CLAUSE_OMITS_CONDITION = {
  matched: "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION",
  notMatched: "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION",
  notMatchedBySource: "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION",
} as const satisfies Record<MergeClause["kind"], ErrorCondition>;

/** Spark's rule: within each kind of clause, only the last may omit its condition. */
export function checkClauseOrder(clauses: readonly MergeClause[]): void {
  if (clauses.length === 0) {
    throw siltError("MERGE_WITHOUT_WHEN");
  }
  for (const kind of ["matched", "notMatched", "notMatchedBySource"] as const) {
    const mine = clauses.filter((c) => c.kind === kind);
    if (mine.slice(0, -1).some((c) => c.condition === undefined)) {
      throw siltError(NON_LAST_CLAUSE_OMITS_CONDITION[kind]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Resolution

/** DELTA_MERGE_UNRESOLVED_EXPRESSION: "Cannot resolve x in UPDATE clause given columns …". */
function unresolved(name: readonly string[], clause: string, scope: Scope): SiltError {
  const cols = scope.relations
    .flatMap((r) =>
      r.columns.map((c) => [...(r.qualifier ?? []), c.name].map(quoteIfNeeded).join(".")),
    )
    .join(", ");
  return siltError("DELTA_MERGE_UNRESOLVED_EXPRESSION", {
    name: name.map(quoteIfNeeded).join("."),
    clause,
    cols,
  });
}

/** Every column reference of `e` must resolve in `scope`, reported in Delta's words. */
function checkReferences(e: Expr, scope: Scope, clause: string): void {
  for (const name of columnNames(e)) {
    try {
      analyze({ kind: "column", name, pos: e.pos }, scope);
    } catch (err) {
      if (err instanceof SiltError && err.errorClass.startsWith("UNRESOLVED_COLUMN")) {
        throw unresolved(name, clause, scope);
      }
      throw err;
    }
  }
}

function columnNames(e: Expr): Name[] {
  const out: Name[] = [];
  const visit = (x: unknown): void => {
    if (x === null || typeof x !== "object") return;
    if (Array.isArray(x)) {
      for (const y of x) visit(y);
      return;
    }
    const node = x as { kind?: string; name?: unknown; query?: unknown };
    if (node.kind === "column" && Array.isArray(node.name)) {
      out.push(node.name as Name);
      return;
    }
    for (const [k, v] of Object.entries(node)) {
      if (k !== "pos" && k !== "query") visit(v);
    }
  };
  visit(e);
  return out;
}

function condition(e: Expr, scope: Scope, clause: string): Typed {
  checkReferences(e, scope, clause);
  const t = analyzePredicate(e, scope);
  if (containsAggregate(t)) {
    throw siltError("DELTA_AGGREGATION_NOT_SUPPORTED:MERGE_CONDITION", {
      clause,
      condition: prettySql(t),
    });
  }
  return t;
}

function value(e: Expr, scope: Scope, clause: string): Typed {
  checkReferences(e, scope, clause);
  const t = analyze(e, scope);
  if (containsAggregate(t)) {
    throw siltError("DELTA_AGGREGATION_NOT_SUPPORTED:MERGE_EXPRESSION", {
      clause,
      expression: prettySql(t),
    });
  }
  return t;
}

interface ResolveContext {
  /** Where the clause's values are analysed. */
  scope: Scope;
  targetRel: ScopeRelation;
  sourceRel: ScopeRelation;
  sourceOnly: Scope;
  evolve: boolean;
  clause: string;
}

function resolveActions(c: MergeClause, rc: ResolveContext): Assignment[] | undefined {
  const action = c.action;
  switch (action.kind) {
    case "delete":
      return undefined;
    case "update":
      return action.assignments.map((a) =>
        assignment(
          a.column,
          value(a.value, rc.scope, rc.clause),
          rc,
          c.kind !== "notMatchedBySource",
        ),
      );
    case "insert": {
      const targetNames = rc.targetRel.columns.map((col) => [col.name]);
      const columns = action.columns ?? targetNames;
      if (columns.length !== action.values.length) {
        throw siltError("DELTA_MERGE_INSERT_COLUMN_ARITY_MISMATCH", {
          columnsCount: columns.length,
          valuesCount: action.values.length,
        });
      }
      return columns.map((col, i) =>
        assignment(col, value(action.values[i], rc.scope, rc.clause), rc, true),
      );
    }
    case "updateStar":
    case "insertStar":
      return expandStar(action.kind, rc);
  }
}

/** A SET/INSERT target: a target column (or nested field), or with evolution a source one. */
function assignment(
  column: Name,
  valueTyped: Typed,
  rc: ResolveContext,
  mayEvolve: boolean,
): Assignment {
  const targetScope: Scope = { relations: [rc.targetRel] };
  const asPath = (t: Typed): string[] | undefined => {
    const path: string[] = [];
    let node = t;
    while (node.kind === "field") {
      path.unshift(node.name);
      node = node.operand;
    }
    if (node.kind !== "column") return undefined;
    path.unshift(node.name);
    return path;
  };
  try {
    const path = asPath(analyze({ kind: "column", name: column, pos: NO_POS }, targetScope));
    if (path !== undefined) return { path, value: valueTyped };
  } catch (err) {
    if (!(err instanceof SiltError)) throw err;
    if (!(rc.evolve && mayEvolve)) {
      if (err.errorClass.startsWith("UNRESOLVED_COLUMN") || err.errorClass === "FIELD_NOT_FOUND") {
        throw unresolved(column, rc.clause, targetScope);
      }
      throw err;
    }
  }
  if (rc.evolve && mayEvolve) {
    try {
      const path = asPath(analyze({ kind: "column", name: column, pos: NO_POS }, rc.sourceOnly));
      if (path !== undefined) return { path, value: valueTyped };
    } catch (err) {
      if (!(err instanceof SiltError)) throw err;
    }
  }
  throw unresolved(column, rc.clause, targetScope);
}

const NO_POS = { line: 0, column: 0 };

function sourceColumn(rc: ResolveContext, index: number): Typed {
  const c = rc.sourceRel.columns[index];
  // Source columns sit after the target's in the joined scope, first in the source-only one.
  const offset = rc.scope.relations.length === 2 ? rc.targetRel.columns.length : 0;
  return {
    kind: "column",
    type: c.type,
    nullable: c.nullable,
    relation: rc.scope.relations.length === 2 ? 1 : 0,
    index,
    ordinal: offset + index,
    name: c.name,
    qualifier: rc.sourceRel.qualifier ?? [],
  };
}

function expandStar(kind: "updateStar" | "insertStar", rc: ResolveContext): Assignment[] {
  const sourceIndex = (name: string) =>
    rc.sourceRel.columns.findIndex((c) => c.name.toLowerCase() === name.toLowerCase());
  if (!rc.evolve) {
    return rc.targetRel.columns.map((t) => {
      const i = sourceIndex(t.name);
      if (i < 0) throw unresolved([t.name], rc.clause, rc.sourceOnly);
      return { path: [t.name], value: sourceColumn(rc, i) };
    });
  }
  const targetName = (name: string) =>
    rc.targetRel.columns.find((c) => c.name.toLowerCase() === name.toLowerCase())?.name ?? name;
  if (kind === "insertStar") {
    return rc.sourceRel.columns.map((c, i) => ({
      path: [targetName(c.name)],
      value: sourceColumn(rc, i),
    }));
  }
  // UPDATE SET * unfolds source structs to their leaves, so a target struct keeps the fields
  // the source struct lacks.
  const out: Assignment[] = [];
  const leaves = (t: Typed, path: string[]) => {
    const st = t.type;
    if (typeof st === "object" && st.type === "struct") {
      for (const f of st.fields) leaves(fieldOf(t, f.name) as Typed, [...path, f.name]);
    } else {
      out.push({ path, value: t });
    }
  };
  rc.sourceRel.columns.forEach((c, i) => {
    leaves(sourceColumn(rc, i), [targetName(c.name)]);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Schema evolution

function sourceStruct(source: MergeSource): StructType {
  return {
    type: "struct",
    fields: source.fields.map((f) => ({
      name: f.name,
      type: f.type as DataType,
      nullable: f.nullable,
      metadata: {},
    })),
  };
}

/** The source fields some action writes (all of them when a `*` action exists). */
function filterSchema(source: StructType, assigned: string[][], star: boolean): StructType {
  const eq = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const isPrefix = (p: string[], path: string[]) =>
    p.length <= path.length && p.every((x, i) => eq(x, path[i]));
  const visit = (st: StructType, base: string[]): StructField[] =>
    st.fields.flatMap((f) => {
      const path = [...base, f.name];
      const t = f.type;
      if (assigned.some((a) => a.length === path.length && isPrefix(a, path))) return [f];
      if (
        typeof t === "object" &&
        t.type === "struct" &&
        (star || assigned.some((a) => isPrefix(path, a)))
      ) {
        return [{ ...f, type: { type: "struct", fields: visit(t, path) } as StructType }];
      }
      return star ? [f] : [];
    });
  return { type: "struct", fields: visit(source, []) };
}

/** Target fields plus the migration's new ones (types of existing fields stay the target's). */
function mergeStructs(
  target: readonly StructField[],
  migration: readonly StructField[],
): { fields: StructField[]; changed: boolean } {
  let changed = false;
  const fields = target.map((tf) => {
    const mf = migration.find((m) => m.name.toLowerCase() === tf.name.toLowerCase());
    if (mf === undefined) return tf;
    const merged = mergeTypes(tf.type, mf.type);
    if (merged === tf.type) return tf;
    changed = true;
    return { ...tf, type: merged };
  });
  for (const mf of migration) {
    if (target.some((tf) => tf.name.toLowerCase() === mf.name.toLowerCase())) continue;
    if ((mf.type as SqlType) === "null") {
      throw siltError("DELTA_MERGE_ADD_VOID_COLUMN", { name: mf.name });
    }
    changed = true;
    fields.push({ name: mf.name, type: stripMetadata(mf.type), nullable: true, metadata: {} });
  }
  return { fields, changed };
}

function mergeTypes(target: DataType, source: DataType): DataType {
  if (typeof target !== "object" || typeof source !== "object") return target;
  if (target.type === "struct" && source.type === "struct") {
    const m = mergeStructs(target.fields, source.fields);
    return m.changed ? { type: "struct", fields: m.fields } : target;
  }
  if (target.type === "array" && source.type === "array") {
    const e = mergeTypes(target.elementType, source.elementType);
    return e === target.elementType ? target : { ...target, elementType: e };
  }
  return target;
}

function stripMetadata(t: DataType): DataType {
  if (typeof t !== "object") return t;
  switch (t.type) {
    case "struct":
      return {
        type: "struct",
        fields: t.fields.map((f) => ({ ...f, type: stripMetadata(f.type), metadata: {} })),
      };
    case "array":
      return { ...t, elementType: stripMetadata(t.elementType) };
    case "map":
      return { ...t, keyType: stripMetadata(t.keyType), valueType: stripMetadata(t.valueType) };
    default:
      return t;
  }
}
