import { httpHandler } from "../lib/runtime/lambda.ts";

export const handler = httpHandler("unity-catalog");
