/**
 * The CDK stack, synthesized in-process exactly as `npx cdk synth` builds it (same cdk.json
 * context, same infra/silt-app.ts composition, cdk-nag included), with the functions really
 * bundled by the local esbuild. Bundling happens once, in beforeAll, and every check below reads
 * that one synthesized template and cloud assembly; the JWT variant skips bundling, which is what
 * the CDK CLI does for stacks it is not deploying.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { App, Aspects, Stack, aws_s3 as s3 } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSiltApp } from "../infra/silt-app.ts";
import type { PipelineFunction, SiltStack } from "../infra/silt-stack.ts";
import { createApp } from "../lib/api/app.ts";
import { OPERATIONS, type Operation } from "../lib/api/operations.ts";
import { readSessionPolicy, readWriteSessionPolicy } from "../lib/auth/credentials.ts";
import type { SiltContext } from "../lib/context.ts";

const ROOT = join(import.meta.dirname, "..");
const CDK_JSON = JSON.parse(readFileSync(join(ROOT, "cdk.json"), "utf8")) as {
  app: string;
  context: Record<string, unknown>;
};
const GLUE_SOURCE = createRequire(import.meta.url).resolve("parquet-wasm/node");
const WASM_SOURCE = join(dirname(GLUE_SOURCE), "parquet_wasm_bg.wasm");

type Json = Record<string, unknown>;
type CfnResource = { Type: string; Properties: Json; DeletionPolicy?: string } & Json;

const outdirs: string[] = [];

/** The functions outside the HTTP API (functions/ingest-enqueue.ts, ingest.ts, maintenance.ts). */
const PIPELINE: PipelineFunction[] = ["ingest-enqueue", "ingest", "maintenance"];
type AnyFunction = Operation | PipelineFunction;
const ALL_FUNCTIONS: AnyFunction[] = [...OPERATIONS, ...PIPELINE];

/** An App configured like the CLI's: cdk.json context plus the given overrides. */
function cliLikeApp(context: Record<string, unknown> = {}): App {
  const outdir = mkdtempSync(join(tmpdir(), "silt-cdk-"));
  outdirs.push(outdir);
  return new App({ outdir, context: { ...CDK_JSON.context, ...context } });
}

let stack: SiltStack;
let template: Template;
let resources: Record<string, CfnResource>;
let outdir: string;
let bundleMs = 0;
let synthMs = 0;

beforeAll(() => {
  const app = cliLikeApp();
  outdir = app.outdir;
  const t0 = performance.now();
  // NodejsFunction bundles while the stack is constructed.
  stack = defineSiltApp(app);
  const t1 = performance.now();
  template = Template.fromStack(stack);
  app.synth();
  const t2 = performance.now();
  bundleMs = t1 - t0;
  synthMs = t2 - t1;
  resources = template.toJSON().Resources as Record<string, CfnResource>;
  console.info(
    `infra: constructing the stack with ${ALL_FUNCTIONS.length} local esbuild bundles took ${bundleMs.toFixed(0)} ms, ` +
      `synthesis and cdk-nag ${synthMs.toFixed(0)} ms`,
  );
}, 300_000);

afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Helpers over the synthesized template

const logicalId = (construct: { node: { defaultChild?: unknown } }): string =>
  stack.getLogicalId(construct.node.defaultChild as never);

const fnOf = (name: AnyFunction) =>
  (stack.functions as Record<string, SiltStack["functions"][Operation]>)[name] ??
  stack.pipelineFunctions[name as PipelineFunction];
const roleIdOf = (name: AnyFunction) =>
  stack.getLogicalId(fnOf(name).role?.node.defaultChild as never);

const ofType = (type: string): [string, CfnResource][] =>
  Object.entries(resources).filter(([, r]) => r.Type === type);

const props = (id: string): Json => {
  const r = resources[id];
  if (r === undefined) throw new Error(`no resource ${id}`);
  return r.Properties ?? {};
};

/** The logical id a `Ref` or `Fn::GetAtt` points at. */
function refTarget(value: unknown): string | undefined {
  const v = value as Json;
  if (typeof v?.Ref === "string") return v.Ref;
  const getAtt = v?.["Fn::GetAtt"];
  if (Array.isArray(getAtt)) return getAtt[0] as string;
  return undefined;
}

/**
 * A policy resource as readable text: `bucket`, `bucket/tables/*`, `table:commits`,
 * `logs:<op>`, so expectations name what a function touches rather than logical ids.
 */
function describeResource(resource: unknown): string {
  const names = new Map<string, string>([
    [logicalId(stack.bucket), "bucket"],
    [logicalId(stack.commitsTable), "table:commits"],
    [logicalId(stack.catalogTable), "table:catalog"],
    [logicalId(stack.idempotencyTable), "table:idempotency"],
    [logicalId(stack.ingestQueue), "queue:ingest"],
    [logicalId(stack.ingestDeadLetterQueue), "queue:ingest-dead-letters"],
    [logicalId(stack.ingestEventsDeadLetterQueue), "queue:events-dead-letters"],
    [logicalId(stack.rejectedFilesQueue), "queue:rejected-files"],
    [logicalId(stack.tableAccessRole), "role:table-access"],
    [logicalId(stack.tableWriteRole), "role:table-write"],
  ]);
  for (const name of ALL_FUNCTIONS) {
    const fn = fnOf(name);
    names.set(stack.getLogicalId(fn.logGroup.node.defaultChild as never), `logs:${name}`);
  }
  const direct = refTarget(resource);
  if (direct !== undefined) return names.get(direct) ?? direct;
  const join = (resource as Json)["Fn::Join"] as [string, unknown[]] | undefined;
  if (join !== undefined) {
    return join[1].map((p) => (typeof p === "string" ? p : describeResource(p))).join(join[0]);
  }
  return JSON.stringify(resource);
}

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
  NotAction?: unknown;
  NotResource?: unknown;
}

/** All statements of the identity policies attached to a function's role. */
function roleStatements(op: AnyFunction): Statement[] {
  const roleId = roleIdOf(op);
  const attached = ofType("AWS::IAM::Policy").filter(([, r]) =>
    ((r.Properties.Roles as unknown[]) ?? []).some((ref) => refTarget(ref) === roleId),
  );
  return attached.flatMap(
    ([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
  );
}

/** resource -> sorted actions, the shape the expectations below are written in. */
function permissions(op: AnyFunction): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of roleStatements(op)) {
    const actions = Array.isArray(s.Action) ? s.Action : [s.Action];
    const targets = Array.isArray(s.Resource) ? s.Resource : [s.Resource];
    for (const target of targets) {
      const key = describeResource(target);
      out[key] = [...new Set([...(out[key] ?? []), ...actions])].sort();
    }
  }
  return out;
}

/** Routes of the synthesized API as "METHOD /path" -> operation whose function serves it. */
function apiRoutes(): Map<string, Operation> {
  const fnToOp = new Map(OPERATIONS.map((op) => [logicalId(stack.functions[op]), op]));
  const routes = new Map<string, Operation>();
  for (const [, route] of ofType("AWS::ApiGatewayV2::Route")) {
    const p = route.Properties as Json;
    const target = (p.Target as Json)["Fn::Join"] as [string, unknown[]];
    const integrationId = refTarget(target[1][1]);
    expect(target[1][0]).toBe("integrations/");
    const integration = props(integrationId as string);
    const op = fnToOp.get(refTarget(integration.IntegrationUri) as string);
    if (op === undefined) throw new Error(`route ${p.RouteKey} targets no Silt function`);
    routes.set(p.RouteKey as string, op);
  }
  return routes;
}

// ---------------------------------------------------------------------------------------------

describe("cdk.json and the app entry", () => {
  it("runs infra/app.ts with tsx, so `npx cdk synth` builds this same stack", () => {
    expect(CDK_JSON.app).toBe("npx tsx infra/app.ts");
    expect(existsSync(join(ROOT, "infra", "app.ts"))).toBe(true);
  });
});

describe("data bucket", () => {
  const dataBucket = () => props(logicalId(stack.bucket));

  it("blocks public access, encrypts with S3-managed keys, disables ACLs, keeps no versions", () => {
    const p = dataBucket();
    expect(p.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(p.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [
        { ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } },
      ],
    });
    expect(p.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: "BucketOwnerEnforced" }] });
    expect(p.AccessControl).toBeUndefined();
    expect(p.VersioningConfiguration).toBeUndefined();
  });

  it("aborts incomplete multipart uploads and logs access to a separate bucket", () => {
    const p = dataBucket();
    expect(p.LifecycleConfiguration).toEqual({
      Rules: [
        {
          Id: "abort-incomplete-multipart-uploads",
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          Status: "Enabled",
        },
      ],
    });
    const logging = p.LoggingConfiguration as Json;
    const logBucketId = refTarget(logging.DestinationBucketName) as string;
    expect(logBucketId).not.toBe(logicalId(stack.bucket));
    expect(logging.LogFilePrefix).toBe("data-bucket/");
    expect(props(logBucketId).PublicAccessBlockConfiguration).toEqual(
      p.PublicAccessBlockConfiguration,
    );
  });

  it("is retained when the stack is deleted", () => {
    const r = resources[logicalId(stack.bucket)];
    expect(r.DeletionPolicy).toBe("Retain");
    expect(r.UpdateReplacePolicy).toBe("Retain");
  });

  it("has a bucket policy that denies non-TLS and pre-TLS-1.2 requests", () => {
    const bucketId = logicalId(stack.bucket);
    const [[, policy]] = ofType("AWS::S3::BucketPolicy").filter(
      ([, r]) => refTarget(r.Properties.Bucket) === bucketId,
    );
    const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    const bothArns = [
      { "Fn::GetAtt": [bucketId, "Arn"] },
      { "Fn::Join": ["", [{ "Fn::GetAtt": [bucketId, "Arn"] }, "/*"]] },
    ];
    expect(statements).toContainEqual({
      Effect: "Deny",
      Principal: { AWS: "*" },
      Action: "s3:*",
      Resource: bothArns,
      Condition: { Bool: { "aws:SecureTransport": "false" } },
    });
    expect(statements).toContainEqual({
      Effect: "Deny",
      Principal: { AWS: "*" },
      Action: "s3:*",
      Resource: bothArns,
      Condition: { NumericLessThan: { "s3:TlsVersion": 1.2 } },
    });
  });

  it("lets only the function roles, and the table-write role's sessions, write under tables/", () => {
    const bucketId = logicalId(stack.bucket);
    const [[, policy]] = ofType("AWS::S3::BucketPolicy").filter(
      ([, r]) => refTarget(r.Properties.Bucket) === bucketId,
    );
    const statements = (policy.Properties.PolicyDocument as { Statement: (Statement & Json)[] })
      .Statement;
    const guard = (sid: string) => {
      const st = statements.find((s) => s.Sid === sid);
      expect(st, sid).toBeDefined();
      expect(st?.Effect).toBe("Deny");
      expect(st?.Principal).toEqual({ AWS: "*" });
      expect(describeResource(st?.Resource)).toBe("bucket/tables/*");
      const condition = (st as Json).Condition as {
        ArnNotEquals: { "aws:PrincipalArn": unknown[] };
      };
      expect(Object.keys((st as Json).Condition as Json)).toEqual(["ArnNotEquals"]);
      return {
        actions: [st?.Action].flat(),
        allowed: condition.ArnNotEquals["aws:PrincipalArn"].map(refTarget).sort(),
      };
    };
    // The enqueue function touches no table, so it is not among them; nor are the permissions
    // and credentials functions, nor the table-access role whose sessions readers get.
    const tableOps = OPERATIONS.filter((op) => op !== "permissions" && op !== "credentials");
    const roles = [...tableOps, "ingest", "maintenance"].map((op) => roleIdOf(op as AnyFunction));
    // Puts: Silt's functions and the table-write role (READ_WRITE credentials, whose session
    // policy narrows each to one table).
    expect(guard("OnlySiltWritesTables")).toEqual({
      actions: ["s3:PutObject"],
      allowed: [...roles, logicalId(stack.tableWriteRole)].sort(),
    });
    // Deletes: Silt's functions alone.
    expect(guard("OnlySiltFunctionsDeleteTables")).toEqual({
      actions: ["s3:DeleteObject"],
      allowed: [...roles].sort(),
    });
    // No other statement allows or denies object writes under tables/.
    const writes = statements.filter((s) =>
      [s.Action].flat().some((a) => ["s3:PutObject", "s3:DeleteObject"].includes(a as string)),
    );
    expect(writes.map((s) => s.Sid).sort()).toEqual([
      "OnlySiltFunctionsDeleteTables",
      "OnlySiltWritesTables",
    ]);
  });
});

describe("DynamoDB tables", () => {
  const tables = () => ({
    commits: resources[logicalId(stack.commitsTable)],
    catalog: resources[logicalId(stack.catalogTable)],
  });

  it("key the commits table by tableId (S) + version (N), as lib/commit/arbiter.ts expects", () => {
    const p = tables().commits.Properties as Json;
    expect(p.KeySchema).toEqual([
      { AttributeName: "tableId", KeyType: "HASH" },
      { AttributeName: "version", KeyType: "RANGE" },
    ]);
    expect(p.AttributeDefinitions).toEqual([
      { AttributeName: "tableId", AttributeType: "S" },
      { AttributeName: "version", AttributeType: "N" },
    ]);
  });

  it("key the catalog table by pk (S) + sk (S), as lib/catalog/catalog-store.ts expects", () => {
    const p = tables().catalog.Properties as Json;
    expect(p.KeySchema).toEqual([
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "sk", KeyType: "RANGE" },
    ]);
    expect(p.AttributeDefinitions).toEqual([
      { AttributeName: "pk", AttributeType: "S" },
      { AttributeName: "sk", AttributeType: "S" },
    ]);
  });

  it("are on-demand, with point-in-time recovery and deletion protection, and retained", () => {
    for (const table of [
      ...Object.values(tables()),
      resources[logicalId(stack.idempotencyTable)],
    ]) {
      const p = table.Properties as Json;
      expect(p.BillingMode).toBe("PAY_PER_REQUEST");
      expect(p.Replicas).toBeUndefined();
      expect(p.PointInTimeRecoverySpecification).toEqual({
        PointInTimeRecoveryEnabled: true,
      });
      expect(p.DeletionProtectionEnabled).toBe(true);
      expect(table.DeletionPolicy).toBe("Retain");
    }
  });

  it("never expire commit rows: no TTL on either table (DESIGN §3)", () => {
    for (const table of Object.values(tables())) {
      expect(table.Properties.TimeToLiveSpecification).toBeUndefined();
    }
  });

  it("key Idempotency-Key records by key (S) and expire them through expiresAt, as lib/api/idempotency.ts writes them", () => {
    const p = props(logicalId(stack.idempotencyTable));
    expect(p.KeySchema).toEqual([{ AttributeName: "key", KeyType: "HASH" }]);
    expect(p.AttributeDefinitions).toEqual([{ AttributeName: "key", AttributeType: "S" }]);
    expect(p.TimeToLiveSpecification).toEqual({ AttributeName: "expiresAt", Enabled: true });
  });
});

describe("functions", () => {
  it("exist once per handler file in functions/", () => {
    const files = readdirSync(join(ROOT, "functions"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => f.replace(/\.ts$/, ""))
      .sort();
    expect(
      [...Object.keys(stack.functions), ...Object.keys(stack.pipelineFunctions)].sort(),
    ).toEqual(files);
    expect(ofType("AWS::Lambda::Function")).toHaveLength(files.length);
  });

  it("run Node.js 22 on arm64 with JSON logs into their own log group; HTTP ones for 29 s", () => {
    const timeouts = Object.fromEntries(
      ALL_FUNCTIONS.map((op) => [op, props(logicalId(fnOf(op))).Timeout]),
    );
    // The ingest queue's visibility timeout is checked against the ingest function's below.
    expect(timeouts).toEqual({
      ...Object.fromEntries(OPERATIONS.map((op) => [op, 29])),
      "ingest-enqueue": 30,
      ingest: 300,
      maintenance: 900,
    });
    for (const op of ALL_FUNCTIONS) {
      const id = logicalId(fnOf(op));
      const p = props(id);
      expect(p.Runtime, op).toBe("nodejs22.x");
      expect(p.Architectures, op).toEqual(["arm64"]);
      expect(p.Handler, op).toBe("index.handler");
      const logging = p.LoggingConfig as Json;
      expect(logging.LogFormat, op).toBe("JSON");
      const logGroupId = refTarget(logging.LogGroup) as string;
      expect(describeResource({ Ref: logGroupId })).toBe(`logs:${op}`);
      expect(props(logGroupId).RetentionInDays, op).toBe(30);
    }
  });

  it("give the Parquet-heavy functions more memory", () => {
    const memory = Object.fromEntries(
      ALL_FUNCTIONS.map((op) => [op, props(logicalId(fnOf(op))).MemorySize]),
    );
    expect(memory).toEqual({
      catalog: 1024,
      create: 1024,
      insert: 2048,
      rows: 2048,
      history: 1024,
      detail: 1024,
      drop: 1024,
      sql: 2048,
      overwrite: 2048,
      "replace-where": 2048,
      "replace-using": 2048,
      restore: 1024,
      update: 2048,
      delete: 2048,
      merge: 2048,
      optimize: 3008,
      vacuum: 1024,
      permissions: 1024,
      credentials: 1024,
      "unity-catalog": 1024,
      "ingest-enqueue": 512,
      ingest: 3008,
      maintenance: 3008,
    });
  });

  it("get the environment lib/runtime/lambda.ts reads; functions serving POST or DELETE also the idempotency table", () => {
    const tableEnv = {
      SILT_BUCKET: { Ref: logicalId(stack.bucket) },
      SILT_STORAGE_PREFIX: "",
      SILT_COMMITS_TABLE: { Ref: logicalId(stack.commitsTable) },
      SILT_CATALOG_TABLE: { Ref: logicalId(stack.catalogTable) },
      SILT_PRINCIPAL: "silt",
      SILT_PARQUET_WASM_GLUE: "/var/task/parquet_wasm.cjs",
      NODE_OPTIONS: "--enable-source-maps",
    };
    // Credential vending commits nothing and its answers are secrets: no idempotency records.
    // Nor for the Unity Catalog routes, which also vend credentials and whose commits and
    // stagings replay by the UC protocol itself (they come before the middleware in app.ts).
    const withoutIdempotency = new Set<Operation>([
      "history",
      "detail",
      "permissions",
      "credentials",
      "unity-catalog",
    ]);
    // The functions that vend table credentials learn the roles they assume for it.
    const vendors = new Set<Operation>(["credentials", "unity-catalog"]);
    for (const op of OPERATIONS) {
      const fn = props(logicalId(stack.functions[op]));
      const env = (fn.Environment as Json).Variables as Json;
      // HTTP functions run each request as the caller the IAM authorizer names, and learn the
      // timeout their long work and Idempotency-Key claims must fit into.
      const httpEnv = {
        ...tableEnv,
        SILT_AUTH: "iam",
        SILT_REQUEST_TIMEOUT_MS: String((fn.Timeout as number) * 1000),
      };
      expect(env, op).toEqual({
        ...httpEnv,
        ...(withoutIdempotency.has(op)
          ? {}
          : { SILT_IDEMPOTENCY_TABLE: { Ref: logicalId(stack.idempotencyTable) } }),
        ...(vendors.has(op)
          ? {
              SILT_TABLE_ACCESS_ROLE_ARN: {
                "Fn::GetAtt": [logicalId(stack.tableAccessRole), "Arn"],
              },
              SILT_TABLE_WRITE_ROLE_ARN: {
                "Fn::GetAtt": [logicalId(stack.tableWriteRole), "Arn"],
              },
            }
          : {}),
      });
    }
    const env = (op: PipelineFunction) =>
      (props(logicalId(stack.pipelineFunctions[op])).Environment as Json).Variables;
    expect(env("ingest-enqueue")).toEqual({
      SILT_STORAGE_PREFIX: "",
      SILT_INGEST_QUEUE_URL: { Ref: logicalId(stack.ingestQueue) },
      NODE_OPTIONS: "--enable-source-maps",
    });
    expect(env("ingest")).toEqual({
      ...tableEnv,
      SILT_REJECTED_QUEUE_URL: { Ref: logicalId(stack.rejectedFilesQueue) },
    });
    expect(env("maintenance")).toEqual(tableEnv);
  });

  it("each have their own role, trusted by Lambda only, with no managed policies", () => {
    const roleIds = new Set<string>();
    for (const op of ALL_FUNCTIONS) {
      const roleId = refTarget(props(logicalId(fnOf(op))).Role) as string;
      roleIds.add(roleId);
      const role = props(roleId);
      expect(role.ManagedPolicyArns, op).toBeUndefined();
      expect(role.Policies, op).toBeUndefined();
      expect(role.AssumeRolePolicyDocument, op).toEqual({
        Version: "2012-10-17",
        Statement: [
          {
            Effect: "Allow",
            Principal: { Service: "lambda.amazonaws.com" },
            Action: "sts:AssumeRole",
          },
        ],
      });
    }
    expect(roleIds.size).toBe(ALL_FUNCTIONS.length);
  });
});

describe("least-privilege IAM", () => {
  const logs = ["logs:CreateLogStream", "logs:PutLogEvents"];
  const idempotency = [
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
  ];

  it("grants each function exactly the actions its code path uses", () => {
    const actual = Object.fromEntries(OPERATIONS.map((op) => [op, permissions(op)]));
    expect(actual).toEqual({
      catalog: {
        "logs:catalog": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:DeleteObject"],
        "table:catalog": [
          "dynamodb:DeleteItem",
          "dynamodb:GetItem",
          "dynamodb:PutItem",
          "dynamodb:Query",
          "dynamodb:UpdateItem",
        ],
        "table:idempotency": idempotency,
      },
      create: {
        "logs:create": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": [
          "dynamodb:DeleteItem",
          "dynamodb:GetItem",
          "dynamodb:PutItem",
          "dynamodb:UpdateItem",
        ],
        "table:idempotency": idempotency,
      },
      insert: {
        "logs:insert": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      // Readers that open a table publish ratified commits they find (cooperative publishing):
      // PutObject into _delta_log/ only, and UpdateItem to mark them published.
      rows: {
        "logs:rows": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject"],
        "bucket/tables/*/_delta_log/*": ["s3:PutObject"],
        "table:commits": ["dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      detail: {
        "logs:detail": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject"],
        "bucket/tables/*/_delta_log/*": ["s3:PutObject"],
        "table:commits": ["dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
      },
      history: {
        "logs:history": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject"],
        "table:commits": ["dynamodb:Query"],
        "table:catalog": ["dynamodb:GetItem"],
      },
      drop: {
        "logs:drop": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:DeleteObject"],
        "table:catalog": ["dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:UpdateItem"],
        "table:idempotency": idempotency,
      },
      // The overwriting writes read what they replace and write data and deletion vectors,
      // never delete objects: replaced files stay for time travel until VACUUM.
      overwrite: {
        "logs:overwrite": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      "replace-where": {
        "logs:replace-where": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      "replace-using": {
        "logs:replace-using": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      // RESTORE re-adds existing files by reference: it reads them and writes only the log.
      restore: {
        "logs:restore": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject"],
        "bucket/tables/*/_delta_log/*": ["s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      // Row-level changes read the files that may match and write data and deletion-vector
      // files; MERGE also reads the source objects callers stage under ingest/.
      update: {
        "logs:update": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      delete: {
        "logs:delete": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      merge: {
        "logs:merge": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "bucket/ingest/*": ["s3:GetObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      // OPTIMIZE reads the files it compacts and writes new ones; it deletes nothing.
      optimize: {
        "logs:optimize": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      // VACUUM lists and deletes files; it writes only its START / END commits into the log.
      vacuum: {
        "logs:vacuum": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:DeleteObject", "s3:GetObject"],
        "bucket/tables/*/_delta_log/*": ["s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
        "table:idempotency": idempotency,
      },
      // SQL reaches every operation: DDL, reads (with publishing), appends, drops.
      sql: {
        "logs:sql": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:DeleteObject", "s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": [
          "dynamodb:DeleteItem",
          "dynamodb:GetItem",
          "dynamodb:PutItem",
          "dynamodb:Query",
          "dynamodb:UpdateItem",
        ],
        "table:idempotency": idempotency,
      },
      // Grants are one item per object, read by key and changed by UpdateItem.
      permissions: {
        "logs:permissions": logs,
        "table:catalog": ["dynamodb:GetItem", "dynamodb:UpdateItem"],
      },
      // Checks privileges, then assumes the table-access role (READ) or the table-write role
      // (READ_WRITE); it touches no object itself.
      credentials: {
        "logs:credentials": logs,
        "table:catalog": ["dynamodb:GetItem"],
        "role:table-access": ["sts:AssumeRole"],
        "role:table-write": ["sts:AssumeRole"],
      },
      // Both Unity Catalog APIs: reads snapshots, staged commits and data-file footers; publishes
      // ratified commits into _delta_log/ (and writes a managed CREATE's first commit there);
      // deletes a table's files on DROP (and CASCADE) or on a refused finalize; lists, creates
      // and drops catalog entries and changes and removes their grants (GetItem, UpdateItem,
      // DeleteItem of grant items, as the catalog and permissions functions); vends READ and
      // READ_WRITE credentials as the credentials function does. No Idempotency-Key records.
      "unity-catalog": {
        "logs:unity-catalog": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:DeleteObject", "s3:GetObject"],
        "bucket/tables/*/_delta_log/*": ["s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": [
          "dynamodb:DeleteItem",
          "dynamodb:GetItem",
          "dynamodb:PutItem",
          "dynamodb:Query",
          "dynamodb:UpdateItem",
        ],
        "role:table-access": ["sts:AssumeRole"],
        "role:table-write": ["sts:AssumeRole"],
      },
    });
  });

  /** The statements of a role's own policies, resources named as describeResource names them. */
  const ownStatements = (roleId: string) =>
    ofType("AWS::IAM::Policy")
      .filter(([, p]) => (p.Properties.Roles as unknown[]).some((r) => refTarget(r) === roleId))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .map((st) => ({ ...st, Resource: describeResource(st.Resource) }));

  it("lets the vending functions alone assume the table-access and table-write roles", () => {
    for (const r of [stack.tableAccessRole, stack.tableWriteRole]) {
      const role = props(logicalId(r));
      expect(role.MaxSessionDuration).toBe(3600);
      expect(role.ManagedPolicyArns).toBeUndefined();
      // The credentials function and the Unity Catalog one (temporary-table-credentials, the
      // Delta API's …/credentials and staging): no other role may assume either.
      expect(role.AssumeRolePolicyDocument).toEqual({
        Version: "2012-10-17",
        Statement: [
          {
            Effect: "Allow",
            Principal: {
              AWS: [
                { "Fn::GetAtt": [roleIdOf("credentials"), "Arn"] },
                { "Fn::GetAtt": [roleIdOf("unity-catalog"), "Arn"] },
              ],
            },
            Action: "sts:AssumeRole",
          },
        ],
      });
    }
    const assumers = OPERATIONS.filter((op) =>
      roleStatements(op).some((st) => [st.Action].flat().includes("sts:AssumeRole")),
    );
    expect(assumers).toEqual(["credentials", "unity-catalog"]);
  });

  it("lets the table-access role only read and list tables/", () => {
    expect(ownStatements(logicalId(stack.tableAccessRole))).toEqual([
      { Effect: "Allow", Action: "s3:GetObject", Resource: "bucket/tables/*" },
      {
        Effect: "Allow",
        Action: "s3:ListBucket",
        Resource: "bucket",
        Condition: { StringLike: { "s3:prefix": ["tables/*"] } },
      },
    ]);
  });

  it("lets the table-write role read, put and abort uploads under tables/ and list it, never delete", () => {
    const statements = ownStatements(logicalId(stack.tableWriteRole));
    expect(statements).toEqual([
      {
        Effect: "Allow",
        Action: ["s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject"],
        Resource: "bucket/tables/*",
      },
      {
        Effect: "Allow",
        Action: "s3:ListBucket",
        Resource: "bucket",
        Condition: { StringLike: { "s3:prefix": ["tables/*"] } },
      },
    ]);
    // Each session's policy narrows these to one table, with the same actions: an action only
    // the session policy allowed would be denied, one only the role had would never be vended.
    // Its one Deny (overwrites of the published log) only narrows further.
    const session = readWriteSessionPolicy("aws", "b", "tables/t/").Statement;
    const allowed = session.filter((st) => st.Effect === "Allow");
    expect(allowed.map((st) => st.Action)).toEqual(statements.map((st) => st.Action));
    expect(session.filter((st) => st.Effect === "Deny").map((st) => st.Action)).toEqual([
      "s3:PutObject",
    ]);
    expect(readSessionPolicy("aws", "b", "tables/t/").Statement.map((st) => st.Action)).toEqual(
      ownStatements(logicalId(stack.tableAccessRole)).map((st) => st.Action),
    );
  });

  it("grants the ingestion and maintenance functions exactly what they use", () => {
    const actual = Object.fromEntries(PIPELINE.map((op) => [op, permissions(op)]));
    expect(actual).toEqual({
      // Only puts events on the queue (and, after Lambda's retries, on its dead-letter queue).
      "ingest-enqueue": {
        "logs:ingest-enqueue": logs,
        "queue:ingest": ["sqs:SendMessage"],
        "queue:events-dead-letters": ["sqs:SendMessage"],
      },
      // Polls the queue through its event source mapping, reads the dropped files, appends or
      // merges (data files, deletion vectors, log), records rejections; deletes nothing.
      ingest: {
        "logs:ingest": logs,
        "queue:ingest": ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"],
        "queue:rejected-files": ["sqs:SendMessage"],
        bucket: ["s3:ListBucket"],
        "bucket/ingest/*": ["s3:GetObject"],
        "bucket/tables/*": ["s3:GetObject", "s3:PutObject"],
        "bucket/_ingest_rejected/*": ["s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:GetItem"],
      },
      // Lists the catalog, checkpoints, OPTIMIZEs, VACUUMs, cleans logs, keeps its cursor.
      maintenance: {
        "logs:maintenance": logs,
        bucket: ["s3:ListBucket"],
        "bucket/tables/*": ["s3:DeleteObject", "s3:GetObject", "s3:PutObject"],
        "bucket/_maintenance/*": ["s3:GetObject", "s3:PutObject"],
        "table:commits": ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"],
        "table:catalog": ["dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:Query"],
      },
    });
  });

  it("uses no wildcard actions, no Deny/NotAction tricks and no conditions", () => {
    for (const op of ALL_FUNCTIONS) {
      const statements = roleStatements(op);
      expect(statements.length, op).toBeGreaterThan(0);
      for (const s of statements) {
        expect(s.Effect, op).toBe("Allow");
        expect(s.NotAction, op).toBeUndefined();
        expect(s.NotResource, op).toBeUndefined();
        for (const action of [s.Action].flat()) expect(action, op).not.toContain("*");
      }
    }
  });

  it("attaches policies to function roles and the table-access and table-write roles only", () => {
    const roles = new Set([
      ...ALL_FUNCTIONS.map(roleIdOf),
      logicalId(stack.tableAccessRole),
      logicalId(stack.tableWriteRole),
    ]);
    for (const [id, policy] of ofType("AWS::IAM::Policy")) {
      for (const role of policy.Properties.Roles as unknown[]) {
        expect(roles.has(refTarget(role) as string), id).toBe(true);
      }
    }
    expect(ofType("AWS::IAM::Role")).toHaveLength(roles.size);
  });
});

/** The routes every function's app serves (lib/api/app.ts registers them before any other). */
const EVERY_FUNCTION = ["GET /api/v1/health", "GET /api/v1/openapi.json"];

describe("HTTP API", () => {
  it("routes exactly what each operation's Hono routes serve to that operation's function", () => {
    const expected = new Map<string, Operation>();
    for (const op of OPERATIONS) {
      const hono = createApp({} as SiltContext, { operations: [op] });
      for (const r of hono.routes) {
        if (r.method === "ALL") continue; // middleware
        const key = `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`;
        // Served by every function; the API sends them to one.
        if (EVERY_FUNCTION.includes(key)) continue;
        // A route's request validation is an entry of its own, before its handler.
        expect(expected.get(key) ?? op, key).toBe(op);
        expected.set(key, op);
      }
    }
    const actual = apiRoutes();
    for (const key of EVERY_FUNCTION) {
      expect(actual.get(key), key).toBe("catalog");
      actual.delete(key);
    }
    // A greedy `ANY <prefix>{proxy+}` route stands for every Hono route under its prefix: each
    // of those must be its function's, and no other function may serve (or be routed) anything
    // under that prefix, where API Gateway would send it to either function by specificity.
    const proxies = [...actual].flatMap(([key, op]) => {
      const m = /^ANY (\/.+\/)\{proxy\+\}$/.exec(key);
      return m === null ? [] : [{ key, prefix: m[1] as string, op }];
    });
    expect(
      proxies.map(({ key, op }) => [key, op]),
      "the proxy routes",
    ).toEqual([["ANY /api/2.1/unity-catalog/{proxy+}", "unity-catalog"]]);
    for (const proxy of proxies) {
      actual.delete(proxy.key);
      const under = [...expected].filter(([key]) => key.split(" ")[1]!.startsWith(proxy.prefix));
      expect(under.length, proxy.key).toBeGreaterThan(0);
      for (const [key, op] of under) {
        expect(op, `${key} is under ${proxy.key}`).toBe(proxy.op);
        expected.delete(key);
      }
      for (const key of actual.keys()) {
        expect(key.split(" ")[1]!.startsWith(proxy.prefix), `${key} is under ${proxy.key}`).toBe(
          false,
        );
      }
    }
    // Then, route for route, what the explicit routes send where; a proxy operation's Hono
    // routes outside its prefix would be left here unrouted.
    expect(Object.fromEntries([...actual].sort())).toEqual(
      Object.fromEntries([...expected].sort()),
    );
  });

  it("sends both Unity Catalog APIs to the unity-catalog function, and nothing else there", () => {
    const hono = createApp({} as SiltContext, { operations: ["unity-catalog"] });
    const served = hono.routes.filter(
      (r) => r.method !== "ALL" && !EVERY_FUNCTION.includes(`${r.method} ${r.path}`),
    );
    // The legacy API, the Delta API under delta/v1 and the commits API under delta/preview.
    expect(served.length).toBeGreaterThan(30);
    for (const r of served) expect(r.path, r.path).toMatch(/^\/api\/2\.1\/unity-catalog\//);
    for (const path of [
      "/api/2.1/unity-catalog/catalogs",
      "/api/2.1/unity-catalog/delta/v1/catalogs/:catalog/schemas/:schema/tables/:table",
      "/api/2.1/unity-catalog/delta/preview/commits",
      "/api/2.1/unity-catalog/permissions/:securable_type/:full_name",
    ]) {
      expect(
        served.some((r) => r.path === path),
        path,
      ).toBe(true);
    }
    const routes = [...apiRoutes()].filter(([, op]) => op === "unity-catalog");
    expect(routes).toEqual([["ANY /api/2.1/unity-catalog/{proxy+}", "unity-catalog"]]);
  });

  it("maps the issue's example route: POST /api/v1/tables/{name}/insert -> insert", () => {
    expect(apiRoutes().get("POST /api/v1/tables/{name}/insert")).toBe("insert");
  });

  it("sends each replace route to its own function; CTAS / CREATE OR REPLACE go to create", () => {
    const routes = apiRoutes();
    expect(routes.get("POST /api/v1/tables/{name}/overwrite")).toBe("overwrite");
    expect(routes.get("POST /api/v1/tables/{name}/replace-where")).toBe("replace-where");
    expect(routes.get("POST /api/v1/tables/{name}/replace-using")).toBe("replace-using");
    expect(routes.get("POST /api/v1/tables/{name}/restore")).toBe("restore");
    expect(routes.get("POST /api/v1/tables")).toBe("create");
  });

  it("sends UPDATE, DELETE and MERGE to their own functions", () => {
    const routes = apiRoutes();
    expect(routes.get("POST /api/v1/tables/{name}/update")).toBe("update");
    expect(routes.get("POST /api/v1/tables/{name}/delete")).toBe("delete");
    expect(routes.get("POST /api/v1/tables/{name}/merge")).toBe("merge");
  });

  it("sends OPTIMIZE and VACUUM to their own functions", () => {
    const routes = apiRoutes();
    expect(routes.get("POST /api/v1/tables/{name}/optimize")).toBe("optimize");
    expect(routes.get("POST /api/v1/tables/{name}/vacuum")).toBe("vacuum");
  });

  it("uses Lambda proxy integrations with payload format 2.0", () => {
    const integrations = ofType("AWS::ApiGatewayV2::Integration");
    expect(integrations.length).toBeGreaterThanOrEqual(OPERATIONS.length);
    for (const [id, integration] of integrations) {
      expect(integration.Properties.IntegrationType, id).toBe("AWS_PROXY");
      expect(integration.Properties.PayloadFormatVersion, id).toBe("2.0");
    }
  });

  it("lets API Gateway invoke each function", () => {
    for (const op of OPERATIONS) {
      const fnId = logicalId(stack.functions[op]);
      const permissions = ofType("AWS::Lambda::Permission").filter(
        ([, p]) => refTarget(p.Properties.FunctionName) === fnId,
      );
      expect(permissions.length, op).toBeGreaterThan(0);
      for (const [, p] of permissions) {
        expect(p.Properties.Principal).toBe("apigateway.amazonaws.com");
        expect(p.Properties.Action).toBe("lambda:InvokeFunction");
      }
    }
  });

  it("requires IAM authorization on every route by default", () => {
    const routes = ofType("AWS::ApiGatewayV2::Route");
    // One per Hono route of /api/v1, and the unity-catalog function's one {proxy+} route.
    expect(routes).toHaveLength(30);
    for (const [id, route] of routes) {
      expect(route.Properties.AuthorizationType, id).toBe("AWS_IAM");
    }
    expect(ofType("AWS::ApiGatewayV2::Authorizer")).toHaveLength(0);
  });

  it("throttles the $default stage: 100 requests per second, bursts of 200", () => {
    const [[, stage]] = ofType("AWS::ApiGatewayV2::Stage");
    expect(stage.Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: 100,
      ThrottlingBurstLimit: 200,
    });
  });

  it("logs access on the $default stage as JSON without headers or bodies", () => {
    const [[, stage]] = ofType("AWS::ApiGatewayV2::Stage");
    const p = stage.Properties as Json;
    expect(p.StageName).toBe("$default");
    expect(p.AutoDeploy).toBe(true);
    const settings = p.AccessLogSettings as { DestinationArn: unknown; Format: string };
    const logGroup = props(refTarget(settings.DestinationArn) as string);
    expect(logGroup.RetentionInDays).toBe(30);
    const format = JSON.parse(settings.Format) as Record<string, string>;
    expect(format.requestId).toBe("$context.requestId");
    expect(format.status).toBe("$context.status");
    expect(format.principal).toBe("$context.identity.userArn");
    expect(settings.Format).not.toMatch(/requestBody|header/i);
  });
});

describe("alarms", () => {
  it("alarm on every function's Errors", () => {
    for (const op of ALL_FUNCTIONS) {
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        Namespace: "AWS/Lambda",
        MetricName: "Errors",
        Dimensions: [{ Name: "FunctionName", Value: { Ref: logicalId(fnOf(op)) } }],
        Statistic: "Sum",
        Period: 300,
        Threshold: 1,
        EvaluationPeriods: 1,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
        TreatMissingData: "notBreaching",
      });
    }
  });

  it("alarm on the API's 5xx answers", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: "AWS/ApiGateway",
      MetricName: "5xx",
      Dimensions: [{ Name: "ApiId", Value: { Ref: logicalId(stack.api) } }],
      Statistic: "Sum",
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
    });
  });

  it("alarm on messages in the ingestion dead-letter queues", () => {
    for (const queue of [stack.ingestDeadLetterQueue, stack.ingestEventsDeadLetterQueue]) {
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        Namespace: "AWS/SQS",
        MetricName: "ApproximateNumberOfMessagesVisible",
        Dimensions: [
          { Name: "QueueName", Value: { "Fn::GetAtt": [logicalId(queue), "QueueName"] } },
        ],
        Statistic: "Maximum",
        Period: 300,
        Threshold: 1,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
        TreatMissingData: "notBreaching",
      });
    }
  });

  it("alarm on rejected files and failed maintenance steps, from the functions' EMF metrics", () => {
    for (const [metric, operation] of [
      ["RejectedObjects", "INGEST"],
      ["MaintenanceFailures", "MAINTENANCE"],
    ]) {
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        Namespace: "Silt",
        MetricName: metric,
        Dimensions: [{ Name: "Operation", Value: operation }],
        Statistic: "Sum",
        Period: 300,
        Threshold: 1,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
        TreatMissingData: "notBreaching",
      });
    }
    // Errors of every function, API 5xx, two dead-letter queues, two EMF metrics.
    expect(ofType("AWS::CloudWatch::Alarm")).toHaveLength(ALL_FUNCTIONS.length + 5);
  });
});

describe("ingestion pipeline", () => {
  const queue = (q: { node: { defaultChild?: unknown } }) => props(logicalId(q));

  it("sends the bucket's events to EventBridge without a custom resource", () => {
    expect(props(logicalId(stack.bucket)).NotificationConfiguration).toEqual({
      EventBridgeConfiguration: { EventBridgeEnabled: true },
    });
    expect(
      Object.keys(resources).filter((id) => resources[id]!.Type.startsWith("Custom::")),
    ).toEqual([]);
  });

  it("routes Object Created events under ingest/ of this bucket to the enqueue function", () => {
    const rules = ofType("AWS::Events::Rule").filter(([, r]) => r.Properties.EventPattern);
    expect(rules).toHaveLength(1);
    const [[ruleId, rule]] = rules;
    expect(rule.Properties.EventPattern).toEqual({
      source: ["aws.s3"],
      "detail-type": ["Object Created"],
      detail: {
        bucket: { name: [{ Ref: logicalId(stack.bucket) }] },
        object: { key: [{ prefix: "ingest/" }] },
      },
    });
    const targets = rule.Properties.Targets as Json[];
    expect(targets).toHaveLength(1);
    expect(refTarget(targets[0]!.Arn)).toBe(logicalId(stack.pipelineFunctions["ingest-enqueue"]));
    // Undeliverable events are kept, not dropped.
    expect(refTarget((targets[0]!.DeadLetterConfig as Json).Arn)).toBe(
      logicalId(stack.ingestEventsDeadLetterQueue),
    );
    expect(targets[0]!.RetryPolicy).toEqual({
      MaximumEventAgeInSeconds: 86400,
      MaximumRetryAttempts: 185,
    });
    const invoke = ofType("AWS::Lambda::Permission").filter(
      ([, p]) => refTarget(p.Properties.SourceArn) === ruleId,
    );
    expect(
      invoke.map(([, p]) => [p.Properties.Principal, refTarget(p.Properties.FunctionName)]),
    ).toEqual([["events.amazonaws.com", logicalId(stack.pipelineFunctions["ingest-enqueue"])]]);
    // After Lambda's own retries, a failed enqueue lands in the same dead-letter queue.
    expect(
      refTarget(
        (props(logicalId(stack.pipelineFunctions["ingest-enqueue"])).DeadLetterConfig as Json)
          .TargetArn,
      ),
    ).toBe(logicalId(stack.ingestEventsDeadLetterQueue));
  });

  it("queues events FIFO, deduplicated per table, redriving to a FIFO dead-letter queue after 5 receives", () => {
    const p = queue(stack.ingestQueue);
    expect(p).toMatchObject({
      FifoQueue: true,
      ContentBasedDeduplication: false,
      DeduplicationScope: "messageGroup",
      FifoThroughputLimit: "perMessageGroupId",
      RedrivePolicy: {
        deadLetterTargetArn: { "Fn::GetAtt": [logicalId(stack.ingestDeadLetterQueue), "Arn"] },
        maxReceiveCount: 5,
      },
    });
    // AWS's guidance: at least six times the consuming function's timeout.
    const ingestTimeout = props(logicalId(stack.pipelineFunctions.ingest)).Timeout as number;
    expect(p.VisibilityTimeout).toBeGreaterThanOrEqual(6 * ingestTimeout);
    expect(queue(stack.ingestDeadLetterQueue)).toMatchObject({
      FifoQueue: true,
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    // Named, so the ".fifo" suffix does not depend on the deploy target generating it.
    expect(p.QueueName).toBe(`${stack.stackName}-ingest.fifo`);
    expect(queue(stack.ingestDeadLetterQueue).QueueName).toBe(
      `${stack.stackName}-ingest-dead-letters.fifo`,
    );
    expect(queue(stack.rejectedFilesQueue).FifoQueue).toBeUndefined();
    expect(queue(stack.rejectedFilesQueue).MessageRetentionPeriod).toBe(14 * 24 * 3600);
  });

  it("encrypts every queue and refuses requests without TLS", () => {
    const queues = ofType("AWS::SQS::Queue");
    expect(queues).toHaveLength(4);
    for (const [id, q] of queues) {
      expect(q.Properties.SqsManagedSseEnabled, id).toBe(true);
      const [[, policy]] = ofType("AWS::SQS::QueuePolicy").filter(([, r]) =>
        (r.Properties.Queues as unknown[]).some((ref) => refTarget(ref) === id),
      );
      expect(
        (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
      ).toContainEqual({
        Action: "sqs:*",
        Condition: { Bool: { "aws:SecureTransport": "false" } },
        Effect: "Deny",
        Principal: { AWS: "*" },
        Resource: { "Fn::GetAtt": [id, "Arn"] },
      });
    }
  });

  it("feeds the ingest function batches of 10 with partial batch responses, once its role allows it", () => {
    const mappings = ofType("AWS::Lambda::EventSourceMapping");
    expect(mappings).toHaveLength(1);
    const [[, mapping]] = mappings;
    expect(mapping.Properties).toEqual({
      BatchSize: 10,
      EventSourceArn: { "Fn::GetAtt": [logicalId(stack.ingestQueue), "Arn"] },
      FunctionName: { Ref: logicalId(stack.pipelineFunctions.ingest) },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
    // Creating the mapping checks the role's SQS permissions, so it must come after the policy.
    const policyId = ofType("AWS::IAM::Policy").find(([, r]) =>
      (r.Properties.Roles as unknown[]).some((ref) => refTarget(ref) === roleIdOf("ingest")),
    )![0];
    expect(mapping.DependsOn).toContain(policyId);
  });

  it("outputs the queue URLs", () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(refTarget(outputs.IngestQueueUrl?.Value)).toBe(logicalId(stack.ingestQueue));
    expect(refTarget(outputs.IngestDeadLetterQueueUrl?.Value)).toBe(
      logicalId(stack.ingestDeadLetterQueue),
    );
    expect(refTarget(outputs.IngestEventsDeadLetterQueueUrl?.Value)).toBe(
      logicalId(stack.ingestEventsDeadLetterQueue),
    );
    expect(refTarget(outputs.RejectedFilesQueueUrl?.Value)).toBe(
      logicalId(stack.rejectedFilesQueue),
    );
    expect(refTarget(outputs.IdempotencyTableName?.Value)).toBe(logicalId(stack.idempotencyTable));
  });
});

describe("maintenance schedule", () => {
  it("invokes the maintenance function every hour, one run at a time", () => {
    const rules = ofType("AWS::Events::Rule").filter(([, r]) => r.Properties.ScheduleExpression);
    expect(rules).toHaveLength(1);
    const [[ruleId, rule]] = rules;
    expect(rule.Properties.ScheduleExpression).toBe("rate(1 hour)");
    const targets = rule.Properties.Targets as Json[];
    expect(targets.map((t) => refTarget(t.Arn))).toEqual([
      logicalId(stack.pipelineFunctions.maintenance),
    ]);
    const invoke = ofType("AWS::Lambda::Permission").filter(
      ([, p]) => refTarget(p.Properties.SourceArn) === ruleId,
    );
    expect(invoke.map(([, p]) => p.Properties.Principal)).toEqual(["events.amazonaws.com"]);
    expect(props(logicalId(stack.pipelineFunctions.maintenance)).ReservedConcurrentExecutions).toBe(
      1,
    );
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("leaves no unsuppressed error or warning", () => {
    const match = Match.stringLikeRegexp("AwsSolutions-.*");
    const errors = Annotations.fromStack(stack).findError("*", match);
    const warnings = Annotations.fromStack(stack).findWarning("*", match);
    expect(errors.map((e) => `${e.id}: ${e.entry.data}`)).toEqual([]);
    expect(warnings.map((w) => `${w.id}: ${w.entry.data}`)).toEqual([]);
  });

  it("really ran over the stack, and every suppression carries a reason", () => {
    const reports = readdirSync(outdir).filter((f) => /^AwsSolutions-.*NagReport\.csv$/.test(f));
    expect(reports).toHaveLength(1);
    const report = readFileSync(join(outdir, reports[0]), "utf8");
    const rows = report
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => line.match(/"((?:[^"]|"")*)"/g)?.map((c) => c.slice(1, -1)) ?? []);
    expect(rows.length).toBeGreaterThan(40);
    expect(rows.filter((r) => r[2] === "Non-Compliant")).toEqual([]);
    const suppressed = rows.filter((r) => r[2] === "Suppressed");
    expect(new Set(suppressed.map((r) => r[0]))).toEqual(
      new Set(["AwsSolutions-L1", "AwsSolutions-IAM5", "AwsSolutions-SQS3"]),
    );
    // SQS3 (no dead-letter queue of its own) only on the rejected-files queue, itself a sink.
    expect(
      new Set(suppressed.filter((r) => r[0] === "AwsSolutions-SQS3").map((r) => r[1])),
    ).toEqual(new Set([stack.rejectedFilesQueue.node.defaultChild?.node.path]));
    for (const r of suppressed) expect(r[3].length, `${r[0]} ${r[1]}`).toBeGreaterThan(40);
    // IAM5 is suppressed only for the tables/ object patterns (and the ingest/ inputs MERGE and
    // ingestion read, the rejected-file records, the maintenance cursor), finding by finding.
    for (const r of suppressed.filter((r) => r[0] === "AwsSolutions-IAM5")) {
      expect(r[3]).toMatch(
        /^\[Resource::<DataBucket\w+\.Arn>\/(tables\/\*(\/_delta_log\/\*)?|ingest\/\*|_ingest_rejected\/\*|_maintenance\/\*)\] /,
      );
    }
  });

  it("fails synthesis on a non-compliant resource, so a clean synth above means something", () => {
    // cdk.json turns on @aws-cdk/core:annotationsInValidationReport: error annotations, which
    // is how cdk-nag reports, then fail `cdk synth` instead of only being printed.
    const app = cliLikeApp();
    const probe = new Stack(app, "NagProbe");
    new s3.Bucket(probe, "Open", { enforceSSL: false });
    Aspects.of(app).add(new AwsSolutionsChecks());
    expect(() => Annotations.fromStack(probe)).toThrow(/AwsSolutions-S1:[\s\S]*AwsSolutions-S10:/);
  });
});

describe("bundled code in the cloud assembly", () => {
  const assetDir = (op: AnyFunction): string => {
    const code = props(logicalId(fnOf(op))).Code as { S3Key: string };
    return join(outdir, `asset.${code.S3Key.replace(/\.zip$/, "")}`);
  };

  it("holds each function's ESM bundle with parquet-wasm's Node glue and .wasm next to it", () => {
    const wasmSize = statSync(WASM_SOURCE).size;
    const glue = readFileSync(GLUE_SOURCE, "utf8");
    for (const op of ALL_FUNCTIONS) {
      const dir = assetDir(op);
      expect(readdirSync(dir).sort(), op).toEqual([
        "index.mjs",
        "index.mjs.map",
        "parquet_wasm.cjs",
        "parquet_wasm_bg.wasm",
      ]);
      expect(statSync(join(dir, "parquet_wasm_bg.wasm")).size, op).toBe(wasmSize);
      expect(readFileSync(join(dir, "parquet_wasm.cjs"), "utf8") === glue, op).toBe(true);
    }
  });

  it("bundles the AWS SDK and leaves no CommonJS require() shim that ESM would break on", () => {
    for (const op of ALL_FUNCTIONS) {
      const code = readFileSync(join(assetDir(op), "index.mjs"), "utf8");
      // esbuild's shim for require() inside an ES module throws "Dynamic require of ... is not
      // supported" at run time; if a CommonJS dependency ever needs it, give the bundle a
      // createRequire banner.
      // Booleans, so a failure does not print a megabyte of minified code.
      expect(code.includes("Dynamic require of"), op).toBe(false);
      expect(/(from|import\()\s*["']@aws-sdk\//.test(code), op).toBe(false);
    }
  });

  it("loads in plain Node and answers GET /api/v1/health through the Lambda handler", () => {
    // A child process, as Lambda runs it: importing the bundles into this worker would send a
    // megabyte of minified code per function through vitest's transform pipeline.
    const script = `
      const event = JSON.parse(process.env.SMOKE_EVENT);
      const out = {};
      for (const [op, file] of JSON.parse(process.env.SMOKE_BUNDLES)) {
        const { handler } = await import(file);
        out[op] = await handler(event, {});
      }
      process.stdout.write(JSON.stringify(out));
    `;
    const bundles = OPERATIONS.map((op) => [
      op,
      pathToFileURL(join(assetDir(op), "index.mjs")).href,
    ]);
    const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        AWS_REGION: "us-east-1",
        SILT_BUCKET: "bundle-smoke",
        SILT_COMMITS_TABLE: "commits",
        SILT_CATALOG_TABLE: "catalog",
        SILT_AUTH: "iam",
        NODE_OPTIONS: "--enable-source-maps",
        SMOKE_EVENT: JSON.stringify(healthEvent()),
        SMOKE_BUNDLES: JSON.stringify(bundles),
      },
    });
    const responses = JSON.parse(stdout) as Record<string, { statusCode: number; body: string }>;
    for (const op of OPERATIONS) {
      expect(responses[op]?.statusCode, op).toBe(200);
      expect(JSON.parse(responses[op].body), op).toEqual({ status: "ok" });
    }
  });

  it("loads the ingestion and maintenance bundles in plain Node; ingest answers an empty batch with an EMF line", () => {
    const script = `
      const load = async (name) => (await import(JSON.parse(process.env.SMOKE_BUNDLES)[name])).handler;
      const context = { awsRequestId: "smoke-1", getRemainingTimeInMillis: () => 60000 };
      const out = {
        enqueue: await (await load("ingest-enqueue"))(JSON.parse(process.env.SMOKE_EVENT), context),
        ingest: await (await load("ingest"))({ Records: [] }, context),
        maintenance: typeof (await load("maintenance")),
      };
      process.stdout.write("RESULT " + JSON.stringify(out) + "\\n");
    `;
    const bundles = Object.fromEntries(
      PIPELINE.map((op) => [op, pathToFileURL(join(assetDir(op), "index.mjs")).href]),
    );
    // A folder marker: the enqueue function drops it without calling SQS.
    const event = {
      "detail-type": "Object Created",
      source: "aws.s3",
      detail: { bucket: { name: "bundle-smoke" }, object: { key: "ingest/c/s/t/" } },
    };
    const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        AWS_REGION: "us-east-1",
        SILT_BUCKET: "bundle-smoke",
        SILT_COMMITS_TABLE: "commits",
        SILT_CATALOG_TABLE: "catalog",
        SILT_INGEST_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/smoke.fifo",
        NODE_OPTIONS: "--enable-source-maps",
        SMOKE_EVENT: JSON.stringify(event),
        SMOKE_BUNDLES: JSON.stringify(bundles),
      },
    });
    const lines = stdout.trim().split("\n");
    const result = JSON.parse(lines.find((l) => l.startsWith("RESULT "))!.slice(7));
    expect(result).toEqual({ ingest: { batchItemFailures: [] }, maintenance: "function" });
    const emf = lines
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Json)
      .find((l) => l.message === "ingest batch done");
    expect(emf).toMatchObject({
      requestId: "smoke-1",
      Operation: "INGEST",
      IngestedObjects: 0,
      RejectedObjects: 0,
      _aws: { CloudWatchMetrics: [{ Namespace: "Silt", Dimensions: [["Operation"]] }] },
    });
  });
});

describe("stack options", () => {
  // Built without bundling: only the template matters here, and the CLI skips bundling for
  // stacks it is not deploying the same way.
  const variant = (context: Record<string, unknown>) => {
    const app = cliLikeApp({ ...context, "aws:cdk:bundling-stacks": [] });
    const s = defineSiltApp(app);
    return { stack: s, template: Template.fromStack(s) };
  };

  it("can use a JWT authorizer, turn off deletion protection and notify an SNS topic", () => {
    const topic = "arn:aws:sns:us-east-1:123456789012:silt-alarms";
    const { stack: s, template: t } = variant({
      "silt:stackName": "SiltJwt",
      "silt:jwtIssuer": "https://issuer.example.com/",
      "silt:jwtAudience": "silt-api, other-client",
      "silt:deletionProtection": "false",
      "silt:alarmTopicArn": topic,
    });
    expect(s.stackName).toBe("SiltJwt");
    const authorizers = t.findResources("AWS::ApiGatewayV2::Authorizer");
    const [authorizerId] = Object.keys(authorizers);
    expect(Object.keys(authorizers)).toHaveLength(1);
    expect(authorizers[authorizerId].Properties).toMatchObject({
      AuthorizerType: "JWT",
      IdentitySource: ["$request.header.Authorization"],
      JwtConfiguration: {
        Issuer: "https://issuer.example.com/",
        Audience: ["silt-api", "other-client"],
      },
    });
    const routes = Object.values(t.findResources("AWS::ApiGatewayV2::Route"));
    expect(routes).toHaveLength(30);
    // Requests then run as the token's subject.
    const modes = Object.values(t.findResources("AWS::Lambda::Function")).flatMap(
      (fn) => fn.Properties.Environment?.Variables?.SILT_AUTH ?? [],
    );
    expect(modes).toEqual(OPERATIONS.map(() => "jwt"));
    for (const route of routes) {
      expect(route.Properties.AuthorizationType).toBe("JWT");
      expect(route.Properties.AuthorizerId).toEqual({ Ref: authorizerId });
    }
    const dynamoTables = Object.values(t.findResources("AWS::DynamoDB::Table"));
    expect(dynamoTables).toHaveLength(3);
    for (const table of dynamoTables) {
      expect(table.Properties.DeletionProtectionEnabled).toBe(false);
      expect(table.Properties.PointInTimeRecoverySpecification).toEqual({
        PointInTimeRecoveryEnabled: true,
      });
    }
    const alarms = Object.values(t.findResources("AWS::CloudWatch::Alarm"));
    expect(alarms).toHaveLength(ALL_FUNCTIONS.length + 5);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([topic]);
    const [stage] = Object.values(t.findResources("AWS::ApiGatewayV2::Stage"));
    const format = JSON.parse(stage.Properties.AccessLogSettings.Format) as Json;
    expect(format.principal).toBe("$context.authorizer.claims.sub");
    const match = Match.stringLikeRegexp("AwsSolutions-.*");
    expect(Annotations.fromStack(s).findError("*", match)).toEqual([]);
  });

  it("scopes S3 permissions and the ingestion rule under a storage prefix", () => {
    const { template: t } = variant({ "silt:storagePrefix": "silt/" });
    const resourcesText = JSON.stringify(t.findResources("AWS::IAM::Policy"));
    expect(resourcesText).toContain('"/silt/tables/*"');
    expect(resourcesText).not.toContain('"/tables/*"');
    expect(resourcesText).toContain('"/silt/ingest/*"');
    expect(resourcesText).not.toContain('"/ingest/*"');
    expect(resourcesText).toContain('"/silt/_maintenance/*"');
    expect(resourcesText).toContain('"/silt/_ingest_rejected/*"');
    const rules = Object.values(t.findResources("AWS::Events::Rule"));
    const ingestRule = rules.find((r) => r.Properties.EventPattern !== undefined);
    expect(ingestRule?.Properties.EventPattern.detail.object).toEqual({
      key: [{ prefix: "silt/ingest/" }],
    });
    const fns = Object.values(t.findResources("AWS::Lambda::Function"));
    for (const fn of fns) {
      expect(fn.Properties.Environment.Variables.SILT_STORAGE_PREFIX).toBe("silt/");
    }
  });

  it("runs maintenance on the schedule given", () => {
    const { template: t } = variant({ "silt:maintenanceSchedule": "cron(0 3 * * ? *)" });
    const schedules = Object.values(t.findResources("AWS::Events::Rule"))
      .map((r) => r.Properties.ScheduleExpression)
      .filter((e) => e !== undefined);
    expect(schedules).toEqual(["cron(0 3 * * ? *)"]);
  });

  it("reserves concurrency for the optimize and vacuum functions only, unless told otherwise", () => {
    const reserved = (st: SiltStack, t: Template) =>
      Object.fromEntries(
        OPERATIONS.map((op) => [
          op,
          t.toJSON().Resources[st.getLogicalId(st.functions[op].node.defaultChild as never)]
            .Properties.ReservedConcurrentExecutions,
        ]),
      );
    const defaults = reserved(stack, template);
    expect(Object.entries(defaults).filter(([, n]) => n !== undefined)).toEqual([
      ["optimize", 2],
      ["vacuum", 2],
    ]);
    const { stack: s, template: t } = variant({
      "silt:reservedConcurrency": "insert=50, optimize=none,vacuum=1",
      "silt:throttleRateLimit": "40",
      "silt:throttleBurstLimit": "80",
    });
    const given = reserved(s, t);
    expect(Object.entries(given).filter(([, n]) => n !== undefined)).toEqual([
      ["insert", 50],
      ["vacuum", 1],
    ]);
    const [stage] = Object.values(t.findResources("AWS::ApiGatewayV2::Stage"));
    expect(stage.Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: 40,
      ThrottlingBurstLimit: 80,
    });
    const match = Match.stringLikeRegexp("AwsSolutions-.*");
    expect(Annotations.fromStack(s).findError("*", match)).toEqual([]);
  });

  it("rejects a reservation for an unknown operation or a count that is not a whole number", () => {
    expect(() => variant({ "silt:reservedConcurrency": "optimise=2" })).toThrow(
      /no operation "optimise"; did you mean optimize/,
    );
    expect(() => variant({ "silt:reservedConcurrency": "insert=lots" })).toThrow(
      /silt:reservedConcurrency insert must be a whole number \(got "lots"\)/,
    );
    expect(() => variant({ "silt:throttleRateLimit": "-1" })).toThrow(/silt:throttleRateLimit/);
  });

  it("rejects half a JWT configuration and a prefix without a trailing slash", () => {
    expect(() => variant({ "silt:jwtIssuer": "https://issuer.example.com/" })).toThrow(
      /silt:jwtAudience/,
    );
    expect(() => variant({ "silt:storagePrefix": "silt" })).toThrow(/storagePrefix/);
  });
});

/** An API Gateway HTTP API (payload 2.0) event for GET /api/v1/health. */
function healthEvent() {
  return {
    version: "2.0",
    routeKey: "GET /api/v1/health",
    rawPath: "/api/v1/health",
    rawQueryString: "",
    headers: { host: "abc123.execute-api.us-east-1.amazonaws.com" },
    requestContext: {
      accountId: "123456789012",
      apiId: "abc123",
      domainName: "abc123.execute-api.us-east-1.amazonaws.com",
      domainPrefix: "abc123",
      http: {
        method: "GET",
        path: "/api/v1/health",
        protocol: "HTTP/1.1",
        sourceIp: "192.0.2.1",
        userAgent: "vitest",
      },
      requestId: "smoke",
      routeKey: "GET /api/v1/health",
      stage: "$default",
      time: "01/Jan/2026:00:00:00 +0000",
      timeEpoch: 1767225600000,
    },
    isBase64Encoded: false,
  };
}
