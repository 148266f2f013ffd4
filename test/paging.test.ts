/**
 * Big answers without big memory: /rows pages with max_rows and next_page_token (each page at
 * the version the first one read, whatever commits meanwhile), streams JSON, JSON lines and
 * Arrow, and where an answer must fit one buffered response (Lambda) refuses a bigger one with
 * RESULT_TOO_LARGE rather than failing in the platform.
 */
import * as arrow from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../lib/api/app.ts";
import { type SiltHarness, startSilt } from "./helpers/silt-harness.ts";

let silt: SiltHarness;
/** Names long enough that a page is far smaller than the whole answer, token included. */
const name = (id: number) => `n${id}-${"x".repeat(60)}`;
const ROWS = "/api/v1/tables/pg.s.t/rows";

const sql = async (statement: string) => {
  const res = await silt.call("POST", "/api/v1/sql", { statement });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

beforeAll(async () => {
  silt = await startSilt("local", { memory: true });
  await sql("CREATE CATALOG pg");
  await sql("CREATE SCHEMA pg.s");
  await sql("CREATE TABLE pg.s.t (id INT, name STRING) USING DELTA");
  await sql("CREATE TABLE pg.s.other (id INT, name STRING) USING DELTA");
  // Four files of three rows: pages end inside files and at their ends.
  for (let f = 0; f < 4; f++) {
    const values = [1, 2, 3].map((r) => `(${f * 3 + r}, '${name(f * 3 + r)}')`).join(", ");
    await sql(`INSERT INTO pg.s.t VALUES ${values}`);
  }
  await sql("INSERT INTO pg.s.other VALUES (1, 'x')");
});
afterAll(() => silt.close());

/** Every page of a read, following next_page_token. */
async function allPages(query: string) {
  const pages: { version: number; rows: unknown[][]; next_page_token?: string }[] = [];
  let token: string | undefined;
  do {
    const sep = query === "" ? "?" : "&";
    const url = `${ROWS}?${query}${token === undefined ? "" : `${sep}page_token=${encodeURIComponent(token)}`}`;
    const res = await silt.call("GET", url);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push(res.body);
    token = res.body.next_page_token;
  } while (token !== undefined && pages.length < 20);
  return pages;
}

const ids = (rows: unknown[][]) => rows.map((r) => r[0] as number).sort((a, b) => a - b);
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("paging /rows", () => {
  it("answers every row once over pages of max_rows, the last without a token", async () => {
    const pages = await allPages("max_rows=5");
    expect(pages.map((p) => p.rows.length)).toEqual([5, 5, 2]);
    expect(pages.at(-1)?.next_page_token).toBeUndefined();
    expect(ids(pages.flatMap((p) => p.rows))).toEqual(range(12));
  });

  it("ends on a file boundary without an empty page", async () => {
    const pages = await allPages("max_rows=6");
    expect(pages.map((p) => p.rows.length)).toEqual([6, 6]);
  });

  it("keeps reading the version the first page read while the table moves on", async () => {
    const first = await silt.call("GET", `${ROWS}?max_rows=4`);
    const version = first.body.version;
    await sql("INSERT INTO pg.s.t VALUES (13, 'n13')");
    const rest = await allPages(`max_rows=4`);
    expect(rest[0].version).toBe(version + 1);
    let token: string | undefined = first.body.next_page_token;
    const rows = [...first.body.rows];
    while (token !== undefined) {
      const res = await silt.call("POST", ROWS, { max_rows: 4, page_token: token });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.version).toBe(version);
      rows.push(...res.body.rows);
      token = res.body.next_page_token;
    }
    expect(ids(rows)).toEqual(range(12));
    await sql("DELETE FROM pg.s.t WHERE id = 13");
  });

  it("honours limit over all pages", async () => {
    const pages = await allPages("max_rows=5&limit=7");
    expect(pages.map((p) => p.rows.length)).toEqual([5, 2]);
    expect(pages[1].next_page_token).toBeUndefined();
  });

  it("pages Arrow answers with the token in a header", async () => {
    const res = await silt.call("GET", `${ROWS}?max_rows=7&format=arrow`);
    expect(res.status).toBe(200);
    const page = arrow.tableFromIPC(res.raw);
    expect(page.numRows).toBe(7);
    const token = res.headers.get("x-silt-next-page-token");
    expect(token).toBeTruthy();
    const next = await silt.call(
      "GET",
      `${ROWS}?max_rows=7&format=arrow&page_token=${encodeURIComponent(token ?? "")}`,
    );
    const rest = arrow.tableFromIPC(next.raw);
    expect(next.headers.get("x-silt-next-page-token")).toBeNull();
    const got = [...page.getChild("id")!.toArray(), ...rest.getChild("id")!.toArray()];
    expect(got.sort((a, b) => a - b)).toEqual(range(12));
  });

  describe("refuses a token that is not a real continuation, changing nothing", () => {
    const firstToken = async (query: string) =>
      (await silt.call("GET", `${ROWS}?${query}`)).body.next_page_token as string;

    it.each([
      ["an edited token", (t: string) => `${t[0] === "A" ? "B" : "A"}${t.slice(1)}`],
      ["a truncated token", (t: string) => t.slice(0, -3)],
      ["not a token at all", () => "hello"],
    ])("%s: MALFORMED", async (_, edit) => {
      const token = edit(await firstToken("max_rows=5"));
      const res = await silt.call(
        "GET",
        `${ROWS}?max_rows=5&page_token=${encodeURIComponent(token)}`,
      );
      expect(res.status).toBe(400);
      expect(res.body.error_class).toBe("INVALID_PAGE_TOKEN");
      expect(res.body.message).toContain("next_page_token exactly");
    });

    it("a token of another request: OTHER_REQUEST", async () => {
      const token = encodeURIComponent(await firstToken("max_rows=5"));
      for (const url of [
        `${ROWS}?max_rows=5&columns=id&page_token=${token}`,
        `${ROWS}?max_rows=5&limit=3&page_token=${token}`,
        `/api/v1/tables/pg.s.other/rows?max_rows=5&page_token=${token}`,
      ]) {
        const res = await silt.call("GET", url);
        expect(res.status, url).toBe(400);
        expect(res.body.error_class).toBe("INVALID_PAGE_TOKEN");
        expect(res.body.message).toContain("different request");
      }
    });

    it("max_rows below 1 and unknown formats", async () => {
      const zero = await silt.call("GET", `${ROWS}?max_rows=0`);
      expect(zero.status).toBe(400);
      expect(zero.body.message).toContain("max_rows");
      const format = await silt.call("GET", `${ROWS}?format=csv`);
      expect(format.status).toBe(400);
      expect(format.body.message).toContain("jsonl");
    });
  });
});

describe("paging /sql queries", () => {
  const query = async (body: Record<string, unknown>) => {
    const res = await silt.call("POST", "/api/v1/sql", body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { rows: unknown[][]; next_page_token?: string };
  };
  const pagesOf = async (statement: string, maxRows: number) => {
    const pages: unknown[][][] = [];
    let token: string | undefined;
    do {
      const page = await query({ statement, max_rows: maxRows, page_token: token });
      pages.push(page.rows);
      token = page.next_page_token;
    } while (token !== undefined && pages.length < 20);
    return pages;
  };

  it("pages an ordered query in order, the last page without a token", async () => {
    const pages = await pagesOf("SELECT id FROM pg.s.t ORDER BY id DESC", 5);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    expect(pages.flat(2)).toEqual(range(12).reverse());
  });

  it("answers every row once for an unordered query, at the first page's version", async () => {
    const statement = "SELECT id, length(name) AS n FROM pg.s.t WHERE id > 2";
    const first = await query({ statement, max_rows: 4 });
    await sql("INSERT INTO pg.s.t VALUES (20, 'late'), (21, 'later')");
    const rows = [...first.rows];
    let token = first.next_page_token;
    while (token !== undefined) {
      const page = await query({ statement, max_rows: 4, page_token: token });
      rows.push(...page.rows);
      token = page.next_page_token;
    }
    expect(ids(rows)).toEqual(range(12).slice(2));
    await sql("DELETE FROM pg.s.t WHERE id >= 20");
  });

  it("pages aggregates, and answers small results whole without a token", async () => {
    const statement = "SELECT id % 4 AS k, count(*) AS c FROM pg.s.t GROUP BY id % 4 ORDER BY k";
    expect((await pagesOf(statement, 3)).flat()).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    const whole = await query({ statement, max_rows: 10 });
    expect(whole.rows).toHaveLength(4);
    expect(whole.next_page_token).toBeUndefined();
  });

  it("refuses max_rows below 1 and an empty page_token, as the request schema declares them", async () => {
    for (const [field, value] of [
      ["max_rows", 0],
      ["page_token", ""],
    ] as const) {
      const res = await silt.call("POST", "/api/v1/sql", {
        statement: "SELECT id FROM pg.s.t",
        [field]: value,
      });
      expect(res.status, field).toBe(400);
      expect(res.body.error_class).toBe("INVALID_REQUEST");
      expect(res.body.message).toContain(`'${field}'`);
    }
  });

  it("refuses a token for another statement or one that writes, running nothing", async () => {
    const statement = "SELECT id FROM pg.s.t";
    const token = (await query({ statement, max_rows: 2 })).next_page_token;
    const before = await silt.call("GET", "/api/v1/tables/pg.s.t/history?limit=1");
    for (const other of ["SELECT id, name FROM pg.s.t", "DELETE FROM pg.s.t WHERE id = 1"]) {
      const res = await silt.call("POST", "/api/v1/sql", {
        statement: other,
        max_rows: 2,
        page_token: token,
      });
      expect(res.status, other).toBe(400);
      expect(res.body.error_class).toBe("INVALID_PAGE_TOKEN");
    }
    const after = await silt.call("GET", "/api/v1/tables/pg.s.t/history?limit=1");
    expect(after.body.rows[0][0]).toBe(before.body.rows[0][0]);
    expect(ids((await query({ statement })).rows)).toEqual(range(12));
  });
});

describe("streamed answers", () => {
  it("JSON lines: one object per row", async () => {
    const res = await silt.call("GET", `${ROWS}?format=jsonl`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = new TextDecoder().decode(res.raw).trimEnd().split("\n");
    const rows = lines.map((l) => JSON.parse(l));
    expect(rows.map((r) => r.id).sort((a, b) => a - b)).toEqual(range(12));
    expect(rows.find((r) => r.id === 4)).toEqual({ id: 4, name: name(4) });
  });

  it("an Arrow stream of every file's batches reads as one table", async () => {
    const res = await silt.call("GET", ROWS, undefined, {
      accept: "application/vnd.apache.arrow.stream",
    });
    const table = arrow.tableFromIPC(res.raw);
    expect(table.numRows).toBe(12);
    expect(table.schema.fields.map((f) => f.name)).toEqual(["id", "name"]);
  });
});

describe("where an answer is one buffered response (Lambda)", () => {
  const limited = (maxResponseBytes: number) => createApp(silt.ctx, { maxResponseBytes });
  const get = async (app: ReturnType<typeof createApp>, url: string) => {
    const res = await app.request(`http://silt.test${url}`);
    const type = res.headers.get("content-type") ?? "";
    const json = type.startsWith("application/json");
    // biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field.
    const body: any = json ? await res.json() : undefined;
    return { status: res.status, body };
  };

  /** What an answer takes in Lambda's payload: JSON as an escaped string, the rest as base64. */
  const payloadSize = async (query: string) => {
    const res = await silt.call("GET", `${ROWS}${query}`);
    const type = res.headers.get("content-type") ?? "";
    if (type.startsWith("application/json")) {
      return JSON.stringify(new TextDecoder().decode(res.raw)).length - 2;
    }
    return Math.ceil(res.raw.byteLength / 3) * 4;
  };

  it.each([
    ["JSON", ""],
    ["JSON lines", "?format=jsonl"],
    ["Arrow", "?format=arrow"],
  ])("%s past the limit: RESULT_TOO_LARGE telling to page", async (_, query) => {
    const size = await payloadSize(query);
    expect((await get(limited(size), `${ROWS}${query}`)).status).toBe(200);
    const res = await get(limited(size - 1), `${ROWS}${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error_class).toBe("RESULT_TOO_LARGE");
    expect(res.body.message).toMatch(
      new RegExp(`${size - 1} bytes.*max_rows \\(e\\.g\\. \\d+\\).*next_page_token`),
    );
  });

  it("a /sql answer past the limit: RESULT_TOO_LARGE; its pages are answered", async () => {
    const statement = "SELECT * FROM pg.s.t";
    const post = (app: ReturnType<typeof createApp>, body: unknown) =>
      app.request("http://silt.test/api/v1/sql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const size = JSON.stringify(JSON.stringify((await sql(statement)) as unknown)).length;
    const app = limited(Math.floor((size * 3) / 4));
    const whole = await post(app, { statement });
    expect(whole.status).toBe(400);
    expect(((await whole.json()) as { error_class: string }).error_class).toBe("RESULT_TOO_LARGE");
    const page = await post(app, { statement, max_rows: 3 });
    expect(page.status).toBe(200);
    expect(((await page.json()) as { rows: unknown[] }).rows).toHaveLength(3);
  });

  it("a page within the limit is answered", async () => {
    const limit = Math.floor(((await payloadSize("")) * 3) / 4);
    const res = await get(limited(limit), `${ROWS}?max_rows=3`);
    expect(res.status).toBe(200);
    expect(res.body.rows).toHaveLength(3);
    expect(res.body.next_page_token).toBeDefined();
  });

  it("counts the escaping a JSON body takes in Lambda's payload", async () => {
    const whole = await get(limited(1_000_000), ROWS);
    const bytes = JSON.stringify(whole.body).length;
    // The body fits unescaped, not once each quote is escaped.
    expect((await get(limited(bytes + 5), ROWS)).status).toBe(400);
    expect(
      (await get(limited(JSON.stringify(JSON.stringify(whole.body)).length), ROWS)).status,
    ).toBe(200);
  });
});
