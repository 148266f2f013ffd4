/**
 * Privileges granted on catalogs, schemas and tables (the rules are in lib/auth/privileges.ts),
 * kept in the catalog's DynamoDB table beside the entries they protect (through the catalog's item
 * store, lib/kv/item-store.ts).
 *
 * One item per securable object: pk "GRANTS#<object id>", sk "GRANTS", and one string-set
 * attribute per principal, named "p:<principal>", holding what was granted to that principal.
 *
 * - Keyed by the object's id, not its name: a grant can never apply to a later object of the same
 *   name (ids are never reused), even when a drop crashed before removing it, while CREATE OR
 *   REPLACE TABLE, which keeps the table id, keeps its grants, as in Unity Catalog.
 * - A check reads one item per level (catalog, schema, table) with GetItem, which every function
 *   already may call; no BatchGetItem or Query permission is needed.
 * - Granting ADDs to a set and revoking DELETEs from it in a single UpdateItem, so concurrent
 *   changes for different principals or privileges never lose one another; DynamoDB removes a set
 *   that becomes empty.
 */
import { attributeExists, type ItemStore } from "../kv/item-store.ts";

const SK = "GRANTS";
const PRINCIPAL_PREFIX = "p:";
const key = (objectId: string) => ({ pk: { S: `GRANTS#${objectId}` }, sk: { S: SK } });

/** principal -> privileges granted to it on one object. */
export type Grants = Map<string, Set<string>>;

export interface GrantChange {
  principal: string;
  add: readonly string[];
  remove: readonly string[];
}

export class GrantStore {
  /** `items`: the catalog table (CATALOG_TABLE_KEYS). */
  constructor(private readonly items: ItemStore) {}

  /** Everything granted on one object. */
  async grantsOn(objectId: string): Promise<Grants> {
    const item = await this.items.get(key(objectId));
    const grants: Grants = new Map();
    for (const [name, value] of Object.entries(item ?? {})) {
      if (name.startsWith(PRINCIPAL_PREFIX) && value.SS !== undefined) {
        grants.set(name.slice(PRINCIPAL_PREFIX.length), new Set(value.SS));
      }
    }
    return grants;
  }

  /**
   * Applies the changes to one object: every removal in one UpdateItem, then every addition in
   * another (one expression may not both ADD to and DELETE from the same attribute).
   */
  async update(objectId: string, changes: readonly GrantChange[]): Promise<void> {
    const merged = new Map<string, { add: Set<string>; remove: Set<string> }>();
    for (const change of changes) {
      const m = merged.get(change.principal) ?? { add: new Set(), remove: new Set() };
      for (const p of change.add) m.add.add(p);
      for (const p of change.remove) m.remove.add(p);
      merged.set(change.principal, m);
    }
    await this.apply(
      objectId,
      "DELETE",
      [...merged].map(([p, m]) => [p, m.remove]),
    );
    await this.apply(
      objectId,
      "ADD",
      [...merged].map(([p, m]) => [p, m.add]),
    );
  }

  /** Forgets every grant on an object that was dropped. */
  async removeAll(objectId: string): Promise<void> {
    await this.items.delete(key(objectId));
  }

  private async apply(
    objectId: string,
    verb: "ADD" | "DELETE",
    sets: [string, Set<string>][],
  ): Promise<void> {
    const nonEmpty = sets.filter(([, privileges]) => privileges.size > 0);
    if (nonEmpty.length === 0) return;
    const attributes = Object.fromEntries(
      nonEmpty.map(([principal, privileges]) => [
        `${PRINCIPAL_PREFIX}${principal}`,
        { SS: [...privileges] },
      ]),
    );
    // UpdateItem creates missing items; revoking from an object without grants must not, and
    // then has nothing to do (a false answer).
    await this.items.update(
      key(objectId),
      verb === "ADD" ? { add: attributes } : { delete: attributes },
      verb === "DELETE" ? attributeExists("pk") : undefined,
    );
  }
}
