/**
 * Request handling shared by the Unity Catalog routes: bodies (including the legacy commits
 * API's GET with a JSON body), list pagination, and integer fields.
 */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import type { QualifiedName } from "../../catalog/names.ts";
import { siltError } from "../../errors.ts";
import { nearestNames } from "../../values/did-you-mean.ts";
import { type Env, jsonBody } from "../http.ts";
import { asObject, type Json } from "../request.ts";

/**
 * The JSON body of a GET. Fetch's Request cannot carry one, so the servers keep it aside: the
 * local server leaves the Node request unread (`incoming`), and the Lambda adapter moves the
 * event's body to `getBody` (lib/runtime/lambda.ts) before Hono builds the request.
 */
export async function getRequestBody(c: Context<Env>): Promise<Json> {
  const bindings = c.env as
    | { incoming?: IncomingMessage; event?: { getBody?: string } }
    | undefined;
  let text: string | undefined;
  const incoming = bindings?.incoming;
  if (incoming !== undefined && !incoming.readableEnded) {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    text = Buffer.concat(chunks).toString("utf8");
  } else if (typeof bindings?.event?.getBody === "string") {
    text = bindings.event.getBody;
  }
  if (text === undefined || text.trim() === "") return c.req.query() as Json;
  try {
    return asObject(JSON.parse(text));
  } catch (err) {
    throw siltError("MALFORMED_REQUEST:BODY_NOT_JSON", { message: (err as Error).message });
  }
}

/** The JSON body of a request, refusing fields outside `known`. */
export async function knownBody(c: Context<Env>, known: readonly string[]): Promise<Json> {
  const body = await jsonBody(c);
  onlyKnownFields(body, known, `the body of ${c.req.method} ${c.req.path}`);
  return body;
}

/** A qualified name as the parts operations take (a name given as text would be re-parsed). */
export const partsOf = (qn: QualifiedName): string[] => [qn.catalog, qn.schema, qn.table];

export function requiredInteger(body: Json, field: string, min = 0): number {
  const v = body[field];
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < min) {
    throw siltError("INVALID_PARAMETER_VALUE:FIELD_NOT_INTEGER", { field, min });
  }
  return n;
}

export function optionalInteger(body: Json, field: string, min = 0): number | undefined {
  return body[field] === undefined || body[field] === null || body[field] === ""
    ? undefined
    : requiredInteger(body, field, min);
}

/** Entries per page when a client asks for the server's page size (`max_results=0`). */
const SERVER_PAGE = 1000;

/**
 * One page of a name-ordered list, as Unity Catalog pages: `max_results` absent lists all, 0
 * asks for the server's page size; `page_token` is the opaque token of the previous page.
 */
export function paginate<T>(
  items: T[],
  nameOf: (item: T) => string,
  query: Json,
): { page: T[]; nextPageToken: string | null } {
  const max = optionalInteger(query, "max_results");
  const token = typeof query.page_token === "string" ? query.page_token : undefined;
  const after = token ? Buffer.from(token, "base64url").toString("utf8") : undefined;
  const sorted = [...items].sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : 1));
  const rest = after === undefined ? sorted : sorted.filter((i) => nameOf(i) > after);
  const size = max === undefined ? rest.length : max === 0 ? SERVER_PAGE : max;
  const page = rest.slice(0, size);
  const last = page.at(-1);
  return {
    page,
    nextPageToken:
      rest.length > size && last !== undefined
        ? Buffer.from(nameOf(last), "utf8").toString("base64url")
        : null,
  };
}

/**
 * Refuses fields a route does not know (a typo must never widen an operation: `max_result`
 * would otherwise list everything), naming the nearest known one. The lists are Unity Catalog's
 * request shapes (all.yaml, delta.yaml), so what real clients send passes.
 */
export function onlyKnownFields(body: Json, known: readonly string[], where: string): void {
  for (const field of Object.keys(body)) {
    if (known.includes(field)) continue;
    const [nearest] = nearestNames(field, known, 1);
    throw siltError("INVALID_PARAMETER_VALUE:UNKNOWN_FIELD", {
      field,
      where,
      suggestion: nearest === undefined ? "" : `; did you mean '${nearest}'`,
      known: known.join(", "),
    });
  }
}

/** onlyKnownFields for the query string. */
export function onlyKnownParams(c: Context<Env>, known: readonly string[]): Json {
  const query = c.req.query() as Json;
  onlyKnownFields(query, known, `the query of ${c.req.method} ${c.req.path}`);
  return query;
}
