/**
 * Privileges granted on catalogs, schemas and tables (the rules are in lib/auth/privileges.ts),
 * kept in the catalog's DynamoDB table beside the entries they protect.
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
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";

const SK = "GRANTS";
const PRINCIPAL_PREFIX = "p:";
const pk = (objectId: string) => `GRANTS#${objectId}`;

/** principal -> privileges granted to it on one object. */
export type Grants = Map<string, Set<string>>;

export interface GrantChange {
  principal: string;
  add: readonly string[];
  remove: readonly string[];
}

export class GrantStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /** Everything granted on one object. */
  async grantsOn(objectId: string): Promise<Grants> {
    const { Item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: { S: pk(objectId) }, sk: { S: SK } },
        ConsistentRead: true,
      }),
    );
    const grants: Grants = new Map();
    for (const [name, value] of Object.entries(Item ?? {})) {
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
    await this.client.send(
      new DeleteItemCommand({
        TableName: this.tableName,
        Key: { pk: { S: pk(objectId) }, sk: { S: SK } },
      }),
    );
  }

  private async apply(
    objectId: string,
    verb: "ADD" | "DELETE",
    sets: [string, Set<string>][],
  ): Promise<void> {
    const nonEmpty = sets.filter(([, privileges]) => privileges.size > 0);
    if (nonEmpty.length === 0) return;
    const names: Record<string, string> = {};
    const values: Record<string, AttributeValue> = {};
    const clauses = nonEmpty.map(([principal, privileges], i) => {
      names[`#p${i}`] = `${PRINCIPAL_PREFIX}${principal}`;
      values[`:p${i}`] = { SS: [...privileges] };
      return `#p${i} :p${i}`;
    });
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: { S: pk(objectId) }, sk: { S: SK } },
          UpdateExpression: `${verb} ${clauses.join(", ")}`,
          // UpdateItem creates missing items; revoking from an object without grants must not.
          ...(verb === "DELETE" ? { ConditionExpression: "attribute_exists(pk)" } : {}),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }
}
