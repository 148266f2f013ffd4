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

/**
 * A client's configuration: the service's own endpoint variable (AWS_ENDPOINT_URL_<SERVICE>), else
 * the shared one, else AWS itself. Pointed at an emulator, it falls back to dummy credentials.
 */
function clientConfig(service: string, opts: ClientOptions | undefined) {
  const endpoint = opts?.endpoint ?? env(`AWS_ENDPOINT_URL_${service}`) ?? env("AWS_ENDPOINT_URL");
  if (endpoint === undefined) return { region: region(opts) };
  return {
    region: region(opts),
    endpoint,
    ...(credentialsInEnv() ? {} : { credentials: DUMMY_CREDENTIALS }),
  };
}

export function createS3Client(opts?: ClientOptions): S3Client {
  const config = clientConfig("S3", opts);
  if (!("endpoint" in config)) return new S3Client(config);
  return new S3Client({
    ...config,
    // Emulators serve buckets under the path, not as subdomains of the endpoint host.
    forcePathStyle: true,
    // Newer SDKs send aws-chunked bodies with trailing checksums by default, which emulators
    // store verbatim instead of decoding.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

export const createDynamoClient = (opts?: ClientOptions): DynamoDBClient =>
  new DynamoDBClient(clientConfig("DYNAMODB", opts));

export const createSqsClient = (opts?: ClientOptions): SQSClient =>
  new SQSClient(clientConfig("SQS", opts));

/** For credential vending (lib/auth/credentials.ts): AssumeRole of the table-access role. */
export const createStsClient = (opts?: ClientOptions): STSClient =>
  new STSClient(clientConfig("STS", opts));
