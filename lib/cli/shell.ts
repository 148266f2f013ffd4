/**
 * The interactive `silt sql` shell, on node:readline.
 *
 * - Input gathers over lines until a `;` ends a statement outside strings and comments
 *   (statement-split.ts); each complete statement runs as it is ended.
 * - `USE …` sets the session's defaults here (session-defaults.ts): the endpoint is stateless.
 * - Lines starting with `\` are shortcuts (`\?` lists them), typed on an empty buffer.
 * - Tab completes catalog, schema, table and column names (completion.ts).
 * - History lives in `<data dir>/sql_history`, shared by every session on that directory.
 * - A statement running longer than a moment shows a spinner; Ctrl-C cancels it (the request
 *   is aborted, and the server stops the statement at its next check, committing nothing)
 *   and gives the prompt back. Ctrl-C on an empty prompt, or Ctrl-D, leaves.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { SiltError } from "../errors.ts";
import { completer } from "./completion.ts";
import type { Connection } from "./connection.ts";
import type { CliIo } from "./io.ts";
import { formatAnswer } from "./result-format.ts";
import { runStatement, type SessionDefaults } from "./run-statement.ts";
import { parseUse } from "./session-defaults.ts";
import { splitStatements } from "./statement-split.ts";

const HISTORY_FILE = "sql_history";
const HISTORY_SIZE = 1000;
/** How long a statement runs before the spinner shows: a quick answer should not flicker. */
const SPINNER_AFTER_MS = 300;
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

const SHELL_HELP = `Statements end with ';' and may span lines. Shortcuts:
  \\l              catalogs (SHOW CATALOGS)
  \\dn [catalog]   schemas (SHOW SCHEMAS)
  \\dt [schema]    tables (SHOW TABLES)
  \\d <table>      a table's columns (DESCRIBE TABLE)
  \\?              this text
  \\q              quit (also Ctrl-D, or Ctrl-C on an empty prompt)
USE catalog.schema, USE CATALOG c and USE SCHEMA s set the defaults for short names.
Tab completes names; Ctrl-C cancels a running statement.
`;

export async function runShell(
  conn: Connection,
  initial: SessionDefaults,
  io: CliIo,
): Promise<number> {
  const defaults: SessionDefaults = { ...initial };
  const historyFile = path.join(path.resolve(io.env.SILT_DATA_DIR || ".silt"), HISTORY_FILE);
  const rl = readline.createInterface({
    input: io.stdin,
    output: io.stdout,
    terminal: true,
    history: readHistory(historyFile),
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    completer: completer(conn, defaults, () => buffer),
  });
  rl.on("history", (history: string[]) => writeHistory(historyFile, history));
  const out = (s: string) => io.stdout.write(s);
  out(`Silt SQL shell on ${conn.where}. \\? for help, \\q to quit.\n`);

  let buffer = "";
  let running: AbortController | undefined;
  const prompt = () => {
    const where = [defaults.catalog, defaults.schema].filter((p) => p !== undefined).join(".");
    rl.setPrompt(buffer === "" ? `silt${where === "" ? "" : ` ${where}`}> ` : "   ...> ");
    rl.prompt();
  };

  /** Runs one statement, printing its answer or error; USE changes the defaults instead. */
  const run = async (statement: string): Promise<void> => {
    const use = parseUse(statement, defaults);
    running = new AbortController();
    const spinner = startSpinner(io);
    try {
      if (use === undefined) {
        const answer = await runStatement(conn, statement, defaults, running.signal);
        spinner.stop();
        out(formatAnswer(answer, "box") as string);
      } else {
        await runStatement(conn, use.probe, use.defaults, running.signal);
        spinner.stop();
        Object.assign(defaults, use.defaults);
        out(`Using ${defaults.catalog ?? "(no catalog)"}.${defaults.schema}\n`);
      }
    } catch (err) {
      spinner.stop();
      if (!(err instanceof SiltError) || err.status < 100) throw err;
      io.stderr.write(
        err.errorClass === "OPERATION_CANCELED"
          ? "Cancelled.\n"
          : `[${err.errorClass}] ${err.message}\n`,
      );
    } finally {
      running = undefined;
    }
  };

  return await new Promise<number>((resolve, reject) => {
    let queue = Promise.resolve();
    let closed = false;
    rl.on("SIGINT", () => {
      if (running !== undefined) {
        running.abort();
        return;
      }
      if (buffer === "" && rl.line === "") {
        rl.close();
        return;
      }
      buffer = "";
      // The half-typed line goes too: to its end, then all before the cursor.
      rl.write(null, { ctrl: true, name: "e" });
      rl.write(null, { ctrl: true, name: "u" });
      out("^C\n");
      prompt();
    });
    rl.on("close", () => {
      closed = true;
      queue.then(() => resolve(0), reject);
    });
    rl.on("line", (line) => {
      queue = queue.then(async () => {
        if (buffer === "" && line.trim().startsWith("\\")) {
          const shortcut = shortcutStatement(line.trim(), out);
          if (shortcut === "quit") {
            rl.close();
            return;
          }
          if (shortcut !== undefined) await run(shortcut);
          if (!closed) prompt();
          return;
        }
        buffer = buffer === "" ? line : `${buffer}\n${line}`;
        const { statements, tail } = splitStatements(buffer);
        buffer = tail === undefined || tail.kind === "unreadable" ? "" : tail.text;
        // Text no more input can mend runs now, and the server names what is wrong with it.
        if (tail?.kind === "unreadable") statements.push(tail);
        for (const st of statements) await run(st.text);
        if (!closed) prompt();
      }, reject);
    });
    prompt();
  });
}

/** The SQL a shortcut stands for; "quit" for \q; undefined when it printed its own answer. */
function shortcutStatement(line: string, out: (s: string) => void): string | undefined {
  const [name, ...args] = line.split(/\s+/);
  const arg = args.join(" ");
  switch (name) {
    case "\\q":
      return "quit";
    case "\\?":
      out(SHELL_HELP);
      return undefined;
    case "\\l":
      return "SHOW CATALOGS";
    case "\\dn":
      return arg === "" ? "SHOW SCHEMAS" : `SHOW SCHEMAS IN ${arg}`;
    case "\\dt":
      return arg === "" ? "SHOW TABLES" : `SHOW TABLES IN ${arg}`;
    case "\\d":
      if (arg === "") {
        out("\\d needs a table: \\d <table>. \\dt lists the tables.\n");
        return undefined;
      }
      return `DESCRIBE TABLE ${arg}`;
    default:
      out(`Unknown shortcut ${name}. \\? lists them.\n`);
      return undefined;
  }
}

function startSpinner(io: CliIo): { stop(): void } {
  let frame = 0;
  let shown = false;
  let timer: NodeJS.Timeout | undefined = setTimeout(function spin() {
    shown = true;
    io.stderr.write(`\r${SPINNER[frame++ % SPINNER.length]} running… (Ctrl-C cancels)`);
    timer = setTimeout(spin, 100);
  }, SPINNER_AFTER_MS);
  return {
    stop() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (shown) io.stderr.write("\r\x1b[K");
      shown = false;
    },
  };
}

/** Newest first, as readline keeps it; the file holds one entry a line, oldest first. */
function readHistory(file: string): string[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .reverse();
  } catch {
    return [];
  }
}

function writeHistory(file: string, history: string[]): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${[...history].reverse().join("\n")}\n`);
}
