/** The functions' configuration comes from environment variables the CDK stack sets. */
import type { PostCommitMode } from "../commit/post-commit.ts";
import { siltError } from "../errors.ts";

export function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value === "") {
    throw siltError("SILT_MISCONFIGURED:VARIABLE_NOT_SET", { name });
  }
  return value;
}

const POST_COMMIT_MODES: readonly PostCommitMode[] = ["await", "background", "off"];

/**
 * SILT_POST_COMMIT: how commits run their automatic checkpoint (lib/commit/post-commit.ts).
 * Unset means "await", the only safe mode on Lambda; "off" leaves checkpoints to the maintenance
 * run.
 */
export function postCommitMode(env: NodeJS.ProcessEnv): PostCommitMode {
  const value = env.SILT_POST_COMMIT || "await";
  const mode = POST_COMMIT_MODES.find((m) => m === value);
  if (mode === undefined) {
    throw siltError("SILT_MISCONFIGURED:POST_COMMIT_MODE", {
      modes: POST_COMMIT_MODES.join(", "),
      value: JSON.stringify(value),
    });
  }
  return mode;
}

/** An optional duration in milliseconds (SILT_REQUEST_TIMEOUT_MS…): unset or empty is undefined. */
export function optionalMilliseconds(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === "") return undefined;
  const ms = Number(value);
  if (!Number.isSafeInteger(ms) || ms <= 0 || !/^\d+$/.test(value)) {
    throw siltError("SILT_MISCONFIGURED:NOT_MILLISECONDS", { name, value: JSON.stringify(value) });
  }
  return ms;
}
