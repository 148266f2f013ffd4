/**
 * Pruning through SQL: a selective WHERE on a 100-file table opens only the files whose
 * statistics can match, and inside a file only the row groups that can; deletion vectors still
 * apply to the right rows when row groups are skipped.
 */
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitTransaction } from "../lib/commit/transaction.ts";
import type { Action } from "../lib/delta/actions.ts";
import { writeDeletionVectorFile } from "../lib/delta/deletion-vectors.ts";
import { appendRows } from "../lib/ops/append.ts";
import { createTable } from "../lib/ops/create-table.ts";
import { createCatalog, createSchema } from "../lib/ops/namespaces.ts";
import { openTable } from "../lib/ops/open-table.ts";
import { executeSql } from "../lib/sql/execute.ts";
import { runQuery } from "../lib/sql/query.ts";
import { parseStatement } from "../lib/sql/statement-parser.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

describe("pruning", () => {
  let silt: SiltHarness;
  const session = () => ({ defaults: { catalog: "p", schema: "s" }, conf: {}, now: Date.now() });
  const select = async (sql: string) => {
    const st = parseStatement(sql);
    if (st.kind !== "query") throw new Error("not a query");
    return runQuery(silt.ctx, st.query, session());
  };
  beforeAll(async () => {
    silt = await startSilt("local", { memory: true });
    await createCatalog(silt.ctx, "p");
    await createSchema(silt.ctx, "p", "s");
  });
  afterAll(() => silt.close());

  it("a point lookup on a 100-file table opens one file", async () => {
    await createTable(silt.ctx, {
      name: "p.s.hundred",
      columns: [
        { name: "id", type: "BIGINT" },
        { name: "label", type: "STRING" },
      ],
    });
    for (let f = 0; f < 100; f++) {
      const ids = BigInt64Array.from({ length: 100 }, (_, i) => BigInt(f * 100 + i));
      const labels = Array.from(ids, (id) => `row-${id}`);
      await appendRows(silt.ctx, "p.s.hundred", {
        arrow: arrow.tableFromArrays({ id: ids, label: labels }),
      });
    }
    const hit = await select("SELECT label FROM hundred WHERE id = 4242");
    expect(hit.scan?.filesRead).toBe(1);
    expect(hit.table.getChild("label")?.toArray()).toEqual(["row-4242"]);
    const range = await select("SELECT count(*) FROM hundred WHERE id BETWEEN 150 AND 349");
    expect(range.scan?.filesRead).toBe(3);
    const none = await select("SELECT count(*) FROM hundred WHERE id < 0");
    expect(none.scan?.filesRead).toBe(0);
    const all = await select("SELECT count(*) FROM hundred WHERE label = 'row-5'");
    expect(all.scan?.filesRead).toBeLessThanOrEqual(100);
    expect(
      (
        await executeSql(silt.ctx, {
          statement: "SELECT id FROM p.s.hundred WHERE label = 'row-5'",
        })
      ).rows,
    ).toEqual([[5]]);
  });

  it("skips row groups by their statistics and keeps deletion vectors aligned", async () => {
    await createTable(silt.ctx, {
      name: "p.s.groups",
      columns: [{ name: "id", type: "BIGINT" }],
      properties: { "delta.columnMapping.mode": "none" },
    });
    const n = 300_000;
    await appendRows(silt.ctx, "p.s.groups", {
      arrow: arrow.tableFromArrays({ id: BigInt64Array.from({ length: n }, (_, i) => BigInt(i)) }),
    });
    const one = await select("SELECT id FROM groups WHERE id = 280000");
    expect(one.scan).toEqual({ filesRead: 1, rowGroupsRead: 1, rowGroupsSkipped: 2 });
    expect(Array.from(one.table.getChild("id")!.toArray())).toEqual([280000n]);

    // Mark rows 5 and 280000 deleted with a deletion vector, as DELETE will.
    const t = await openTable(silt.ctx, "p.s.groups");
    const file = t.snapshot.files[0];
    const [dv] = await writeDeletionVectorFile(silt.ctx.store, t.entry.location, [
      Float64Array.from([5, 280_000]),
    ]);
    const now = silt.ctx.clock();
    const actions: Action[] = [
      {
        remove: {
          path: file.path,
          deletionTimestamp: now,
          dataChange: true,
          extendedFileMetadata: true,
          partitionValues: {},
          size: file.size,
        },
      },
      { add: { ...file, deletionVector: dv, dataChange: true, modificationTime: now } },
    ];
    await commitTransaction({
      store: silt.ctx.store,
      arbiter: silt.ctx.arbiter,
      tableId: t.entry.tableId,
      tableRoot: t.entry.location,
      readVersion: t.snapshot.version,
      actions,
      commitInfo: { operation: "DELETE", operationParameters: { predicate: "[]" } },
    });
    const gone = await select("SELECT id FROM groups WHERE id = 280000");
    expect(gone.table.numRows).toBe(0);
    const neighbours = await select(
      "SELECT id FROM groups WHERE id >= 279999 AND id <= 280001 ORDER BY id",
    );
    expect(Array.from(neighbours.table.getChild("id")!.toArray())).toEqual([279999n, 280001n]);
    expect(neighbours.scan?.rowGroupsSkipped).toBe(2);
    const total = await select("SELECT count(*) FROM groups");
    expect(Array.from(total.table.getChildAt(0)!.toArray())).toEqual([BigInt(n - 2)]);
  });
});
