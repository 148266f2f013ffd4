import { maintenanceHandler } from "../lib/runtime/maintenance-handler.ts";

export const handler = maintenanceHandler();
