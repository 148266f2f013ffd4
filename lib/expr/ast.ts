/**
 * The syntax tree of Spark SQL as Silt accepts it: expressions (lib/expr) and statements
 * (lib/sql). Parsing produces these nodes with positions; analysis resolves names and types over
 * them; evaluation and pruning walk the analysed form. Every node carries `pos`, the 1-based line
 * and column where it starts, so errors can point at the source.
 */
import type { DataType } from "../delta/schema.ts";

export interface Pos {
  line: number;
  column: number;
}

/** A possibly qualified name as written: `a`.`b`.c → ["a", "b", "c"] (back-quotes removed). */
export type Name = string[];

/** SQL types: the Delta types plus NULL's own type (an untyped NULL literal). */
export type SqlType = DataType | "null";

/**
 * A literal's value in the canonical JSON form of DESIGN §6 (lib/data/json-encoding.ts lists
 * it): integers as numbers (bigint beyond 2^53), decimals as strings with their scale
 * ("9.50"), dates "YYYY-MM-DD", timestamps ISO-8601, binary base64, NULL as null.
 */
export type LiteralValue = null | boolean | number | bigint | string;

export type BinaryOp =
  | "+"
  | "-"
  | "*"
  | "/"
  | "%"
  | "div"
  | "||"
  | "="
  | "!="
  | "<"
  | "<="
  | ">"
  | ">="
  | "<=>"
  | "and"
  | "or"
  | "&"
  | "|"
  | "^";

export type Expr =
  | { kind: "literal"; value: LiteralValue; type: SqlType; pos: Pos }
  | { kind: "column"; name: Name; pos: Pos }
  /** `*` or `t.*` in a select list, or the argument of count(*). */
  | { kind: "star"; qualifier?: Name; pos: Pos }
  | { kind: "unary"; op: "-" | "+" | "not" | "~"; operand: Expr; pos: Pos }
  | { kind: "binary"; op: BinaryOp; left: Expr; right: Expr; pos: Pos }
  | { kind: "isNull"; operand: Expr; negated: boolean; pos: Pos }
  /** IS [NOT] TRUE / FALSE / UNKNOWN. */
  | { kind: "isBool"; operand: Expr; value: boolean | null; negated: boolean; pos: Pos }
  | { kind: "isDistinctFrom"; left: Expr; right: Expr; negated: boolean; pos: Pos }
  | { kind: "in"; operand: Expr; list: Expr[]; negated: boolean; pos: Pos }
  | { kind: "inSubquery"; operand: Expr; query: Query; negated: boolean; pos: Pos }
  | { kind: "exists"; query: Query; negated: boolean; pos: Pos }
  | { kind: "between"; operand: Expr; low: Expr; high: Expr; negated: boolean; pos: Pos }
  | {
      kind: "like";
      op: "like" | "ilike" | "rlike";
      operand: Expr;
      pattern: Expr;
      escape?: string;
      negated: boolean;
      pos: Pos;
    }
  | {
      kind: "case";
      /** CASE x WHEN … (simple form); absent for CASE WHEN cond … */
      operand?: Expr;
      branches: { when: Expr; then: Expr }[];
      otherwise?: Expr;
      pos: Pos;
    }
  | { kind: "cast"; operand: Expr; target: DataType; tryCast: boolean; pos: Pos }
  /** Function or aggregate call; `name` lower-cased. count(*) has args [star]. */
  | { kind: "call"; name: string; args: Expr[]; distinct: boolean; pos: Pos }
  | { kind: "scalarSubquery"; query: Query; pos: Pos };

export interface SelectItem {
  expr: Expr;
  alias?: string;
}

export interface OrderItem {
  expr: Expr;
  descending: boolean;
  /** Spark's default: NULLS FIRST for ASC, NULLS LAST for DESC. */
  nullsFirst: boolean;
}

export interface TimeTravelSpec {
  version?: number;
  /** Any constant expression yielding a timestamp or a string ('2026-10-03 12:00:00'). */
  timestamp?: Expr;
}

export type FromItem =
  | { kind: "table"; name: Name; alias?: string; timeTravel?: TimeTravelSpec; pos: Pos }
  | { kind: "values"; rows: Expr[][]; alias?: string; columns?: string[]; pos: Pos }
  | { kind: "subquery"; query: Query; alias?: string; columns?: string[]; pos: Pos }
  | {
      kind: "join";
      joinType: "inner" | "left" | "right" | "full" | "cross" | "semi" | "anti";
      left: FromItem;
      right: FromItem;
      on?: Expr;
      using?: string[];
      pos: Pos;
    };

export type Query =
  | {
      kind: "select";
      distinct: boolean;
      items: SelectItem[];
      from?: FromItem;
      where?: Expr;
      groupBy: Expr[];
      having?: Expr;
      orderBy: OrderItem[];
      limit?: Expr;
      offset?: Expr;
      pos: Pos;
    }
  /** A bare VALUES list used as a query (INSERT … VALUES, or VALUES … AS t(c1, c2)). */
  | { kind: "values"; rows: Expr[][]; alias?: string; columns?: string[]; pos: Pos }
  | {
      kind: "setOp";
      op: "union" | "intersect" | "except";
      all: boolean;
      left: Query;
      right: Query;
      orderBy: OrderItem[];
      limit?: Expr;
      pos: Pos;
    };

export interface ColumnDef {
  name: string;
  type: DataType;
  nullable: boolean;
  comment?: string;
  pos: Pos;
}

export interface Assignment {
  /** Target column, possibly nested (a.b.c) or qualified by the target alias. */
  column: Name;
  value: Expr;
}

export type MergeClause =
  | {
      kind: "matched";
      condition?: Expr;
      action:
        | { kind: "update"; assignments: Assignment[] }
        | { kind: "updateStar" }
        | { kind: "delete" };
    }
  | {
      kind: "notMatched";
      condition?: Expr;
      action: { kind: "insert"; columns?: Name[]; values: Expr[] } | { kind: "insertStar" };
    }
  | {
      kind: "notMatchedBySource";
      condition?: Expr;
      action: { kind: "update"; assignments: Assignment[] } | { kind: "delete" };
    };

export type Statement =
  | { kind: "createCatalog"; name: string; ifNotExists: boolean; comment?: string; pos: Pos }
  | { kind: "createSchema"; name: Name; ifNotExists: boolean; comment?: string; pos: Pos }
  | {
      kind: "show";
      what: "catalogs" | "schemas" | "tables";
      /** FROM/IN clause: catalog for SCHEMAS, [catalog.]schema for TABLES. */
      in?: Name;
      like?: string;
      pos: Pos;
    }
  | {
      kind: "createTable";
      name: Name;
      /** CREATE OR REPLACE → "createOrReplace"; REPLACE TABLE → "replace". */
      mode: "create" | "createOrReplace" | "replace";
      ifNotExists: boolean;
      columns?: ColumnDef[];
      using?: string;
      partitionedBy: string[];
      clusterBy?: string[];
      location?: string;
      comment?: string;
      properties: Record<string, string>;
      asQuery?: Query;
      pos: Pos;
    }
  | {
      kind: "insert";
      table: Name;
      /** INSERT INTO t alias … REPLACE ON */
      alias?: string;
      overwrite: boolean;
      columns?: string[];
      byName: boolean;
      /** PARTITION (p = v, q) on INSERT OVERWRITE/INTO. */
      partitionSpec?: { column: string; value?: Expr }[];
      replaceWhere?: Expr;
      replaceUsing?: string[];
      replaceOn?: { condition: Expr; sourceAlias?: string };
      query: Query;
      pos: Pos;
    }
  | { kind: "query"; query: Query; pos: Pos }
  | { kind: "describeHistory"; table: Name; limit?: number; pos: Pos }
  | { kind: "describeDetail"; table: Name; pos: Pos }
  | { kind: "describeTable"; table: Name; extended: boolean; pos: Pos }
  | { kind: "dropTable"; table: Name; ifExists: boolean; pos: Pos }
  /** ALTER TABLE t RENAME TO u. */
  | { kind: "renameTable"; table: Name; newName: Name; pos: Pos }
  | { kind: "dropSchema"; name: Name; ifExists: boolean; cascade: boolean; pos: Pos }
  | { kind: "dropCatalog"; name: string; ifExists: boolean; cascade: boolean; pos: Pos }
  | {
      kind: "update";
      table: Name;
      alias?: string;
      assignments: Assignment[];
      where?: Expr;
      pos: Pos;
    }
  | { kind: "delete"; table: Name; alias?: string; where?: Expr; pos: Pos }
  | {
      kind: "merge";
      target: Name;
      targetAlias?: string;
      source: FromItem;
      on: Expr;
      clauses: MergeClause[];
      withSchemaEvolution: boolean;
      pos: Pos;
    }
  | {
      kind: "restore";
      table: Name;
      version?: number;
      timestamp?: Expr;
      pos: Pos;
    }
  | {
      kind: "optimize";
      table: Name;
      where?: Expr;
      zorderBy: string[];
      pos: Pos;
    }
  | {
      kind: "vacuum";
      table: Name;
      retainHours?: number;
      dryRun: boolean;
      mode?: "lite" | "full";
      pos: Pos;
    }
  /** REORG TABLE t [WHERE partition-predicate] APPLY (PURGE). */
  | { kind: "reorg"; table: Name; where?: Expr; pos: Pos }
  /** SET key = value / SET key (session conf is per request, so SET only echoes). */
  | { kind: "set"; key?: string; value?: string; pos: Pos }
  /** GRANT privileges ON object TO principal, or REVOKE … FROM principal. */
  | {
      kind: "grant";
      revoke: boolean;
      /** As written, upper-cased: "SELECT", "USE CATALOG", "ALL PRIVILEGES". */
      privileges: string[];
      on: SecurableRef;
      principal: string;
      pos: Pos;
    }
  /** SHOW GRANTS [principal] ON object. */
  | { kind: "showGrants"; principal?: string; on: SecurableRef; pos: Pos }
  /** ALTER TABLE t SET TBLPROPERTIES (…) / UNSET TBLPROPERTIES [IF EXISTS] (…). */
  | {
      kind: "alterProperties";
      table: Name;
      set?: Record<string, string>;
      unset?: string[];
      ifExists: boolean;
      pos: Pos;
    }
  /** SHOW TBLPROPERTIES t [(key)]. */
  | { kind: "showProperties"; table: Name; key?: string; pos: Pos }
  /** ALTER TABLE t ADD COLUMNS / RENAME COLUMN / DROP COLUMNS / ALTER COLUMN. */
  | { kind: "alterColumns"; table: Name; change: ColumnChange; pos: Pos };

/** A column added by ALTER TABLE … ADD COLUMNS: `parent` is the struct it goes into (empty: top). */
export interface NewColumn {
  parent: Name;
  name: string;
  type: DataType;
  nullable: boolean;
  comment?: string;
  position?: { first: true } | { after: string };
}

/** The schema change of one ALTER TABLE statement; column paths as written (a.b → ["a", "b"]). */
export type ColumnChange =
  | { kind: "addColumns"; columns: NewColumn[] }
  | { kind: "renameColumn"; column: Name; newName: string }
  | { kind: "dropColumns"; columns: Name[]; ifExists: boolean }
  /** ALTER COLUMN c COMMENT '…' or DROP NOT NULL. */
  | { kind: "alterColumn"; column: Name; comment?: string; dropNotNull?: boolean };

/** The object of GRANT / REVOKE / SHOW GRANTS; a catalog's name may be left to the default. */
export interface SecurableRef {
  type: "catalog" | "schema" | "table";
  name: Name;
}
