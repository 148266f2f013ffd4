/**
 * Table maintenance: an EventBridge schedule invokes the maintenance function
 * (lib/runtime/maintenance-handler.ts), which checkpoints, OPTIMIZEs, VACUUMs and cleans up the
 * logs of the tables that ask for it.
 */
import {
  Duration,
  aws_events as events,
  aws_events_targets as eventTargets,
  type aws_lambda_nodejs as nodejs,
} from "aws-cdk-lib";
import type { Construct } from "constructs";
import { type Alarms, siltMetric } from "./alarms.ts";
import { FUNCTIONS } from "./functions-table.ts";
import type { LambdaFunctions } from "./lambda-functions.ts";

/** The maintenance run's cursor (lib/runtime/maintenance-handler.ts CURSOR_KEY). */
const MAINTENANCE_STATE = "_maintenance/";

export class Maintenance {
  /** functions/maintenance.ts */
  readonly fn: nodejs.NodejsFunction;

  constructor(
    scope: Construct,
    opts: {
      functions: LambdaFunctions;
      alarms: Alarms;
      /** An EventBridge schedule expression. */
      schedule: string;
    },
  ) {
    const { functions, alarms } = opts;
    const maintenance = functions.add("Maintenance", {
      operation: "maintenance",
      description: "Scheduled checkpoints, OPTIMIZE, VACUUM and log cleanup, as tables ask",
      // One OPTIMIZE bin at a time, as the optimize function.
      memorySize: FUNCTIONS.optimize.memorySize,
      // Lambda's limit; the run stops starting work well before it (maintenance-handler.ts).
      timeout: Duration.minutes(15),
      environment: functions.tableEnvironment(),
      access: {
        // Checkpoints (log), OPTIMIZE (data files), VACUUM and log cleanup (deletes).
        s3: { read: true, write: "table", delete: true },
        objects: [{ prefix: MAINTENANCE_STATE, actions: ["s3:GetObject", "s3:PutObject"] }],
        commits: ["Query", "PutItem", "UpdateItem"],
        // Listing catalogs, schemas and tables is Query; opening a table is GetItem; the storage
        // sweep deletes abandoned entries, their id index and grants (DeleteItem).
        catalog: ["GetItem", "Query", "DeleteItem"],
      },
      errorsMeaning: "a maintenance run failed as a whole (one table's failure is only logged)",
      // Runs never overlap: a slow one finishing while the next is due would redo its work.
      reservedConcurrentExecutions: 1,
    });
    new events.Rule(scope, "MaintenanceSchedule", {
      description: "Silt: scheduled table maintenance",
      schedule: events.Schedule.expression(opts.schedule),
      targets: [new eventTargets.LambdaFunction(maintenance.fn)],
    });
    alarms.add("MaintenanceFailuresAlarm", {
      alarmDescription:
        "Silt maintenance: a checkpoint, OPTIMIZE, VACUUM or log cleanup of a table failed " +
        "(the maintenance function's log says which and why; it is retried next run)",
      metric: siltMetric("MaintenanceFailures", "MAINTENANCE"),
    });
    this.fn = maintenance.fn;
  }
}
