/**
 * Routes of authorization and credential vending, shaped like Unity Catalog's REST API so its
 * clients and engines can talk to Silt:
 *
 * - GET   /api/v1/permissions/{securable_type}/{full_name}[?principal=…]
 *         -> {"privilege_assignments": [{"principal": …, "privileges": ["SELECT", …]}]}
 * - PATCH /api/v1/permissions/{securable_type}/{full_name}
 *         {"changes": [{"principal": …, "add": [...], "remove": [...]}]} -> the same answer
 * - POST  /api/v1/temporary-table-credentials {"table_id" | "table_name", "operation"}
 *         -> {"aws_temp_credentials": {...}, "expiration_time": <epoch ms>, "url": "s3://…"}
 */
import type { Hono } from "hono";
import { temporaryTableCredentials } from "../auth/credentials.ts";
import { siltError } from "../errors.ts";
import { getPermissions, securableFromPath, updatePermissions } from "../ops/permissions.ts";
import { defaultsOf, type Env, jsonBody } from "./http.ts";
import type { Operation } from "./operations.ts";
import { asObject, optionalString } from "./request.ts";

const PERMISSIONS_PATH = "/api/v1/permissions/:securable_type/:full_name";

export function registerAuthRoutes(app: Hono<Env>, serves: ReadonlySet<Operation>): void {
  if (serves.has("permissions")) registerPermissionRoutes(app, PERMISSIONS_PATH);
  if (serves.has("credentials")) {
    app.post("/api/v1/temporary-table-credentials", async (c) => {
      const body = await jsonBody(c);
      return c.json(
        await temporaryTableCredentials(c.get("ctx"), {
          tableId: optionalString(body, "table_id"),
          tableName: optionalString(body, "table_name"),
          operation: optionalString(body, "operation") ?? "",
          defaults: defaultsOf(c, body),
        }),
      );
    });
  }
}

/** GET and PATCH of grants at `path` (`…/:securable_type/:full_name`); Unity Catalog's shape. */
export function registerPermissionRoutes(app: Hono<Env>, path: string): void {
  app.get(path, async (c) => {
    const name = securableFromPath(
      c.req.param("securable_type") ?? "",
      c.req.param("full_name") ?? "",
    );
    const principal = c.req.query("principal");
    return c.json({
      privilege_assignments: await getPermissions(c.get("ctx"), name, principal),
    });
  });
  app.patch(path, async (c) => {
    const name = securableFromPath(
      c.req.param("securable_type") ?? "",
      c.req.param("full_name") ?? "",
    );
    const body = await jsonBody(c);
    if (!Array.isArray(body.changes) || body.changes.length === 0) {
      throw siltError("INVALID_REQUEST:FIELD_CHANGES_REQUIRED");
    }
    const changes = body.changes.map((change, i) => asObject(change, `change ${i + 1}`));
    return c.json({
      privilege_assignments: await updatePermissions(c.get("ctx"), name, changes),
    });
  });
}
