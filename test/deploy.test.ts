/**
 * A real deployment: the CDK CLI from node_modules synthesizes the app, then runs `cdk bootstrap`
 * and `cdk deploy` against moto's CloudFormation on this machine (test/helpers/moto-server.ts).
 * Every resource moto created is then described through the AWS SDK and compared with the
 * synthesized template it came from (references resolved against what was deployed), so the
 * checks follow the stack as it changes rather than repeating its values.
 *
 * What moto (the version pinned in test/helpers/moto-requirements.txt) cannot show; the offline
 * template checks in test/infra.test.ts cover these:
 * - Resource types its CloudFormation lacks are skipped, not created: the API Gateway v2 HTTP
 *   API, CloudWatch alarms, bucket and queue policies, EventBridge Scheduler schedules and
 *   `AWS::DynamoDB::GlobalTable` (a `Fn::GetAtt` of a skipped resource fails the whole deploy).
 *   The test asks moto which types it supports and says which ones it skipped.
 * - Properties its CloudFormation ignores: S3 public access block, ownership controls,
 *   lifecycle, access logging and notifications; DynamoDB point-in-time recovery and TTL;
 *   Lambda architectures and logging config; IAM managed policy attachments.
 * - Nothing runs: invoking a Lambda function needs Docker in moto.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  CloudFormationClient,
  DescribeStacksCommand,
  paginateListStackResources,
  type Stack,
  type StackResourceSummary,
} from "@aws-sdk/client-cloudformation";
import {
  CloudWatchLogsClient,
  DescribeLogGroupsCommand,
  type LogGroup,
} from "@aws-sdk/client-cloudwatch-logs";
import {
  DescribeTableCommand,
  DynamoDBClient,
  type TableDescription,
} from "@aws-sdk/client-dynamodb";
import {
  DescribeRuleCommand,
  type DescribeRuleCommandOutput,
  EventBridgeClient,
  ListTargetsByRuleCommand,
} from "@aws-sdk/client-eventbridge";
import { GetRoleCommand, GetRolePolicyCommand, IAMClient, type Role } from "@aws-sdk/client-iam";
import {
  type FunctionConfiguration,
  GetEventSourceMappingCommand,
  type GetEventSourceMappingCommandOutput,
  GetFunctionCommand,
  GetPolicyCommand,
  LambdaClient,
} from "@aws-sdk/client-lambda";
import {
  GetBucketEncryptionCommand,
  GetObjectCommand,
  HeadBucketCommand,
  S3Client,
  type ServerSideEncryptionRule,
} from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ensureMotoInstalled,
  MOTO_ACCOUNT,
  type MotoServer,
  motoCloudFormationTypes,
  startMotoServer,
} from "./helpers/moto-server.ts";

const run = promisify(execFile);

const ROOT = join(import.meta.dirname, "..");
const CDK_CLI = join(ROOT, "node_modules", "aws-cdk", "bin", "cdk");
const REGION = "us-east-1";

type Json = Record<string, unknown>;
interface CfnResource {
  Type: string;
  Properties?: Json;
}
interface Template {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown }>;
}

let moto: MotoServer | undefined;
let outdir: string | undefined;
let stackName: string;
let template: Template;
let stack: Stack;
let listed: StackResourceSummary[];
/** Types moto's CloudFormation creates; resources of other types it skips. */
let motoTypes: Set<string>;
let aws: ReturnType<typeof clients>;
const timings: string[] = [];

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  timings.push(`${label} ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

beforeAll(async () => {
  const installMs = await ensureMotoInstalled();
  if (installMs > 0) timings.push(`moto install ${(installMs / 1000).toFixed(1)} s`);
  moto = await timed("moto start", startMotoServer);
  motoTypes = await motoCloudFormationTypes();
  aws = clients(moto.endpoint);
  const dir = mkdtempSync(join(tmpdir(), "silt-deploy-"));
  outdir = dir;
  await timed("cdk synth", () => cdk(["synth", "--output", dir, "--quiet"]));
  ({ stackName, template } = readAssembly(dir));
  await timed("cdk bootstrap", () => cdk(["bootstrap", `aws://${MOTO_ACCOUNT}/${REGION}`]));
  // --method=direct: moto builds a stack's outputs when the stack is created, and a stack
  // created by executing a change set (the CLI's default) would show none.
  await timed("cdk deploy", () =>
    cdk(["deploy", stackName, "--require-approval", "never", "--method=direct"]),
  );
  [stack] = (await aws.cfn.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks ?? [];
  listed = [];
  for await (const page of paginateListStackResources(
    { client: aws.cfn },
    { StackName: stackName },
  )) {
    listed.push(...(page.StackResourceSummaries ?? []));
  }
  console.info(`deploy: ${timings.join(", ")}`);
}, 15 * 60_000);

afterAll(async () => {
  await moto?.stop();
  if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
});

/** Runs the CDK CLI in the repository (cdk.json) with the environment pointed at moto. */
async function cdk(args: string[]): Promise<void> {
  const endpoint = moto?.endpoint as string;
  // Nothing from the caller's AWS or CDK settings may leak in: no profile, no real account.
  const inherited = Object.entries(process.env).filter(
    ([k]) => !k.startsWith("AWS_") && !k.startsWith("CDK_"),
  );
  const env = {
    ...Object.fromEntries(inherited),
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: "moto",
    AWS_SECRET_ACCESS_KEY: "moto",
    AWS_REGION: REGION,
    AWS_EC2_METADATA_DISABLED: "true",
    CDK_DISABLE_CLI_TELEMETRY: "true",
    CDK_DISABLE_VERSION_CHECK: "true",
  };
  const appArgs = args[0] === "synth" ? [] : ["--app", outdir as string];
  try {
    await run(process.execPath, [CDK_CLI, ...args, ...appArgs, "--no-notices"], {
      cwd: ROOT,
      env,
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch (e) {
    const err = e as Error & { stdout?: string; stderr?: string };
    const output = `${err.stdout ?? ""}\n${err.stderr ?? err.message}`.trim().split("\n");
    // A Fn::GetAtt of a resource moto skipped is the usual reason a deploy fails there.
    const hint =
      args[0] === "deploy"
        ? `moto's CloudFormation skips these types of the template: ${skippedTypes().join(", ")}\n`
        : "";
    throw new Error(
      `cdk ${args[0]} against moto failed:\n${output.slice(-40).join("\n")}\n${hint}` +
        `--- moto log (last lines) ---\n${moto?.log().split("\n").slice(-40).join("\n")}`,
    );
  }
}

function readAssembly(dir: string): { stackName: string; template: Template } {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as {
    artifacts: Record<
      string,
      { type: string; properties?: { templateFile: string; stackName?: string } }
    >;
  };
  const stacks = Object.entries(manifest.artifacts).filter(
    ([, a]) => a.type === "aws:cloudformation:stack",
  );
  expect(stacks).toHaveLength(1);
  const [id, artifact] = stacks[0];
  const props = artifact.properties as { templateFile: string; stackName?: string };
  return {
    stackName: props.stackName ?? id,
    template: JSON.parse(readFileSync(join(dir, props.templateFile), "utf8")) as Template,
  };
}

function clients(endpoint: string) {
  const config = {
    endpoint,
    region: REGION,
    credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
  };
  return {
    cfn: new CloudFormationClient(config),
    s3: new S3Client({ ...config, forcePathStyle: true }),
    dynamo: new DynamoDBClient(config),
    lambda: new LambdaClient(config),
    iam: new IAMClient(config),
    logs: new CloudWatchLogsClient(config),
    sqs: new SQSClient(config),
    events: new EventBridgeClient(config),
  };
}

// ---------------------------------------------------------------------------------------------
// Resolving the template's references against the deployment

/** A deployed resource: what moto created for one logical id, and its `Fn::GetAtt` values. */
interface Deployed {
  type: string;
  physicalId: string;
  attrs: Record<string, string>;
  compare(props: Json, c: Comparer): Promise<void>;
}

/**
 * Template values resolved against the deployment. A string that refers to a resource moto
 * skipped becomes `expect.stringMatching` with that part left open (moto renders it "None"), so
 * the rest of it (an ARN's route path, say) is still compared.
 */
interface Comparer {
  resolve(value: unknown): unknown;
  equal(what: string, actual: unknown, expected: unknown): void;
  matches(what: string, actual: unknown, expected: unknown): void;
}

const SKIPPED = "\u0000skipped\u0000";

function makeResolver(deployed: Map<string, Deployed>): (value: unknown) => unknown {
  const [, partition, , region, account] = (stack.StackId as string).split(":");
  const pseudo: Record<string, string> = {
    "AWS::AccountId": account,
    "AWS::Region": region,
    "AWS::Partition": partition,
    "AWS::URLSuffix": "amazonaws.com",
    "AWS::StackName": stackName,
    "AWS::StackId": stack.StackId as string,
  };
  for (const p of stack.Parameters ?? []) pseudo[p.ParameterKey as string] = p.ParameterValue ?? "";

  const ref = (id: string): string => {
    if (id in pseudo) return pseudo[id];
    const d = deployed.get(id);
    if (d !== undefined) return d.physicalId;
    if (id in template.Resources) return SKIPPED;
    throw new Error(`Ref to ${id}, which is neither a resource nor a parameter`);
  };
  const getAtt = (id: string, attr: string): string => {
    const d = deployed.get(id);
    if (d === undefined) {
      if (id in template.Resources) return SKIPPED;
      throw new Error(`Fn::GetAtt of ${id}, which is not in the template`);
    }
    const value = d.attrs[attr];
    if (value === undefined) throw new Error(`the ${d.type} check does not read ${attr} (${id})`);
    return value;
  };

  const raw = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(raw);
    if (value === null || typeof value !== "object" || isMatcher(value)) return value;
    const v = value as Json;
    const [key] = Object.keys(v);
    if (key === "Ref") return ref(v.Ref as string);
    if (key === "Fn::GetAtt") {
      const [id, attr] = v[key] as [string, string];
      return getAtt(id, attr);
    }
    if (key === "Fn::Join") {
      const [sep, parts] = v[key] as [string, unknown[]];
      return (raw(parts) as unknown[]).join(sep);
    }
    if (key === "Fn::Select") {
      const [index, list] = v[key] as [number, unknown];
      return (raw(list) as unknown[])[Number(index)];
    }
    if (key === "Fn::Split") {
      const [sep, text] = v[key] as [string, unknown];
      return String(raw(text)).split(sep);
    }
    if (key === "Fn::Sub") {
      const [text, vars] = (Array.isArray(v[key]) ? v[key] : [v[key], {}]) as [string, Json];
      return text.replace(/\$\{(!?)([^}]+)\}/g, (_, literal: string, name: string) => {
        if (literal) return `\${${name}}`;
        if (name in vars) return String(raw(vars[name]));
        const [id, attr] = name.split(".");
        return attr === undefined ? ref(id) : getAtt(id, attr);
      });
    }
    if (key?.startsWith("Fn::")) throw new Error(`the resolver does not handle ${key}`);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, raw(x)]));
  };

  const open = (value: unknown): unknown => {
    if (typeof value === "string" && value.includes(SKIPPED)) {
      const escaped = value.split(SKIPPED).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
      return expect.stringMatching(new RegExp(`^${escaped.join(".*")}$`));
    }
    if (Array.isArray(value)) return value.map(open);
    if (value !== null && typeof value === "object" && !isMatcher(value)) {
      return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, open(x)]));
    }
    return value;
  };
  return (value) => open(raw(value));
}

/** An `expect.*` asymmetric matcher a check built from values it already resolved. */
const isMatcher = (value: object): boolean =>
  typeof (value as { asymmetricMatch?: unknown }).asymmetricMatch === "function";

/** Parses IAM policy documents, which the IAM API returns URL-encoded. */
const iamDocument = (doc: string | undefined): unknown =>
  JSON.parse(decodeURIComponent(doc ?? "null"));

// ---------------------------------------------------------------------------------------------
// One check per resource type: read the deployed resource, then compare it with its properties

interface Check<S> {
  read(physicalId: string, props: Json): Promise<{ attrs: Record<string, string>; state: S }>;
  compare(state: S, props: Json, c: Comparer): Promise<void> | void;
}

function check<S>(spec: Check<S>) {
  return async (type: string, physicalId: string, props: Json): Promise<Deployed> => {
    const { attrs, state } = await spec.read(physicalId, props);
    return { type, physicalId, attrs, compare: async (p, c) => spec.compare(state, p, c) };
  };
}

const CHECKS: Record<string, ReturnType<typeof check>> = {
  "AWS::S3::Bucket": check({
    async read(name) {
      await aws.s3.send(new HeadBucketCommand({ Bucket: name }));
      const partition = (stack.StackId as string).split(":")[1];
      return { attrs: { Arn: `arn:${partition}:s3:::${name}` }, state: name };
    },
    async compare(name, props, c) {
      if (props.BucketEncryption === undefined) return;
      const { ServerSideEncryptionConfiguration: sse } = await aws.s3.send(
        new GetBucketEncryptionCommand({ Bucket: name }),
      );
      // The API's shape of a rule in the template's property names.
      const rules = (sse?.Rules ?? []).map((r: ServerSideEncryptionRule) => ({
        ServerSideEncryptionByDefault: {
          SSEAlgorithm: r.ApplyServerSideEncryptionByDefault?.SSEAlgorithm,
          KMSMasterKeyID: r.ApplyServerSideEncryptionByDefault?.KMSMasterKeyID,
        },
        BucketKeyEnabled: r.BucketKeyEnabled,
      }));
      const expected = c.resolve(props.BucketEncryption) as Json;
      c.matches("encryption rules", rules, expected.ServerSideEncryptionConfiguration);
    },
  }),

  "AWS::DynamoDB::Table": check({
    async read(name) {
      const { Table: t } = await aws.dynamo.send(new DescribeTableCommand({ TableName: name }));
      const table = t as TableDescription;
      const attrs: Record<string, string> = { Arn: table.TableArn as string };
      if (table.LatestStreamArn !== undefined) attrs.StreamArn = table.LatestStreamArn;
      return { attrs, state: table };
    },
    compare(table, props, c) {
      c.equal("KeySchema", table.KeySchema, props.KeySchema);
      const byName = (a: { AttributeName?: string }, b: { AttributeName?: string }) =>
        String(a.AttributeName).localeCompare(String(b.AttributeName));
      c.equal(
        "AttributeDefinitions",
        [...(table.AttributeDefinitions ?? [])].sort(byName),
        [...((props.AttributeDefinitions as { AttributeName: string }[]) ?? [])].sort(byName),
      );
      c.equal(
        "BillingMode",
        table.BillingModeSummary?.BillingMode ?? "PROVISIONED",
        props.BillingMode ?? "PROVISIONED",
      );
      c.equal(
        "DeletionProtectionEnabled",
        table.DeletionProtectionEnabled ?? false,
        props.DeletionProtectionEnabled ?? false,
      );
      if (props.StreamSpecification !== undefined) {
        c.matches("StreamSpecification", table.StreamSpecification, props.StreamSpecification);
      }
    },
  }),

  "AWS::Lambda::Function": check({
    async read(name) {
      const fn = await aws.lambda.send(new GetFunctionCommand({ FunctionName: name }));
      const config = fn.Configuration as FunctionConfiguration;
      return { attrs: { Arn: config.FunctionArn as string }, state: config };
    },
    async compare(config, props, c) {
      c.equal("Runtime", config.Runtime, props.Runtime);
      c.equal("Handler", config.Handler, props.Handler);
      c.equal("MemorySize", config.MemorySize, props.MemorySize ?? 128);
      c.equal("Timeout", config.Timeout, props.Timeout ?? 3);
      c.equal("Description", config.Description ?? "", props.Description ?? "");
      c.equal("Role", config.Role, props.Role);
      c.equal(
        "Environment",
        config.Environment?.Variables ?? {},
        (props.Environment as Json | undefined)?.Variables ?? {},
      );
      // The function runs the zip the CLI published to the bootstrap bucket, byte for byte.
      const code = c.resolve(props.Code) as { S3Bucket: string; S3Key: string };
      const zip = await aws.s3.send(
        new GetObjectCommand({ Bucket: code.S3Bucket, Key: code.S3Key }),
      );
      const bytes = await zip.Body?.transformToByteArray();
      c.equal("CodeSha256", config.CodeSha256, sha256(bytes));
    },
  }),

  "AWS::IAM::Role": check({
    async read(name) {
      const { Role: r } = await aws.iam.send(new GetRoleCommand({ RoleName: name }));
      const role = r as Role;
      return { attrs: { Arn: role.Arn as string, RoleId: role.RoleId as string }, state: role };
    },
    async compare(role, props, c) {
      c.equal(
        "AssumeRolePolicyDocument",
        iamDocument(role.AssumeRolePolicyDocument),
        props.AssumeRolePolicyDocument,
      );
      c.equal("Description", role.Description ?? "", props.Description ?? "");
      c.equal("Path", role.Path, props.Path ?? "/");
      c.equal("MaxSessionDuration", role.MaxSessionDuration, props.MaxSessionDuration ?? 3600);
      for (const inline of (props.Policies as Json[] | undefined) ?? []) {
        const name = c.resolve(inline.PolicyName) as string;
        const got = await aws.iam.send(
          new GetRolePolicyCommand({ RoleName: role.RoleName, PolicyName: name }),
        );
        c.equal(`inline policy ${name}`, iamDocument(got.PolicyDocument), inline.PolicyDocument);
      }
    },
  }),

  "AWS::IAM::Policy": check({
    async read() {
      return { attrs: {}, state: undefined };
    },
    async compare(_, props, c) {
      expect(
        props.Users ?? props.Groups,
        "policies on users or groups are not read",
      ).toBeUndefined();
      const name = c.resolve(props.PolicyName) as string;
      const roles = c.resolve(props.Roles) as string[];
      expect(roles.length, `policy ${name} is attached to roles`).toBeGreaterThan(0);
      for (const roleName of roles) {
        const got = await aws.iam.send(
          new GetRolePolicyCommand({ RoleName: roleName, PolicyName: name }),
        );
        c.equal(`document on ${roleName}`, iamDocument(got.PolicyDocument), props.PolicyDocument);
      }
    },
  }),

  "AWS::Logs::LogGroup": check({
    async read(name) {
      const { logGroups } = await aws.logs.send(
        new DescribeLogGroupsCommand({ logGroupNamePrefix: name }),
      );
      const group = (logGroups ?? []).find((g) => g.logGroupName === name) as LogGroup;
      expect(group, `log group ${name}`).toBeDefined();
      // moto's CloudFormation gives Fn::GetAtt Arn without the ":*" real CloudFormation appends;
      // the comparisons check which log group a policy names, not that suffix.
      return { attrs: { Arn: group.logGroupArn as string }, state: group };
    },
    compare(group, props, c) {
      c.equal("RetentionInDays", group.retentionInDays, props.RetentionInDays);
      if (props.LogGroupName !== undefined) {
        c.equal("LogGroupName", group.logGroupName, props.LogGroupName);
      }
      if (props.KmsKeyId !== undefined) c.equal("KmsKeyId", group.kmsKeyId, props.KmsKeyId);
    },
  }),

  "AWS::Lambda::Permission": check({
    async read() {
      return { attrs: {}, state: undefined };
    },
    async compare(_, props, c) {
      const fn = c.resolve(props.FunctionName) as string;
      const { Policy } = await aws.lambda.send(new GetPolicyCommand({ FunctionName: fn }));
      const statements = (JSON.parse(Policy ?? "{}") as { Statement?: Json[] }).Statement ?? [];
      const principal = c.resolve(props.Principal) as string;
      const expected = {
        Action: props.Action,
        Effect: "Allow",
        Principal: principal.endsWith(".amazonaws.com")
          ? { Service: principal }
          : { AWS: principal },
        ...(props.SourceArn === undefined
          ? {}
          : { Condition: { ArnLike: { "AWS:SourceArn": c.resolve(props.SourceArn) } } }),
      };
      c.matches(
        `a statement in the policy of ${fn}`,
        statements,
        expect.arrayContaining([expect.objectContaining(expected)]),
      );
    },
  }),

  "AWS::SQS::Queue": check({
    async read(url) {
      const { Attributes: a } = await aws.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }),
      );
      const attributes = a as Record<string, string>;
      const name = url.split("/").pop() as string;
      return {
        attrs: { Arn: attributes.QueueArn, QueueName: name, QueueUrl: url },
        state: { name, attributes },
      };
    },
    compare({ name, attributes }, props, c) {
      for (const [key, value] of Object.entries(props)) {
        if (key === "Tags") continue;
        if (key === "QueueName") c.equal(key, name, value);
        else if (key === "RedrivePolicy" || key === "RedriveAllowPolicy") {
          c.equal(key, JSON.parse(attributes[key] ?? "null"), value);
        } else c.equal(key, attributes[key], String(c.resolve(value)));
      }
    },
  }),

  "AWS::Events::Rule": check({
    async read(name, props) {
      const bus = typeof props.EventBusName === "string" ? props.EventBusName : undefined;
      const rule = await aws.events.send(
        new DescribeRuleCommand({ Name: name, EventBusName: bus }),
      );
      return { attrs: { Arn: rule.Arn as string }, state: rule };
    },
    async compare(rule: DescribeRuleCommandOutput, props, c) {
      if (props.EventPattern !== undefined) {
        c.equal("EventPattern", JSON.parse(rule.EventPattern ?? "null"), props.EventPattern);
      }
      c.equal("ScheduleExpression", rule.ScheduleExpression, props.ScheduleExpression);
      c.equal("State", rule.State, props.State ?? "ENABLED");
      c.equal("Description", rule.Description, props.Description);
      const { Targets } = await aws.events.send(
        new ListTargetsByRuleCommand({ Rule: rule.Name, EventBusName: rule.EventBusName }),
      );
      const expected = ((props.Targets as unknown[] | undefined) ?? []).map((t) =>
        expect.objectContaining(c.resolve(t) as Json),
      );
      c.matches("Targets", Targets ?? [], expected);
    },
  }),

  "AWS::Lambda::EventSourceMapping": check({
    async read(uuid) {
      const mapping = await aws.lambda.send(new GetEventSourceMappingCommand({ UUID: uuid }));
      return { attrs: { Id: uuid }, state: mapping };
    },
    compare(mapping: GetEventSourceMappingCommandOutput, props, c) {
      c.equal("EventSourceArn", mapping.EventSourceArn, props.EventSourceArn);
      const fn = c.resolve(props.FunctionName) as string;
      const fnName = fn.split(":").pop() as string;
      c.equal("FunctionName", mapping.FunctionArn?.split(":").pop(), fnName);
      for (const key of ["BatchSize", "MaximumBatchingWindowInSeconds", "FunctionResponseTypes"]) {
        if (props[key] !== undefined)
          c.equal(key, mapping[key as keyof typeof mapping], props[key]);
      }
    },
  }),
};

const sha256 = (bytes: Uint8Array | undefined): string =>
  createHash("sha256")
    .update(bytes ?? new Uint8Array())
    .digest("base64");

// ---------------------------------------------------------------------------------------------

/** Resources of the template moto created, and those of types its CloudFormation lacks. */
const created = () => Object.entries(template.Resources).filter(([, r]) => motoTypes.has(r.Type));
const skipped = () => Object.entries(template.Resources).filter(([, r]) => !motoTypes.has(r.Type));
const skippedTypes = () => [...new Set(skipped().map(([, r]) => r.Type))].sort();

describe("cdk deploy into moto", () => {
  it("completes: the stack is CREATE_COMPLETE and has every output of the template", () => {
    expect(stack.StackStatus).toBe("CREATE_COMPLETE");
    const outputs = Object.fromEntries(
      (stack.Outputs ?? []).map((o) => [o.OutputKey as string, o.OutputValue]),
    );
    expect(Object.keys(outputs).sort()).toEqual(Object.keys(template.Outputs ?? {}).sort());
  });

  it("creates each resource whose type moto supports, and skips only the others", () => {
    const byLogicalId = new Map(listed.map((r) => [r.LogicalResourceId, r]));
    for (const [id, r] of created()) {
      expect.soft(byLogicalId.get(id), id).toMatchObject({
        ResourceType: r.Type,
        ResourceStatus: "CREATE_COMPLETE",
      });
    }
    // moto lists the resources it skipped without a logical id.
    const unnamed = listed.filter((r) => !r.LogicalResourceId);
    expect(unnamed).toHaveLength(skipped().length);
    expect(listed).toHaveLength(Object.keys(template.Resources).length);
    console.info(
      `deploy: moto created ${created().length} resources; skipped ${skippedTypes().join(", ")}`,
    );
  });

  it("gives every resource it created the properties and references of the template", async () => {
    const physical = new Map(listed.map((r) => [r.LogicalResourceId, r.PhysicalResourceId]));
    const deployed = new Map<string, Deployed>();
    const unchecked = new Set<string>();
    for (const [id, r] of created()) {
      const read = CHECKS[r.Type];
      if (read === undefined) unchecked.add(r.Type);
      else deployed.set(id, await read(r.Type, physical.get(id) ?? "", r.Properties ?? {}));
    }
    const resolve = makeResolver(deployed);

    let compared = 0;
    for (const [id, d] of deployed) {
      const label = (what: string) => `${id} (${d.type}): ${what}`;
      const c: Comparer = {
        resolve,
        equal(what, actual, expected) {
          compared++;
          expect.soft(actual, label(what)).toEqual(resolve(expected));
        },
        matches(what, actual, expected) {
          compared++;
          expect.soft(actual, label(what)).toMatchObject(resolve(expected) as object);
        },
      };
      await d.compare(template.Resources[id].Properties ?? {}, c);
    }
    expect(compared).toBeGreaterThan(0);
    console.info(
      `deploy: compared ${compared} properties of ${deployed.size} resources` +
        (unchecked.size > 0 ? `; created but not read: ${[...unchecked].join(", ")}` : ""),
    );

    // The outputs, now that references resolve.
    for (const o of stack.Outputs ?? []) {
      const key = o.OutputKey as string;
      expect.soft(o.OutputValue, `output ${key}`).toEqual(resolve(template.Outputs?.[key]?.Value));
    }
  });
});
