/**
 * Spark SQL type names (`DECIMAL(10,2)`, `ARRAY<STRUCT<a: INT>>`, `VARCHAR(n)` as STRING) into
 * Delta data types, for CAST and `::` in expressions and for column definitions in statements.
 */

import {
  arrayType,
  checkDecimal,
  checkDuplicateColumns,
  type DataType,
  mapType,
  type PrimitiveTypeName,
  type StructField,
  structField,
  structType,
} from "../delta/schema.ts";
import { parseError } from "./lexer.ts";
import { ParserBase, withPos } from "./parser-base.ts";

const SQL_PRIMITIVES: Record<string, PrimitiveTypeName> = {
  BOOLEAN: "boolean",
  TINYINT: "byte",
  BYTE: "byte",
  SMALLINT: "short",
  SHORT: "short",
  INT: "integer",
  INTEGER: "integer",
  BIGINT: "long",
  LONG: "long",
  FLOAT: "float",
  REAL: "float",
  DOUBLE: "double",
  DATE: "date",
  TIMESTAMP: "timestamp",
  TIMESTAMP_LTZ: "timestamp",
  TIMESTAMP_NTZ: "timestamp_ntz",
  STRING: "string",
  BINARY: "binary",
};

export class TypeParser extends ParserBase {
  dataType(): DataType {
    return this.nested(() => {
      const t = this.next();
      if (t.kind !== "word") throw this.fail(t);
      switch (t.upper) {
        case "ARRAY": {
          this.expectOp("<");
          const element = this.dataType();
          this.expectOp(">");
          return arrayType(element, true);
        }
        case "MAP": {
          this.expectOp("<");
          const key = this.dataType();
          this.expectOp(",");
          const value = this.dataType();
          this.expectOp(">");
          return mapType(key, value, true);
        }
        case "STRUCT": {
          if (this.acceptOp("<>")) return structType([]);
          this.expectOp("<");
          const fields: StructField[] = [];
          if (!this.acceptOp(">")) {
            do fields.push(this.structFieldDef());
            while (this.acceptOp(","));
            this.expectOp(">");
          }
          const s = structType(fields);
          withPos(t.pos, () => checkDuplicateColumns(s));
          return s;
        }
        case "DECIMAL":
        case "DEC":
        case "NUMERIC": {
          let precision = 10;
          let scale = 0;
          if (this.acceptOp("(")) {
            precision = this.nonNegativeInteger();
            if (this.acceptOp(",")) scale = this.nonNegativeInteger();
            this.expectOp(")");
          }
          return withPos(t.pos, () => checkDecimal(precision, scale));
        }
        case "CHAR":
        case "CHARACTER":
        case "VARCHAR": {
          if (!this.atOp("(")) {
            throw parseError(
              "DATATYPE_MISSING_SIZE",
              `DataType "${t.upper}" requires a length parameter, for example "${t.upper}"(10). ` +
                "Please specify the length.",
              "42K01",
              t.pos,
            );
          }
          this.p++;
          this.nonNegativeInteger();
          this.expectOp(")");
          return "string";
        }
        default: {
          const prim = SQL_PRIMITIVES[t.upper];
          if (prim === undefined) {
            throw parseError(
              "UNSUPPORTED_DATATYPE",
              `Unsupported data type "${t.upper}".`,
              "0A000",
              t.pos,
            );
          }
          return prim;
        }
      }
    });
  }

  private structFieldDef(): StructField {
    const nameTok = this.peek();
    if (nameTok.kind !== "word" && nameTok.kind !== "quoted") throw this.fail(nameTok);
    this.p++;
    this.acceptOp(":");
    const type = this.dataType();
    let nullable = true;
    const metadata: Record<string, unknown> = {};
    for (;;) {
      if (this.atKw("NOT") && this.isKw(this.peek(1), "NULL")) {
        this.p += 2;
        nullable = false;
      } else if (this.acceptKw("COMMENT")) {
        metadata.comment = this.stringLiteral();
      } else {
        return structField(nameTok.text, type, nullable, metadata);
      }
    }
  }
}
