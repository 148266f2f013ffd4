/**
 * Damaged commit files: a zero-byte, truncated or commitInfo-less published commit is never read
 * as an empty commit. Where the arbiter's ratified staged file is intact, the published copy is
 * rewritten from it and reads and writes go on; where it is not, reads and writes fail with
 * DELTA_STATE_RECOVER_ERROR naming the file, and nothing is committed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFileName, LOG_DIR } from "../lib/delta/actions.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

let silt: SiltHarness;
let location: string;
let tableId: string;

const sql = (statement: string) => silt.call("POST", "/api/v1/sql", { statement });
const rows = async () => (await sql("SELECT id FROM d.s.t ORDER BY id")).body.rows;
const published = (v: number) => `${location}${LOG_DIR}${commitFileName(v)}`;
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  for (const statement of [
    "CREATE CATALOG d",
    "CREATE SCHEMA d.s",
    "CREATE TABLE d.s.t (id INT) USING DELTA",
    "INSERT INTO d.s.t VALUES (1)",
    "INSERT INTO d.s.t VALUES (2)",
    "INSERT INTO d.s.t VALUES (3)",
  ]) {
    expect((await sql(statement)).status, statement).toBe(200);
  }
  ({ location, tableId } = await silt.ctx.catalog.getTable("d", "s", "t"));
});

afterAll(async () => {
  await silt?.close();
});

describe("a damaged published commit", () => {
  const damages: [string, (bytes: Uint8Array) => Uint8Array][] = [
    ["zero-byte", () => new Uint8Array()],
    ["truncated", (bytes) => bytes.slice(0, Math.floor(bytes.length / 2))],
    [
      "commitInfo-less",
      (bytes) =>
        new TextEncoder().encode(
          text(bytes)
            .split("\n")
            .filter((line) => !line.startsWith('{"commitInfo"'))
            .join("\n"),
        ),
    ],
  ];

  it.each(damages)("is rewritten from the ratified staged file when %s", async (_, damage) => {
    const [row] = await silt.ctx.arbiter.range(tableId, 2, 2);
    const ratified = await silt.ctx.store.get(row!.stagedKey);
    await silt.ctx.store.put(published(2), damage(ratified));
    expect(await rows()).toEqual([[1], [2], [3]]);
    expect(text(await silt.ctx.store.get(published(2)))).toBe(text(ratified));
  });

  it("without an intact ratified copy, fails reads and writes naming the file, committing nothing", async () => {
    const before = [[1], [2], [3]];
    const [row] = await silt.ctx.arbiter.range(tableId, 3, 3);
    const original = await silt.ctx.store.get(published(3));
    const staged = await silt.ctx.store.get(row!.stagedKey);
    await silt.ctx.store.delete(row!.stagedKey);
    await silt.ctx.store.put(published(3), new Uint8Array());
    for (const statement of ["SELECT * FROM d.s.t", "INSERT INTO d.s.t VALUES (4)"]) {
      const res = await sql(statement);
      expect([res.status, res.body.error_class], statement).toEqual([
        500,
        "DELTA_STATE_RECOVER_ERROR",
      ]);
      expect(res.body.message).toContain(`${published(3)} for version 3 holds no actions`);
    }
    expect((await silt.ctx.arbiter.latest(tableId))?.version).toBe(3);
    expect(await silt.ctx.store.head(published(4))).toBeUndefined();

    // Restored by hand, the table reads as before and takes writes again.
    await silt.ctx.store.put(published(3), original);
    await silt.ctx.store.put(row!.stagedKey, staged);
    expect(await rows()).toEqual(before);
    expect((await sql("INSERT INTO d.s.t VALUES (4)")).status).toBe(200);
    expect(await rows()).toEqual([...before, [4]]);
  });
});
