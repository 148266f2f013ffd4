/**
 * The route groups of the HTTP API, one per deployed function (the local server serves them all):
 * what the app, each route file, the Lambda adapter and the CDK stack agree on.
 */
export const OPERATIONS = [
  "catalog",
  "create",
  "insert",
  "rows",
  "history",
  "detail",
  "drop",
  "sql",
  "overwrite",
  "replace-where",
  "replace-using",
  "restore",
  "update",
  "delete",
  "merge",
  "optimize",
  "vacuum",
  "permissions",
  "credentials",
  "unity-catalog",
] as const;
export type Operation = (typeof OPERATIONS)[number];
