import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import { readParquet } from "parquet-wasm/node";
import { describe, expect, it } from "vitest";
import { arrowToRows } from "../lib/data/arrow-to-json.ts";
import { rowsToArrow } from "../lib/data/json-to-arrow.ts";
import {
  alignToLogical,
  assignColumnMapping,
  COLUMN_MAPPING_MAX_ID_KEY,
  columnMappingMode,
  fieldId,
  maxColumnIdInSchema,
  physicalColumnName,
  physicalName,
  physicalToLogicalNames,
  resolveFileField,
  toPhysicalSchema,
} from "../lib/delta/column-mapping.ts";
import {
  arrayType,
  assertSupportedTypes,
  checkDuplicateColumns,
  type DataType,
  decimal,
  fromArrowSchema,
  fromArrowType,
  mapType,
  nullData,
  PARQUET_FIELD_ID_KEY,
  parseSchema,
  type StructField,
  type StructType,
  serializeSchema,
  sparkTypeName,
  structField,
  structType,
  toArrowSchema,
  toArrowType,
  typesEqual,
  unsupportedTypes,
} from "../lib/delta/schema.ts";
import { parseSparkTypeName } from "../lib/delta/type-name-parser.ts";
import { SiltError } from "../lib/errors.ts";

const FIXTURES = new URL("../../shared/fixtures/delta/", import.meta.url).pathname;

interface LogMeta {
  schemaString: string;
  configuration: Record<string, string>;
}

/** Every metaData action in a table's log, in file order. */
function metaDataOf(table: string): LogMeta[] {
  const dir = join(FIXTURES, table, "_delta_log");
  const out: LogMeta[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith(".json")) continue;
    for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
      if (line.includes('"metaData"')) out.push(JSON.parse(line).metaData);
    }
  }
  return out;
}

function allLogFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) allLogFiles(p, out);
    else if (p.includes("/_delta_log/") && /\/\d{20}\.json$/.test(p)) out.push(p);
  }
  return out;
}

function expectSiltError(fn: () => unknown, errorClass: string, message?: string | RegExp) {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SiltError);
    const err = e as SiltError;
    expect(err.errorClass).toBe(errorClass);
    if (typeof message === "string") expect(err.message).toBe(message);
    else if (message) expect(err.message).toMatch(message);
    return err;
  }
  throw new Error(`expected ${errorClass}`);
}

describe("schemaString", () => {
  it.each([
    "golden/data-reader-primitives",
    "golden/data-reader-nested-struct",
    "golden/data-reader-map",
    "golden/data-reader-array-complex-objects",
    "golden/table-with-columnmapping-mode-name",
    "golden/table-with-columnmapping-mode-id",
    "golden/type-widening",
    "golden/collations-table",
    "golden/spark-variant-checkpoint",
  ])("round-trips %s byte for byte", (table) => {
    const metas = metaDataOf(table);
    expect(metas.length).toBeGreaterThan(0);
    for (const m of metas)
      expect(serializeSchema(parseSchema(m.schemaString))).toBe(m.schemaString);
  });

  it("round-trips every schemaString in the fixture logs", () => {
    let count = 0;
    for (const file of allLogFiles(FIXTURES)) {
      for (const line of readFileSync(file, "utf8").split("\n")) {
        if (!line.includes('"metaData"')) continue;
        const m = JSON.parse(line).metaData as LogMeta | undefined;
        if (!m?.schemaString) continue;
        expect(serializeSchema(parseSchema(m.schemaString)), file).toBe(m.schemaString);
        count++;
      }
    }
    expect(count).toBeGreaterThan(100);
  });

  it("parses primitives, decimals and nesting into the model", () => {
    const [m] = metaDataOf("golden/data-reader-map");
    const s = parseSchema(m.schemaString);
    expect(s.fields.map((f) => f.name)).toEqual(["i", "a", "b", "c", "d", "e", "f"]);
    expect(s.fields[5].type).toEqual(mapType("string", decimal(1, 0), true));
    expect(s.fields[6].type).toEqual(
      mapType("integer", arrayType(structType([structField("val", "integer")]), true), true),
    );
    expect(
      parseSchema('{"type":"struct","fields":[{"name":"x","type":"decimal"}]}').fields[0],
    ).toEqual(structField("x", decimal(10, 0), true, {}));
    expect(
      parseSchema(
        '{"type":"struct","fields":[{"name":"x","type":"decimal( 7 , 3 )","nullable":false}]}',
      ).fields[0],
    ).toEqual(structField("x", decimal(7, 3), false, {}));
  });

  it("writes Delta's exact JSON shapes", () => {
    const s = structType([
      structField("d", decimal(3, 2), false),
      structField("a", arrayType("long", false)),
      structField("m", mapType("string", "integer", false), true, { comment: "x" }),
    ]);
    expect(serializeSchema(s)).toBe(
      '{"type":"struct","fields":[' +
        '{"name":"d","type":"decimal(3,2)","nullable":false,"metadata":{}},' +
        '{"name":"a","type":{"type":"array","elementType":"long","containsNull":false},"nullable":true,"metadata":{}},' +
        '{"name":"m","type":{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":false},"nullable":true,"metadata":{"comment":"x"}}]}',
    );
  });

  it("keeps unsupported types, naming them in errors", () => {
    const [m] = metaDataOf("golden/spark-variant-checkpoint");
    const s = parseSchema(m.schemaString);
    expect(s.fields[1].type).toEqual({ type: "unsupported", name: "variant", json: "variant" });
    const bad = unsupportedTypes(s);
    expect(bad.map((b) => b.path.join("."))).toEqual([
      "v",
      "array_of_variants.element",
      "struct_of_variants.v",
      "map_of_variants.value",
      "array_of_struct_of_variants.element.v",
      "struct_of_array_of_variants.v.element",
    ]);
    const err = expectSiltError(() => assertSupportedTypes(s), "DELTA_UNSUPPORTED_DATA_TYPES");
    expect(err.message).toContain("`v`: VARIANT");
    expectSiltError(
      () => toArrowType(s.fields[1].type),
      "UNSUPPORTED_DATATYPE",
      'Unsupported data type "VARIANT".',
    );
    const odd = parseSchema(
      '{"type":"struct","fields":[{"name":"n","type":"void","nullable":true,"metadata":{}},{"name":"u","type":{"type":"udt","class":"X"},"nullable":true,"metadata":{}}]}',
    );
    expect(odd.fields.map((f) => (f.type as { name: string }).name)).toEqual(["void", "udt"]);
    expect(serializeSchema(odd)).toContain('"type":{"type":"udt","class":"X"}');
  });

  it("rejects malformed schema JSON with INVALID_JSON_DATA_TYPE", () => {
    expectSiltError(() => parseSchema("{not json"), "INVALID_JSON_DATA_TYPE");
    expectSiltError(() => parseSchema('"integer"'), "INVALID_JSON_DATA_TYPE");
    expectSiltError(
      () => parseSchema('{"type":"struct","fields":[{"type":"integer"}]}'),
      "INVALID_JSON_DATA_TYPE",
    );
  });

  it("compares types structurally", () => {
    expect(typesEqual(decimal(3, 2), decimal(3, 2))).toBe(true);
    expect(typesEqual(decimal(3, 2), decimal(4, 2))).toBe(false);
    expect(typesEqual(arrayType("long"), arrayType("long", false))).toBe(false);
    expect(
      typesEqual(
        structType([structField("a", "long")]),
        structType([structField("a", "long", true, { x: 1 })]),
      ),
    ).toBe(true);
  });
});

describe("Spark type names", () => {
  const cases: [DataType, string][] = [
    ["integer", "int"],
    ["long", "bigint"],
    ["short", "smallint"],
    ["byte", "tinyint"],
    ["string", "string"],
    ["double", "double"],
    ["float", "float"],
    ["boolean", "boolean"],
    ["binary", "binary"],
    ["date", "date"],
    ["timestamp", "timestamp"],
    ["timestamp_ntz", "timestamp_ntz"],
    [decimal(3, 2), "decimal(3,2)"],
    [arrayType("integer"), "array<int>"],
    [mapType("string", "integer"), "map<string,int>"],
    [
      structType([structField("a", "integer"), structField("b", "string")]),
      "struct<a:int,b:string>",
    ],
    [
      arrayType(mapType("long", structType([structField("x y", decimal(38, 0))]))),
      "array<map<bigint,struct<`x y`:decimal(38,0)>>>",
    ],
  ];

  it.each(cases)("%j is %s and parses back", (t, name) => {
    expect(sparkTypeName(t)).toBe(name);
    expect(parseSparkTypeName(name)).toEqual(t);
    if (!name.includes("struct")) expect(parseSparkTypeName(name.toUpperCase())).toEqual(t);
  });

  it.each([
    ["INT", "integer"],
    ["Integer", "integer"],
    ["BIGINT", "long"],
    ["long", "long"],
    ["SMALLINT", "short"],
    ["SHORT", "short"],
    ["TINYINT", "byte"],
    ["BYTE", "byte"],
    ["STRING", "string"],
    ["VARCHAR(10)", "string"],
    ["char(3)", "string"],
    ["DOUBLE", "double"],
    ["FLOAT", "float"],
    ["REAL", "float"],
    ["BOOLEAN", "boolean"],
    ["BINARY", "binary"],
    ["DATE", "date"],
    ["TIMESTAMP", "timestamp"],
    ["TIMESTAMP_LTZ", "timestamp"],
    ["TIMESTAMP_NTZ", "timestamp_ntz"],
    ["DECIMAL", decimal(10, 0)],
    ["DECIMAL(5)", decimal(5, 0)],
    ["decimal(5, 2)", decimal(5, 2)],
    ["NUMERIC(38,10)", decimal(38, 10)],
    ["DEC(4,1)", decimal(4, 1)],
    ["ARRAY<INT>", arrayType("integer")],
    ["array < array<string> >", arrayType(arrayType("string"))],
    ["MAP<STRING, DECIMAL(9,2)>", mapType("string", decimal(9, 2))],
    ["STRUCT<>", structType([])],
  ] as [string, DataType][])("parses %s", (text, t) => {
    expect(parseSparkTypeName(text)).toEqual(t);
  });

  it("parses struct fields with or without colons, NOT NULL and COMMENT", () => {
    expect(
      parseSparkTypeName("STRUCT<a: INT NOT NULL, b STRING COMMENT 'the b', `c d`: ARRAY<LONG>>"),
    ).toEqual(
      structType([
        structField("a", "integer", false),
        structField("b", "string", true, { comment: "the b" }),
        structField("c d", arrayType("long")),
      ]),
    );
  });

  it("rejects unknown types with UNSUPPORTED_DATATYPE", () => {
    expectSiltError(
      () => parseSparkTypeName("FOO"),
      "UNSUPPORTED_DATATYPE",
      'Unsupported data type "FOO".',
    );
    expectSiltError(() => parseSparkTypeName("interval"), "UNSUPPORTED_DATATYPE");
    expectSiltError(
      () => parseSparkTypeName("ARRAY<VARIANT>"),
      "UNSUPPORTED_DATATYPE",
      'Unsupported data type "VARIANT".',
    );
    expectSiltError(
      () => parseSparkTypeName("FOO(1,2)"),
      "UNSUPPORTED_DATATYPE",
      'Unsupported data type "FOO(1,2)".',
    );
    expectSiltError(() => parseSparkTypeName("DECIMAL(3,5)"), "UNSUPPORTED_DATATYPE");
    expectSiltError(
      () => parseSparkTypeName("DECIMAL(39,0)"),
      "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION",
      "Decimal precision 39 exceeds max precision 38.",
    );
    expectSiltError(() => parseSparkTypeName("VARCHAR"), "DATATYPE_MISSING_SIZE");
  });

  it("rejects malformed type text with PARSE_SYNTAX_ERROR", () => {
    expectSiltError(
      () => parseSparkTypeName("ARRAY<INT"),
      "PARSE_SYNTAX_ERROR",
      "Syntax error at or near end of input.",
    );
    expectSiltError(() => parseSparkTypeName("MAP<INT>"), "PARSE_SYNTAX_ERROR");
    expectSiltError(
      () => parseSparkTypeName("INT INT"),
      "PARSE_SYNTAX_ERROR",
      "Syntax error at or near 'INT'.",
    );
    expectSiltError(() => parseSparkTypeName("STRUCT<a INT,>"), "PARSE_SYNTAX_ERROR");
  });

  it("rejects duplicate column names regardless of case", () => {
    expectSiltError(
      () => parseSparkTypeName("STRUCT<a INT, A STRING>"),
      "COLUMN_ALREADY_EXISTS",
      "The column `A` already exists. Choose another name or rename the existing column.",
    );
    const err = expectSiltError(
      () =>
        checkDuplicateColumns(
          structType([
            structField(
              "s",
              arrayType(structType([structField("x", "long"), structField("X", "long")])),
            ),
          ]),
        ),
      "COLUMN_ALREADY_EXISTS",
    );
    expect(err.sqlstate).toBe("42711");
    expect(err.status).toBe(400);
    expect(err.message).toContain("`s`.`element`.`X`");
    expect(() =>
      checkDuplicateColumns(structType([structField("a", "long"), structField("b", "long")])),
    ).not.toThrow();
  });
});

describe("Arrow mapping", () => {
  it("maps every Delta type to its Arrow type", () => {
    const cases: [DataType, string][] = [
      ["byte", "Int8"],
      ["short", "Int16"],
      ["integer", "Int32"],
      ["long", "Int64"],
      ["float", "Float32"],
      ["double", "Float64"],
      ["boolean", "Bool"],
      ["string", "Utf8"],
      ["binary", "Binary"],
      ["date", "Date32<DAY>"],
      ["timestamp", "Timestamp<MICROSECOND, UTC>"],
      ["timestamp_ntz", "Timestamp<MICROSECOND>"],
      [decimal(10, 2), "Decimal[10e+2]"],
      [arrayType("integer"), "List<Int32>"],
      [mapType("string", "long"), "Map<{key:Utf8, value:Int64}>"],
      [structType([structField("a", "integer")]), "Struct<{a:Int32}>"],
    ];
    for (const [t, s] of cases) expect(String(toArrowType(t))).toBe(s);
    const dec = toArrowType(decimal(10, 2)) as arrow.Decimal;
    expect([dec.precision, dec.scale, dec.bitWidth]).toEqual([10, 2, 128]);
    const list = toArrowType(arrayType("integer", false)) as arrow.List;
    expect(list.children[0].name).toBe("element");
    expect(list.children[0].nullable).toBe(false);
    const map = toArrowType(mapType("string", "long", false)) as arrow.Map_;
    expect(map.children[0].name).toBe("key_value");
    expect(map.keysSorted).toBe(false);
    const entries = map.children[0].type as arrow.Struct;
    expect(entries.children.map((f) => [f.name, f.nullable])).toEqual([
      ["key", false],
      ["value", false],
    ]);
  });

  it("round-trips Delta -> Arrow -> Delta", () => {
    const [m] = metaDataOf("golden/data-reader-array-complex-objects");
    const s = parseSchema(m.schemaString);
    expect(typesEqual(fromArrowSchema(toArrowSchema(s)), s)).toBe(true);
    const [p] = metaDataOf("golden/data-reader-primitives");
    const prim = parseSchema(p.schemaString);
    expect(typesEqual(fromArrowSchema(toArrowSchema(prim)), prim)).toBe(true);
  });

  it("reads other Arrow encodings a Parquet reader may produce", () => {
    expect(fromArrowType(new arrow.LargeUtf8())).toBe("string");
    expect(fromArrowType(new arrow.Utf8View())).toBe("string");
    expect(fromArrowType(new arrow.LargeBinary())).toBe("binary");
    expect(fromArrowType(new arrow.FixedSizeBinary(16))).toBe("binary");
    expect(fromArrowType(new arrow.Uint8())).toBe("short");
    expect(fromArrowType(new arrow.Uint16())).toBe("integer");
    expect(fromArrowType(new arrow.Uint32())).toBe("long");
    expect(fromArrowType(new arrow.Uint64())).toEqual(decimal(20, 0));
    expect(fromArrowType(new arrow.Float16())).toBe("float");
    expect(fromArrowType(new arrow.DateMillisecond())).toBe("date");
    expect(fromArrowType(new arrow.TimestampNanosecond("UTC"))).toBe("timestamp");
    expect(fromArrowType(new arrow.TimestampMillisecond())).toBe("timestamp_ntz");
    expect(fromArrowType(new arrow.TimestampSecond("+01:00"))).toBe("timestamp");
    expect(
      fromArrowType(new arrow.LargeList(new arrow.Field("item", new arrow.Int32(), false))),
    ).toEqual(arrayType("integer", false));
    expect(fromArrowType(new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()))).toBe("string");
    expect(fromArrowType(new arrow.TimeMicrosecond())).toMatchObject({ type: "unsupported" });
  });

  it("uses physical names and field ids at every level with physical: true", () => {
    const [m] = metaDataOf("golden/table-with-columnmapping-mode-name");
    const s = parseSchema(m.schemaString);
    const phys = toArrowSchema(s, { physical: true });
    expect(phys.fields[0].name).toBe("col-33314a5e-7dc1-438a-8f4d-df8c417071d6");
    expect(phys.fields[0].metadata.get(PARQUET_FIELD_ID_KEY)).toBe("1");
    const nested = phys.fields.find(
      (f) => f.metadata.get(PARQUET_FIELD_ID_KEY) === "13",
    ) as arrow.Field;
    expect(nested.name).toBe("col-e08b8668-6c8f-4081-aa77-357325212630");
    const inner = (nested.type as arrow.Struct).children;
    expect(inner.map((f) => [f.name, f.metadata.get(PARQUET_FIELD_ID_KEY)])).toEqual([
      ["col-7295e744-4c2c-48a1-baf5-3bb131ec68ea", "14"],
      ["col-15ecbe5f-906d-4d64-a627-eb16eb4b4410", "15"],
    ]);
    const deepest = (inner[1].type as arrow.Struct).children[0];
    expect([deepest.name, deepest.metadata.get(PARQUET_FIELD_ID_KEY)]).toEqual([
      "col-562033a2-86d8-4eb3-83e6-87eb2f27314f",
      "16",
    ]);
    // Structs inside maps carry ids too.
    const mapOfRows = phys.fields.find(
      (f) => f.metadata.get(PARQUET_FIELD_ID_KEY) === "27",
    ) as arrow.Field;
    const value = ((mapOfRows.type as arrow.Map_).children[0].type as arrow.Struct).children[1];
    const ab = (value.type as arrow.Struct).children[0];
    expect([ab.name, ab.metadata.get(PARQUET_FIELD_ID_KEY)]).toEqual([
      "col-d8438cc9-31ef-4b23-ac1c-1dff3e0a5530",
      "28",
    ]);
    // Logical schemas carry neither.
    const logical = toArrowSchema(s);
    expect(logical.fields[0].name).toBe("ByteType");
    expect(logical.fields[0].metadata.size).toBe(0);
  });

  it("builds all-null data of any type", () => {
    const s = structType([
      structField("i", "integer"),
      structField("s", "string"),
      structField("b", "boolean"),
      structField("d", decimal(5, 2)),
      structField("a", arrayType("long")),
      structField("m", mapType("string", "integer")),
      structField("st", structType([structField("x", "date")])),
    ]);
    const children = s.fields.map((f) => nullData(toArrowType(f.type), 3));
    const schema = toArrowSchema(s);
    const batch = new arrow.RecordBatch(
      schema,
      arrow.makeData({ type: new arrow.Struct(schema.fields), length: 3, nullCount: 0, children }),
    );
    expect(arrowToRows(batch, s)).toEqual(Array.from({ length: 3 }, () => Array(7).fill(null)));
  });
});

describe("column mapping", () => {
  const plain = structType([
    structField("id", "long"),
    structField(
      "s",
      structType([
        structField("a", "integer"),
        structField("inner", arrayType(structType([structField("x", "string")]))),
      ]),
    ),
    structField(
      "m",
      mapType(structType([structField("k", "string")]), structType([structField("v", "double")])),
    ),
  ]);

  it("reads the mode from the configuration", () => {
    expect(columnMappingMode(undefined)).toBe("none");
    expect(columnMappingMode({})).toBe("none");
    expect(columnMappingMode({ "delta.columnMapping.mode": "name" })).toBe("name");
    expect(columnMappingMode({ "delta.columnMapping.mode": "ID" })).toBe("id");
    expectSiltError(
      () => columnMappingMode({ "delta.columnMapping.mode": "magic" }),
      "DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE",
    );
  });

  it("assigns unique ids and physical names at every level, in pre-order", () => {
    const { schema, maxColumnId } = assignColumnMapping(plain, 0);
    const seen: [string, number, string][] = [];
    const walk = (t: DataType) => {
      if (typeof t === "string") return;
      if (t.type === "struct") {
        for (const f of t.fields) {
          seen.push([f.name, fieldId(f) as number, physicalName(f, "name")]);
          walk(f.type);
        }
      } else if (t.type === "array") walk(t.elementType);
      else if (t.type === "map") {
        walk(t.keyType);
        walk(t.valueType);
      }
    };
    walk(schema);
    expect(seen.map(([n, id]) => [n, id])).toEqual([
      ["id", 1],
      ["s", 2],
      ["a", 3],
      ["inner", 4],
      ["x", 5],
      ["m", 6],
      ["k", 7],
      ["v", 8],
    ]);
    expect(maxColumnId).toBe(8);
    for (const [, , p] of seen)
      expect(p).toMatch(
        /^col-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    expect(new Set(seen.map(([, , p]) => p)).size).toBe(seen.length);
    // The input is untouched.
    expect(plain.fields[0].metadata).toEqual({});
  });

  it("keeps existing ids and names and continues above maxColumnId", () => {
    const first = assignColumnMapping(plain, 10);
    expect(first.maxColumnId).toBe(18);
    expect(fieldId(first.schema.fields[0])).toBe(11);
    const again = assignColumnMapping(first.schema, first.maxColumnId);
    expect(again.schema).toEqual(first.schema);
    expect(again.maxColumnId).toBe(18);
    const grown = assignColumnMapping(
      structType([...first.schema.fields, structField("added", "date")]),
      first.maxColumnId,
    );
    expect(grown.maxColumnId).toBe(19);
    expect(fieldId(grown.schema.fields[3])).toBe(19);
    expect(grown.schema.fields.slice(0, 3)).toEqual(first.schema.fields);
    // A schema holding ids above the configured maximum never reuses them.
    const stale = assignColumnMapping(
      structType([...first.schema.fields, structField("z", "long")]),
      0,
    );
    expect(fieldId(stale.schema.fields[3])).toBe(19);
  });

  it("leaves the golden column-mapped schema as it is", () => {
    const [m] = metaDataOf("golden/table-with-columnmapping-mode-name");
    const s = parseSchema(m.schemaString);
    const r = assignColumnMapping(s, Number(m.configuration[COLUMN_MAPPING_MAX_ID_KEY]));
    expect(serializeSchema(r.schema)).toBe(m.schemaString);
    expect(r.maxColumnId).toBe(30);
    expect(maxColumnIdInSchema(s)).toBe(30);
  });

  it("translates names between logical and physical", () => {
    const { schema } = assignColumnMapping(
      plain,
      0,
      (() => {
        let n = 0;
        return () => `p${++n}`;
      })(),
    );
    expect(physicalColumnName(schema, "ID", "name")).toBe("p1");
    expect(physicalColumnName(schema, "id", "none")).toBe("id");
    expect(physicalColumnName(schema, "nope", "name")).toBeUndefined();
    expect([...physicalToLogicalNames(schema, "name")]).toEqual([
      ["p1", "id"],
      ["p2", "s"],
      ["p6", "m"],
    ]);
    const phys = toPhysicalSchema(schema, "name");
    expect(sparkTypeName(phys)).toBe(
      "struct<p1:bigint,p2:struct<p3:int,p4:array<struct<p5:string>>>,p6:map<struct<p7:string>,struct<p8:double>>>",
    );
    expect(toPhysicalSchema(schema, "none")).toBe(schema);
  });

  it("resolves file fields by id, physical name or logical name", () => {
    const f: StructField = structField("Col", "long", true, {
      "delta.columnMapping.id": 7,
      "delta.columnMapping.physicalName": "col-x",
    });
    const withIds = [
      new arrow.Field("renamed", new arrow.Int64(), true, new Map([[PARQUET_FIELD_ID_KEY, "7"]])),
      new arrow.Field("col-x", new arrow.Int64(), true, new Map([[PARQUET_FIELD_ID_KEY, "8"]])),
    ];
    expect(resolveFileField(withIds, f, "id")).toBe(0);
    expect(resolveFileField(withIds, f, "name")).toBe(1);
    const noIds = [
      new arrow.Field("COL", new arrow.Int64()),
      new arrow.Field("col-x", new arrow.Int64()),
    ];
    expect(resolveFileField(noIds, f, "id")).toBe(1);
    expect(resolveFileField(noIds, f, "none")).toBe(0);
    expect(resolveFileField([new arrow.Field("other", new arrow.Int64())], f, "name")).toBe(-1);
  });

  it("aligns file data to logical names, nulls for missing columns, at every level", () => {
    const { schema } = assignColumnMapping(plain, 0);
    const written = rowsToArrow(
      [
        [1, { a: 2, inner: [{ x: "q" }, null] }, [[{ k: "key" }, { v: 1.5 }]]],
        [2, null, null],
      ],
      schema,
    );
    // What a file holds: the same buffers under physical names at every level. The IPC round
    // trip takes nested names from the schema, as a Parquet reader would hand them back.
    const phys = toArrowSchema(schema, { physical: true });
    const children = written.batches[0].data.children.map((c, i) => c.clone(phys.fields[i].type));
    const file = arrow.tableFromIPC(
      arrow.tableToIPC(
        new arrow.Table(
          phys,
          new arrow.RecordBatch(
            phys,
            arrow.makeData({
              type: new arrow.Struct(phys.fields),
              length: 2,
              nullCount: 0,
              children,
            }),
          ),
        ),
      ),
    );
    expect((file.schema.fields[1].type as arrow.Struct).children[0].name).toMatch(/^col-/);
    const evolved = structType([...schema.fields, structField("later", "string")]);
    for (const mode of ["name", "id"] as const) {
      const aligned = alignToLogical(file, evolved, mode);
      expect(aligned.schema.fields.map((x) => x.name)).toEqual(["id", "s", "m", "later"]);
      expect(arrowToRows(aligned, evolved)).toEqual([
        [1, { a: 2, inner: [{ x: "q" }, null] }, { '{"k":"key"}': { v: 1.5 } }, null],
        [2, null, null, null],
      ]);
    }
    // With mapping off, logical names do not match physical ones: everything reads as null.
    expect(arrowToRows(alignToLogical(file, evolved, "none"), evolved)).toEqual([
      [null, null, null, null],
      [null, null, null, null],
    ]);
    expect(alignToLogical(new arrow.Table(phys), evolved, "name").numRows).toBe(0);
  });

  it.each(["name", "id"])("reads Spark's column-mapped Parquet files (mode %s)", (mode) => {
    const table = `golden/table-with-columnmapping-mode-${mode}`;
    const [m] = metaDataOf(table);
    let schema = parseSchema(m.schemaString);
    if (mode === "id") {
      // Break every physical name: only the field ids can find the columns now.
      const scramble = (t: DataType): DataType => {
        if (typeof t === "string") return t;
        if (t.type === "struct") {
          return structType(
            t.fields.map((f) => ({
              ...f,
              type: scramble(f.type),
              metadata: { ...f.metadata, "delta.columnMapping.physicalName": `gone-${f.name}` },
            })),
          );
        }
        if (t.type === "array") return { ...t, elementType: scramble(t.elementType) };
        if (t.type === "map")
          return { ...t, keyType: scramble(t.keyType), valueType: scramble(t.valueType) };
        return t;
      };
      schema = scramble(schema) as StructType;
    }
    const dir = join(FIXTURES, table);
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".parquet"))
      .sort();
    const rows = files.flatMap((f) => {
      const ipc = readParquet(new Uint8Array(readFileSync(join(dir, f)))).intoIPCStream();
      const aligned = alignToLogical(
        arrow.tableFromIPC(ipc),
        schema,
        columnMappingMode(m.configuration),
      );
      return arrowToRows(aligned, schema);
    });
    expect(rows.length).toBe(6);
    const first = rows.find((r) => r[0] === 0) as unknown[];
    expect(first.slice(0, 13)).toEqual([
      0,
      0,
      0,
      0,
      0,
      0,
      "0.00",
      true,
      "0",
      "MA==",
      "2021-11-18",
      "1970-01-01T00:00:00.000000Z",
      { aa: "0", ac: { aca: 0 } },
    ]);
    expect(first[16]).toEqual([{ ab: 0 }, { ab: 0 }]);
    expect(first[19]).toEqual({ "1": { ab: 0 } });
    // Five rows 0..4 with every column set, and one row of nulls.
    expect(rows.map((r) => r[0]).sort()).toEqual([0, 1, 2, 3, 4, null]);
    for (const r of rows) expect(r.filter((v) => v === null).length).toBe(r[0] === null ? 22 : 0);
  });
});
