/**
 * Field-by-field request checks of the Unity Catalog routes (Silt's own routes declare their
 * requests in request-schemas.ts): each failure names the field and what was expected, so a
 * caller can fix the request without reading our source.
 */
import { siltError } from "../errors.ts";

export type Json = Record<string, unknown>;

export function asObject(body: unknown, what = "request body"): Json {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw siltError("INVALID_REQUEST:NOT_AN_OBJECT", { what });
  }
  return body as Json;
}

export function requiredString(body: Json, field: string): string {
  const v = body[field];
  if (typeof v !== "string" || v.length === 0) {
    throw siltError("INVALID_REQUEST:FIELD_REQUIRED_STRING", { field });
  }
  return v;
}

export function optionalString(body: Json, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw siltError("INVALID_REQUEST:FIELD_NOT_STRING", { field });
  return v;
}

export function optionalBoolean(body: Json, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  if (v === "true") return true;
  if (v === "false") return false;
  throw siltError("INVALID_REQUEST:FIELD_NOT_BOOLEAN", { field });
}

export function optionalStringMap(body: Json, field: string): Record<string, string> | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  const obj = asObject(v, `field '${field}'`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(obj)) {
    if (typeof val === "string") out[k] = val;
    else if (typeof val === "number" || typeof val === "boolean") out[k] = String(val);
    else throw siltError("INVALID_REQUEST:FIELD_ENTRY_NOT_STRING", { field, key: k });
  }
  return out;
}
