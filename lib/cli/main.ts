/**
 * The `silt` command: a dispatcher over one module per command, each with its help text.
 * `silt <command> --help` and `silt help <command>` print it; `silt --version` the package's.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { SiltError, siltError } from "../errors.ts";
import { INGEST_HELP, ingestCommand } from "./ingest-command.ts";
import { type CliIo, processIo } from "./io.ts";
import { MAINTAIN_HELP, maintainCommand } from "./maintain-command.ts";
import { READ_HELP, readCommand } from "./read-command.ts";
import { SERVE_HELP, serveCommand } from "./serve-command.ts";
import { SQL_HELP, sqlCommand } from "./sql-command.ts";

interface Command {
  summary: string;
  help: string;
  run(args: string[], io: CliIo): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  serve: { summary: "Serve the HTTP API locally (npm start)", help: SERVE_HELP, run: serveCommand },
  sql: {
    summary: "Run Spark SQL statements, or open a SQL shell",
    help: SQL_HELP,
    run: sqlCommand,
  },
  read: {
    summary: "Print a Delta table straight from its files",
    help: READ_HELP,
    run: readCommand,
  },
  ingest: {
    summary: "Ingest the files dropped under storage/ingest/",
    help: INGEST_HELP,
    run: ingestCommand,
  },
  maintain: {
    summary: "Run the scheduled maintenance pass now",
    help: MAINTAIN_HELP,
    run: maintainCommand,
  },
};

const HELP = `silt — catalog-managed Delta tables on S3 + DynamoDB

Usage:
  silt <command> [options]
${Object.entries(COMMANDS)
  .map(([name, c]) => `  silt ${name.padEnd(22)}${c.summary}`)
  .join("\n")}
  silt help <command>         That command's options (also silt <command> --help)
  silt --version              Silt's version
`;

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === "--help" || name === "-h") {
      io.stdout.write(HELP);
      return 0;
    }
    if (name === "--version" || name === "-v") {
      io.stdout.write(`silt ${packageVersion()}\n`);
      return 0;
    }
    if (name === "help") {
      if (rest.length === 0) {
        io.stdout.write(HELP);
        return 0;
      }
      io.stdout.write(commandNamed(rest[0]).help);
      return 0;
    }
    const command = commandNamed(name);
    if (rest.includes("--help") || rest.includes("-h")) {
      io.stdout.write(command.help);
      return 0;
    }
    return await command.run(rest, io);
  } catch (e) {
    return reportFailure(e, name, io);
  }
}

function commandNamed(name: string): Command {
  const command = COMMANDS[name];
  if (command === undefined) {
    throw siltError("INVALID_ARGUMENT:UNKNOWN_COMMAND", {
      command: name,
      commands: Object.keys(COMMANDS).join(", "),
    });
  }
  return command;
}

/**
 * One line on stderr and the exit code: a CLI error class's status is its exit code (2 usage,
 * 3 server out of reach); any other failure is 1.
 */
function reportFailure(e: unknown, command: string | undefined, io: CliIo): number {
  const err = (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
    ? siltError("INVALID_ARGUMENT:OPTIONS", {
        problem: (e as Error).message,
        command: command ?? "",
      })
    : e;
  if (err instanceof SiltError) {
    io.stderr.write(`silt: [${err.errorClass}] ${err.message}\n`);
    return err.status < 100 ? err.status : 1;
  }
  io.stderr.write(`silt: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}

/** The version in Silt's package.json, found above this module wherever it runs from. */
function packageVersion(): string {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "silt" && pkg.version !== undefined) return pkg.version;
    }
    if (path.dirname(dir) === dir) return "unknown";
  }
}
