/**
 * Who is calling. With auth on, API Gateway's authorizer has verified the caller before the
 * function runs, and the HTTP API (payload v2) event names it:
 * - IAM (SigV4-signed requests): `requestContext.authorizer.iam.userArn`, the signer's ARN; for
 *   an assumed role that is the session, arn:aws:sts::<account>:assumed-role/<role>/<session>.
 * - JWT: `requestContext.authorizer.jwt.claims.sub`, the token's subject.
 * With auth off (`silt serve`, tests) there is no authorizer and every caller is the configured
 * principal, with no privilege checked.
 */
import { internal, SiltError } from "../errors.ts";

export const AUTH_MODES = ["none", "iam", "jwt"] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/**
 * SILT_AUTH as the stack sets it. Unset is an error rather than "none": a function deployed
 * without it would otherwise serve every caller as the service principal.
 */
export function parseAuthMode(value: string | undefined): AuthMode {
  const mode = AUTH_MODES.find((m) => m === value);
  if (mode === undefined) {
    throw internal(
      "SILT_MISCONFIGURED",
      `Environment variable SILT_AUTH must be one of ${AUTH_MODES.join(", ")} ` +
        `(got ${JSON.stringify(value ?? null)}).`,
    );
  }
  return mode;
}

/** The authenticated caller an event names, or undefined when it names none. */
export function principalOf(mode: "iam" | "jwt", event: unknown): string | undefined {
  const authorizer = field(field(event, "requestContext"), "authorizer");
  const principal =
    mode === "iam"
      ? field(field(authorizer, "iam"), "userArn")
      : field(field(field(authorizer, "jwt"), "claims"), "sub");
  return typeof principal === "string" && principal !== "" ? principal : undefined;
}

/** 401 without a word about the request itself: an anonymous caller learns nothing. */
export function unauthenticated(mode: "iam" | "jwt"): SiltError {
  return new SiltError(
    "UNAUTHENTICATED",
    mode === "iam"
      ? "The request names no authenticated caller. Sign it with AWS Signature Version 4 " +
          "(the API uses IAM authorization)."
      : "The request names no authenticated caller. Send a bearer token whose 'sub' claim " +
          "names you (the API uses JWT authorization).",
    401,
  );
}

const field = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[name]
    : undefined;
