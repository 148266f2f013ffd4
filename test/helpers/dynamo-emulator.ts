/**
 * DynamoDB for tests.
 *
 * 1. By default start dynalite in memory on 127.0.0.1:0 (tables ACTIVE at once) and point an SDK
 *    client with dummy credentials at it.
 * 2. When `SILT_TEST_DYNAMO=external` or `AWS_ENDPOINT_URL_DYNAMODB` is set, use that endpoint (or
 *    real AWS from the standard environment) instead; table names then get a random suffix so
 *    parallel runs never share a table, and `close()` deletes the tables it named.
 * 3. `close()` destroys the client first: its keep-alive sockets would otherwise hold the HTTP
 *    server open until they time out.
 */
import { randomUUID } from "node:crypto";
import {
  DeleteTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from "@aws-sdk/client-dynamodb";
import { startEmbeddedDynamo } from "../../lib/runtime/embedded-dynamo.ts";

export interface DynamoHandle {
  /** Endpoint URL (the regional AWS one when testing against real AWS). */
  endpoint: string;
  client: DynamoDBClient;
  /** True when talking to something other than the in-process emulator. */
  external: boolean;
  /** A table name for this run: `base` in memory, `base-<random>` against a shared service. */
  tableName(base: string): string;
  close(): Promise<void>;
}

const DUMMY_CREDENTIALS = { accessKeyId: "test", secretAccessKey: "test" };

export async function startDynamo(): Promise<DynamoHandle> {
  const externalEndpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB || undefined;
  if (process.env.SILT_TEST_DYNAMO === "external" || externalEndpoint !== undefined) {
    return startExternal(externalEndpoint);
  }

  const { endpoint, close } = await startEmbeddedDynamo();
  const client = new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: DUMMY_CREDENTIALS,
  });
  return {
    endpoint,
    client,
    external: false,
    tableName: (base) => base,
    async close() {
      client.destroy();
      await close();
    },
  };
}

function startExternal(endpoint: string | undefined): DynamoHandle {
  const region = process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || "us-east-1";
  // An emulator behind an explicit endpoint accepts any key pair; real credentials win when set.
  const needsDummy =
    endpoint !== undefined && !process.env.AWS_ACCESS_KEY_ID && !process.env.AWS_PROFILE;
  const client = new DynamoDBClient({
    region,
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(needsDummy ? { credentials: DUMMY_CREDENTIALS } : {}),
  });
  const named: string[] = [];
  return {
    endpoint: endpoint ?? `https://dynamodb.${region}.amazonaws.com`,
    client,
    external: true,
    tableName(base) {
      const name = `${base}-${randomUUID().slice(0, 8)}`;
      named.push(name);
      return name;
    },
    async close() {
      for (const TableName of named) {
        try {
          await client.send(new DeleteTableCommand({ TableName }));
        } catch (err) {
          if (!(err instanceof ResourceNotFoundException)) throw err;
        }
      }
      client.destroy();
    },
  };
}
