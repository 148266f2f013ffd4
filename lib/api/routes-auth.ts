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
import type { Context, Hono } from "hono";
import { temporaryTableCredentials } from "../auth/credentials.ts";
import { siltError } from "../errors.ts";
import {
  getPermissions,
  type PermissionChange,
  securableFromPath,
  updatePermissions,
} from "../ops/permissions.ts";
import { defaultsOf, type Env, jsonBody } from "./http.ts";
import type { Operation } from "./operations.ts";
import { asObject } from "./request.ts";
import { ROUTES } from "./request-schemas.ts";
import { validated } from "./request-validation.ts";

export function registerAuthRoutes(app: Hono<Env>, serves: ReadonlySet<Operation>): void {
  if (serves.has("permissions")) {
    app.get(ROUTES.showGrants.path, validated(ROUTES.showGrants), async (c) =>
      showGrants(c, c.req.valid("query").principal),
    );
    app.patch(ROUTES.changeGrants.path, validated(ROUTES.changeGrants), async (c) =>
      changeGrants(c, c.req.valid("json").changes),
    );
  }
  if (serves.has("credentials")) {
    const route = ROUTES.temporaryTableCredentials;
    app.post(route.path, validated(route), async (c) => {
      const body = c.req.valid("json");
      return c.json(
        await temporaryTableCredentials(c.get("ctx"), {
          tableId: body.table_id,
          tableName: body.table_name,
          operation: body.operation ?? "",
          defaults: defaultsOf(c.req.valid("query"), body),
        }),
      );
    });
  }
}

/**
 * GET and PATCH of grants at `path` (`…/:securable_type/:full_name`) as the Unity Catalog API
 * serves them: tolerant of fields it does not know, as Unity Catalog's server is.
 */
export function registerPermissionRoutes(app: Hono<Env>, path: string): void {
  app.get(path, async (c) => showGrants(c, c.req.query("principal")));
  app.patch(path, async (c) => {
    const body = await jsonBody(c);
    if (!Array.isArray(body.changes) || body.changes.length === 0) {
      throw siltError("INVALID_REQUEST:FIELD_CHANGES_REQUIRED");
    }
    return changeGrants(
      c,
      body.changes.map((change, i) => asObject(change, `change ${i + 1}`)),
    );
  });
}

const securableOf = (c: Context<Env>) =>
  securableFromPath(c.req.param("securable_type") ?? "", c.req.param("full_name") ?? "");

async function showGrants(c: Context<Env>, principal: string | undefined) {
  return c.json({
    privilege_assignments: await getPermissions(c.get("ctx"), securableOf(c), principal),
  });
}

async function changeGrants(c: Context<Env>, changes: readonly PermissionChange[]) {
  return c.json({
    privilege_assignments: await updatePermissions(c.get("ctx"), securableOf(c), changes),
  });
}
