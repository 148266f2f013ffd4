/**
 * Spark SQL type names (`DECIMAL(10,2)`, `ARRAY<STRUCT<a: INT>>`, `VARCHAR(n)` as STRING) into
 * Delta data types, for CAST and `::` in expressions and for column definitions in statements:
 * the grammar of lib/delta/type-name-parser.ts over the SQL lexer's tokens, with SQL positions
 * in its errors and the parser's nesting budget.
 */

import type { DataType } from "../delta/schema.ts";
import { readDataType, type TypeNameCursor } from "../delta/type-name-parser.ts";
import type { Token } from "./lexer.ts";
import { ParserBase, withPos } from "./parser-base.ts";

export class TypeParser extends ParserBase {
  private readonly typeTokens: TypeNameCursor<Token> = {
    peek: () => this.peek(),
    next: () => this.next(),
    accept: (op) => this.acceptOp(op),
    expect: (op) => {
      this.expectOp(op);
    },
    fail: (tok) => this.fail(tok),
    at: (tok, fn) => withPos(tok.pos, fn),
    nested: (fn) => this.nested(fn),
  };

  dataType(): DataType {
    return readDataType(this.typeTokens);
  }
}
