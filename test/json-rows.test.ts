import * as arrow from "apache-arrow";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arrowToRows, arrowValues } from "../lib/data/arrow-to-json.ts";
import { canonicalValue } from "../lib/data/json-input.ts";
import { rowsToArrow, valuesToArrow } from "../lib/data/json-to-arrow.ts";
import {
  arrayType,
  type DataType,
  decimal,
  mapType,
  type StructType,
  structField,
  structType,
  toArrowSchema,
} from "../lib/delta/schema.ts";
import { SiltError } from "../lib/errors.ts";
import { formatTimestamp } from "../lib/values/datetime-text.ts";
import { parseDecimal } from "../lib/values/decimal-text.ts";

function expectSiltError(
  fn: () => unknown,
  errorClass: string,
  message?: string | RegExp,
  sqlstate?: string,
): SiltError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SiltError);
    const err = e as SiltError;
    expect(err.errorClass).toBe(errorClass);
    expect(err.status).toBe(400);
    if (typeof message === "string") expect(err.message).toBe(message);
    else if (message) expect(err.message).toMatch(message);
    if (sqlstate) expect(err.sqlstate).toBe(sqlstate);
    return err;
  }
  throw new Error(`expected ${errorClass}`);
}

/** rowsToArrow, then an IPC round trip (which validates the buffers), then back to rows. */
function roundTrip(rows: unknown[], schema: StructType): unknown[][] {
  const table = rowsToArrow(rows, schema);
  const direct = arrowToRows(table, schema);
  const viaIpc = arrowToRows(arrow.tableFromIPC(arrow.tableToIPC(table)), schema);
  expect(viaIpc).toEqual(direct);
  return direct;
}

const one = (type: DataType, value: unknown, nullable = true): unknown =>
  roundTrip([[value]], structType([structField("c", type, nullable)]))[0][0];

// ---------------------------------------------------------------------------------------------
// Independent reference encoders for the property test (Date-based, digit-string based).

function setKey(o: Record<string, unknown>, k: string, v: unknown) {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function isoMicros(us: bigint, zone: boolean): string {
  let ms = us / 1000n;
  if (us < 0n && ms * 1000n !== us) ms -= 1n;
  const sub = String(us - ms * 1000n).padStart(3, "0");
  const iso = new Date(Number(ms)).toISOString().replace(/Z$/, `${sub}Z`);
  return zone ? iso : iso.slice(0, -1);
}

function shortestFloatRef(x: number): number {
  for (let p = 1; p <= 9; p++) {
    const y = Number(x.toPrecision(p));
    if (Math.fround(y) === x) return y;
  }
  return x;
}

const floatCanon = (x: number): unknown =>
  Number.isNaN(x) ? "NaN" : x === Infinity ? "Infinity" : x === -Infinity ? "-Infinity" : x;

function decimalText(u: bigint, scale: number): string {
  const neg = u < 0n;
  let s = (neg ? -u : u).toString().padStart(scale + 1, "0");
  if (scale > 0) s = `${s.slice(0, -scale)}.${s.slice(-scale)}`;
  return neg ? `-${s}` : s;
}

const MIN_US = -62135596800000000n; // 0001-01-01
const MAX_US = 253402300799999999n; // 9999-12-31T23:59:59.999999

const keyText = (k: unknown) => (typeof k === "string" ? k : String(k));

function valueArb(t: DataType, nullable: boolean): fc.Arbitrary<unknown> {
  const v = nonNullArb(t);
  return nullable ? fc.option(v, { nil: null, freq: 5 }) : v;
}

function nonNullArb(t: DataType): fc.Arbitrary<unknown> {
  if (typeof t === "string") {
    switch (t) {
      case "byte":
        return fc.integer({ min: -128, max: 127 });
      case "short":
        return fc.integer({ min: -32768, max: 32767 });
      case "integer":
        return fc.integer();
      case "long":
        return fc
          .bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
          .map((b) =>
            Number.isSafeInteger(Number(b)) && BigInt(Number(b)) === b ? Number(b) : String(b),
          );
      case "float":
        return fc.float().map((x) => floatCanon(Number.isFinite(x) ? shortestFloatRef(x) : x));
      case "double":
        return fc.double().map(floatCanon);
      case "boolean":
        return fc.boolean();
      case "string":
        return fc.string({ unit: "binary", maxLength: 12 });
      case "binary":
        return fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b).toString("base64"));
      case "date":
        return fc
          .integer({ min: -719162, max: 2932896 })
          .map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10));
      case "timestamp":
        return fc.bigInt({ min: MIN_US, max: MAX_US }).map((us) => isoMicros(us, true));
      case "timestamp_ntz":
        return fc.bigInt({ min: MIN_US, max: MAX_US }).map((us) => isoMicros(us, false));
    }
  }
  switch (t.type) {
    case "decimal": {
      const max = 10n ** BigInt(t.precision) - 1n;
      return fc.bigInt({ min: -max, max }).map((u) => decimalText(u, t.scale));
    }
    case "struct":
      return fc.tuple(...t.fields.map((f) => valueArb(f.type, f.nullable))).map((vals) => {
        const o: Record<string, unknown> = {};
        t.fields.forEach((f, i) => {
          setKey(o, f.name, vals[i]);
        });
        return o;
      });
    case "array":
      return fc.array(valueArb(t.elementType, t.containsNull), { maxLength: 4 });
    case "map":
      return fc
        .uniqueArray(fc.tuple(nonNullArb(t.keyType), valueArb(t.valueType, t.valueContainsNull)), {
          selector: ([k]) => keyText(k),
          maxLength: 4,
        })
        .map((entries) => {
          const o: Record<string, unknown> = {};
          for (const [k, v] of entries) setKey(o, keyText(k), v);
          return o;
        });
    default:
      throw new Error("unexpected type");
  }
}

const primitiveArb: fc.Arbitrary<DataType> = fc.oneof(
  fc.constantFrom<DataType>(
    "byte",
    "short",
    "integer",
    "long",
    "float",
    "double",
    "boolean",
    "string",
    "binary",
    "date",
    "timestamp",
    "timestamp_ntz",
  ),
  fc
    .integer({ min: 1, max: 38 })
    .chain((p) => fc.integer({ min: 0, max: p }).map((s) => decimal(p, s))),
);

const keyTypeArb = fc.constantFrom<DataType>("string", "integer", "long", "date");

const fieldsArb = (typeArb: fc.Arbitrary<DataType>) =>
  fc
    .uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), typeArb, fc.boolean()), {
      selector: ([n]) => n.toLowerCase(),
      minLength: 1,
      maxLength: 4,
    })
    .map((fs) => fs.map(([n, t, nullable]) => structField(n, t, nullable)));

const { type: typeArb } = fc.letrec<{
  type: DataType;
  struct: DataType;
  array: DataType;
  map: DataType;
}>((tie) => ({
  type: fc.oneof(
    { maxDepth: 3, depthSize: "small" },
    primitiveArb,
    tie("struct"),
    tie("array"),
    tie("map"),
  ),
  struct: fieldsArb(tie("type")).map(structType),
  array: fc.tuple(tie("type"), fc.boolean()).map(([e, n]) => arrayType(e, n)),
  map: fc.tuple(keyTypeArb, tie("type"), fc.boolean()).map(([k, v, n]) => mapType(k, v, n)),
}));

const schemaAndRows = fieldsArb(typeArb).chain((fields) => {
  const schema = structType(fields);
  const row = fc.tuple(...fields.map((f) => valueArb(f.type, f.nullable)));
  return fc.tuple(fc.constant(schema), fc.array(row, { maxLength: 6 }));
});

describe("round trip", () => {
  it("rowsToArrow -> arrowToRows is the identity on canonical values", () => {
    fc.assert(
      fc.property(schemaAndRows, ([schema, rows]) => {
        expect(roundTrip(rows, schema)).toEqual(rows);
      }),
      { numRuns: 300 },
    );
  });

  it("accepts the same rows as objects keyed by column name", () => {
    fc.assert(
      fc.property(schemaAndRows, ([schema, rows]) => {
        const objects = rows.map((r) => {
          const o: Record<string, unknown> = {};
          schema.fields.forEach((f, i) => {
            setKey(o, f.name, r[i]);
          });
          return o;
        });
        expect(roundTrip(objects, schema)).toEqual(rows);
      }),
      { numRuns: 100 },
    );
  });

  it("canonicalValue agrees with the Arrow round trip", () => {
    fc.assert(
      fc.property(
        typeArb.chain((t) => fc.tuple(fc.constant(t), valueArb(t, true))),
        ([t, v]) => {
          expect(canonicalValue(v, t)).toEqual(one(t, v));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("builds the Arrow types of toArrowSchema", () => {
    const s = structType([
      structField("a", arrayType(mapType("string", decimal(5, 2)))),
      structField(
        "b",
        structType([structField("t", "timestamp"), structField("n", "timestamp_ntz")]),
      ),
      structField("c", "date", false),
    ]);
    const table = rowsToArrow([], s);
    expect(table.numRows).toBe(0);
    expect(String(table.schema)).toBe(String(toArrowSchema(s)));
    expect(table.schema.fields[2].nullable).toBe(false);
    expect(arrowToRows(table, s)).toEqual([]);
  });
});

describe("JSON encodings", () => {
  it("writes each type in its canonical form", () => {
    expect(one("integer", 42)).toBe(42);
    expect(one("long", "9007199254740993")).toBe("9007199254740993");
    expect(one("long", 9007199254740991)).toBe(9007199254740991);
    expect(one("long", "-9223372036854775808")).toBe("-9223372036854775808");
    expect(one(decimal(3, 2), "9.5")).toBe("9.50");
    expect(one(decimal(38, 0), "-99999999999999999999999999999999999999")).toBe(
      "-99999999999999999999999999999999999999",
    );
    expect(one(decimal(38, 38), "-0.00000000000000000000000000000000000001")).toBe(
      "-0.00000000000000000000000000000000000001",
    );
    expect(one("date", "2026-10-03")).toBe("2026-10-03");
    expect(one("timestamp", "2026-10-03T12:00:00Z")).toBe("2026-10-03T12:00:00.000000Z");
    expect(one("timestamp_ntz", "2026-10-03T12:00:00")).toBe("2026-10-03T12:00:00.000000");
    expect(one("binary", "AQID/w==")).toBe("AQID/w==");
    expect(one("float", 0.1)).toBe(0.1);
    expect(one("float", 1.100000023841858)).toBe(1.1);
    expect(one("double", 0.1)).toBe(0.1);
    expect(one("double", "NaN")).toBe("NaN");
    expect(one("double", "Infinity")).toBe("Infinity");
    expect(one("float", "-Infinity")).toBe("-Infinity");
    expect(Object.is(one("double", -0), -0)).toBe(true);
    expect(one("boolean", false)).toBe(false);
    expect(one("string", "héllo ☃ 𝄞")).toBe("héllo ☃ 𝄞");
    expect(one(mapType("integer", "string"), { "2": "b", "10": "a" })).toEqual({
      "10": "a",
      "2": "b",
    });
    expect(one(structType([structField("x", "integer")]), { x: 1 })).toEqual({ x: 1 });
    expect(one(arrayType("integer"), [1, null])).toEqual([1, null]);
    expect(one("integer", null)).toBeNull();
  });

  it("keeps '__proto__' as an ordinary key", () => {
    const s = structType([structField("__proto__", mapType("string", "integer"))]);
    const m = JSON.parse('{"__proto__": 1, "a": 2}');
    const out = roundTrip([[m]], s)[0][0] as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(["__proto__", "a"]);
    expect(JSON.stringify(out)).toBe('{"__proto__":1,"a":2}');
    const rows = roundTrip([JSON.parse('{"__proto__": {"x": 5}}')], s);
    expect(JSON.stringify(rows)).toBe('[[{"x":5}]]');
  });

  it("accepts lenient inputs the way Spark's store assignment does", () => {
    expect(one("integer", " 42 ")).toBe(42);
    expect(one("integer", 3.0)).toBe(3);
    expect(one("short", 7n)).toBe(7);
    expect(one("long", 2 ** 53 + 2)).toBe("9007199254740994");
    expect(one("long", 12345678901234567890n - 10000000000000000000n)).toBe(
      2345678901234567890n.toString(),
    );
    expect(one(decimal(5, 2), 9.5)).toBe("9.50");
    expect(one(decimal(10, 8), 1e-7)).toBe("0.00000010");
    expect(one(decimal(6, 2), "1.5e3")).toBe("1500.00");
    expect(one(decimal(6, 2), " -.5 ")).toBe("-0.50");
    expect(one(decimal(5, 2), "1.005")).toBe("1.01");
    expect(one(decimal(5, 2), "-1.004")).toBe("-1.00");
    expect(one(decimal(5, 2), "999.994")).toBe("999.99");
    expect(one(decimal(3, 0), 12n)).toBe("12");
    expect(one("float", "1.5")).toBe(1.5);
    expect(one("double", "-inf")).toBe("-Infinity");
    expect(one("boolean", "yes")).toBe(true);
    expect(one("boolean", "0")).toBe(false);
    expect(one("string", 12)).toBe("12");
    expect(one("string", true)).toBe("true");
    expect(one("binary", "_-8")).toBe("/+8=");
    expect(one("date", "2026-1-3")).toBe("2026-01-03");
    expect(one("date", "2026-10-03T23:00:00Z")).toBe("2026-10-03");
    expect(one("timestamp", "2026-10-03 12:00:00")).toBe("2026-10-03T12:00:00.000000Z");
    expect(one("timestamp", "2026-10-03T12:00:00+05:30")).toBe("2026-10-03T06:30:00.000000Z");
    expect(one("timestamp", "2026-10-03T00:00:00-0100")).toBe("2026-10-03T01:00:00.000000Z");
    expect(one("timestamp", "2026-10-03T12:00:00.1234567Z")).toBe("2026-10-03T12:00:00.123456Z");
    expect(one("timestamp", "2026-10-03")).toBe("2026-10-03T00:00:00.000000Z");
    expect(one("timestamp", "1969-12-31T23:59:59.999999Z")).toBe("1969-12-31T23:59:59.999999Z");
    expect(one("timestamp", "0001-01-01T00:00:00Z")).toBe("0001-01-01T00:00:00.000000Z");
    expect(one("timestamp", "9999-12-31 23:59:59.999999")).toBe("9999-12-31T23:59:59.999999Z");
    expect(one("timestamp_ntz", "2026-10-03T12:00:00+05:30")).toBe("2026-10-03T12:00:00.000000");
    expect(
      one(mapType("integer", "string"), [
        [1, "a"],
        [2, "b"],
      ]),
    ).toEqual({ "1": "a", "2": "b" });
    expect(one(mapType("date", "string"), { "2026-10-03": "x" })).toEqual({ "2026-10-03": "x" });
    expect(
      one(mapType(structType([structField("k", "integer")]), "string"), [[{ k: 1 }, "a"]]),
    ).toEqual({ '{"k":1}': "a" });
    expect(one(mapType(arrayType("integer"), "integer"), { "[1,2]": 3 })).toEqual({ "[1,2]": 3 });
    expect(
      one(structType([structField("x", "integer"), structField("y", "string")]), [1, "a"]),
    ).toEqual({
      x: 1,
      y: "a",
    });
    expect(
      one(structType([structField("Xy", "integer"), structField("z", "string")]), { xY: 1 }),
    ).toEqual({
      Xy: 1,
      z: null,
    });
  });

  it("parses every spelling of a timestamp and a decimal alike", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: MIN_US + 86_400_000_000n, max: MAX_US - 86_400_000_000n }),
        fc.integer({ min: -18 * 60, max: 18 * 60 }),
        (us, offsetMinutes) => {
          const utc = isoMicros(us, true);
          // The same instant written in local time at the offset.
          const local = isoMicros(us + BigInt(offsetMinutes) * 60_000_000n, false);
          const sign = offsetMinutes < 0 ? "-" : "+";
          const hh = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, "0");
          const mm = String(Math.abs(offsetMinutes) % 60).padStart(2, "0");
          for (const text of [
            `${local}${sign}${hh}:${mm}`,
            `${local}${sign}${hh}${mm}`,
            `${local.replace("T", " ")} ${sign}${hh}:${mm}`,
          ]) {
            expect(canonicalValue(text, "timestamp")).toBe(utc);
          }
          expect(canonicalValue(utc.replace(/\.?0*Z$/, "Z"), "timestamp")).toBe(utc);
        },
      ),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 38 })
          .chain((p) =>
            fc.tuple(
              fc.constant(p),
              fc.integer({ min: 0, max: p }),
              fc.bigInt({ min: -(10n ** BigInt(p)) + 1n, max: 10n ** BigInt(p) - 1n }),
            ),
          ),
        ([p, scale, u]) => {
          const expected = decimalText(u, scale);
          expect(canonicalValue(expected, decimal(p, scale))).toBe(expected);
          expect(canonicalValue(`${u}e-${scale}`, decimal(p, scale))).toBe(expected);
          const padded = ` ${expected}${scale > 0 ? "0" : ".0"} `;
          expect(canonicalValue(padded, decimal(p, scale))).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("matches object keys to columns ignoring case; absent nullable columns are null", () => {
    const s = structType([structField("Id", "long", false), structField("name", "string")]);
    expect(roundTrip([{ id: 1 }, { ID: 2, NAME: "b" }, { Id: 3, name: null }], s)).toEqual([
      [1, null],
      [2, "b"],
      [3, null],
    ]);
  });

  it("formats timestamps far from the epoch exactly", () => {
    expect(formatTimestamp(-62135596800000000n, true)).toBe("0001-01-01T00:00:00.000000Z");
    expect(formatTimestamp(253402300799999999n, false)).toBe("9999-12-31T23:59:59.999999");
    expect(formatTimestamp(-1, true)).toBe("1969-12-31T23:59:59.999999Z");
    expect(formatTimestamp(9223372036854775807n, true)).toBe("+294247-01-10T04:00:54.775807Z");
  });

  it("parses decimal text exactly", () => {
    expect(parseDecimal("123.456", 6, 3)).toBe(123456);
    expect(parseDecimal("1e40", 38, 0)).toBe("overflow");
    expect(parseDecimal("1e-400", 38, 2)).toBe(0);
    expect(parseDecimal("12345678901234567890.12", 38, 2)).toBe(1234567890123456789012n);
    expect(parseDecimal(".", 5, 2)).toBe("invalid");
    expect(parseDecimal("1.2.3", 5, 2)).toBe("invalid");
    expect(parseDecimal("99.995", 4, 2)).toBe("overflow");
  });
});

describe("errors", () => {
  const s = structType([structField("id", "integer", false), structField("name", "string")]);

  it("reports missing and extra data columns in array rows", () => {
    const opts = { tableName: "main.default.t" };
    expectSiltError(
      () => rowsToArrow([[1, "a"], [2]], s, opts),
      "DELTA_INSERT_COLUMN_ARITY_MISMATCH",
      "Cannot write to 'main.default.t', not enough data columns; target table has 2 column(s) but the inserted data has 1 column(s).",
      "42802",
    );
    expectSiltError(
      () => rowsToArrow([[1, "a", 3]], s, opts),
      "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS",
      "Cannot write to `main`.`default`.`t`, the reason is too many data columns:\nTable columns: `id`, `name`.\nData columns: `col1`, `col2`, `col3`.",
      "21S01",
    );
  });

  it("names unknown columns with suggestions", () => {
    expectSiltError(
      () => rowsToArrow([{ id: 1, nmae: "x" }], s),
      "UNRESOLVED_COLUMN.WITH_SUGGESTION",
      "A column, variable, or function parameter with name `nmae` cannot be resolved. Did you mean one of the following? [`name`, `id`].",
      "42703",
    );
    expectSiltError(
      () =>
        rowsToArrow(
          [[1, { x: 1, y: 2 }]],
          structType([
            structField("id", "integer"),
            structField("st", structType([structField("x", "integer")])),
          ]),
          { tableName: "t" },
        ),
      "INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_STRUCT_FIELDS",
      "Cannot write incompatible data for the table `t`: Cannot write extra fields `y` to the struct `st`.",
    );
    expectSiltError(
      () => rowsToArrow([{ id: 1, ID: 2 }], s),
      "COLUMN_ALREADY_EXISTS",
      /`id`/,
      "42711",
    );
  });

  it("rejects values that do not fit the type, naming column and row", () => {
    const err = expectSiltError(
      () =>
        rowsToArrow(
          [
            [1, "a"],
            ["abc", "b"],
          ],
          s,
        ),
      "CAST_INVALID_INPUT",
      `The value 'abc' of the type "STRING" cannot be cast to "INT" because it is malformed (column \`id\`, rows[1]). Correct the value as per the syntax, or change its target type.`,
      "22018",
    );
    expect(err.status).toBe(400);
    const cases: [DataType, unknown][] = [
      ["integer", 3.5],
      ["integer", "1.5"],
      ["integer", true],
      ["integer", {}],
      ["long", "12e3"],
      ["long", [1]],
      ["double", "abc"],
      ["double", ""],
      ["boolean", 1],
      ["boolean", "maybe"],
      ["string", { a: 1 }],
      ["binary", "not base64!"],
      ["binary", 5],
      ["date", "2026-13-01"],
      ["date", "2026-02-30"],
      ["date", 20261003],
      ["timestamp", "yesterday"],
      ["timestamp", "2026-10-03T25:00:00Z"],
      ["timestamp", 1700000000],
      [decimal(5, 2), "1,5"],
      [decimal(5, 2), Number.NaN],
      [decimal(5, 2), true],
      [arrayType("integer"), "[1]"],
      [mapType("string", "integer"), 5],
      [mapType("integer", "integer"), { x: 1 }],
      [mapType("integer", "integer"), [[1]]],
      [structType([structField("x", "integer")]), "x"],
    ];
    for (const [type, value] of cases) {
      expectSiltError(
        () => rowsToArrow([[value]], structType([structField("c", type)])),
        "CAST_INVALID_INPUT",
        /column `c`.*rows\[0\]/,
      );
    }
  });

  it("rejects out-of-range numbers as overflows", () => {
    const cases: [DataType, unknown, string][] = [
      ["byte", 128, "TINYINT"],
      ["byte", "-129", "TINYINT"],
      ["short", 40000, "SMALLINT"],
      ["integer", 2 ** 31, "INT"],
      ["integer", -(2n ** 31n) - 1n, "INT"],
      ["long", "9223372036854775808", "BIGINT"],
      ["long", 2 ** 64, "BIGINT"],
    ];
    for (const [type, value, name] of cases) {
      expectSiltError(
        () => rowsToArrow([[value]], structType([structField("n", type)])),
        "CAST_OVERFLOW_IN_TABLE_INSERT",
        new RegExp(`type to the "${name}" type column or variable \`n\` due to an overflow`),
        "22003",
      );
    }
    expectSiltError(
      () => rowsToArrow([["1000.00"]], structType([structField("d", decimal(5, 2))])),
      "NUMERIC_VALUE_OUT_OF_RANGE.WITHOUT_SUGGESTION",
      "1000.00 cannot be represented as Decimal(5, 2) (column `d`, rows[0]).",
      "22003",
    );
    expectSiltError(
      () => rowsToArrow([[1e40]], structType([structField("d", decimal(38, 0))])),
      "NUMERIC_VALUE_OUT_OF_RANGE.WITHOUT_SUGGESTION",
    );
  });

  it("enforces NOT NULL at every level", () => {
    expectSiltError(
      () => rowsToArrow([[null, "a"]], s),
      "DELTA_NOT_NULL_CONSTRAINT_VIOLATED",
      "NOT NULL constraint violated for column: id.",
      "23502",
    );
    expectSiltError(
      () => rowsToArrow([{ name: "a" }], s),
      "DELTA_NOT_NULL_CONSTRAINT_VIOLATED",
      "NOT NULL constraint violated for column: id.",
    );
    const nested = structType([
      structField("st", structType([structField("x", "integer", false)])),
      structField("a", arrayType("integer", false)),
      structField("m", mapType("string", "integer", false)),
    ]);
    expectSiltError(
      () => rowsToArrow([[{ x: null }, null, null]], nested),
      "DELTA_NOT_NULL_CONSTRAINT_VIOLATED",
      "NOT NULL constraint violated for column: st.x.",
    );
    expectSiltError(
      () => rowsToArrow([[null, [1, null], null]], nested),
      "DELTA_NOT_NULL_CONSTRAINT_VIOLATED",
      "NOT NULL constraint violated for column: a.element.",
    );
    expectSiltError(
      () => rowsToArrow([[null, null, { k: null }]], nested),
      "DELTA_NOT_NULL_CONSTRAINT_VIOLATED",
      "NOT NULL constraint violated for column: m.value.",
    );
    // A NULL struct may hold non-nullable fields: they are not checked under a null parent.
    expect(roundTrip([[null, null, null]], nested)).toEqual([[null, null, null]]);
  });

  it("rejects null and duplicate map keys", () => {
    const m = structType([structField("m", mapType("integer", "string"))]);
    expectSiltError(
      () => rowsToArrow([[[[null, "a"]]]], m),
      "NULL_MAP_KEY",
      "Cannot use null as map key.",
      "2200E",
    );
    expectSiltError(
      () =>
        rowsToArrow(
          [
            [
              [
                [1, "a"],
                [1, "b"],
              ],
            ],
          ],
          m,
        ),
      "DUPLICATED_MAP_KEY",
      /Duplicate map key 1/,
      "23505",
    );
    expectSiltError(() => rowsToArrow([[{ "01": "a", "1": "b" }]], m), "DUPLICATED_MAP_KEY");
  });

  it("rejects rows that are neither objects nor arrays, and unsupported types", () => {
    expectSiltError(() => rowsToArrow([5], s), "MALFORMED_RECORD_IN_PARSING", /rows\[0\]/);
    expectSiltError(() => rowsToArrow([null], s), "MALFORMED_RECORD_IN_PARSING");
    expectSiltError(
      () =>
        rowsToArrow(
          [[1]],
          structType([structField("v", { type: "unsupported", name: "variant", json: "variant" })]),
        ),
      "UNSUPPORTED_DATATYPE",
      /VARIANT/,
    );
  });

  it("canonicalValue reports errors without a row", () => {
    expectSiltError(
      () => canonicalValue("x", "integer", "p"),
      "CAST_INVALID_INPUT",
      /\(column `p`\)/,
    );
  });
});

describe("reading Arrow produced elsewhere", () => {
  const col = (data: arrow.Data | arrow.Vector, type?: DataType) => arrowValues(data, type);

  it("reads sliced and multi-batch tables", () => {
    const s = structType([
      structField("i", "integer"),
      structField("s", "string"),
      structField("b", "boolean"),
    ]);
    const a = rowsToArrow(
      [
        [1, "a", true],
        [null, "bb", false],
        [3, null, null],
      ],
      s,
    );
    const b = rowsToArrow([[4, "dddd", true]], s);
    const both = a.concat(b);
    expect(both.batches.length).toBe(2);
    expect(arrowToRows(both, s)).toEqual([
      [1, "a", true],
      [null, "bb", false],
      [3, null, null],
      [4, "dddd", true],
    ]);
    expect(arrowToRows(both.slice(1, 4), s)).toEqual([
      [null, "bb", false],
      [3, null, null],
      [4, "dddd", true],
    ]);
    const nested = structType([
      structField("a", arrayType(structType([structField("x", "string")]))),
    ]);
    const t = rowsToArrow([[[{ x: "1" }]], [[{ x: "2" }, null]], [null], [[]]], nested);
    expect(arrowToRows(t.slice(1, 3), nested)).toEqual([[[{ x: "2" }, null]], [null]]);
    expect(arrowToRows(t.batches[0].slice(2), nested)).toEqual([[null], [[]]]);
  });

  it("decodes strings of any byte width, including invalid UTF-8", () => {
    const bytes = Buffer.concat([Buffer.from("ok"), Buffer.from([0xff]), Buffer.from("é€𝄞")]);
    const data = arrow.makeData({
      type: new arrow.Utf8(),
      data: bytes,
      valueOffsets: new Int32Array([0, 2, 3, bytes.length]),
    });
    expect(col(data)).toEqual(["ok", "\uFFFD", "é€𝄞"]);
    expect(col(arrow.vectorFromArray(["x", null, "ÿz"], new arrow.LargeUtf8()))).toEqual([
      "x",
      null,
      "ÿz",
    ]);
    expect(
      col(
        arrow.vectorFromArray(["view", null, "a longer string than twelve"], new arrow.Utf8View()),
      ),
    ).toEqual(["view", null, "a longer string than twelve"]);
    const dict = arrow.vectorFromArray(
      ["a", "b", "a", null],
      new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()),
    );
    expect(col(dict)).toEqual(["a", "b", "a", null]);
    const bin = arrow.vectorFromArray([Uint8Array.of(104, 105)], new arrow.Binary());
    expect(col(bin)).toEqual(["aGk="]);
    expect(col(bin, "string")).toEqual(["hi"]);
  });

  it("reads every timestamp unit and both date units", () => {
    const ts = (type: arrow.Timestamp, v: bigint[]) =>
      arrow.makeData({ type, data: BigInt64Array.from(v) });
    expect(col(ts(new arrow.TimestampNanosecond("UTC"), [-1n, 1_500n]))).toEqual([
      "1969-12-31T23:59:59.999999Z",
      "1970-01-01T00:00:00.000001Z",
    ]);
    expect(col(ts(new arrow.TimestampMillisecond(), [1_700_000_000_123n]))).toEqual([
      "2023-11-14T22:13:20.123000",
    ]);
    expect(col(ts(new arrow.TimestampSecond("+01:00"), [-62135596800n]))).toEqual([
      "0001-01-01T00:00:00.000000Z",
    ]);
    expect(col(ts(new arrow.TimestampMicrosecond(), [0n]), "timestamp")).toEqual([
      "1970-01-01T00:00:00.000000Z",
    ]);
    expect(col(ts(new arrow.TimestampMicrosecond("UTC"), [0n]), "timestamp_ntz")).toEqual([
      "1970-01-01T00:00:00.000000",
    ]);
    expect(col(ts(new arrow.TimestampMicrosecond("UTC"), [-9223372036854775807n]))).toEqual([
      "-290308-12-21T19:59:05.224193Z",
    ]);
    const d64 = arrow.makeData({
      type: new arrow.DateMillisecond(),
      data: BigInt64Array.of(-86_400_000n, 86_400_000n * 365n),
    });
    expect(col(d64)).toEqual(["1969-12-31", "1971-01-01"]);
    const d32 = arrow.makeData({
      type: new arrow.DateDay(),
      data: Int32Array.of(-719162, 2932896, 2932897),
    });
    expect(col(d32)).toEqual(["0001-01-01", "9999-12-31", "+10000-01-01"]);
  });

  it("reads integers of every width and decimals of every scale", () => {
    expect(
      col(
        arrow.makeData({ type: new arrow.Uint64(), data: BigUint64Array.of(1n, 2n ** 64n - 1n) }),
      ),
    ).toEqual([1, "18446744073709551615"]);
    expect(
      col(arrow.makeData({ type: new arrow.Uint32(), data: Uint32Array.of(4294967295) })),
    ).toEqual([4294967295]);
    expect(col(arrow.makeData({ type: new arrow.Int8(), data: Int8Array.of(-128) }))).toEqual([
      -128,
    ]);
    expect(
      col(
        arrow.makeData({
          type: new arrow.Int64(),
          data: BigInt64Array.of(-(2n ** 53n), 2n ** 53n - 1n),
        }),
      ),
    ).toEqual(["-9007199254740992", 9007199254740991]);
    const dec = valuesToArrow(["9.5", "-0.01", null], decimal(5, 2));
    expect(col(dec)).toEqual(["9.50", "-0.01", null]);
    // A file written before the column was widened to decimal(10,4).
    expect(col(dec, decimal(10, 4))).toEqual(["9.5000", "-0.0100", null]);
    const d64 = arrow.makeData({
      type: new arrow.Decimal(3, 18, 64),
      data: Uint32Array.of(12345, 0, 0, 0xfffffffe),
    });
    expect(col(d64)).toEqual(["12.345", "-8589934.592"]);
    const d32 = arrow.makeData({
      type: new arrow.Decimal(1, 9, 32),
      data: Uint32Array.of(0xffffffff),
    });
    expect(col(d32)).toEqual(["-0.1"]);
    const d256 = arrow.makeData({
      type: new arrow.Decimal(0, 40, 256),
      data: Uint32Array.of(5, 0, 0, 0, 0, 0, 0, 1),
    });
    expect(col(d256)).toEqual([String((1n << 224n) + 5n)]);
    expect(
      col(arrow.makeData({ type: new arrow.Float16(), data: Uint16Array.of(0x3c00, 0x7e00) })),
    ).toEqual([1, "NaN"]);
  });

  it("reads other list, binary and null layouts", () => {
    const fsl = arrow.makeData({
      type: new arrow.FixedSizeList(2, new arrow.Field("x", new arrow.Int32(), true)),
      length: 2,
      child: arrow.makeData({ type: new arrow.Int32(), data: Int32Array.of(1, 2, 3, 4) }),
    });
    expect(col(fsl)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    const large = arrow.makeData({
      type: new arrow.LargeList(new arrow.Field("x", new arrow.Int32(), true)),
      valueOffsets: BigInt64Array.of(0n, 1n, 3n),
      child: arrow.makeData({ type: new arrow.Int32(), data: Int32Array.of(1, 2, 3) }),
    });
    expect(col(large)).toEqual([[1], [2, 3]]);
    const fsb = arrow.makeData({
      type: new arrow.FixedSizeBinary(2),
      data: Uint8Array.of(1, 2, 3, 4),
    });
    expect(col(fsb)).toEqual(["AQI=", "AwQ="]);
    expect(col(arrow.makeData({ type: new arrow.Null(), length: 2 }))).toEqual([null, null]);
  });

  it("uses the Delta schema's struct field names", () => {
    const s = structType([structField("st", structType([structField("logical", "integer")]))]);
    const t = rowsToArrow([[{ logical: 1 }]], s);
    expect(arrowToRows(t, s)).toEqual([[{ logical: 1 }]]);
    const renamed = structType([structField("st", structType([structField("other", "integer")]))]);
    expect(arrowToRows(t, renamed)).toEqual([[{ other: 1 }]]);
    expect(arrowToRows(t)).toEqual([[{ logical: 1 }]]);
    expect(() => arrowToRows(t, structType([]))).toThrow(SiltError);
  });

  it("converts a million rows in one pass", () => {
    const n = 1_000_000;
    const s = structType([structField("i", "integer"), structField("ts", "timestamp")]);
    const table = new arrow.Table({
      i: arrow.makeVector(Int32Array.from({ length: n }, (_, k) => k)),
      ts: arrow.makeVector(
        arrow.makeData({
          type: new arrow.TimestampMicrosecond("UTC"),
          data: BigInt64Array.from({ length: n }, (_, k) => BigInt(k) * 1_000_001n),
        }),
      ),
    });
    const rows = arrowToRows(table, s);
    expect(rows.length).toBe(n);
    expect(rows[n - 1]).toEqual([n - 1, "1970-01-12T13:46:39.999999Z"]);
  });
});
