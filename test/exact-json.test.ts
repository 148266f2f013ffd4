/**
 * Values arrive exactly: request bodies are parsed without JSON.parse's rounding
 * (lib/values/exact-json.ts), so a BIGINT past 2^53 or a DECIMAL with more digits than a double
 * keeps reaches its column as written, through the insert and merge routes, and reads back the
 * same (BIGINT past 2^53 and DECIMAL as strings, as the README says).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonDecimal, parseExactJson } from "../lib/values/exact-json.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

describe("parseExactJson", () => {
  it("keeps integers past 2^53 as bigint and long decimals as their text", () => {
    expect(
      parseExactJson(
        "[9007199254740993, -9223372036854775808, 9223372036854775807, 9007199254740991, " +
          "0.1000000000000000055511151231257827, 1.5000000000000000000, 1e400, 12.5]",
      ),
    ).toEqual([
      9007199254740993n,
      -9223372036854775808n,
      9223372036854775807n,
      9007199254740991,
      new JsonDecimal("0.1000000000000000055511151231257827"),
      1.5,
      Number.POSITIVE_INFINITY,
      12.5,
    ]);
    expect(new JsonDecimal("9.007199254740993e15").integer()).toBe(9007199254740993n);
    expect(new JsonDecimal("-1.2345678901234567e17").integer()).toBe(-123456789012345670n);
    expect(new JsonDecimal("1.00000000000000000001").integer()).toBe("fraction");
  });

  it("is JSON.parse for everything else, whichever way a body is parsed", () => {
    const bodies = [
      '{"a": 1, "b": [true, null, "x\\"y", -0.25, 1e-7], "c": {"d": "2026-10-03"}}',
      // Long digit runs inside strings, and a long number a double holds: the exact path.
      '{"id": "12345678901234567890", "x": 0.30000000000000004, "a": 1, "a": 2}',
      '{"__proto__": {"polluted": true}, "rows": [[1, "a"]]}',
    ];
    for (const body of bodies) expect(parseExactJson(body)).toEqual(JSON.parse(body));
    const own = parseExactJson('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(own)).toBe(Object.prototype);
    expect(Object.keys(own)).toEqual(["__proto__"]);
    // A duplicate key is the last one, as in JSON.parse, on the exact path too.
    expect(parseExactJson('{"a": 1, "a": 12345678901234567890}')).toEqual({
      a: 12345678901234567890n,
    });
    expect(() => parseExactJson('{"a": 12345678901234567890,}')).toThrow(SyntaxError);
    expect(() => parseExactJson('{"a": 1,}')).toThrow(SyntaxError);
  });
});

describe("exact values through the JSON routes", () => {
  let silt: SiltHarness;
  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await silt.call("POST", "/api/v1/catalogs", { name: "ex" });
    await silt.call("POST", "/api/v1/catalogs/ex/schemas", { name: "s" });
  });
  afterAll(() => silt?.close());

  /** A request whose body is this JSON text verbatim (JSON.stringify could not write it). */
  const post = async (route: string, json: string) => {
    const res = await silt.call("POST", route, new TextEncoder().encode(json), {
      "content-type": "application/json",
    });
    return res;
  };
  const read = async (table: string) => {
    const res = await silt.call("GET", `/api/v1/tables/${table}/rows`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { version: number; rows: unknown[][] };
  };
  const create = async (name: string, columns: [string, string][]) => {
    const res = await silt.call("POST", "/api/v1/tables", {
      name: `ex.s.${name}`,
      columns: columns.map(([n, type]) => ({ name: n, type })),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return `ex.s.${name}`;
  };

  it("inserts BIGINT and DECIMAL values exactly and DOUBLE / FLOAT as the nearest", async () => {
    const t = await create("wide", [
      ["id", "BIGINT"],
      ["big", "DECIMAL(38,0)"],
      ["frac", "DECIMAL(38,34)"],
      ["x", "DOUBLE"],
      ["f", "FLOAT"],
    ]);
    const res = await post(
      `/api/v1/tables/${t}/insert`,
      `{"rows": [
        [9007199254740993, 123456789012345678901234567890, 0.1000000000000000055511151231257827,
         0.1000000000000000055511151231257827, 0.1000000000000000055511151231257827],
        [-9223372036854775808, -99999999999999999999999999999999999999, 1, 9007199254740993, 1],
        {"id": 9223372036854775807, "big": 1.23456789012345678901e29, "x": 1}
      ]}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { rows } = await read(t);
    expect(rows).toEqual([
      [
        "9007199254740993",
        "123456789012345678901234567890",
        "0.1000000000000000055511151231257827",
        0.1,
        0.1,
      ],
      [
        "-9223372036854775808",
        "-99999999999999999999999999999999999999",
        "1.0000000000000000000000000000000000",
        9007199254740992,
        1,
      ],
      ["9223372036854775807", "123456789012345678901000000000", null, 1, null],
    ]);
  });

  it("refuses what does not fit with the cast errors, changing nothing", async () => {
    const t = await create("narrow", [
      ["id", "BIGINT"],
      ["n", "INT"],
    ]);
    const refused: [string, string, string][] = [
      ["[[1, 9007199254740993]]", "CAST_OVERFLOW_IN_TABLE_INSERT", "(value 9007199254740993"],
      ["[[9223372036854775808, 1]]", "CAST_OVERFLOW_IN_TABLE_INSERT", "9223372036854775808"],
      ["[[1.00000000000000000001, 1]]", "CAST_INVALID_INPUT", "1.00000000000000000001"],
      ["[[1, 2147483647.00000000001]]", "CAST_INVALID_INPUT", "2147483647.00000000001"],
    ];
    for (const [rows, errorClass, shown] of refused) {
      const res = await post(`/api/v1/tables/${t}/insert`, `{"rows": ${rows}}`);
      expect(res.status, rows).toBe(400);
      expect(res.body.error_class, rows).toBe(errorClass);
      expect(res.body.message, rows).toContain(shown);
    }
    expect(await read(t)).toEqual({ version: 0, columns: expect.anything(), rows: [] });
    // An integral value written with an exponent is that integer.
    const ok = await post(`/api/v1/tables/${t}/insert`, '{"rows": [[9.007199254740993e15, 1]]}');
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await read(t)).rows).toEqual([["9007199254740993", 1]]);
  });

  it("matches MERGE source rows given as JSON by their exact keys", async () => {
    const t = await create("keys", [
      ["id", "BIGINT"],
      ["v", "STRING"],
    ]);
    // Two keys JSON.parse would read as one number.
    await post(
      `/api/v1/tables/${t}/insert`,
      '{"rows": [[9007199254740992, "even"], [9007199254740993, "odd"]]}',
    );
    const res = await post(
      `/api/v1/tables/${t}/merge`,
      `{"source": {"rows": [{"id": 9007199254740993, "v": "odd, merged"},
                            {"id": 18014398509481985, "v": "new"}]},
        "on": "target.id = source.id",
        "whenMatched": [{"updateAll": true}],
        "whenNotMatched": [{"insertAll": true}]}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { rows } = await read(t);
    expect(rows.map((r) => r.join(" ")).sort()).toEqual([
      "18014398509481985 new",
      "9007199254740992 even",
      "9007199254740993 odd, merged",
    ]);
  });
});
