/**
 * Typed routes of table maintenance (README "Maintenance: OPTIMIZE and VACUUM"):
 *
 * - POST /api/v1/tables/{name}/optimize  `{where?, zorderBy?, timeBudgetMs?}`: OPTIMIZE t …;
 *   without `timeBudgetMs` the context's budget (SiltContext.optimizeTimeBudgetMs), so that a
 *   deployed request commits the bins it finished (`complete: false`, call again) before its
 *   function's timeout would throw all of them away
 * - POST /api/v1/tables/{name}/vacuum    `{retainHours?, dryRun?, mode?, conf?}`: VACUUM t …
 *
 * `where` is Spark SQL text over partition columns; `mode` is "lite" or "full"; `conf` carries
 * `spark.databricks.delta.retentionDurationCheck.enabled` as the SQL endpoint's `conf` does.
 */
import type { Hono } from "hono";
import { parseExpression } from "../expr/parse.ts";
import { optimizeTable } from "../ops/optimize.ts";
import { vacuumTable } from "../ops/vacuum.ts";
import { checkConf, RETENTION_CHECK_CONF } from "../sql/session.ts";
import { defaultsOf, type Env } from "./http.ts";
import type { Operation } from "./operations.ts";
import { ROUTES } from "./request-schemas.ts";
import { validated } from "./request-validation.ts";

export function registerMaintenanceRoutes(app: Hono<Env>, serves: ReadonlySet<Operation>): void {
  if (serves.has("optimize")) {
    app.post(ROUTES.optimize.path, validated(ROUTES.optimize), async (c) => {
      const body = c.req.valid("json");
      const ctx = c.get("ctx");
      const result = await optimizeTable(ctx, c.req.param("name"), {
        defaults: defaultsOf(c.req.valid("query"), body),
        where: body.where === undefined ? undefined : parseExpression(body.where),
        zorderBy: body.zorderBy,
        timeBudgetMs: body.timeBudgetMs ?? ctx.optimizeTimeBudgetMs,
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
    app.post(ROUTES.vacuum.path, validated(ROUTES.vacuum), async (c) => {
      const body = c.req.valid("json");
      const conf = checkConf(body.conf ?? {}, [RETENTION_CHECK_CONF]);
      const check = conf[RETENTION_CHECK_CONF];
      const result = await vacuumTable(c.get("ctx"), c.req.param("name"), {
        defaults: defaultsOf(c.req.valid("query"), body),
        retainHours: body.retainHours,
        dryRun: body.dryRun ?? false,
        mode: body.mode,
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
