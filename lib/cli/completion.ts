/**
 * Tab completion in the shell, from the Unity Catalog REST API Silt serves (what a user may see
 * is what their principal may list). The word under the cursor decides:
 *
 * - `c.s.` + prefix: the tables of schema c.s;
 * - `x.` + prefix: the schemas of catalog x, and the tables of schema x in the current catalog;
 * - a bare prefix: the catalogs, the schemas of the current catalog, the tables of the current
 *   schema, and the columns of the tables the statement so far names.
 * A name that cannot be listed (no such catalog, no privilege) offers nothing rather than fail.
 */
import type { Completer } from "node:readline";
import type { Connection } from "./connection.ts";
import type { SessionDefaults } from "./run-statement.ts";

const UC = "/api/2.1/unity-catalog";

/** The names a statement reads or writes: after FROM, JOIN, INTO, UPDATE, TABLE, DESCRIBE. */
const TABLE_REFERENCE = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE|DESCRIBE)\s+([\w`.]+)/gi;

export function completer(
  conn: Connection,
  defaults: SessionDefaults,
  pending: () => string,
): Completer {
  return ((line: string, callback: (err: null, result: [string[], string]) => void) => {
    const word = /[\w`.]*$/.exec(line)?.[0] ?? "";
    candidates(conn, defaults, word, `${pending()}\n${line}`).then(
      (names) => {
        const hits = [...new Set(names)].filter((n) => n.startsWith(word)).sort();
        callback(null, [hits, word]);
      },
      () => callback(null, [[], word]),
    );
  }) as unknown as Completer;
}

async function candidates(
  conn: Connection,
  defaults: SessionDefaults,
  word: string,
  statement: string,
): Promise<string[]> {
  const parts = word.split(".");
  const qualifier = parts.slice(0, -1).map(unquote);
  const prefix = parts.slice(0, -1).join(".");
  const under = (names: string[]) => names.map((n) => `${prefix}.${n}`);
  if (qualifier.length >= 2) {
    return under(await tables(conn, qualifier[0], qualifier[1]));
  }
  if (qualifier.length === 1) {
    const inCatalog = await schemas(conn, qualifier[0]);
    const inSchema =
      defaults.catalog === undefined ? [] : await tables(conn, defaults.catalog, qualifier[0]);
    return under([...inCatalog, ...inSchema]);
  }
  const found = await Promise.all([
    catalogs(conn),
    defaults.catalog === undefined ? [] : schemas(conn, defaults.catalog),
    defaults.catalog === undefined || defaults.schema === undefined
      ? []
      : tables(conn, defaults.catalog, defaults.schema),
    columnsOfReferences(conn, defaults, statement),
  ]);
  return found.flat();
}

const unquote = (part: string) => part.replace(/^`(.*)`$/, "$1").replaceAll("``", "`");

/** Names from one UC listing; nothing when it cannot be listed. */
async function listed(conn: Connection, route: string, key: string): Promise<string[]> {
  try {
    const body = (await conn.json("GET", route)) as Record<string, { name: string }[] | undefined>;
    return (body[key] ?? []).map((e) => e.name);
  } catch {
    return [];
  }
}

const catalogs = (conn: Connection) => listed(conn, `${UC}/catalogs`, "catalogs");

const schemas = (conn: Connection, catalog: string) =>
  listed(conn, `${UC}/schemas?catalog_name=${encodeURIComponent(catalog)}`, "schemas");

const tables = (conn: Connection, catalog: string, schema: string) =>
  listed(
    conn,
    `${UC}/tables?catalog_name=${encodeURIComponent(catalog)}&schema_name=${encodeURIComponent(schema)}`,
    "tables",
  );

async function columnsOfReferences(
  conn: Connection,
  defaults: SessionDefaults,
  statement: string,
): Promise<string[]> {
  const names = [...statement.matchAll(TABLE_REFERENCE)].map((m) => m[1].split(".").map(unquote));
  const full = names
    .map((n) => [
      ...(n.length < 3 ? [defaults.catalog] : []),
      ...(n.length < 2 ? [defaults.schema] : []),
      ...n,
    ])
    .filter((n): n is string[] => n.length === 3 && n.every((p) => p !== undefined));
  const columns = await Promise.all(
    full.map(async (n) => {
      try {
        const info = (await conn.json(
          "GET",
          `${UC}/tables/${encodeURIComponent(n.join("."))}`,
        )) as {
          columns?: { name: string }[];
        };
        return (info.columns ?? []).map((c) => c.name);
      } catch {
        return [];
      }
    }),
  );
  return columns.flat();
}
