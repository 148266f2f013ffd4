/**
 * An S3 endpoint for tests: s3rver in-process on a random loopback port, with a shim in front of
 * it for the defects that matter to a Delta log (see shared/reference/aws-emulators.md):
 *
 * 1. PUT with `If-None-Match: *` overwrote existing objects; now 412, serialized per key.
 * 2. ListObjectsV2 answered 500 past 1000 keys (continuation tokens use DES, gone from
 *    OpenSSL 3's default provider).
 * 3. Listings came in readdir order, not key order, so pages skipped and repeated keys.
 * 4. `Range: bytes=-N` returned the wrong bytes, and `bytes=0-0` returned the whole object.
 *
 * The fourth known defect (aws-chunked stream bodies stored verbatim) is avoided by the client:
 * createS3Client turns off default request checksums for custom endpoints.
 *
 * With SILT_TEST_S3_BUCKET set, no emulator starts: tests use that bucket (real S3, or whatever
 * AWS_ENDPOINT_URL points at) under a fresh random prefix, which close() empties again.
 */
import crypto, { randomUUID } from "node:crypto";
import { mkdtemp, open, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import S3rver, {
  type S3rverContext,
  type S3rverFilesystemStore,
  type S3rverListOptions,
  type S3rverListResult,
} from "s3rver";
import { createS3Client } from "../../lib/aws-clients.ts";
import { S3ObjectStore } from "../../lib/storage/s3-store.ts";

export interface S3TestEndpoint {
  endpoint: string;
  bucket: string;
  /** Key prefix every test object must live under: "" on the emulator, random on a real bucket. */
  prefix: string;
  client: S3Client;
  close(): Promise<void>;
}

const EMULATOR_BUCKET = "silt-test";

export async function startS3Emulator(): Promise<S3TestEndpoint> {
  const realBucket = process.env.SILT_TEST_S3_BUCKET;
  return realBucket ? useRealBucket(realBucket) : startEmulator();
}

async function useRealBucket(bucket: string): Promise<S3TestEndpoint> {
  const client = createS3Client();
  const prefix = `silt-test/${randomUUID()}/`;
  const region = process.env.AWS_REGION || "us-east-1";
  const endpoint =
    process.env.AWS_ENDPOINT_URL_S3 ||
    process.env.AWS_ENDPOINT_URL ||
    `https://s3.${region}.amazonaws.com`;
  return {
    endpoint,
    bucket,
    prefix,
    client,
    async close() {
      try {
        const store = new S3ObjectStore({ client, bucket, prefix });
        const keys: string[] = [];
        for await (const info of store.list("")) keys.push(info.key);
        await store.deleteMany(keys);
      } finally {
        client.destroy();
      }
    },
  };
}

async function startEmulator(): Promise<S3TestEndpoint> {
  installDesFallback();
  const directory = await mkdtemp(path.join(os.tmpdir(), "silt-s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory });
  const { store } = server;
  const originalList = store.listObjects.bind(store);
  store.listObjects = (bucket, options) =>
    options.delimiter ? originalList(bucket, options) : listInKeyOrder(store, bucket, options);
  server.middleware.unshift(shim(store));

  let client: S3Client | undefined;
  try {
    const { address, port } = await server.run();
    const endpoint = `http://${address}:${port}`;
    client = createS3Client({ endpoint, region: "us-east-1" });
    await client.send(new CreateBucketCommand({ Bucket: EMULATOR_BUCKET }));
    const started = client;
    return {
      endpoint,
      bucket: EMULATOR_BUCKET,
      prefix: "",
      client: started,
      async close() {
        started.destroy();
        await server.close();
        await rm(directory, { recursive: true, force: true });
      },
    };
  } catch (err) {
    client?.destroy();
    await server.close().catch(() => {});
    await rm(directory, { recursive: true, force: true });
    throw err;
  }
}

const DES_FALLBACK = Symbol.for("silt.test.desFallback");

type CipherFactory = (this: unknown, alg: string, key: Buffer, ...rest: unknown[]) => unknown;

/**
 * Single DES is missing from OpenSSL 3's default provider, but 3DES with three equal keys computes
 * exactly single DES and is still there. Patched on the shared crypto module because that is
 * what s3rver requires; every other algorithm passes through untouched.
 */
function installDesFallback(): void {
  const mod = crypto as unknown as Record<"createCipheriv" | "createDecipheriv", CipherFactory> & {
    [DES_FALLBACK]?: true;
  };
  if (mod[DES_FALLBACK]) return;
  try {
    crypto.createCipheriv("des", Buffer.alloc(8), Buffer.alloc(8));
    return; // legacy provider loaded: nothing to fix
  } catch {}
  for (const name of ["createCipheriv", "createDecipheriv"] as const) {
    const original = mod[name];
    mod[name] = function (alg, key, ...rest) {
      if (alg === "des" && key?.length === 8) {
        return original.call(this, "des-ede3-cbc", Buffer.concat([key, key, key]), ...rest);
      }
      return original.call(this, alg, key, ...rest);
    };
  }
  mod[DES_FALLBACK] = true;
}

const OBJECT_SUFFIX = "._S3rver_object";

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** s3rver's listing without delimiter, but sorted by key bytes as S3 sorts. */
async function listInKeyOrder(
  store: S3rverFilesystemStore,
  bucket: string,
  options: S3rverListOptions,
): Promise<S3rverListResult> {
  const prefix = options.prefix ?? "";
  const startAfter = options.startAfter ?? "";
  const maxKeys = options.maxKeys ?? 1000;
  const dirKey = prefix.slice(0, prefix.lastIndexOf("/") + 1);
  let files: string[];
  try {
    files = await readdir(path.join(store.getBucketPath(bucket), dirKey), { recursive: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      return { objects: [], commonPrefixes: [], isTruncated: false };
    }
    throw err;
  }
  const keys = files
    .filter((f) => f.endsWith(OBJECT_SUFFIX))
    .map((f) => dirKey + f.slice(0, -OBJECT_SUFFIX.length).split(path.sep).join("/"))
    .filter((k) => k.startsWith(prefix) && byteOrder(k, startAfter) > 0)
    .sort(byteOrder);
  const page = keys.slice(0, maxKeys);
  const metadata = await Promise.all(
    page.map((key) => store.getMetadata(bucket, key).catch(() => undefined)),
  );
  const objects = page.flatMap((key, i) => {
    const meta = metadata[i];
    if (meta === undefined) return []; // deleted since the directory walk
    const lastModifiedDate = new Date(meta["last-modified"]);
    return [{ key, size: Number(meta["content-length"]), lastModifiedDate, metadata: meta }];
  });
  return { objects, commonPrefixes: [], isTruncated: keys.length > maxKeys };
}

function shim(store: S3rverFilesystemStore) {
  const tails = new Map<string, Promise<void>>();

  /** Runs fn after every earlier call for the same id has finished. */
  async function serialized(id: string, fn: () => Promise<void>): Promise<void> {
    const previous = tails.get(id) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    tails.set(id, tail);
    await previous;
    try {
      await fn();
    } finally {
      release();
      if (tails.get(id) === tail) tails.delete(id);
    }
  }

  return async (ctx: S3rverContext, next: () => Promise<void>): Promise<void> => {
    // Any credentials are accepted, as LocalStack does; s3rver knows only its own key id.
    delete ctx.headers.authorization;

    const match = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
    if (!match) return next();
    const bucket = match[1];
    const key = decodeURIComponent(match[2]);
    const isObjectPut =
      ctx.method === "PUT" && !("partNumber" in ctx.query) && !("uploadId" in ctx.query);

    if (isObjectPut && ctx.get("if-none-match") === "*") {
      return serialized(`${bucket}/${key}`, async () => {
        if (await store.existsObject(bucket, key)) {
          return sendError(
            ctx,
            412,
            "PreconditionFailed",
            "At least one of the pre-conditions you specified did not hold",
          );
        }
        await next();
      });
    }
    if (ctx.method === "GET" && ctx.get("range")) {
      if (await serveRange(ctx, store, bucket, key)) return;
    }
    return next();
  };
}

/** Answers a single-range GET itself; false leaves the request to s3rver (e.g. missing key). */
async function serveRange(
  ctx: S3rverContext,
  store: S3rverFilesystemStore,
  bucket: string,
  key: string,
): Promise<boolean> {
  const spec = /^bytes=(\d*)-(\d*)$/.exec(ctx.get("range").trim());
  if (!spec || (spec[1] === "" && spec[2] === "")) return false;
  const metadata = await store.getMetadata(bucket, key).catch(() => undefined);
  if (metadata === undefined) return false;

  const file = await open(store.getResourcePath(bucket, key, "object"), "r").catch(() => undefined);
  if (file === undefined) return false;
  try {
    const size = (await file.stat()).size;
    let first: number;
    let last: number;
    if (spec[1] === "") {
      const suffix = Number(spec[2]);
      first = Math.max(0, size - suffix);
      last = suffix === 0 ? -1 : size - 1;
    } else {
      first = Number(spec[1]);
      last = spec[2] === "" ? size - 1 : Math.min(Number(spec[2]), size - 1);
      // RFC 9110: a syntactically invalid range is ignored, so the whole object is served.
      if (spec[2] !== "" && Number(spec[2]) < first) return false;
    }
    if (first >= size || last < first) {
      ctx.set("Content-Range", `bytes */${size}`);
      sendError(ctx, 416, "InvalidRange", "The requested range is not satisfiable");
      return true;
    }
    const body = Buffer.alloc(last - first + 1);
    const { bytesRead } = await file.read(body, 0, body.length, first);
    ctx.status = 206;
    ctx.set("Accept-Ranges", "bytes");
    ctx.set("Content-Range", `bytes ${first}-${first + bytesRead - 1}/${size}`);
    ctx.set("ETag", metadata.etag);
    ctx.set("Last-Modified", metadata["last-modified"]);
    ctx.type = metadata["content-type"] ?? "binary/octet-stream";
    ctx.body = body.subarray(0, bytesRead);
    return true;
  } finally {
    await file.close();
  }
}

function sendError(ctx: S3rverContext, status: number, code: string, message: string): void {
  ctx.status = status;
  ctx.type = "application/xml";
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>silt-shim</RequestId></Error>`;
}
