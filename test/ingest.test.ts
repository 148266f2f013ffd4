/**
 * Exactly-once S3 ingestion through the ingest function's handler, on the S3 emulator and
 * dynalite: real EventBridge "Object Created" events and S3 notifications wrapped in SQS records,
 * appends and merges, duplicated deliveries (the same message twice, the same object in two
 * batches, two ingesters racing), a bad file dead-lettered with its reason while its neighbours
 * commit, and one commit per batch in the table's history.
 */
import * as arrow from "apache-arrow";
import type { SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeParquet } from "../lib/data/parquet.ts";
import { ingestAppId, ingestObjects } from "../lib/ops/ingest.ts";
import { ingestTarget } from "../lib/ops/ingest-keys.ts";
import { openTable } from "../lib/ops/open-table.ts";
import {
  handleIngestBatch,
  objectKeysOf,
  REJECTED_PREFIX,
  type RejectedFile,
  storeDeadLetterSink,
} from "../lib/runtime/ingest-handler.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";
import { ACCOUNT, lambdaRecord } from "./helpers/sqs-server.ts";

type Result = { columns: { name: string; type: string }[]; rows: unknown[][] };

let silt: SiltHarness;
let messageSeq = 0;
const encoder = new TextEncoder();

const ok = async (statement: string): Promise<Result> => {
  const res = await silt.call("POST", "/api/v1/sql", { statement });
  expect(res.status, `${statement}\n${JSON.stringify(res.body)}`).toBe(200);
  return res.body as Result;
};
const rows = async (table: string) => (await ok(`SELECT * FROM ${table} ORDER BY 1`)).rows;
const history = async (table: string) => {
  const h = await ok(`DESCRIBE HISTORY ${table}`);
  const at = (n: string) => h.columns.findIndex((c) => c.name === n);
  return h.rows.map((r) => ({
    version: r[at("version")] as number,
    operation: r[at("operation")] as string,
    isBlindAppend: r[at("isBlindAppend")] as boolean | null,
    metrics: r[at("operationMetrics")] as Record<string, string>,
  }));
};

/** The record Lambda delivers for a message on the ingest queue. */
const sqsRecord = (messageId: string, body: string, messageGroupId?: string) =>
  lambdaRecord(`https://sqs.us-east-1.amazonaws.com/${ACCOUNT}/Silt-ingest.fifo`, {
    messageId,
    body,
    messageGroupId,
    sentAt: 0,
  });

/** An SQS record holding the EventBridge event S3 sends for a new object. */
function eventBridgeRecord(key: string): SQSRecord {
  messageSeq++;
  return sqsRecord(
    `m-${messageSeq}`,
    JSON.stringify({
      version: "0",
      id: `evt-${messageSeq}`,
      "detail-type": "Object Created",
      source: "aws.s3",
      account: "123456789012",
      time: "2025-01-01T00:00:00Z",
      region: "us-east-1",
      resources: ["arn:aws:s3:::silt-test"],
      detail: {
        version: "0",
        bucket: { name: "silt-test" },
        object: { key, size: 10, etag: "e", sequencer: `00${messageSeq}` },
        "request-id": "r",
        requester: "123456789012",
        reason: "PutObject",
      },
    }),
    key.split("/").slice(0, 4).join("/"),
  );
}

const put = (key: string, text: string | Uint8Array) =>
  silt.ctx.store.put(key, typeof text === "string" ? encoder.encode(text) : text);

function memorySink() {
  const rejected: RejectedFile[] = [];
  return {
    rejected,
    sink: {
      async reject(file: RejectedFile) {
        rejected.push(file);
      },
    },
  };
}

beforeAll(async () => {
  silt = await startSilt("s3", { memory: true });
  await ok("CREATE CATALOG ing");
  await ok("CREATE SCHEMA ing.s");
});
afterAll(async () => {
  await silt?.close();
});

describe("keys and events", () => {
  it("maps ingest keys to tables and ignores everything else", () => {
    expect(ingestTarget("ingest/c/s/t/a.csv")).toEqual({ catalog: "c", schema: "s", table: "t" });
    expect(ingestTarget("ingest/c/s/t/2025/01/a.csv")).toEqual({
      catalog: "c",
      schema: "s",
      table: "t",
    });
    expect(ingestTarget("ingest/c/s/t/")).toBeUndefined();
    expect(ingestTarget("ingest/c/s/a.csv")).toBeUndefined();
    expect(ingestTarget("ingest/c/s/t/_tmp.csv")).toBeUndefined();
    expect(ingestTarget("tables/x/a.parquet")).toBeUndefined();
  });

  it("reads keys from EventBridge events and URL-encoded S3 notifications", () => {
    expect(objectKeysOf(eventBridgeRecord("ingest/c/s/t/a b.csv").body)).toEqual([
      "ingest/c/s/t/a b.csv",
    ]);
    const notification = {
      Records: [
        { eventName: "ObjectCreated:Put", s3: { object: { key: "ingest/c/s/t/a+b%3D1.csv" } } },
        { eventName: "ObjectRemoved:Delete", s3: { object: { key: "ingest/c/s/t/x.csv" } } },
      ],
    };
    expect(objectKeysOf(JSON.stringify(notification))).toEqual(["ingest/c/s/t/a b=1.csv"]);
    expect(objectKeysOf(JSON.stringify({ Event: "s3:TestEvent" }))).toEqual([]);
  });
});

describe("append", () => {
  it("appends several files of one batch in one blind-append commit, each recorded once", async () => {
    await ok("CREATE TABLE ing.s.events (id INT, name STRING, score DOUBLE) USING DELTA");
    await put("ingest/ing/s/events/a.csv", "id,name,score\n1,ann,1.5\n2,bob,\n");
    await put(
      "ingest/ing/s/events/b.ndjson",
      '{"id": 3, "name": "cy", "score": 3}\n\n{"id": 4, "name": null, "score": 4.25}\n',
    );
    const parquet = writeParquet(
      arrow.tableFromArrays({
        id: Int32Array.from([5]),
        name: ["dee"],
        score: Float64Array.from([5.5]),
      }),
    );
    await put("ingest/ing/s/events/c.parquet", parquet);
    const { sink, rejected } = memorySink();
    const res = await handleIngestBatch(
      silt.ctx,
      {
        Records: [
          eventBridgeRecord("ingest/ing/s/events/a.csv"),
          eventBridgeRecord("ingest/ing/s/events/b.ndjson"),
          eventBridgeRecord("ingest/ing/s/events/c.parquet"),
        ],
      },
      { deadLetters: sink },
    );
    expect(res.batchItemFailures).toEqual([]);
    expect(rejected).toEqual([]);
    expect(await rows("ing.s.events")).toEqual([
      [1, "ann", 1.5],
      [2, "bob", null],
      [3, "cy", 3],
      [4, null, 4.25],
      [5, "dee", 5.5],
    ]);
    const h = await history("ing.s.events");
    expect(h.map((e) => e.operation)).toEqual(["WRITE", "CREATE TABLE"]);
    expect(h[0]!.isBlindAppend).toBe(true);
    expect(h[0]!.metrics.numOutputRows).toBe("5");
    const t = await openTable(silt.ctx, "ing.s.events");
    for (const f of ["a.csv", "b.ndjson", "c.parquet"]) {
      expect(t.snapshot.txns.get(ingestAppId(`ingest/ing/s/events/${f}`))?.version).toBe(1);
    }
  });

  it("ingests a message delivered twice in one batch, and again in a later batch, once", async () => {
    await ok("CREATE TABLE ing.s.dups (id INT) USING DELTA");
    await put("ingest/ing/s/dups/one.csv", "id\n1\n2\n");
    const record = eventBridgeRecord("ingest/ing/s/dups/one.csv");
    const { sink, rejected } = memorySink();
    const first = await handleIngestBatch(
      silt.ctx,
      { Records: [record, { ...record, messageId: "redelivered" }] },
      { deadLetters: sink },
    );
    expect(first.batchItemFailures).toEqual([]);
    const second = await handleIngestBatch(
      silt.ctx,
      { Records: [eventBridgeRecord("ingest/ing/s/dups/one.csv")] },
      { deadLetters: sink },
    );
    expect(second.batchItemFailures).toEqual([]);
    expect(rejected).toEqual([]);
    expect(await rows("ing.s.dups")).toEqual([[1], [2]]);
    expect((await history("ing.s.dups")).map((e) => e.operation)).toEqual([
      "WRITE",
      "CREATE TABLE",
    ]);
  });

  it("lets only one of two racing ingesters of the same object commit it", async () => {
    await ok("CREATE TABLE ing.s.race (id INT) USING DELTA");
    for (let i = 0; i < 3; i++) await put(`ingest/ing/s/race/f${i}.csv`, `id\n${i}\n`);
    const keys = [0, 1, 2].map((i) => `ingest/ing/s/race/f${i}.csv`);
    const name = { catalog: "ing", schema: "s", table: "race" };
    const results = await Promise.all([
      ingestObjects(silt.ctx, name, keys),
      ingestObjects(silt.ctx, name, [...keys].reverse()),
      ingestObjects(silt.ctx, name, [keys[1]!]),
    ]);
    expect(await rows("ing.s.race")).toEqual([[0], [1], [2]]);
    for (const key of keys) {
      expect(results.filter((r) => r.ingested.includes(key))).toHaveLength(1);
    }
    for (const r of results) {
      expect([...r.ingested, ...r.alreadyIngested].sort()).toEqual(
        r === results[2] ? [keys[1]] : [...keys].sort(),
      );
    }
  });
});

describe("CSV", () => {
  it("reads a line holding only a quoted empty string as a NULL row, and skips blank lines", async () => {
    // Spark 4.1 (header, multiLine) reads this file as four rows: "a", NULL, " ", "b".
    await ok("CREATE TABLE ing.s.csvnulls (s STRING) USING DELTA");
    await put("ingest/ing/s/csvnulls/a.csv", 's\na\n""\n\n \nb\n');
    const { sink, rejected } = memorySink();
    const res = await handleIngestBatch(
      silt.ctx,
      { Records: [eventBridgeRecord("ingest/ing/s/csvnulls/a.csv")] },
      { deadLetters: sink },
    );
    expect(res.batchItemFailures).toEqual([]);
    expect(rejected).toEqual([]);
    expect(await rows("ing.s.csvnulls")).toEqual([[null], [" "], ["a"], ["b"]]);
  });
});

describe("bad files", () => {
  it("dead-letters a file that does not fit the schema with the reason, committing its neighbours", async () => {
    await ok("CREATE TABLE ing.s.strict (id INT NOT NULL, amount DOUBLE) USING DELTA");
    await put("ingest/ing/s/strict/good.csv", "id,amount\n1,2.5\n");
    await put("ingest/ing/s/strict/extra.csv", "id,amount,color\n2,1,red\n");
    await put("ingest/ing/s/strict/badtype.ndjson", '{"id": "not a number", "amount": 1}\n');
    await put("ingest/ing/s/strict/nulls.csv", "id,amount\n,3\n");
    await put("ingest/ing/s/strict/notes.txt", "hello");
    const records = [
      eventBridgeRecord("ingest/ing/s/strict/good.csv"),
      eventBridgeRecord("ingest/ing/s/strict/extra.csv"),
      eventBridgeRecord("ingest/ing/s/strict/badtype.ndjson"),
      eventBridgeRecord("ingest/ing/s/strict/nulls.csv"),
      eventBridgeRecord("ingest/ing/s/strict/notes.txt"),
    ];
    const res = await handleIngestBatch(
      silt.ctx,
      { Records: records },
      { deadLetters: storeDeadLetterSink(silt.ctx.store) },
    );
    // Permanently bad files are acknowledged (recorded, not retried).
    expect(res.batchItemFailures).toEqual([]);
    expect(await rows("ing.s.strict")).toEqual([[1, 2.5]]);
    const h = await history("ing.s.strict");
    expect(h.map((e) => e.operation)).toEqual(["WRITE", "CREATE TABLE"]);

    const recordOf = async (file: string, messageId: string) =>
      JSON.parse(
        new TextDecoder().decode(
          await silt.ctx.store.get(
            `${REJECTED_PREFIX}ingest/ing/s/strict/${file}.${messageId}.json`,
          ),
        ),
      ) as RejectedFile;
    const extra = await recordOf("extra.csv", records[1]!.messageId);
    expect(extra).toMatchObject({ table: "ing.s.strict", errorClass: "DELTA_SCHEMA_MISMATCH" });
    expect(extra.message).toContain("`color`");
    const badType = await recordOf("badtype.ndjson", records[2]!.messageId);
    expect(badType.message).toContain("badtype.ndjson");
    const nulls = await recordOf("nulls.csv", records[3]!.messageId);
    expect(nulls.message).toContain("nulls.csv");
    const txt = await recordOf("notes.txt", records[4]!.messageId);
    expect(txt.errorClass).toBe("UNSUPPORTED_INGEST_FORMAT");
    const t = await openTable(silt.ctx, "ing.s.strict");
    expect(t.snapshot.txns.has(ingestAppId("ingest/ing/s/strict/extra.csv"))).toBe(false);
  });

  it("dead-letters objects of a table that does not exist and unparseable messages", async () => {
    await put("ingest/ing/s/missing/a.csv", "id\n1\n");
    const { sink, rejected } = memorySink();
    const res = await handleIngestBatch(
      silt.ctx,
      {
        Records: [
          eventBridgeRecord("ingest/ing/s/missing/a.csv"),
          sqsRecord("garbage", "not json"),
          eventBridgeRecord("tables/elsewhere/x.parquet"),
        ],
      },
      { deadLetters: sink },
    );
    expect(res.batchItemFailures).toEqual([]);
    expect(rejected.map((r) => [r.key, r.errorClass])).toEqual([
      ["(unparseable message)", "INVALID_INGEST_EVENT"],
      ["ingest/ing/s/missing/a.csv", expect.stringMatching(/TABLE_OR_VIEW_NOT_FOUND/)],
    ]);
  });

  it("returns the table's messages as batch item failures when the dead-letter record cannot be written", async () => {
    await ok("CREATE TABLE ing.s.sinkfail (id INT) USING DELTA");
    await put("ingest/ing/s/sinkfail/a.csv", "id,zzz\n1,2\n");
    const record = eventBridgeRecord("ingest/ing/s/sinkfail/a.csv");
    const res = await handleIngestBatch(
      silt.ctx,
      { Records: [record] },
      {
        deadLetters: {
          async reject() {
            throw new Error("SlowDown");
          },
        },
      },
    );
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
  });
});

describe("merge mode", () => {
  it("merges on the key columns the table property names, once per object", async () => {
    await ok(
      "CREATE TABLE ing.s.latest (id INT, day STRING, v INT) USING DELTA " +
        "TBLPROPERTIES ('silt.ingest.mergeKeys' = 'id, day')",
    );
    await put(
      "ingest/ing/s/latest/1.ndjson",
      '{"id":1,"day":"d1","v":10}\n{"id":2,"day":"d1","v":20}\n',
    );
    const { sink, rejected } = memorySink();
    await handleIngestBatch(
      silt.ctx,
      { Records: [eventBridgeRecord("ingest/ing/s/latest/1.ndjson")] },
      { deadLetters: sink },
    );
    await put("ingest/ing/s/latest/2.csv", "id,day,v\n1,d1,11\n1,d2,12\n");
    const again = eventBridgeRecord("ingest/ing/s/latest/2.csv");
    await handleIngestBatch(silt.ctx, { Records: [again] }, { deadLetters: sink });
    await handleIngestBatch(silt.ctx, { Records: [again] }, { deadLetters: sink });
    expect(rejected).toEqual([]);
    expect(await ok("SELECT * FROM ing.s.latest ORDER BY id, day").then((r) => r.rows)).toEqual([
      [1, "d1", 11],
      [1, "d2", 12],
      [2, "d1", 20],
    ]);
    const h = await history("ing.s.latest");
    expect(h.map((e) => e.operation)).toEqual(["MERGE", "MERGE", "CREATE TABLE"]);
    expect(h[0]!.metrics).toMatchObject({
      numTargetRowsUpdated: "1",
      numTargetRowsInserted: "1",
    });
  });

  it("falls back to one commit per object when two objects of a batch update the same key", async () => {
    await ok(
      "CREATE TABLE ing.s.cdc (id INT, v STRING) USING DELTA TBLPROPERTIES ('silt.ingest.mergeKeys' = 'id')",
    );
    await put("ingest/ing/s/cdc/a.csv", "id,v\n1,first\n2,two\n");
    await put("ingest/ing/s/cdc/b.csv", "id,v\n1,second\n");
    const { sink, rejected } = memorySink();
    const res = await handleIngestBatch(
      silt.ctx,
      {
        Records: [
          eventBridgeRecord("ingest/ing/s/cdc/a.csv"),
          eventBridgeRecord("ingest/ing/s/cdc/b.csv"),
        ],
      },
      { deadLetters: sink },
    );
    expect(res.batchItemFailures).toEqual([]);
    expect(rejected).toEqual([]);
    expect(await rows("ing.s.cdc")).toEqual([
      [1, "second"],
      [2, "two"],
    ]);
    expect((await history("ing.s.cdc")).map((e) => e.operation)).toEqual([
      "MERGE",
      "MERGE",
      "CREATE TABLE",
    ]);
  });
});
