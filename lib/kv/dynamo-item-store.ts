/**
 * The item store on one DynamoDB table: each operation is one GetItem, PutItem, UpdateItem,
 * DeleteItem or Query, with its condition compiled to an expression whose names and values are
 * all placeholders (several attribute names the stores use, such as `name`, `state`, `key` and
 * `status`, are reserved words). Also the one "create the table and wait until it is ACTIVE".
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  CreateTableCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateItemCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { siltError } from "../errors.ts";
import type {
  Condition,
  Item,
  ItemStore,
  Key,
  KeySchema,
  QueryInput,
  QueryPage,
  Update,
} from "./item-store.ts";

/** Placeholders for one request's expressions; only the used ones are sent (DynamoDB insists). */
class Expressions {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, AttributeValue> = {};
  private readonly byName = new Map<string, string>();

  name(attr: string): string {
    let placeholder = this.byName.get(attr);
    if (placeholder === undefined) {
      placeholder = `#n${this.byName.size}`;
      this.byName.set(attr, placeholder);
      this.names[placeholder] = attr;
    }
    return placeholder;
  }

  value(v: AttributeValue): string {
    const placeholder = `:v${Object.keys(this.values).length}`;
    this.values[placeholder] = v;
    return placeholder;
  }

  condition(c: Condition): string {
    switch (c.kind) {
      case "exists":
        return `attribute_exists(${this.name(c.attr)})`;
      case "notExists":
        return `attribute_not_exists(${this.name(c.attr)})`;
      case "compare":
        return `${this.name(c.attr)} ${c.op} ${this.value(c.value)}`;
      case "and":
      case "or":
        return `(${c.of.map((o) => this.condition(o)).join(c.kind === "and" ? " AND " : " OR ")})`;
    }
  }

  update(u: Update): string {
    const clauses: string[] = [];
    const set = Object.entries(u.set ?? {});
    if (set.length > 0) {
      clauses.push(`SET ${set.map(([a, v]) => `${this.name(a)} = ${this.value(v)}`).join(", ")}`);
    }
    if (u.remove !== undefined && u.remove.length > 0) {
      clauses.push(`REMOVE ${u.remove.map((a) => this.name(a)).join(", ")}`);
    }
    for (const verb of ["add", "delete"] as const) {
      const entries = Object.entries(u[verb] ?? {});
      if (entries.length > 0) {
        const list = entries.map(([a, v]) => `${this.name(a)} ${this.value(v)}`).join(", ");
        clauses.push(`${verb.toUpperCase()} ${list}`);
      }
    }
    return clauses.join(" ");
  }

  /** The placeholder maps for a request, omitted when empty. */
  maps() {
    return {
      ...(Object.keys(this.names).length > 0 ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length > 0 ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

export class DynamoItemStore implements ItemStore {
  constructor(
    private readonly client: DynamoDBClient,
    readonly tableName: string,
    readonly keySchema: KeySchema,
  ) {}

  async get(key: Key): Promise<Item | undefined> {
    const { Item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    return Item;
  }

  put(item: Item, condition?: Condition): Promise<boolean> {
    const x = new Expressions();
    const ConditionExpression = condition === undefined ? undefined : x.condition(condition);
    return this.conditional(
      new PutItemCommand({
        TableName: this.tableName,
        Item: item,
        ConditionExpression,
        ...x.maps(),
      }),
    );
  }

  update(key: Key, update: Update, condition?: Condition): Promise<boolean> {
    const x = new Expressions();
    const UpdateExpression = x.update(update);
    const ConditionExpression = condition === undefined ? undefined : x.condition(condition);
    return this.conditional(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression,
        ConditionExpression,
        ...x.maps(),
      }),
    );
  }

  delete(key: Key, condition?: Condition): Promise<boolean> {
    const x = new Expressions();
    const ConditionExpression = condition === undefined ? undefined : x.condition(condition);
    return this.conditional(
      new DeleteItemCommand({
        TableName: this.tableName,
        Key: key,
        ConditionExpression,
        ...x.maps(),
      }),
    );
  }

  async query(input: QueryInput): Promise<QueryPage> {
    const x = new Expressions();
    let keyCondition = `${x.name(this.keySchema.partitionKey)} = ${x.value(input.partition)}`;
    const sk = input.sortKey;
    if (sk !== undefined) {
      const sortKey = this.keySchema.sortKey;
      if (sortKey === undefined) {
        throw siltError("ITEM_STORE_NO_SORT_KEY", { tableName: this.tableName });
      }
      const name = x.name(sortKey.name);
      keyCondition +=
        sk.op === ">="
          ? ` AND ${name} >= ${x.value(sk.value)}`
          : ` AND ${name} BETWEEN ${x.value(sk.low)} AND ${x.value(sk.high)}`;
    }
    const FilterExpression = input.filter === undefined ? undefined : x.condition(input.filter);
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: keyCondition,
        FilterExpression,
        ...x.maps(),
        ScanIndexForward: input.descending !== true,
        Limit: input.limit,
        ExclusiveStartKey: input.startKey,
        ConsistentRead: true,
      }),
    );
    return out.LastEvaluatedKey === undefined
      ? { items: out.Items ?? [] }
      : { items: out.Items ?? [], lastKey: out.LastEvaluatedKey };
  }

  private async conditional(
    command: PutItemCommand | UpdateItemCommand | DeleteItemCommand,
  ): Promise<boolean> {
    try {
      await this.client.send(command as never);
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      // A client from another copy of the SDK throws an instance of its own class.
      if (err instanceof Error && err.name === "ConditionalCheckFailedException") return false;
      throw err;
    }
  }
}

/**
 * Creates a table with this key schema (on-demand) unless it exists, then waits until it is
 * ACTIVE. Safe to race: a concurrent creator's ResourceInUse counts as success. For local mode
 * and the tests; in AWS the CDK stack creates the tables.
 */
export async function ensureTable(
  client: DynamoDBClient,
  tableName: string,
  keySchema: KeySchema,
  options: { timeoutMs?: number } = {},
): Promise<void> {
  let exists = true;
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
    exists = false;
  }
  if (!exists) {
    const { partitionKey, sortKey } = keySchema;
    try {
      await client.send(
        new CreateTableCommand({
          TableName: tableName,
          AttributeDefinitions: [
            { AttributeName: partitionKey, AttributeType: "S" },
            ...(sortKey === undefined
              ? []
              : [{ AttributeName: sortKey.name, AttributeType: sortKey.type }]),
          ],
          KeySchema: [
            { AttributeName: partitionKey, KeyType: "HASH" },
            ...(sortKey === undefined
              ? []
              : [{ AttributeName: sortKey.name, KeyType: "RANGE" as const }]),
          ],
          BillingMode: "PAY_PER_REQUEST",
        }),
      );
    } catch (err) {
      if (!(err instanceof ResourceInUseException)) throw err;
    }
  }
  const timeoutMs = options.timeoutMs ?? 120_000;
  try {
    await waitUntilTableExists(
      { client, maxWaitTime: timeoutMs / 1000, minDelay: 0.025, maxDelay: 2 },
      { TableName: tableName },
    );
  } catch (err) {
    throw siltError("SILT_TABLE_NOT_ACTIVE", {
      tableName,
      timeoutMs,
      reason: err instanceof Error ? err.message : String(err),
    });
  }
}
