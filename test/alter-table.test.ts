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
