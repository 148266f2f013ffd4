/**
 * ALTER TABLE … SET / UNSET TBLPROPERTIES and SHOW TBLPROPERTIES through POST /api/v1/sql: one
 * metaData commit with Spark's operation names and parameters, the change visible to later
 * statements (isolation level, maintenance properties), and every refusal (catalog requirements,
 * unknown keys, change data feed, properties fixed at create time, unsetting what is not there)
 * leaving the table's version and rows unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";
import { sqlClient } from "./helpers/sql-client.ts";

let silt: SiltHarness;
const { ok, sql, history, failsUnchanged } = sqlClient(() => silt, { catalog: "al", schema: "s" });

const properties = async (table: string) =>
  Object.fromEntries((await ok(`SHOW TBLPROPERTIES ${table}`)).rows as [string, string][]);

beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  await ok("CREATE CATALOG al");
  await ok("CREATE SCHEMA al.s");
  await ok("CREATE TABLE t (id INT, v STRING) USING DELTA");
  await ok("INSERT INTO t VALUES (1, 'a')");
}, 60_000);
afterAll(async () => {
  await silt?.close();
});

describe("ALTER TABLE SET / UNSET TBLPROPERTIES", () => {
  it("commits SET TBLPROPERTIES with the new properties, visible to SHOW TBLPROPERTIES and DETAIL", async () => {
    const before = (await history("t"))[0]!.version;
    await ok(
      "ALTER TABLE t SET TBLPROPERTIES ('silt.maintenance.optimize' = 'true', " +
        "'delta.isolationLevel' = 'WriteSerializable', 'DELTA.LOGRETENTIONDURATION' = 'interval 60 days')",
    );
    const [h] = await history("t");
    expect(h).toMatchObject({ version: before + 1, operation: "SET TBLPROPERTIES" });
    expect(JSON.parse(h!.parameters.properties!)).toEqual({
      "silt.maintenance.optimize": "true",
      "delta.isolationLevel": "WriteSerializable",
      "DELTA.LOGRETENTIONDURATION": "interval 60 days",
    });
    const props = await properties("t");
    expect(props).toMatchObject({
      "silt.maintenance.optimize": "true",
      "delta.isolationLevel": "WriteSerializable",
      // Delta keys are stored in their canonical spelling.
      "delta.logRetentionDuration": "interval 60 days",
      "delta.enableDeletionVectors": "true",
      "delta.minReaderVersion": "3",
      "delta.minWriterVersion": "7",
      "delta.feature.deletionVectors": "supported",
    });
    const detail = await ok("DESCRIBE DETAIL t");
    const at = detail.columns.findIndex((c) => c.name === "properties");
    expect(detail.rows[0]![at]).toMatchObject({ "delta.isolationLevel": "WriteSerializable" });
    // The next write runs under the new isolation level.
    await ok("INSERT INTO t VALUES (2, 'b')");
    const write = await ok("DESCRIBE HISTORY t LIMIT 1");
    const level = write.columns.findIndex((c) => c.name === "isolationLevel");
    expect(write.rows[0]![level]).toBe("WriteSerializable");
    expect((await ok("SHOW TBLPROPERTIES t ('silt.maintenance.optimize')")).rows).toEqual([
      ["silt.maintenance.optimize", "true"],
    ]);
    expect((await ok("SHOW TBLPROPERTIES t ('nope')")).rows).toEqual([
      ["nope", "Table al.s.t does not have property: nope"],
    ]);
  });

  it("UNSET TBLPROPERTIES removes keys; IF EXISTS tolerates absent ones; no change commits nothing", async () => {
    await ok("ALTER TABLE t UNSET TBLPROPERTIES ('silt.maintenance.optimize')");
    const [h] = await history("t");
    expect(h).toMatchObject({ operation: "UNSET TBLPROPERTIES" });
    expect(h!.parameters).toMatchObject({
      properties: '["silt.maintenance.optimize"]',
      ifExists: "false",
    });
    expect(await properties("t")).not.toHaveProperty("silt.maintenance.optimize");
    const version = h!.version;
    await ok("ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('silt.maintenance.optimize')");
    await ok("ALTER TABLE t SET TBLPROPERTIES ('delta.isolationLevel' = 'WriteSerializable')");
    expect((await history("t"))[0]!.version).toBe(version);
  });

  it("refuses what Delta or the catalog refuses, changing nothing", async () => {
    const unset = await failsUnchanged("t", "UNSET_NONEXISTENT_PROPERTIES", () =>
      sql("ALTER TABLE t UNSET TBLPROPERTIES ('a.b', 'silt.x')"),
    );
    expect(unset.message).toBe(
      "Attempted to unset non-existent properties [`a.b`, `silt.x`] in table al.s.t.",
    );
    await failsUnchanged("t", "DELTA_UNKNOWN_CONFIGURATION", () =>
      sql("ALTER TABLE t SET TBLPROPERTIES ('delta.logRetentionDurationn' = '1 day')"),
    );
    const required = await failsUnchanged("t", "INVALID_PARAMETER_VALUE", () =>
      sql("ALTER TABLE t SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')"),
    );
    expect(required.message).toContain(
      "catalog requires table property 'delta.enableDeletionVectors'='true'",
    );
    await failsUnchanged("t", "INVALID_PARAMETER_VALUE", () =>
      sql("ALTER TABLE t UNSET TBLPROPERTIES ('delta.checkpointPolicy')"),
    );
    await failsUnchanged("t", "INVALID_PARAMETER_VALUE", () =>
      sql("ALTER TABLE t SET TBLPROPERTIES ('io.unitycatalog.tableId' = 'x')"),
    );
    await failsUnchanged("t", "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", () =>
      sql("ALTER TABLE t SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"),
    );
    await failsUnchanged("t", "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", () =>
      sql("ALTER TABLE t SET TBLPROPERTIES ('delta.feature.variantType' = 'supported')"),
    );
    const fixed = await failsUnchanged("t", "DELTA_UNSUPPORTED_TABLE_PROPERTY_CHANGE", () =>
      sql("ALTER TABLE t SET TBLPROPERTIES ('delta.columnMapping.mode' = 'none')"),
    );
    expect(fixed.message).toContain("'delta.columnMapping.mode' is 'name'");
    await failsUnchanged("t", "DELTA_UNSUPPORTED_TABLE_PROPERTY_CHANGE", () =>
      sql("ALTER TABLE t SET TBLPROPERTIES ('delta.enableRowTracking' = 'false')"),
    );
    await failsUnchanged("t", "PARSE_SYNTAX_ERROR", () =>
      sql("ALTER TABLE t ADD CONSTRAINT c CHECK (id > 0)"),
    );
    expect((await sql("ALTER TABLE nope SET TBLPROPERTIES ('a' = 'b')")).body.error_class).toBe(
      "TABLE_OR_VIEW_NOT_FOUND",
    );
  });

  it("CREATE TABLE refuses change data feed too: Silt writes no change data", async () => {
    const res = await sql(
      "CREATE TABLE cdf (id INT) USING DELTA TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
    );
    expect(res.status).toBe(400);
    expect(res.body.error_class).toBe("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE");
    expect((await sql("SELECT * FROM cdf")).body.error_class).toBe("TABLE_OR_VIEW_NOT_FOUND");
  });
});

describe("property values, validated as Delta validates them", () => {
  const invalidParameter = (message: string) => ({
    error_class: "INVALID_PARAMETER_VALUE",
    message,
    sqlstate: "22023",
  });
  const notInterval = (text: string) => ({
    error_class: "DELTA_INVALID_INTERVAL",
    message: `${text} is not a valid INTERVAL.`,
    sqlstate: "22006",
    message_parameters: { interval: text },
  });
  const notDuration = (key: string) =>
    invalidParameter(
      `${key} needs to be provided as a calendar interval such as '2 weeks'. Months and years are not accepted. You may specify '365 days' for a year instead.`,
    );
  const notPositive = invalidParameter("delta.checkpointInterval needs to be a positive integer.");
  const notBoolean = (key: string, value: string) =>
    invalidParameter(`For input string: "${value}". ${key} needs to be true or false.`);
  // What Spark 4.1 + Delta 4.3.1 answer for each (the class and message; Delta raises the
  // INVALID_PARAMETER_VALUE ones as IllegalArgumentException without a class).
  const refused: [string, string, Record<string, unknown>][] = [
    ["delta.logRetentionDuration", "interval banana", notInterval("interval banana")],
    ["delta.deletedFileRetentionDuration", "banana", notInterval("banana")],
    ["delta.checkpointRetentionDuration", "interval 1.5 days", notInterval("interval 1.5 days")],
    ["delta.logRetentionDuration", "interval 1 fortnight", notInterval("interval 1 fortnight")],
    [
      "delta.logRetentionDuration",
      "   ",
      {
        error_class: "DELTA_INVALID_CALENDAR_INTERVAL_EMPTY",
        message: "Interval cannot be null or blank.",
        sqlstate: "2200P",
      },
    ],
    [
      "delta.deletedFileRetentionDuration",
      "interval 1 month",
      notDuration("delta.deletedFileRetentionDuration"),
    ],
    ["delta.logRetentionDuration", "interval 1 year", notDuration("delta.logRetentionDuration")],
    ["delta.logRetentionDuration", "interval -3 days", notDuration("delta.logRetentionDuration")],
    ["delta.checkpointInterval", "0", notPositive],
    ["delta.checkpointInterval", "-1", notPositive],
    ["delta.checkpointInterval", "abc", notPositive],
    ["delta.checkpointInterval", "1.5", notPositive],
    ["delta.checkpointInterval", " 5 ", notPositive],
    ["delta.checkpointInterval", "2147483648", notPositive],
    [
      "delta.dataSkippingNumIndexedCols",
      "-2",
      invalidParameter("delta.dataSkippingNumIndexedCols needs to be larger than or equal to -1."),
    ],
    ["delta.appendOnly", "maybe", notBoolean("delta.appendOnly", "maybe")],
    ["delta.appendOnly", " true ", notBoolean("delta.appendOnly", " true ")],
    ["delta.enableChangeDataFeed", "maybe", notBoolean("delta.enableChangeDataFeed", "maybe")],
    ["delta.enableExpiredLogCleanup", "yes", notBoolean("delta.enableExpiredLogCleanup", "yes")],
    [
      "delta.isolationLevel",
      "Snapshot",
      {
        error_class: "DELTA_INVALID_ISOLATION_LEVEL",
        message: "invalid isolation level 'Snapshot'",
        sqlstate: "25000",
        message_parameters: { isolationLevel: "Snapshot" },
      },
    ],
    // Silt's own (Delta OSS does not know it): bytes.
    [
      "delta.targetFileSize",
      "big",
      invalidParameter("delta.targetFileSize needs to be a positive integer."),
    ],
  ];

  beforeAll(async () => {
    await ok("CREATE TABLE pv (id INT) USING DELTA");
    await ok("INSERT INTO pv VALUES (1)");
  });

  it("ALTER TABLE … SET TBLPROPERTIES refuses each with Delta's error, changing nothing", async () => {
    const before = await properties("pv");
    for (const [key, value, expected] of refused) {
      const body = await failsUnchanged("pv", expected.error_class as string, () =>
        sql(`ALTER TABLE pv SET TBLPROPERTIES ('${key}' = '${value}')`),
      );
      expect(body, `${key} = '${value}'`).toMatchObject(expected);
    }
    expect(await properties("pv")).toEqual(before);
  });

  it("CREATE TABLE … TBLPROPERTIES and the REST create route refuse each, creating nothing", async () => {
    for (const [key, value, expected] of refused) {
      const res = await sql(
        `CREATE TABLE bad (id INT) USING DELTA TBLPROPERTIES ('${key}' = '${value}')`,
      );
      expect(res.status, `${key} = '${value}'`).toBe(400);
      expect(res.body, `${key} = '${value}'`).toMatchObject(expected);
      const rest = await silt.call("POST", "/api/v1/tables", {
        name: "al.s.bad",
        columns: [{ name: "id", type: "INT" }],
        properties: { [key]: value },
      });
      expect(rest.status, `${key} = '${value}'`).toBe(400);
      expect(rest.body, `${key} = '${value}'`).toMatchObject(expected);
    }
    expect((await sql("SELECT * FROM bad")).body.error_class).toBe("TABLE_OR_VIEW_NOT_FOUND");
  });

  it("keeps the log's retention at least the deleted files', naming the one being set", async () => {
    const log = (log: string, deleted: string) =>
      invalidParameter(
        `The table property delta.logRetentionDuration(${log}) needs to be greater than or equal to delta.deletedFileRetentionDuration(${deleted}).`,
      );
    // Against the default deleted-file retention, 1 week, shown as Spark shows intervals.
    for (const [value, shown] of [
      ["interval 1 day", "1 days"],
      ["interval 90 minutes", "1 hours 30 minutes"],
      ["interval 1 day 30 seconds", "1 days 30 seconds"],
      ["interval 1500 milliseconds", "1.5 seconds"],
      ["interval 1 microsecond", "0.000001 seconds"],
      ["interval 0 days", "0 seconds"],
    ]) {
      const body = await failsUnchanged("pv", "INVALID_PARAMETER_VALUE", () =>
        sql(`ALTER TABLE pv SET TBLPROPERTIES ('delta.logRetentionDuration' = '${value}')`),
      );
      expect(body, value).toMatchObject(log(shown!, "7 days"));
    }
    const deleted = await failsUnchanged("pv", "INVALID_PARAMETER_VALUE", () =>
      sql("ALTER TABLE pv SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = '60 days')"),
    );
    expect(deleted).toMatchObject(
      invalidParameter(
        "The table property delta.deletedFileRetentionDuration(60 days) needs to be less than or equal to delta.logRetentionDuration(30 days).",
      ),
    );
    const both = await sql(
      "CREATE TABLE bad (id INT) USING DELTA TBLPROPERTIES (" +
        "'delta.logRetentionDuration' = 'interval 10 days', " +
        "'delta.deletedFileRetentionDuration' = 'interval 20 days')",
    );
    expect(both.body).toMatchObject(log("10 days", "20 days"));
    // Both raised together in one change is fine.
    await ok(
      "ALTER TABLE pv SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 60 days', " +
        "'delta.logRetentionDuration' = 'interval 90 days')",
    );
    expect(await properties("pv")).toMatchObject({
      "delta.deletedFileRetentionDuration": "interval 60 days",
      "delta.logRetentionDuration": "interval 90 days",
    });
  });

  it("takes what Delta takes, storing booleans and the isolation level in one spelling", async () => {
    await ok(
      "CREATE TABLE ok1 (id INT) USING DELTA TBLPROPERTIES ('delta.appendOnly' = 'TRUE', " +
        "'delta.isolationLevel' = 'writeserializable', 'delta.checkpointInterval' = '+5', " +
        "'delta.enableDeletionVectors' = 'True', 'delta.dataSkippingNumIndexedCols' = '-1', " +
        "'delta.logRetentionDuration' = 'interval 2 weeks 3 hours', " +
        "'delta.deletedFileRetentionDuration' = '0 days')",
    );
    expect(await properties("ok1")).toMatchObject({
      "delta.appendOnly": "true",
      "delta.isolationLevel": "WriteSerializable",
      "delta.checkpointInterval": "+5",
      "delta.enableDeletionVectors": "true",
      "delta.logRetentionDuration": "interval 2 weeks 3 hours",
    });
    // The table is append-only, as Delta reads 'TRUE'.
    await ok("INSERT INTO ok1 VALUES (1)");
    expect((await sql("DELETE FROM ok1 WHERE id = 1")).body.error_class).toBe(
      "DELTA_CANNOT_MODIFY_APPEND_ONLY",
    );
  });
});
