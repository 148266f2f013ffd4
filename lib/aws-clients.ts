import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { STSClient } from "@aws-sdk/client-sts";

/** Where a client points; anything left out comes from the standard AWS environment variables. */
export interface ClientOptions {
  endpoint?: string;
  region?: string;
}

const env = (name: string): string | undefined => process.env[name] || undefined;

const region = (opts?: ClientOptions): string => opts?.region ?? env("AWS_REGION") ?? "us-east-1";

// Emulators (s3rver, dynalite, LocalStack) accept any key id but s3rver only knows its own, so
// its pair is the one that works everywhere. Real credentials, when present, always win.
const DUMMY_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

const credentialsInEnv = (): boolean => Boolean(env("AWS_ACCESS_KEY_ID") ?? env("AWS_PROFILE"));

export function createS3Client(opts?: ClientOptions): S3Client {
  const endpoint = opts?.endpoint ?? env("AWS_ENDPOINT_URL_S3") ?? env("AWS_ENDPOINT_URL");
  if (endpoint === undefined) return new S3Client({ region: region(opts) });
  return new S3Client({
    region: region(opts),
    endpoint,
    // Emulators serve buckets under the path, not as subdomains of the endpoint host.
    forcePathStyle: true,
    // Newer SDKs send aws-chunked bodies with trailing checksums by default, which emulators
    // store verbatim instead of decoding.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    ...(credentialsInEnv() ? {} : { credentials: DUMMY_CREDENTIALS }),
  });
}

export function createDynamoClient(opts?: ClientOptions): DynamoDBClient {
  const endpoint = opts?.endpoint ?? env("AWS_ENDPOINT_URL_DYNAMODB") ?? env("AWS_ENDPOINT_URL");
  if (endpoint === undefined) return new DynamoDBClient({ region: region(opts) });
  return new DynamoDBClient({
    region: region(opts),
    endpoint,
    ...(credentialsInEnv() ? {} : { credentials: DUMMY_CREDENTIALS }),
  });
}

export function createSqsClient(opts?: ClientOptions): SQSClient {
  const endpoint = opts?.endpoint ?? env("AWS_ENDPOINT_URL_SQS") ?? env("AWS_ENDPOINT_URL");
  if (endpoint === undefined) return new SQSClient({ region: region(opts) });
  return new SQSClient({
    region: region(opts),
    endpoint,
    ...(credentialsInEnv() ? {} : { credentials: DUMMY_CREDENTIALS }),
  });
}

/** For credential vending (lib/auth/credentials.ts): AssumeRole of the table-access role. */
export function createStsClient(opts?: ClientOptions): STSClient {
  const endpoint = opts?.endpoint ?? env("AWS_ENDPOINT_URL_STS") ?? env("AWS_ENDPOINT_URL");
  if (endpoint === undefined) return new STSClient({ region: region(opts) });
  return new STSClient({
    region: region(opts),
    endpoint,
    ...(credentialsInEnv() ? {} : { credentials: DUMMY_CREDENTIALS }),
  });
}
