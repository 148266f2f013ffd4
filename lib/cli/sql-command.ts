/**
 * `silt sql`: Spark SQL statements through Silt's own HTTP API (connection.ts says where), or,
 * with no statement on a terminal, the interactive shell (shell.ts).
 *
 * 1. Read the statements: the argument, a file (-f, `-` for standard input), or standard input
 *    when it is not a terminal; cut them at `;` (statement-split.ts).
 * 2. Run them in order, each printed as it answers (result-format.ts). The first that fails
 *    stops the run unless --continue; a server out of reach stops it always.
 * 3. Exit 0 when every statement ran, 1 when one failed, 2 on a usage error, 3 when the server
 *    could not be reached (SILT_SERVER_UNREACHABLE's status in the error registry).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SiltError, siltError } from "../errors.ts";
import { type Connection, connect } from "./connection.ts";
import type { CliIo } from "./io.ts";
import { FORMATS, type Format, formatAnswer } from "./result-format.ts";
import { runStatement, type SessionDefaults } from "./run-statement.ts";
import { runShell } from "./shell.ts";
import { type Statement, splitStatements } from "./statement-split.ts";

export const SQL_HELP = `Usage:
  silt sql "<statement>" [options]     Run one statement (or several, separated by ;)
  silt sql -f <file> [options]         Run the statements of a file (- for standard input)
  silt sql [options]                   On a terminal: an interactive shell (\\? there for help);
                                       otherwise: the statements on standard input

Options:
  -f, --file <file>      Statements separated by ';' (';' in strings and comments does not split)
      --catalog <name>   Default catalog for names that omit it
      --schema <name>    Default schema for names that omit it
      --format <format>  box (the default on a terminal), csv (the default otherwise: a header
                         and the rows), jsonl (one JSON object per row) or arrow (an Arrow IPC
                         stream per statement that answers rows). csv, jsonl and arrow print rows
                         only; box adds each statement's row count or what it did (its version…)
      --continue         Run the statements after one that fails (the exit code still says so)
      --url <url>        The Silt server to use (also SILT_URL); see "Where statements run"
      --token <token>    Bearer token for a server run with SILT_AUTH=token (also SILT_TOKEN)
  -h, --help             This text

Where statements run:
  With --url, on that server. Otherwise the data directory (SILT_DATA_DIR, default ./.silt)
  decides: a silt serve running on it (npm start) records its URL there and the statements go
  to it; with no server on it, silt sql opens the directory itself for as long as it runs, and
  a server started meanwhile refuses to start.

Errors go to standard error as [ERROR_CLASS] message. A file stops at the first statement that
fails unless --continue.

Exit codes:
  0  every statement ran
  1  a statement failed
  2  usage error (unknown option, no such file, …)
  3  the server could not be reached
`;

interface SqlOptions {
  defaults: SessionDefaults;
  format: Format;
  keepGoing: boolean;
}

export async function sqlCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      file: { type: "string", short: "f" },
      catalog: { type: "string" },
      schema: { type: "string" },
      format: { type: "string" },
      continue: { type: "boolean", default: false },
      url: { type: "string" },
      token: { type: "string" },
    },
  });
  if (positionals.length > 1 || (positionals.length === 1 && values.file !== undefined)) {
    const given = positionals.length > 1 ? `${positionals.length} arguments` : "a statement and -f";
    throw siltError("INVALID_ARGUMENT:SQL_STATEMENT_OR_FILE", { given });
  }
  const format = formatOption(values.format, io.stdout.isTTY === true);
  const interactive = positionals.length === 0 && values.file === undefined && io.stdin.isTTY;
  const script = interactive ? undefined : readScript(positionals[0], values.file);
  const conn = await connect({
    url: values.url ?? io.env.SILT_URL,
    token: values.token ?? io.env.SILT_TOKEN,
    dataDir: io.env.SILT_DATA_DIR || ".silt",
    env: io.env,
  });
  try {
    const opts = {
      defaults: { catalog: values.catalog, schema: values.schema },
      format,
      keepGoing: values.continue === true,
    };
    if (script === undefined) return await runShell(conn, opts.defaults, io);
    return await runScript(conn, script, opts, io);
  } finally {
    await conn.close();
  }
}

function formatOption(text: string | undefined, terminal: boolean): Format {
  if (text === undefined) return terminal ? "box" : "csv";
  const format = FORMATS.find((f) => f === text);
  if (format === undefined) {
    throw siltError("INVALID_ARGUMENT:FORMAT", { formats: FORMATS.join(", "), text });
  }
  return format;
}

/** The script and what to call it in messages. */
interface Script {
  text: string;
  source?: string;
}

function readScript(statement: string | undefined, file: string | undefined): Script {
  if (statement !== undefined) return { text: statement };
  const name = file ?? "-";
  try {
    return {
      text: readFileSync(name === "-" ? 0 : name, "utf8"),
      source: name === "-" ? "standard input" : name,
    };
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw siltError("INVALID_ARGUMENT:SQL_FILE_UNREADABLE", {
      file: name === "-" ? "standard input" : name,
      reason: reason === "ENOENT" ? "no such file" : reason,
    });
  }
}

async function runScript(
  conn: Connection,
  script: Script,
  opts: SqlOptions,
  io: CliIo,
): Promise<number> {
  const { statements, tail } = splitStatements(script.text);
  const all: Statement[] = tail === undefined ? statements : [...statements, tail];
  let failed = 0;
  for (const [i, st] of all.entries()) {
    try {
      io.stdout.write(formatAnswer(await runStatement(conn, st.text, opts.defaults), opts.format));
    } catch (err) {
      if (!(err instanceof SiltError) || err.status < 100) throw err;
      failed++;
      io.stderr.write(`[${err.errorClass}] ${err.message}\n`);
      if (all.length > 1) io.stderr.write(`${where(i, all, st, script)}\n`);
      if (!opts.keepGoing) {
        const rest = all.length - i - 1;
        if (rest > 0) {
          io.stderr.write(
            `silt sql: stopped; the ${rest} statement(s) after it did not run (--continue runs them).\n`,
          );
        }
        return 1;
      }
    }
  }
  return failed === 0 ? 0 : 1;
}

function where(i: number, all: Statement[], st: Statement, script: Script): string {
  const at = script.source === undefined ? `line ${st.line}` : `${script.source} line ${st.line}`;
  return `silt sql: statement ${i + 1} of ${all.length} (${at}) failed.`;
}
