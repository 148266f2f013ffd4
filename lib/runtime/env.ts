/** The functions' configuration comes from environment variables the CDK stack sets. */
import { internal } from "../errors.ts";

export function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value === "") {
    throw internal("SILT_MISCONFIGURED", `Environment variable ${name} is not set.`);
  }
  return value;
}
