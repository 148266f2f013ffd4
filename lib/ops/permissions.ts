/**
 * GRANT, REVOKE and SHOW GRANTS, in SQL and in the shape of Unity Catalog's permissions REST API
 * (GET / PATCH /permissions/{securable_type}/{full_name}), over one store (lib/catalog/grants.ts).
 *
 * 1. Resolve the object, checking USE on its containers (lib/auth/authorize.ts). Changing its
 *    privileges takes ownership of it or of its schema or catalog (Unity Catalog also lets holders
 *    of MANAGE do it; Silt has no MANAGE). Showing them takes the same, unless a caller asks
 *    about its own grants only.
 * 2. Validate every change before writing any: each principal, and each privilege known and
 *    applicable to the object's type (SELECT on a catalog is fine; USE CATALOG on a table is not).
 * 3. Write the changes, then answer with the object's grants as they now are.
 */
import { authorizePermissions, type SecurableName } from "../auth/authorize.ts";
import {
  bearsOn,
  checkPrincipal,
  parsePrivilege,
  restPrivilegeName,
  type SecurableType,
} from "../auth/privileges.ts";
import { qualifyNameParts, splitNameParts } from "../catalog/names.ts";
import type { SiltContext } from "../context.ts";
import { siltError } from "../errors.ts";
import type { ResultSet } from "./result-set.ts";

export const SECURABLE_TYPES: readonly SecurableType[] = ["catalog", "schema", "table"];

/** One principal's privileges on an object, as Unity Catalog's REST API lists them. */
export interface PrivilegeAssignment {
  principal: string;
  privileges: string[];
}

/** A requested change before validation: names as the caller wrote them. */
export interface PermissionChange {
  principal?: unknown;
  add?: unknown;
  remove?: unknown;
}

export const SHOW_GRANTS_COLUMNS = [
  { name: "principal", type: "string" },
  { name: "actionType", type: "string" },
  { name: "objectType", type: "string" },
  { name: "objectKey", type: "string" },
];

/** A securable's name from its parts, filling leading parts from the session's defaults. */
export function securableName(
  type: SecurableType,
  parts: readonly string[],
  defaults: { catalog?: string; schema?: string } = {},
): SecurableName {
  if (type === "table") return qualifyNameParts(parts, defaults);
  const depth = type === "catalog" ? 1 : 2;
  if (parts.length > depth || (type === "catalog" && parts.length === 0 && !defaults.catalog)) {
    throw siltError("INVALID_PARAMETER_VALUE:SECURABLE_NAME_PARTS", {
      type,
      allowedParts: type === "catalog" ? "one part" : "at most two parts (catalog.schema)",
      parts: JSON.stringify(parts.join(".")),
    });
  }
  if (type === "catalog") return { catalog: parts[0] ?? (defaults.catalog as string) };
  const q = qualifyNameParts([...parts, "_"], defaults);
  return { catalog: q.catalog, schema: q.schema };
}

/** The `{securable_type}/{full_name}` of the REST routes. */
export function securableFromPath(type: string, fullName: string): SecurableName {
  const t = SECURABLE_TYPES.find((s) => s === type.toLowerCase());
  if (t === undefined) {
    throw siltError("INVALID_PARAMETER_VALUE:UNKNOWN_SECURABLE_TYPE", {
      type: JSON.stringify(type),
    });
  }
  const parts = splitNameParts(fullName);
  const depth = SECURABLE_TYPES.indexOf(t) + 1;
  if (parts.length !== depth) {
    throw siltError("INVALID_PARAMETER_VALUE:FULL_NAME_PARTS", {
      securableType: t,
      depth,
      expected: ["catalog", "catalog.schema", "catalog.schema.table"][depth - 1],
      fullName: JSON.stringify(fullName),
    });
  }
  return securableName(t, parts);
}

/** Steps 1-3 for a list of changes (PATCH, GRANT, REVOKE). */
export async function updatePermissions(
  ctx: SiltContext,
  name: SecurableName,
  changes: readonly PermissionChange[],
): Promise<PrivilegeAssignment[]> {
  const reached = await authorizePermissions(ctx, name, { change: true });
  const type = reached.type;
  const fullName = reached.path[reached.path.length - 1].fullName;
  const privileges = (value: unknown, field: string): string[] => {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      throw siltError("INVALID_PARAMETER_VALUE:PRIVILEGES_NOT_LIST", { field });
    }
    return value.map((p) => parsePrivilege(String(p), type, fullName));
  };
  const valid = changes.map((c) => ({
    principal: checkPrincipal(c.principal),
    add: privileges(c.add, "add"),
    remove: privileges(c.remove, "remove"),
  }));
  await ctx.grants.update(reached.id, valid);
  return assignments(await ctx.grants.grantsOn(reached.id));
}

/** The grants made directly on an object (GET …/permissions), optionally for one principal. */
export async function getPermissions(
  ctx: SiltContext,
  name: SecurableName,
  principal?: string,
): Promise<PrivilegeAssignment[]> {
  const reached = await authorizePermissions(ctx, name, { change: false, principal });
  const all = assignments(await ctx.grants.grantsOn(reached.id));
  return principal === undefined ? all : all.filter((a) => a.principal === principal);
}

/**
 * SHOW GRANTS [principal] ON …: the object's owner (OWN), what was granted on it, and what was
 * granted on its schema and catalog that bears on it, with Databricks' columns.
 */
export async function showGrants(
  ctx: SiltContext,
  name: SecurableName,
  principal?: string,
): Promise<ResultSet> {
  const reached = await authorizePermissions(ctx, name, { change: false, principal });
  const levels = [...reached.path].reverse();
  const ids = [reached.table?.tableId, reached.schema?.id, reached.catalog.id].filter(
    (id): id is string => id !== undefined,
  );
  const grants = await Promise.all(ids.map((id) => ctx.grants.grantsOn(id)));
  const rows: string[][] = [];
  const target = levels[0];
  if (principal === undefined || principal === target.owner) {
    rows.push([target.owner, "OWN", target.type.toUpperCase(), target.fullName]);
  }
  levels.forEach((level, i) => {
    for (const [who, privileges] of [...grants[i]].sort(([a], [b]) => a.localeCompare(b))) {
      if (principal !== undefined && who !== principal) continue;
      for (const p of [...privileges].sort()) {
        if (i > 0 && !bearsOn(p, reached.type)) continue;
        rows.push([who, p, level.type.toUpperCase(), level.fullName]);
      }
    }
  });
  return { columns: SHOW_GRANTS_COLUMNS, rows };
}

function assignments(grants: Map<string, Set<string>>): PrivilegeAssignment[] {
  return [...grants]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([principal, privileges]) => ({
      principal,
      privileges: [...privileges].map(restPrivilegeName).sort(),
    }));
}
