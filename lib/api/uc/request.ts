/**
 * Request handling shared by the Unity Catalog routes: bodies (including the legacy commits
 * API's GET with a JSON body), list pagination, and integer fields.
 */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import type { QualifiedName } from "../../catalog/names.ts";
import { badRequest } from "../../errors.ts";
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
    throw badRequest(
      "MALFORMED_REQUEST",
      `The request body is not valid JSON: ${(err as Error).message}`,
    );
  }
}

export { jsonBody };

/** A qualified name as the parts operations take (a name given as text would be re-parsed). */
export const partsOf = (qn: QualifiedName): string[] => [qn.catalog, qn.schema, qn.table];

export function requiredInteger(body: Json, field: string, min = 0): number {
  const v = body[field];
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < min) {
    throw badRequest("INVALID_PARAMETER_VALUE", `Field '${field}' must be an integer >= ${min}.`);
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
  query: Record<string, string | undefined>,
): { page: T[]; nextPageToken: string | null } {
  const max = optionalInteger(query, "max_results");
  const token = query.page_token;
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
