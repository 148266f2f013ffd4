/**
 * Unity Catalog's privilege model as pure rules, without I/O: which privileges exist and where
 * they apply, how a grant on a container reaches what is inside it, what ownership confers, and
 * the errors a caller sees when a privilege is missing.
 *
 * - A privilege granted on a catalog or schema is inherited by everything in it, now and later:
 *   SELECT on a schema is SELECT on each of its tables.
 * - ALL PRIVILEGES stands for every privilege that applies to the object it is granted on (and so,
 *   through inheritance, to those below it). It is stored as granted, so REVOKE ALL PRIVILEGES
 *   undoes it and REVOKE SELECT does not carve SELECT out of it (as in Unity Catalog).
 * - An owner has every privilege on what it owns, but ownership is not inherited: a schema's owner
 *   reads a table it does not own only after granting itself SELECT, which it may, because owners
 *   of an object or of its containers manage the object's privileges.
 * - USE CATALOG and USE SCHEMA gate what is inside: without them nothing below is reachable,
 *   whatever else is granted there.
 * - Grants to the group `account users` apply to every authenticated caller.
 */
import { type SiltError, siltError } from "../errors.ts";

export const PRIVILEGES = [
  "USE CATALOG",
  "USE SCHEMA",
  "CREATE SCHEMA",
  "CREATE TABLE",
  "SELECT",
  "MODIFY",
] as const;
export type Privilege = (typeof PRIVILEGES)[number];
export const ALL_PRIVILEGES = "ALL PRIVILEGES";
export type Grantable = Privilege | typeof ALL_PRIVILEGES;

/** The group every authenticated caller belongs to (Databricks' name for it). */
export const ACCOUNT_USERS = "account users";

export type SecurableType = "catalog" | "schema" | "table";

const APPLICABLE: Record<SecurableType, readonly Privilege[]> = {
  catalog: PRIVILEGES,
  schema: ["USE SCHEMA", "CREATE TABLE", "SELECT", "MODIFY"],
  table: ["SELECT", "MODIFY"],
};

const KIND: Record<SecurableType, string> = {
  catalog: "Catalog",
  schema: "Schema",
  table: "Table",
};

/** One object on the way down to a securable, as the caller sees it. */
export interface Level {
  type: SecurableType;
  /** Dotted full name, as Unity Catalog shows it in messages: `main.sales.orders`. */
  fullName: string;
  owner: string;
  /** What was granted on this object to the caller or to `account users`. */
  granted: ReadonlySet<string>;
}

/** catalog, then schema, then table, as far down as the securable is. */
export type SecurablePath = readonly Level[];

const last = (path: SecurablePath): Level => path[path.length - 1];

/** The privileges `principal` holds on the last object of `path`. */
export function effectivePrivileges(principal: string, path: SecurablePath): Set<Privilege> {
  const target = last(path);
  const applicable = APPLICABLE[target.type];
  const held = new Set<Privilege>(target.owner === principal ? applicable : []);
  for (const level of path) {
    for (const granted of level.granted) {
      const expanded = granted === ALL_PRIVILEGES ? APPLICABLE[level.type] : [granted as Privilege];
      for (const p of expanded) if (applicable.includes(p)) held.add(p);
    }
  }
  return held;
}

/**
 * Whether a grant of `privilege` on a container bears on an object of type `target` inside it:
 * it is inherited there, or it is the USE privilege the object is reached through.
 */
export function bearsOn(privilege: string, target: SecurableType): boolean {
  return (
    privilege === ALL_PRIVILEGES ||
    privilege === "USE CATALOG" ||
    privilege === "USE SCHEMA" ||
    APPLICABLE[target].includes(privilege as Privilege)
  );
}

/** Owners of an object or of a container above it may drop it and manage its privileges. */
export const ownsAny = (principal: string, path: SecurablePath): boolean =>
  path.some((level) => level.owner === principal);

/** Throws INSUFFICIENT_PERMISSIONS unless `principal` holds every one of `privileges`. */
export function requirePrivileges(
  principal: string,
  path: SecurablePath,
  ...privileges: Privilege[]
): void {
  const held = effectivePrivileges(principal, path);
  for (const p of privileges) {
    if (!held.has(p)) throw insufficientPrivileges(principal, p, last(path));
  }
}

/** Throws unless `principal` owns the object or one of its containers. */
export function requireOwnership(principal: string, path: SecurablePath, action: string): void {
  if (ownsAny(principal, path)) return;
  const target = last(path);
  // "its owner or the owner of its schema or the owner of its catalog"
  const containers = path.slice(0, -1).map((level) => level.type);
  const owners = ["its owner", ...containers.reverse().map((type) => `its ${type}`)];
  throw siltError("INSUFFICIENT_PERMISSIONS:NOT_OWNER", {
    principal,
    securable: KIND[target.type],
    fullName: target.fullName,
    owners: owners.join(" or the owner of "),
    action,
  });
}

/** Unity Catalog's message ("User … does not have SELECT on Table 'c.s.t'.") plus the remedy. */
export function insufficientPrivileges(
  principal: string,
  privilege: Privilege,
  target: Level,
): SiltError {
  const kind = KIND[target.type];
  return siltError("INSUFFICIENT_PERMISSIONS:MISSING_PRIVILEGE", {
    principal,
    privilege,
    securable: kind,
    fullName: target.fullName,
    securableKeyword: kind.toUpperCase(),
  });
}

/**
 * A privilege as SQL (`USE CATALOG`, `ALL PRIVILEGES`, `ALL`) or Unity Catalog's REST API
 * (`USE_CATALOG`, `ALL_PRIVILEGES`) names it, checked against what `type` accepts.
 */
export function parsePrivilege(text: string, type: SecurableType, fullName: string): Grantable {
  const name = text
    .trim()
    .toUpperCase()
    .replace(/[_\s]+/g, " ");
  if (name === "ALL" || name === ALL_PRIVILEGES) return ALL_PRIVILEGES;
  const privilege = PRIVILEGES.find((p) => p === name);
  if (privilege === undefined) {
    throw siltError("INVALID_PARAMETER_VALUE:UNKNOWN_PRIVILEGE", {
      text: JSON.stringify(text),
      privileges: [...PRIVILEGES, ALL_PRIVILEGES].join(", "),
    });
  }
  if (!APPLICABLE[type].includes(privilege)) {
    throw siltError("INVALID_PARAMETER_VALUE:PRIVILEGE_NOT_APPLICABLE", {
      privilege,
      securable: KIND[type],
      fullName,
      type,
      privileges: [...APPLICABLE[type], ALL_PRIVILEGES].join(", "),
    });
  }
  return privilege;
}

/** The name Unity Catalog's REST API uses for a privilege: `USE_CATALOG`. */
export const restPrivilegeName = (p: string): string => p.replaceAll(" ", "_");

/** Principals are opaque strings (an IAM ARN, a JWT subject, a group name); they must be sane. */
export function checkPrincipal(principal: unknown): string {
  if (
    typeof principal !== "string" ||
    principal.trim() === "" ||
    principal.length > 512 ||
    /\p{Cc}/u.test(principal)
  ) {
    throw siltError("INVALID_PARAMETER_VALUE:PRINCIPAL", {
      principal: JSON.stringify(principal),
    });
  }
  return principal;
}

export const securableKind = (type: SecurableType): string => KIND[type];
