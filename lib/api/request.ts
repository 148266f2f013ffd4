/**
 * Request-body checks shared by every route: each failure names the field and what was expected,
 * so a caller can fix the request without reading our source.
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

export function optionalInteger(body: Json, field: string, min = 0): number | undefined {
  const v = body[field];
  if (v === undefined || v === null || v === "") return undefined;
  const n = typeof v === "string" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min) {
    throw siltError("INVALID_REQUEST:FIELD_NOT_INTEGER", { field, min });
  }
  return n;
}

export function optionalStringArray(body: Json, field: string): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string")
    return v
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
    throw siltError("INVALID_REQUEST:FIELD_NOT_STRINGS", { field });
  }
  return v as string[];
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
