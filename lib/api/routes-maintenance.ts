/**
 * Typed routes of table maintenance (README "Maintenance: OPTIMIZE and VACUUM"):
 *
 * - POST /api/v1/tables/{name}/optimize  `{where?, zorderBy?, timeBudgetMs?}`: OPTIMIZE t …
 * - POST /api/v1/tables/{name}/vacuum    `{retainHours?, dryRun?, mode?, conf?}`: VACUUM t …
 *
 * `where` is Spark SQL text over partition columns; `mode` is "lite" or "full"; `conf` carries
 * `spark.databricks.delta.retentionDurationCheck.enabled` as the SQL endpoint's `conf` does.
 */
import type { Hono } from "hono";
import { siltError } from "../errors.ts";
import { parseExpression } from "../expr/parse.ts";
import { optimizeTable } from "../ops/optimize.ts";
import { vacuumTable } from "../ops/vacuum.ts";
import { checkConf, RETENTION_CHECK_CONF } from "../sql/session.ts";
import { defaultsOf, type Env, jsonBody } from "./http.ts";
import type { Operation } from "./operations.ts";
import {
  optionalBoolean,
  optionalInteger,
  optionalString,
  optionalStringArray,
  optionalStringMap,
} from "./request.ts";

export function registerMaintenanceRoutes(app: Hono<Env>, serves: ReadonlySet<Operation>): void {
  if (serves.has("optimize")) {
    app.post("/api/v1/tables/:name/optimize", async (c) => {
      const ctx = c.get("ctx");
      const body = await jsonBody(c, true);
      const where = optionalString(body, "where");
      const result = await optimizeTable(ctx, c.req.param("name"), {
        defaults: defaultsOf(c, body),
        where: where === undefined ? undefined : parseExpression(where),
        zorderBy: optionalStringArray(body, "zorderBy"),
        timeBudgetMs: optionalInteger(body, "timeBudgetMs"),
      });
      return c.json({
        version: result.version,
        committed: result.committed,
        complete: result.complete,
        path: result.tableLocation,
        metrics: result.metrics,
        operationMetrics: result.operationMetrics,
      });
    });
  }
  if (serves.has("vacuum")) {
    app.post("/api/v1/tables/:name/vacuum", async (c) => {
      const ctx = c.get("ctx");
      const body = await jsonBody(c, true);
      const mode = optionalString(body, "mode")?.toLowerCase();
      if (mode !== undefined && mode !== "lite" && mode !== "full") {
        throw siltError("INVALID_REQUEST:VACUUM_MODE", { mode });
      }
      const retain = body.retainHours;
      if (retain !== undefined && retain !== null && typeof retain !== "number") {
        throw siltError("INVALID_REQUEST:RETAIN_HOURS");
      }
      const conf = checkConf(optionalStringMap(body, "conf") ?? {}, [RETENTION_CHECK_CONF]);
      const check = conf[RETENTION_CHECK_CONF];
      const result = await vacuumTable(ctx, c.req.param("name"), {
        defaults: defaultsOf(c, body),
        retainHours: typeof retain === "number" ? retain : undefined,
        dryRun: optionalBoolean(body, "dryRun") ?? false,
        mode,
        retentionCheckEnabled: check === undefined ? true : check.toLowerCase() === "true",
      });
      return c.json({
        version: result.version,
        dryRun: result.dryRun,
        path: result.tableLocation,
        files: result.files,
        numDeletedFiles: result.numDeletedFiles,
        sizeOfDataToDelete: result.sizeOfDataToDelete,
        numVacuumedDirectories: result.numVacuumedDirectories,
      });
    });
  }
}
