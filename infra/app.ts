/** CDK app entry (cdk.json runs it with tsx); the CLI sets CDK_OUTDIR, so the app synthesizes itself. */
import { App } from "aws-cdk-lib";
import { defineSiltApp } from "./silt-app.ts";

defineSiltApp(new App());
