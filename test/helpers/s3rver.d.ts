// Only the parts of s3rver 3.7.1 (which ships no types) that the test emulator touches.
declare module "s3rver" {
  import type { IncomingMessage } from "node:http";

  export interface S3rverContext {
    readonly method: string;
    /** The raw (still percent-encoded) request path. */
    readonly path: string;
    readonly query: Record<string, string | string[] | undefined>;
    readonly headers: Record<string, string | string[] | undefined>;
    readonly req: IncomingMessage;
    get(field: string): string;
    set(field: string, value: string): void;
    status: number;
    type: string;
    body: unknown;
  }

  export type S3rverMiddleware = (ctx: S3rverContext, next: () => Promise<void>) => Promise<void>;

  export interface S3rverMetadata {
    etag: string;
    "last-modified": string;
    "content-length": number;
    "content-type"?: string;
    [header: string]: unknown;
  }

  export interface S3rverListOptions {
    delimiter?: string;
    startAfter?: string;
    prefix?: string;
    maxKeys?: number;
  }

  /** What s3rver's bucket controller reads from each listed object. */
  export interface S3rverListedObject {
    key: string;
    size: number;
    lastModifiedDate: Date;
    metadata: S3rverMetadata;
  }

  export interface S3rverListResult {
    objects: S3rverListedObject[];
    commonPrefixes: string[];
    isTruncated: boolean;
  }

  export interface S3rverFilesystemStore {
    readonly rootDirectory: string;
    getBucketPath(bucket: string): string;
    getResourcePath(bucket: string, key: string, resource: string): string;
    getMetadata(bucket: string, key: string): Promise<S3rverMetadata>;
    existsObject(bucket: string, key: string): Promise<boolean>;
    listObjects(bucket: string, options: S3rverListOptions): Promise<S3rverListResult>;
  }

  export interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
  }

  export default class S3rver {
    constructor(options?: S3rverOptions);
    readonly store: S3rverFilesystemStore;
    /** Koa's middleware stack; composed when the server starts. */
    readonly middleware: S3rverMiddleware[];
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
