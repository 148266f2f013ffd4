/** The functions' configuration comes from environment variables the CDK stack sets. */
import { siltError } from "../errors.ts";

export function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value === "") {
    throw siltError("SILT_MISCONFIGURED:VARIABLE_NOT_SET", { name });
  }
  return value;
}
