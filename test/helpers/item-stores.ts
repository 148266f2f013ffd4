/**
 * The two item-store backends (lib/kv), for store suites that run once on each with
 * `describe.each(itemStoreBackends())`: DynamoDB (dynalite in memory, or the endpoint
 * test/helpers/dynamo-emulator.ts is pointed at) and the in-memory store. Each backend hands out
 * fresh, empty tables; the DynamoDB one starts its emulator on first use and `close()` stops it.
 */
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { DynamoItemStore, ensureTable } from "../../lib/kv/dynamo-item-store.ts";
import type {
  Condition,
  Item,
  ItemStore,
  Key,
  KeySchema,
  QueryInput,
  Update,
} from "../../lib/kv/item-store.ts";
import { MemoryItemStore } from "../../lib/kv/memory-item-store.ts";
import { type DynamoHandle, startDynamo } from "./dynamo-emulator.ts";

export interface TestTable {
  store: ItemStore;
  /** How many items the table holds. */
  itemCount(): Promise<number>;
}

export interface ItemStoreBackend {
  name: "dynamodb" | "memory";
  /** A fresh, empty table with these keys; `base` names it (DynamoDB table names must be unique). */
  table(base: string, keys: KeySchema): Promise<TestTable>;
  /** The DynamoDB handle (dynamodb backend only), for DynamoDB-specific checks. */
  dynamo(): Promise<DynamoHandle>;
  close(): Promise<void>;
}

let counter = 0;

function dynamoBackend(): ItemStoreBackend {
  let started: Promise<DynamoHandle> | undefined;
  const dynamo = () => {
    started ??= startDynamo();
    return started;
  };
  return {
    name: "dynamodb",
    dynamo,
    async table(base, keys) {
      const handle = await dynamo();
      const tableName = handle.tableName(`${base}-${++counter}`);
      await ensureTable(handle.client, tableName, keys);
      return {
        store: new DynamoItemStore(handle.client, tableName, keys),
        async itemCount() {
          let count = 0;
          let startKey: Item | undefined;
          do {
            const page = await handle.client.send(
              new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey }),
            );
            count += page.Count ?? 0;
            startKey = page.LastEvaluatedKey;
          } while (startKey !== undefined);
          return count;
        },
      };
    },
    async close() {
      if (started !== undefined) await (await started).close();
      started = undefined;
    },
  };
}

function memoryBackend(): ItemStoreBackend {
  return {
    name: "memory",
    async dynamo() {
      throw new Error("the memory backend has no DynamoDB");
    },
    async table(_base, keys) {
      const store = new MemoryItemStore(keys);
      return { store, itemCount: async () => store.size };
    },
    async close() {},
  };
}

/** Both backends; call `close()` on each in afterAll. */
export const itemStoreBackends = (): [dynamodb: ItemStoreBackend, memory: ItemStoreBackend] => [
  dynamoBackend(),
  memoryBackend(),
];

export type StoreCall =
  | { op: "get"; key: Key }
  | { op: "put"; item: Item; condition?: Condition }
  | { op: "update"; key: Key; update: Update; condition?: Condition }
  | { op: "delete"; key: Key; condition?: Condition }
  | { op: "query"; input: QueryInput };

/**
 * A store that runs `hook` once, before the first call `matches` accepts, then passes every call
 * through: lets a test put a rival (or a crash) at an exact point of a store's operation.
 */
export function hookedItemStore(
  store: ItemStore,
  matches: (call: StoreCall) => boolean,
  hook: () => Promise<void>,
): ItemStore {
  let fired = false;
  const before = async (call: StoreCall) => {
    if (!fired && matches(call)) {
      fired = true;
      await hook();
    }
  };
  return {
    keySchema: store.keySchema,
    async get(key) {
      await before({ op: "get", key });
      return store.get(key);
    },
    async put(item, condition) {
      await before({ op: "put", item, condition });
      return store.put(item, condition);
    },
    async update(key, update, condition) {
      await before({ op: "update", key, update, condition });
      return store.update(key, update, condition);
    },
    async delete(key, condition) {
      await before({ op: "delete", key, condition });
      return store.delete(key, condition);
    },
    async query(input) {
      await before({ op: "query", input });
      return store.query(input);
    },
  };
}
