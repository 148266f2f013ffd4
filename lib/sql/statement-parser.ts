/**
 * Spark SQL statements into the AST of lib/expr/ast.ts: DDL, DML, grants, SHOW / DESCRIBE / USE
 * and table maintenance, on top of the query and expression grammars of lib/expr.
 *
 * Statements not in the AST's union get no node of their own: `USE [SCHEMA|DATABASE|NAMESPACE]
 * a.b` becomes `{kind: "set", key: "__use__", value: "a.b"}` and `USE CATALOG c` becomes
 * `{kind: "set", key: "__use_catalog__", value: "c"}`; name parts that are not plain identifiers
 * are back-quoted in the value.
 */

import type {
  Assignment,
  ColumnChange,
  ColumnDef,
  Expr,
  MergeClause,
  Name,
  NewColumn,
  Pos,
  Query,
  SecurableRef,
  Statement,
} from "../expr/ast.ts";
import { Lexer, parseError, type Token } from "../expr/lexer.ts";
import { guard } from "../expr/parse.ts";
import { opt } from "../expr/parser-base.ts";
import { QueryParser } from "../expr/query-parser.ts";
import { NON_LAST_CLAUSE_OMITS_CONDITION } from "../ops/merge-plan.ts";
import { quoteIdent, quoteIfNeeded } from "../values/identifiers.ts";
import { parseSet } from "./set-statement-parser.ts";

/** Parses exactly one statement; trailing semicolons are allowed, a second statement is not. */
export function parseStatement(sql: string): Statement {
  return guard(() => {
    const first = new Lexer(sql).next();
    if (first.kind === "word" && first.upper === "SET") return parseSet(sql, first);
    const p = new StatementParser(sql);
    return p.statement();
  });
}

class StatementParser extends QueryParser {
  private ifNotExists(): boolean {
    if (this.atKw("IF") && this.isKw(this.peek(1), "NOT") && this.isKw(this.peek(2), "EXISTS")) {
      this.p += 3;
      return true;
    }
    return false;
  }

  private ifExists(): boolean {
    if (this.atKw("IF") && this.isKw(this.peek(1), "EXISTS")) {
      this.p += 2;
      return true;
    }
    return false;
  }

  statement(): Statement {
    while (this.atOp(";")) this.p++;
    const t = this.peek();
    if (t.kind === "eof") {
      throw parseError(t.pos, "PARSE_EMPTY_STATEMENT");
    }
    const stmt = this.statementBody(t);
    while (this.acceptOp(";")) {
      // Spark's singleStatement allows any number of trailing semicolons.
    }
    this.expectEnd();
    return stmt;
  }

  private statementBody(t: Token): Statement {
    const pos = t.pos;
    if (this.queryStartsAt(0) || this.atOp("(")) {
      return { kind: "query", query: this.query(), pos };
    }
    if (t.kind !== "word") throw this.fail(t);
    switch (t.upper) {
      case "CREATE":
        return this.create(pos);
      case "REPLACE":
        this.p++;
        this.expectKw("TABLE");
        return this.createTable(pos, "replace");
      case "INSERT":
        return this.insert(pos);
      case "SHOW":
        return this.show(pos);
      case "USE":
        return this.use(pos);
      case "DESCRIBE":
      case "DESC":
        return this.describe(pos);
      case "DROP":
        return this.drop(pos);
      case "UPDATE":
        return this.update(pos);
      case "DELETE":
        return this.delete(pos);
      case "MERGE":
        return this.merge(pos);
      case "RESTORE":
        return this.restore(pos);
      case "OPTIMIZE":
        return this.optimize(pos);
      case "VACUUM":
        return this.vacuum(pos);
      case "REORG":
        return this.reorg(pos);
      case "ALTER":
        return this.alter(pos);
      case "GRANT":
        return this.grant(pos, false);
      case "REVOKE":
        return this.grant(pos, true);
      default:
        throw this.fail(t);
    }
  }

  private create(pos: Pos): Statement {
    this.p++;
    if (this.acceptKw("OR")) {
      this.expectKw("REPLACE");
      this.expectKw("TABLE");
      return this.createTable(pos, "createOrReplace");
    }
    const what = this.peek();
    if (this.isKw(what, "TABLE")) {
      this.p++;
      return this.createTable(pos, "create");
    }
    if (this.isKw(what, "CATALOG")) {
      this.p++;
      const ifNotExists = this.ifNotExists();
      const name = this.identifier();
      const comment = this.namespaceComment();
      return { kind: "createCatalog", name, ifNotExists, ...opt("comment", comment), pos };
    }
    if (this.isKw(what, "SCHEMA", "DATABASE", "NAMESPACE")) {
      this.p++;
      const ifNotExists = this.ifNotExists();
      const name = this.multipartName();
      const comment = this.namespaceComment();
      return { kind: "createSchema", name, ifNotExists, ...opt("comment", comment), pos };
    }
    throw this.fail(what);
  }

  private namespaceComment(): string | undefined {
    let comment: string | undefined;
    while (this.atKw("COMMENT")) {
      const clause = this.next();
      if (comment !== undefined) throw duplicateClause("COMMENT", clause.pos);
      comment = this.stringLiteral();
    }
    return comment;
  }

  private createTable(pos: Pos, mode: "create" | "createOrReplace" | "replace"): Statement {
    // Spark's replaceTableHeader has no IF NOT EXISTS: `CREATE OR REPLACE TABLE IF NOT …`
    // reads IF as the table name and fails at NOT.
    const ifNotExists = mode === "create" && this.ifNotExists();
    const name = this.multipartName();
    let columns: ColumnDef[] | undefined;
    if (this.atOp("(") && !this.queryStartsAt(1)) columns = this.columnDefs();
    let using: string | undefined;
    if (this.acceptKw("USING")) using = this.columnName().join(".");

    const seen = new Map<string, Pos>();
    const clause = (label: string, tok: Token) => {
      if (seen.has(label)) throw duplicateClause(label, tok.pos);
      seen.set(label, tok.pos);
    };
    let partitionedBy: string[] = [];
    let clusterBy: string[] | undefined;
    let location: string | undefined;
    let comment: string | undefined;
    let properties: Record<string, string> = {};
    for (;;) {
      const t = this.peek();
      if (this.isKw(t, "PARTITIONED") && this.isKw(this.peek(1), "BY")) {
        clause("PARTITIONED BY", t);
        this.p += 2;
        partitionedBy = this.identifierList();
      } else if (this.isKw(t, "CLUSTER") && this.isKw(this.peek(1), "BY")) {
        clause("CLUSTER BY", t);
        this.p += 2;
        if (this.acceptKw("NONE")) clusterBy = [];
        else clusterBy = this.columnNameList().map((n) => n.join("."));
      } else if (this.isKw(t, "LOCATION")) {
        clause("LOCATION", t);
        this.p++;
        location = this.stringLiteral();
      } else if (this.isKw(t, "COMMENT")) {
        clause("COMMENT", t);
        this.p++;
        comment = this.stringLiteral();
      } else if (this.isKw(t, "TBLPROPERTIES")) {
        clause("TBLPROPERTIES", t);
        this.p++;
        properties = this.propertyList();
      } else {
        break;
      }
    }
    if (partitionedBy.length > 0 && clusterBy !== undefined) {
      throw parseError(
        seen.get("CLUSTER BY") ?? pos,
        "SPECIFY_CLUSTER_BY_WITH_PARTITIONED_BY_IS_NOT_ALLOWED",
      );
    }
    let asQuery: Query | undefined;
    if (this.acceptKw("AS")) asQuery = this.query();
    else if (this.queryStartsAt(0) || this.atOp("(")) asQuery = this.query();
    return {
      kind: "createTable",
      name,
      mode,
      ifNotExists,
      ...opt("columns", columns),
      ...opt("using", using),
      partitionedBy,
      ...opt("clusterBy", clusterBy),
      ...opt("location", location),
      ...opt("comment", comment),
      properties,
      ...opt("asQuery", asQuery),
      pos,
    };
  }

  private columnDefs(): ColumnDef[] {
    this.expectOp("(");
    const out: ColumnDef[] = [];
    do {
      const start = this.peek();
      const name = this.identifier();
      const type = this.dataType();
      let nullable = true;
      let comment: string | undefined;
      const given = new Set<string>();
      const descriptor = (label: string) => {
        if (given.has(label)) {
          throw parseError(start.pos, "CREATE_TABLE_COLUMN_DESCRIPTOR_DUPLICATE", {
            name: quoteIdent(name),
            label,
          });
        }
        given.add(label);
      };
      for (;;) {
        if (this.atKw("NOT") && this.isKw(this.peek(1), "NULL")) {
          descriptor("NOT NULL");
          this.p += 2;
          nullable = false;
        } else if (this.atKw("COMMENT")) {
          descriptor("COMMENT");
          this.p++;
          comment = this.stringLiteral();
        } else {
          break;
        }
      }
      out.push({ name, type, nullable, ...opt("comment", comment), pos: start.pos });
    } while (this.acceptOp(","));
    this.expectOp(")");
    return out;
  }

  /**
   * ALTER TABLE t SET TBLPROPERTIES (…) | UNSET TBLPROPERTIES [IF EXISTS] (…)
   * | ADD COLUMN[S] [(]spec, …[)] | RENAME COLUMN a.b TO c | DROP COLUMN[S] [IF EXISTS] [(]a, …[)]
   * | {ALTER | CHANGE} [COLUMN] a.b {COMMENT '…' | DROP NOT NULL} | RENAME TO u.
   */
  private alter(pos: Pos): Statement {
    this.p++;
    this.expectKw("TABLE");
    const table = this.multipartName();
    const columns = (change: ColumnChange): Statement => ({
      kind: "alterColumns",
      table,
      change,
      pos,
    });
    if (this.atKw("ADD") && this.isKw(this.peek(1), "COLUMN", "COLUMNS")) {
      this.p += 2;
      return columns({
        kind: "addColumns",
        columns: this.parenthesizedList(() => this.newColumn()),
      });
    }
    if (this.atKw("RENAME") && this.isKw(this.peek(1), "TO")) {
      this.p += 2;
      return { kind: "renameTable", table, newName: this.multipartName(), pos };
    }
    if (this.atKw("RENAME") && this.isKw(this.peek(1), "COLUMN")) {
      this.p += 2;
      const column = this.columnName();
      this.expectKw("TO");
      return columns({ kind: "renameColumn", column, newName: this.identifier() });
    }
    if (this.atKw("DROP") && this.isKw(this.peek(1), "COLUMN", "COLUMNS")) {
      this.p += 2;
      let ifExists = false;
      if (this.atKw("IF") && this.isKw(this.peek(1), "EXISTS")) {
        this.p += 2;
        ifExists = true;
      }
      const names = this.parenthesizedList(() => this.columnName());
      return columns({ kind: "dropColumns", columns: names, ifExists });
    }
    if (this.atKw("ALTER", "CHANGE")) {
      this.p++;
      this.acceptKw("COLUMN");
      const column = this.columnName();
      if (this.acceptKw("COMMENT")) {
        return columns({ kind: "alterColumn", column, comment: this.stringLiteral() });
      }
      this.expectKw("DROP");
      this.expectKw("NOT");
      this.expectKw("NULL");
      return columns({ kind: "alterColumn", column, dropNotNull: true });
    }
    if (this.acceptKw("SET")) {
      this.expectKw("TBLPROPERTIES");
      return { kind: "alterProperties", table, set: this.propertyList(), ifExists: false, pos };
    }
    const t = this.peek();
    if (this.acceptKw("UNSET")) {
      this.expectKw("TBLPROPERTIES");
      let ifExists = false;
      if (this.acceptKw("IF")) {
        this.expectKw("EXISTS");
        ifExists = true;
      }
      this.expectOp("(");
      const unset: string[] = [];
      do {
        unset.push(
          this.peek().kind === "string" ? this.stringLiteral() : this.columnName().join("."),
        );
      } while (this.acceptOp(","));
      this.expectOp(")");
      return { kind: "alterProperties", table, unset, ifExists, pos };
    }
    throw this.fail(t);
  }

  /** `item, …` or `(item, …)`, as ALTER TABLE's column lists may be written. */
  private parenthesizedList<T>(item: () => T): T[] {
    const parens = this.acceptOp("(");
    const out = [item()];
    while (this.acceptOp(",")) out.push(item());
    if (parens) this.expectOp(")");
    return out;
  }

  /** `a.b type [NOT NULL] [COMMENT '…'] [FIRST | AFTER c]`, each descriptor at most once. */
  private newColumn(): NewColumn {
    const start = this.peek();
    const path = this.columnName();
    const type = this.dataType();
    const name = path[path.length - 1];
    const col: NewColumn = { parent: path.slice(0, -1), name, type, nullable: true };
    const given = new Set<string>();
    const descriptor = (label: string) => {
      if (given.has(label)) {
        throw parseError(start.pos, "ALTER_TABLE_COLUMN_DESCRIPTOR_DUPLICATE", {
          name: quoteIdent(name),
          label,
        });
      }
      given.add(label);
    };
    for (;;) {
      if (this.atKw("NOT") && this.isKw(this.peek(1), "NULL")) {
        descriptor("NOT NULL");
        this.p += 2;
        col.nullable = false;
      } else if (this.acceptKw("COMMENT")) {
        descriptor("COMMENT");
        col.comment = this.stringLiteral();
      } else if (this.acceptKw("FIRST")) {
        descriptor("FIRST|AFTER");
        col.position = { first: true };
      } else if (this.acceptKw("AFTER")) {
        descriptor("FIRST|AFTER");
        col.position = { after: this.identifier() };
      } else {
        return col;
      }
    }
  }

  /** `('k' = 'v', a.b = true, …)`: keys as written, values as Spark stores them. */
  private propertyList(): Record<string, string> {
    this.expectOp("(");
    const props: Record<string, string> = {};
    do {
      const keyTok = this.peek();
      const key = keyTok.kind === "string" ? this.stringLiteral() : this.columnName().join(".");
      this.acceptOp("=");
      const value = this.propertyValue();
      if (Object.hasOwn(props, key)) throw duplicateKey(key, keyTok.pos);
      props[key] = value;
    } while (this.acceptOp(","));
    this.expectOp(")");
    return props;
  }

  /** A property value: a string, a (signed) number as written, or a lower-cased boolean. */
  private propertyValue(): string {
    const v = this.next();
    if (v.kind === "string") return v.text;
    if (v.kind === "number") return v.text;
    if (v.kind === "op" && (v.text === "-" || v.text === "+") && this.peek().kind === "number") {
      return v.text + this.next().text;
    }
    if (this.isKw(v, "TRUE", "FALSE")) return v.upper.toLowerCase();
    throw this.fail(v);
  }

  private insert(pos: Pos): Statement {
    this.p++;
    let overwrite = false;
    if (this.acceptKw("OVERWRITE")) overwrite = true;
    else this.expectKw("INTO");
    this.acceptKw("TABLE");
    const table = this.multipartName();
    const aliasTok = this.peek();
    const alias = this.optionalAlias();

    let partitionSpec: { column: string; value?: Expr }[] | undefined;
    if (this.acceptKw("PARTITION")) {
      this.expectOp("(");
      partitionSpec = [];
      do {
        const column = this.identifier();
        if (this.acceptOp("=") || this.acceptOp("==")) {
          partitionSpec.push({ column, value: this.expression() });
        } else {
          partitionSpec.push({ column });
        }
      } while (this.acceptOp(","));
      this.expectOp(")");
    }

    let byName = false;
    let columns: string[] | undefined;
    if (this.atKw("BY") && this.isKw(this.peek(1), "NAME")) {
      this.p += 2;
      byName = true;
    } else if (this.atOp("(") && !this.queryStartsAt(1) && !this.atOp("(", 1)) {
      columns = this.identifierList();
    }

    let replaceWhere: Expr | undefined;
    let replaceUsing: string[] | undefined;
    let replaceOn: { condition: Expr; sourceAlias?: string } | undefined;
    let query: Query;
    if (this.atKw("REPLACE")) {
      const replaceTok = this.next();
      // Databricks' grammar: REPLACE WHERE / USING / ON only follow INSERT INTO t [BY NAME].
      if (overwrite || partitionSpec || columns) throw this.fail(replaceTok);
      if (this.acceptKw("WHERE")) {
        replaceWhere = this.expression();
      } else if (this.acceptKw("USING")) {
        replaceUsing = this.identifierList();
      } else if (this.acceptKw("ON")) {
        const condition = this.expression();
        if (this.atOp("(")) {
          query = this.query();
          const sourceAlias = this.optionalAlias();
          replaceOn = { condition, ...opt("sourceAlias", sourceAlias) };
        } else {
          replaceOn = { condition };
          query = this.query();
        }
      } else {
        throw this.fail();
      }
    }
    if (alias !== undefined && replaceOn === undefined) throw this.fail(aliasTok);
    query ??= this.query();
    return {
      kind: "insert",
      table,
      ...opt("alias", alias),
      overwrite,
      ...opt("columns", columns),
      byName,
      ...opt("partitionSpec", partitionSpec),
      ...opt("replaceWhere", replaceWhere),
      ...opt("replaceUsing", replaceUsing),
      ...opt("replaceOn", replaceOn),
      query,
      pos,
    };
  }

  private show(pos: Pos): Statement {
    this.p++;
    if (this.atKw("GRANTS", "GRANT")) return this.showGrants(pos);
    if (this.acceptKw("TBLPROPERTIES")) {
      const table = this.multipartName();
      let key: string | undefined;
      if (this.acceptOp("(")) {
        key = this.peek().kind === "string" ? this.stringLiteral() : this.columnName().join(".");
        this.expectOp(")");
      }
      return { kind: "showProperties", table, ...opt("key", key), pos };
    }
    const t = this.next();
    let what: "catalogs" | "schemas" | "tables";
    if (this.isKw(t, "CATALOGS")) what = "catalogs";
    else if (this.isKw(t, "SCHEMAS", "DATABASES", "NAMESPACES")) what = "schemas";
    else if (this.isKw(t, "TABLES")) what = "tables";
    else throw this.fail(t);
    let inName: Name | undefined;
    if (what !== "catalogs" && (this.acceptKw("FROM") || this.acceptKw("IN"))) {
      inName = this.multipartName();
    }
    let like: string | undefined;
    if (this.acceptKw("LIKE")) like = this.stringLiteral();
    else if (this.peek().kind === "string") like = this.stringLiteral();
    return { kind: "show", what, ...opt("in", inName), ...opt("like", like), pos };
  }

  /** GRANT privileges ON object TO principal | REVOKE privileges ON object FROM principal. */
  private grant(pos: Pos, revoke: boolean): Statement {
    this.p++;
    const privileges = this.privilegeList();
    this.expectKw("ON");
    const end = revoke ? "FROM" : "TO";
    const on = this.securable(end);
    this.expectKw(end);
    return { kind: "grant", revoke, privileges, on, principal: this.identifier(), pos };
  }

  /** SHOW GRANTS [principal] ON object. */
  private showGrants(pos: Pos): Statement {
    this.p++;
    const principal = this.atKw("ON") ? undefined : this.identifier();
    this.expectKw("ON");
    return { kind: "showGrants", ...opt("principal", principal), on: this.securable(), pos };
  }

  /**
   * `SELECT, MODIFY`, `USE CATALOG`, `ALL PRIVILEGES`: each privilege is a run of words, checked
   * against the object's type when the statement runs.
   */
  private privilegeList(): string[] {
    const out: string[] = [];
    do {
      const words: string[] = [];
      while (this.peek().kind === "word" && !this.atKw("ON")) words.push(this.next().upper);
      if (words.length === 0) throw this.fail();
      out.push(words.join(" "));
    } while (this.acceptOp(","));
    return out;
  }

  /**
   * CATALOG [name] | SCHEMA name | [TABLE] name. A catalog's name may be left out (the default
   * catalog) when `end` follows; `catalog.s.t` is a table, not the CATALOG keyword.
   */
  private securable(end?: string): SecurableRef {
    const keywordHere = (...kws: string[]) => this.atKw(...kws) && !this.atOp(".", 1);
    if (keywordHere("CATALOG")) {
      this.p++;
      const named = this.peek().kind !== "eof" && !(end !== undefined && this.atKw(end));
      return { type: "catalog", name: named ? [this.identifier()] : [] };
    }
    if (keywordHere("SCHEMA", "DATABASE", "NAMESPACE")) {
      this.p++;
      return { type: "schema", name: this.multipartName() };
    }
    if (keywordHere("TABLE")) this.p++;
    return { type: "table", name: this.multipartName() };
  }

  private use(pos: Pos): Statement {
    this.p++;
    let key = "__use__";
    const t = this.peek();
    const kindWord = this.isIdentifier(this.peek(1));
    if (this.isKw(t, "CATALOG") && kindWord) {
      this.p++;
      key = "__use_catalog__";
    } else if (this.isKw(t, "SCHEMA", "DATABASE", "NAMESPACE") && kindWord) {
      this.p++;
    }
    const name = key === "__use_catalog__" ? [this.identifier()] : this.multipartName();
    return { kind: "set", key, value: name.map(quoteIfNeeded).join("."), pos };
  }

  private describe(pos: Pos): Statement {
    this.p++;
    const t = this.peek();
    const nextIsName = this.isIdentifier(this.peek(1));
    if (this.isKw(t, "HISTORY") && nextIsName) {
      this.p++;
      const table = this.multipartName();
      let limit: number | undefined;
      if (this.acceptKw("LIMIT")) limit = this.nonNegativeInteger();
      return { kind: "describeHistory", table, ...opt("limit", limit), pos };
    }
    if (this.isKw(t, "DETAIL") && nextIsName) {
      this.p++;
      return { kind: "describeDetail", table: this.multipartName(), pos };
    }
    if (this.isKw(t, "SCHEMA", "DATABASE", "NAMESPACE", "CATALOG", "FUNCTION", "QUERY")) {
      if (nextIsName) throw this.fail(t);
    }
    if (this.isKw(t, "TABLE") && (nextIsName || this.isKw(this.peek(1), "EXTENDED"))) this.p++;
    let extended = false;
    if (this.atKw("EXTENDED", "FORMATTED") && this.isIdentifier(this.peek(1))) {
      this.p++;
      extended = true;
    }
    return { kind: "describeTable", table: this.multipartName(), extended, pos };
  }

  private drop(pos: Pos): Statement {
    this.p++;
    const t = this.next();
    if (this.isKw(t, "TABLE")) {
      const ifExists = this.ifExists();
      const table = this.multipartName();
      this.acceptKw("PURGE");
      return { kind: "dropTable", table, ifExists, pos };
    }
    if (this.isKw(t, "SCHEMA", "DATABASE", "NAMESPACE")) {
      const ifExists = this.ifExists();
      const name = this.multipartName();
      return { kind: "dropSchema", name, ifExists, cascade: this.cascade(), pos };
    }
    if (this.isKw(t, "CATALOG")) {
      const ifExists = this.ifExists();
      const name = this.identifier();
      return { kind: "dropCatalog", name, ifExists, cascade: this.cascade(), pos };
    }
    throw this.fail(t);
  }

  private cascade(): boolean {
    if (this.acceptKw("CASCADE")) return true;
    this.acceptKw("RESTRICT");
    return false;
  }

  private update(pos: Pos): Statement {
    this.p++;
    const table = this.multipartName();
    const alias = this.optionalAlias();
    this.expectKw("SET");
    const assignments = this.assignments();
    const where = this.acceptKw("WHERE") ? this.expression() : undefined;
    return {
      kind: "update",
      table,
      ...opt("alias", alias),
      assignments,
      ...opt("where", where),
      pos,
    };
  }

  private assignments(): Assignment[] {
    const out: Assignment[] = [];
    do {
      const column = this.columnName();
      if (!this.acceptOp("=") && !this.acceptOp("==")) throw this.fail();
      out.push({ column, value: this.expression() });
    } while (this.acceptOp(","));
    return out;
  }

  private delete(pos: Pos): Statement {
    this.p++;
    this.expectKw("FROM");
    const table = this.multipartName();
    const alias = this.optionalAlias();
    const where = this.acceptKw("WHERE") ? this.expression() : undefined;
    return { kind: "delete", table, ...opt("alias", alias), ...opt("where", where), pos };
  }

  private merge(pos: Pos): Statement {
    this.p++;
    let withSchemaEvolution = false;
    if (this.acceptKw("WITH")) {
      this.expectKw("SCHEMA");
      this.expectKw("EVOLUTION");
      withSchemaEvolution = true;
    }
    this.expectKw("INTO");
    const target = this.multipartName();
    const targetAlias = this.optionalAlias();
    this.expectKw("USING");
    const source = this.relationPrimary();
    this.expectKw("ON");
    const on = this.expression();
    const clauses: MergeClause[] = [];
    const unconditioned = { matched: 0, notMatched: 0, notMatchedBySource: 0 };
    while (this.atKw("WHEN")) {
      const when = this.next();
      const clause = this.mergeClause();
      clauses.push(clause);
      checkMergeOrder(clauses, when.pos, unconditioned);
    }
    if (clauses.length === 0) {
      throw parseError(this.peek().pos, "MERGE_WITHOUT_WHEN");
    }
    return {
      kind: "merge",
      target,
      ...opt("targetAlias", targetAlias),
      source,
      on,
      clauses,
      withSchemaEvolution,
      pos,
    };
  }

  private mergeClause(): MergeClause {
    if (this.acceptKw("MATCHED")) {
      const condition = this.acceptKw("AND") ? this.expression() : undefined;
      this.expectKw("THEN");
      if (this.acceptKw("DELETE"))
        return { kind: "matched", ...opt("condition", condition), action: { kind: "delete" } };
      this.expectKw("UPDATE");
      this.expectKw("SET");
      if (this.acceptOp("*")) {
        return { kind: "matched", ...opt("condition", condition), action: { kind: "updateStar" } };
      }
      return {
        kind: "matched",
        ...opt("condition", condition),
        action: { kind: "update", assignments: this.assignments() },
      };
    }
    this.expectKw("NOT");
    this.expectKw("MATCHED");
    let bySource = false;
    if (this.acceptKw("BY")) {
      if (this.acceptKw("SOURCE")) bySource = true;
      else this.expectKw("TARGET");
    }
    const condition = this.acceptKw("AND") ? this.expression() : undefined;
    this.expectKw("THEN");
    if (bySource) {
      if (this.acceptKw("DELETE")) {
        return {
          kind: "notMatchedBySource",
          ...opt("condition", condition),
          action: { kind: "delete" },
        };
      }
      this.expectKw("UPDATE");
      this.expectKw("SET");
      return {
        kind: "notMatchedBySource",
        ...opt("condition", condition),
        action: { kind: "update", assignments: this.assignments() },
      };
    }
    this.expectKw("INSERT");
    if (this.acceptOp("*")) {
      return { kind: "notMatched", ...opt("condition", condition), action: { kind: "insertStar" } };
    }
    const columns = this.atOp("(") ? this.columnNameList() : undefined;
    this.expectKw("VALUES");
    this.expectOp("(");
    const values = [this.expression()];
    while (this.acceptOp(",")) values.push(this.expression());
    this.expectOp(")");
    return {
      kind: "notMatched",
      ...opt("condition", condition),
      action: { kind: "insert", ...opt("columns", columns), values },
    };
  }

  private restore(pos: Pos): Statement {
    this.p++;
    if (this.atKw("TABLE") && this.isIdentifier(this.peek(1))) this.p++;
    const table = this.multipartName();
    this.acceptKw("TO");
    const spec = this.timeTravel();
    if (!spec) throw this.fail();
    return { kind: "restore", table, ...spec, pos };
  }

  private optimize(pos: Pos): Statement {
    this.p++;
    const table = this.multipartName();
    const where = this.acceptKw("WHERE") ? this.expression() : undefined;
    let zorderBy: string[] = [];
    if (this.atKw("ZORDER")) {
      this.p++;
      this.expectKw("BY");
      if (this.atOp("(")) {
        zorderBy = this.columnNameList().map((n) => n.join("."));
      } else {
        zorderBy = [this.columnName().join(".")];
        while (this.acceptOp(",")) zorderBy.push(this.columnName().join("."));
      }
    }
    return { kind: "optimize", table, ...opt("where", where), zorderBy, pos };
  }

  private reorg(pos: Pos): Statement {
    this.p++;
    this.expectKw("TABLE");
    const table = this.multipartName();
    const where = this.acceptKw("WHERE") ? this.expression() : undefined;
    this.expectKw("APPLY");
    this.expectOp("(");
    this.expectKw("PURGE");
    this.expectOp(")");
    return { kind: "reorg", table, ...opt("where", where), pos };
  }

  private vacuum(pos: Pos): Statement {
    this.p++;
    const table = this.multipartName();
    let retainHours: number | undefined;
    let dryRun = false;
    let mode: "lite" | "full" | undefined;
    // Delta's order is [LITE|FULL] [RETAIN n HOURS] [DRY RUN]; any order is accepted, once each.
    for (;;) {
      const t = this.peek();
      if (this.isKw(t, "LITE", "FULL") && mode === undefined) {
        this.p++;
        mode = t.upper === "LITE" ? "lite" : "full";
      } else if (this.isKw(t, "RETAIN") && retainHours === undefined) {
        this.p++;
        const n = this.next();
        if (n.kind !== "number" || !/^\d+(\.\d*)?$/.test(n.text)) throw this.fail(n);
        retainHours = Number(n.text);
        this.expectKw("HOURS");
      } else if (this.isKw(t, "DRY") && !dryRun) {
        this.p++;
        this.expectKw("RUN");
        dryRun = true;
      } else {
        break;
      }
    }
    return {
      kind: "vacuum",
      table,
      ...opt("retainHours", retainHours),
      dryRun,
      ...opt("mode", mode),
      pos,
    };
  }
}

function duplicateClause(label: string, pos: Pos) {
  return parseError(pos, "DUPLICATE_CLAUSES", { label });
}

function duplicateKey(key: string, pos: Pos) {
  return parseError(pos, "DUPLICATE_KEY", { key: quoteIdent(key) });
}

/**
 * Spark's rule: within each kind of WHEN clause only the last may omit its condition (the
 * later ones could never fire).
 */
function checkMergeOrder(
  clauses: MergeClause[],
  pos: Pos,
  unconditioned: { matched: number; notMatched: number; notMatchedBySource: number },
): void {
  const last = clauses[clauses.length - 1];
  if (unconditioned[last.kind] > 0) {
    throw parseError(pos, NON_LAST_CLAUSE_OMITS_CONDITION[last.kind]);
  }
  if (last.condition === undefined) unconditioned[last.kind]++;
}
