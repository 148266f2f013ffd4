/**
 * Silt as a Unity Catalog server (DESIGN §9): both of Unity Catalog's REST APIs, served by the
 * same app as `/api/v1` and over the same engine, catalog, privileges and arbiter.
 */
import type { Hono } from "hono";
import type { Env } from "../http.ts";
import type { Operation } from "../operations.ts";
import { registerDeltaApiRoutes } from "./delta-routes.ts";
import { registerLegacyCatalogRoutes } from "./legacy-routes.ts";

export function registerUnityCatalogRoutes(app: Hono<Env>, serves: ReadonlySet<Operation>): void {
  if (!serves.has("unity-catalog")) return;
  registerDeltaApiRoutes(app);
  registerLegacyCatalogRoutes(app);
}
