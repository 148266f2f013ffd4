/**
 * Who is calling. With auth on, API Gateway's authorizer has verified the caller before the
 * function runs, and the HTTP API (payload v2) event names it:
 * - IAM (SigV4-signed requests): `requestContext.authorizer.iam.userArn`, the signer's ARN; for
 *   an assumed role that is the session, arn:aws:sts::<account>:assumed-role/<role>/<session>.
 * - JWT: `requestContext.authorizer.jwt.claims.sub`, the token's subject.
 * - Bearer tokens (`silt serve` with SILT_AUTH=token): `Authorization: Bearer <token>` names the
 *   principal a token list (SILT_TOKENS) maps it to, so privileges can be tried locally with the
 *   Unity Catalog clients, which send a static token (seed 002's `auth.token`).
 * With auth off (`silt serve`, tests) there is no authorizer and every caller is the configured
 * principal, with no privilege checked.
 */
import { type SiltError, siltError } from "../errors.ts";

/** What a deployed function accepts as SILT_AUTH. */
export const AUTH_MODES = ["none", "iam", "jwt"] as const;
/** How an app authenticates: the deployed modes, or local bearer tokens. */
export type AuthMode = (typeof AUTH_MODES)[number] | "token";

/**
 * SILT_AUTH as the stack sets it. Unset is an error rather than "none": a function deployed
 * without it would otherwise serve every caller as the service principal.
 */
export function parseAuthMode(value: string | undefined): AuthMode {
  const mode = AUTH_MODES.find((m) => m === value);
  if (mode === undefined) {
    throw siltError("SILT_MISCONFIGURED:AUTH_MODE", {
      modes: AUTH_MODES.join(", "),
      value: JSON.stringify(value ?? null),
    });
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

/**
 * SILT_TOKENS: `token=principal` pairs separated by commas, e.g.
 * `not-used=alice@example.com,t2=bob`. A principal may contain '='; a token may not.
 */
export function parseTokens(text: string | undefined): ReadonlyMap<string, string> {
  const tokens = new Map<string, string>();
  for (const pair of (text ?? "").split(",")) {
    if (pair.trim() === "") continue;
    const at = pair.indexOf("=");
    const token = pair.slice(0, at).trim();
    const principal = pair.slice(at + 1).trim();
    if (at <= 0 || principal === "") {
      throw siltError("SILT_MISCONFIGURED:TOKEN_PAIR", { pair: JSON.stringify(pair) });
    }
    tokens.set(token, principal);
  }
  if (tokens.size === 0) {
    throw siltError("SILT_MISCONFIGURED:NO_TOKENS");
  }
  return tokens;
}

/** The principal a bearer token names, or undefined for a missing or unknown token. */
export function principalOfToken(
  authorization: string | undefined,
  tokens: ReadonlyMap<string, string>,
): string | undefined {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  return token === undefined ? undefined : tokens.get(token);
}

/** 401 without a word about the request itself: an anonymous caller learns nothing. */
export function unauthenticated(mode: Exclude<AuthMode, "none">): SiltError {
  const how = {
    iam: "Sign it with AWS Signature Version 4 (the API uses IAM authorization).",
    jwt: "Send a bearer token whose 'sub' claim names you (the API uses JWT authorization).",
    token:
      "Send 'Authorization: Bearer <token>' with a token this server was given in SILT_TOKENS.",
  };
  return siltError("UNAUTHENTICATED", { how: how[mode] });
}

const field = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[name]
    : undefined;
