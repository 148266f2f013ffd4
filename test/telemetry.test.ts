/**
 * Structured logs and metrics: the invocation scope that puts the request id on every line, the
 * exact Embedded Metric Format record CloudWatch extracts metrics from, and the per-commit record
 * every operation gets from the commit loop.
 */
import { describe, expect, it } from "vitest";
import { reportCommit } from "../lib/commit/commit-report.ts";
import type { Action } from "../lib/delta/actions.ts";
import { jsonLogger, withLogFields } from "../lib/logger.ts";
import { emfFields, emitMetrics, withMetrics } from "../lib/metrics.ts";
import { withInvocation } from "../lib/runtime/invocation.ts";

const collect = () => {
  const lines: Record<string, unknown>[] = [];
  const logger = jsonLogger({ service: "silt" }, (l) => lines.push(JSON.parse(l)));
  return { lines, logger };
};

const add = (path: string, size: number, numRecords?: number): Action => ({
  add: {
    path,
    partitionValues: {},
    size,
    modificationTime: 0,
    dataChange: true,
    stats: numRecords === undefined ? undefined : JSON.stringify({ numRecords }),
  },
});

describe("log scope", () => {
  it("adds the scope's fields to every line written inside it, nested scopes adding up", async () => {
    const { lines, logger } = collect();
    logger.info("before");
    await withLogFields({ requestId: "r-1" }, async () => {
      await Promise.resolve();
      logger.child({ table: "c.s.t" }).info("inside", { version: 3 });
      withLogFields({ operation: "WRITE" }, () => logger.warn("nested"));
    });
    logger.info("after");
    expect(lines.map(({ time: _, ...l }) => l)).toEqual([
      { level: "info", message: "before", service: "silt" },
      {
        level: "info",
        message: "inside",
        service: "silt",
        requestId: "r-1",
        table: "c.s.t",
        version: 3,
      },
      { level: "warn", message: "nested", service: "silt", requestId: "r-1", operation: "WRITE" },
      { level: "info", message: "after", service: "silt" },
    ]);
  });

  it("keeps concurrent invocations' request ids apart", async () => {
    const { lines, logger } = collect();
    const run = (id: string, delay: number) =>
      withInvocation(logger, { awsRequestId: id }, {}, async () => {
        await new Promise((r) => setTimeout(r, delay));
        logger.info(id);
      });
    await Promise.all([run("a", 20), run("b", 0)]);
    expect(lines.map((l) => [l.message, l.requestId])).toEqual([
      ["b", "b"],
      ["a", "a"],
    ]);
  });
});

describe("Embedded Metric Format", () => {
  it("names each metric with its unit under the Silt namespace and the Operation dimension", () => {
    expect(
      emfFields(
        "MERGE",
        { CommitsCommitted: 1, RowsWritten: 10, BytesWritten: 2048 },
        1_700_000_000_000,
      ),
    ).toEqual({
      _aws: {
        Timestamp: 1_700_000_000_000,
        CloudWatchMetrics: [
          {
            Namespace: "Silt",
            Dimensions: [["Operation"]],
            Metrics: [
              { Name: "CommitsCommitted", Unit: "Count" },
              { Name: "RowsWritten", Unit: "Count" },
              { Name: "BytesWritten", Unit: "Bytes" },
            ],
          },
        ],
      },
      Operation: "MERGE",
      CommitsCommitted: 1,
      RowsWritten: 10,
      BytesWritten: 2048,
    });
    // A value that is not known is not declared either: CloudWatch would reject a metric with
    // no value on the line.
    const partial = emfFields("WRITE", { CommitsCommitted: 1, RowsWritten: undefined }, 0);
    expect(partial).not.toHaveProperty("RowsWritten");
    expect(JSON.stringify(partial._aws)).not.toContain("RowsWritten");
  });

  it("writes metric lines only inside an invocation", () => {
    const { lines, logger } = collect();
    emitMetrics("outside", "INGEST", { IngestedObjects: 1 });
    withMetrics(logger, () => emitMetrics("inside", "INGEST", { IngestedObjects: 2 }, { k: "v" }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "info",
      message: "inside",
      k: "v",
      Operation: "INGEST",
      IngestedObjects: 2,
    });
    expect(typeof (lines[0]!._aws as { Timestamp: unknown }).Timestamp).toBe("number");
  });
});

describe("commit report", () => {
  const report = (actions: Action[]) => {
    const { lines, logger } = collect();
    withMetrics(logger, () =>
      reportCommit({
        tableName: "c.s.t",
        tableId: "id-1",
        operation: "WRITE",
        version: 7,
        actions,
        attempts: 2,
        published: true,
      }),
    );
    return lines[0]!;
  };

  it("counts the rows and bytes of the files the commit adds", () => {
    const line = report([
      add("a.parquet", 100, 3),
      add("b.parquet", 50, 4),
      { remove: { path: "old.parquet", deletionTimestamp: 0, dataChange: true } },
      { txn: { appId: "x", version: 1 } },
    ]);
    expect(line).toMatchObject({
      message: "commit",
      table: "c.s.t",
      tableId: "id-1",
      operation: "WRITE",
      version: 7,
      rows: 7,
      bytes: 150,
      filesAdded: 2,
      attempts: 2,
      published: true,
      Operation: "WRITE",
      CommitsCommitted: 1,
      RowsWritten: 7,
      BytesWritten: 150,
    });
  });

  it("leaves rows out when an added file has no statistics", () => {
    const line = report([add("a.parquet", 100, 3), add("b.parquet", 50)]);
    expect(line.rows).toBeUndefined();
    expect(line).not.toHaveProperty("RowsWritten");
    expect(line.BytesWritten).toBe(150);
  });
});
