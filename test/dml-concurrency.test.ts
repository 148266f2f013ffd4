/**
 * Row-level changes racing other writers, under Delta's conflict rules (Serializable by default,
 * as DESIGN §3 says; WriteSerializable through `delta.isolationLevel`): each statement runs through
 * executeSql on a context that lets a rival statement commit just before the statement stages its
 * own commit, i.e. after it read the table. A rival that added files the statement's read covers
 * fails it with DELTA_CONCURRENT_APPEND (unless a blind append under WriteSerializable); one that
 * removed a file it read, with DELTA_CONCURRENT_DELETE_READ; otherwise it rebases and commits. The
 * loser never changes anything.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SiltContext } from "../lib/context.ts";
import { executeSql } from "../lib/sql/execute.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";
import { sqlClient } from "./helpers/sql-client.ts";
import { hookedStore, once } from "./helpers/store-hooks.ts";

let silt: SiltHarness;
const { ok, history, rows } = sqlClient(() => silt, { catalog: "rc", schema: "s" });

beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  await ok("CREATE CATALOG rc");
  await ok("CREATE SCHEMA rc.s");
}, 60_000);
afterAll(async () => {
  await silt?.close();
});

/**
 * A context whose first staged commit lets `rival` commit first: by then the statement has read
 * the table and built its actions, so it must rebase over the rival or fail.
 */
function racing(rival: () => Promise<unknown>): SiltContext {
  const staging = (key: string) => key.includes("/_delta_log/_staged_commits/");
  return { ...silt.ctx, store: hookedStore(silt.ctx.store, once(staging, rival)) };
}

const run = (ctx: SiltContext, statement: string) =>
  executeSql(ctx, { statement, catalog: "rc", schema: "s" });

async function partitioned(name: string, properties = ""): Promise<void> {
  await ok(
    `CREATE TABLE ${name} (id INT, v STRING, p STRING) USING DELTA PARTITIONED BY (p) ${properties}`,
  );
  await ok(`INSERT INTO ${name} VALUES (1, 'a', 'x'), (2, 'b', 'x')`);
  await ok(`INSERT INTO ${name} VALUES (3, 'c', 'y'), (4, 'd', 'y')`);
}

const unchangedBut = async (table: string, version: number, expected: unknown[][]) => {
  // Only the rival committed.
  expect((await history(table))[0]!.version).toBe(version + 1);
  expect(await rows(table)).toEqual(expected);
};

describe("row-level changes against concurrent writers", () => {
  it("UPDATE fails with DELTA_CONCURRENT_APPEND when a rival appended to a partition it read (Serializable)", async () => {
    await partitioned("ua");
    const before = (await history("ua"))[0]!.version;
    await expect(
      run(
        racing(() => ok("INSERT INTO ua VALUES (5, 'e', 'x')")),
        "UPDATE ua SET v = 'X' WHERE p = 'x'",
      ),
    ).rejects.toMatchObject({ errorClass: "DELTA_CONCURRENT_APPEND", status: 409 });
    await unchangedBut("ua", before, [
      [1, "a", "x"],
      [2, "b", "x"],
      [3, "c", "y"],
      [4, "d", "y"],
      [5, "e", "x"],
    ]);
  });

  it("UPDATE commits around that append under WriteSerializable, and around appends elsewhere", async () => {
    await partitioned("uw", "TBLPROPERTIES ('delta.isolationLevel' = 'WriteSerializable')");
    await run(
      racing(() => ok("INSERT INTO uw VALUES (5, 'e', 'x')")),
      "UPDATE uw SET v = 'X' WHERE p = 'x'",
    );
    // A blind append is not re-read: the row it added stays as written.
    await run(
      racing(() => ok("INSERT INTO uw VALUES (6, 'f', 'x')")),
      "UPDATE uw SET v = 'Y' WHERE p = 'y'",
    );
    expect((await history("uw")).slice(0, 4).map((h) => h.operation)).toEqual([
      "UPDATE",
      "WRITE",
      "UPDATE",
      "WRITE",
    ]);
    expect(await rows("uw")).toEqual([
      [1, "X", "x"],
      [2, "X", "x"],
      [3, "Y", "y"],
      [4, "Y", "y"],
      [5, "e", "x"],
      [6, "f", "x"],
    ]);
  });

  it("DELETE and UPDATE of different partitions both commit", async () => {
    await partitioned("dp");
    await run(
      racing(() => ok("UPDATE dp SET v = 'Y' WHERE p = 'y'")),
      "DELETE FROM dp WHERE id = 1",
    );
    expect((await history("dp")).slice(0, 2).map((h) => h.operation)).toEqual(["DELETE", "UPDATE"]);
    expect(await rows("dp")).toEqual([
      [2, "b", "x"],
      [3, "Y", "y"],
      [4, "Y", "y"],
    ]);
  });

  it("UPDATE fails with DELTA_CONCURRENT_DELETE_READ when OPTIMIZE rewrote a file it read", async () => {
    await partitioned("uo");
    await ok("INSERT INTO uo VALUES (5, 'e', 'x')");
    const before = (await history("uo"))[0]!.version;
    await expect(
      run(
        racing(() => ok("OPTIMIZE uo")),
        "UPDATE uo SET v = 'X' WHERE id = 1",
      ),
    ).rejects.toMatchObject({ errorClass: "DELTA_CONCURRENT_DELETE_READ", status: 409 });
    await unchangedBut("uo", before, [
      [1, "a", "x"],
      [2, "b", "x"],
      [3, "c", "y"],
      [4, "d", "y"],
      [5, "e", "x"],
    ]);
  });

  it("two DELETEs of the same rows: the second fails and the rows go once", async () => {
    await partitioned("dd");
    const before = (await history("dd"))[0]!.version;
    await expect(
      run(
        racing(() => ok("DELETE FROM dd WHERE p = 'y'")),
        "DELETE FROM dd WHERE p = 'y'",
      ),
    ).rejects.toMatchObject({ status: 409 });
    await unchangedBut("dd", before, [
      [1, "a", "x"],
      [2, "b", "x"],
    ]);
  });

  it("MERGE fails when a rival updated a partition it matched", async () => {
    await partitioned("mu");
    const before = (await history("mu"))[0]!.version;
    await expect(
      run(
        racing(() => ok("UPDATE mu SET v = 'R' WHERE id = 3")),
        "MERGE INTO mu USING (SELECT * FROM VALUES (4, 'M', 'y') AS s(id, v, p)) s ON mu.id = s.id " +
          "WHEN MATCHED THEN UPDATE SET *",
      ),
    ).rejects.toMatchObject({ errorClass: "DELTA_CONCURRENT_APPEND", status: 409 });
    await unchangedBut("mu", before, [
      [1, "a", "x"],
      [2, "b", "x"],
      [3, "R", "y"],
      [4, "d", "y"],
    ]);
  });
});
