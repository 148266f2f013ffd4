#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx), so `npm start` needs nothing but Node and npm.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../lib/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
