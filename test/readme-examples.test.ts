/**
 * The README's examples, run as written against `silt serve` (what `npm start` runs) on a fresh data
 * directory, section after section in one shell, as a reader working down the page would: every
 * `sh` block as it stands, and every `sql` block's statements sent to /api/v1/sql. Two things
 * differ from a reader's terminal, both stated here: the server listens on a free port instead of
 * 8080, and its data directory is a temporary one instead of ./.silt.
 *
 * An example passes when its shell commands succeed, no request reaches a 5xx or fails to connect,
 * and every request answered 4xx is one its block says fails: the error class it answers appears
 * in the block's text. Blocks that cannot run here are those of the sections listed below, with
 * the reason, and blocks whose first line is a `# deployed` comment (they need a deployed stack),
 * so a new block is either run or says why not.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { splitStatements } from "../lib/cli/statement-split.ts";
import { ROOT, startServe, stop } from "./helpers/silt-process.ts";

/** Sections whose blocks do not run here, by heading path (" > " between levels). */
const NOT_RUN_HERE: Record<string, string> = {
  "": "the setup commands themselves: CI runs npm install and npm test",
  "Command line": "test/cli.test.ts runs it, with its outputs checked",
  "Use Silt from Spark, DuckDB and Python (Unity Catalog)":
    "needs PySpark, DuckDB and the UC SDK; test/uc-*.test.ts run these clients",
  "Deploy > To AWS": "needs an AWS account",
  "Deploy > To LocalStack": "needs LocalStack",
  "Deploy > Ingesting, once deployed": "needs a deployed stack",
  "Tests and benchmarks > Testing with the real Unity Catalog clients":
    "needs the UC clients' venv; test/uc-*.test.ts run these scripts",
};

interface Block {
  heading: string;
  lang: "sh" | "sql";
  text: string;
  line: number;
}

const forDeployedStack = (b: Block): boolean => b.text.startsWith("# deployed");
const runsHere = (b: Block): boolean =>
  NOT_RUN_HERE[b.heading] === undefined && !forDeployedStack(b);

function readmeBlocks(readme: string): Block[] {
  const blocks: Block[] = [];
  const headings: string[] = [];
  const lines = readme.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const heading = /^(#{2,4}) (.*)$/.exec(lines[i]);
    if (heading) {
      headings.splice(heading[1].length - 2, Infinity, heading[2]);
      continue;
    }
    const fence = /^```(\w*)$/.exec(lines[i]);
    if (!fence) continue;
    const start = i;
    while (!lines[++i].startsWith("```"));
    if (fence[1] === "sh" || fence[1] === "sql") {
      const text = lines.slice(start + 1, i).join("\n");
      blocks.push({ heading: headings.join(" > "), lang: fence[1], text, line: start + 1 });
    }
  }
  return blocks;
}

/**
 * `curl` for the examples: the real one, with the status and body of each answer logged for the
 * checks (a call that sets its own `-w` output is passed through as written).
 */
const CURL_LOGGER = String.raw`
curl() {
  case " $* " in *" -w "*) command curl "$@"; return;; esac
  local body code
  body=$(mktemp)
  code=$(command curl -sS -o "$body" -w '%{http_code}' "$@") || code="000"
  cat "$body"
  { printf '%s\t%s\t' "$code" "$(printf '%s' "$*" | tr '\n\t' '  ' | head -c 300)"; head -c 4000 "$body" | tr '\n\t' '  '; echo; } >> "$SILT_README_LOG"
  rm -f "$body"
  [ "$code" != "000" ]
}
`;

/** A `sql` block as the requests a reader would send: one /api/v1/sql call per statement. */
function sqlRequests(block: Block): string {
  return splitStatements(`${block.text}\n;`)
    .statements.map(
      (s) =>
        `curl -s -XPOST $API/sql --data-binary @- <<'SILT_SQL'\n${JSON.stringify({ statement: s.text.replace(/;$/, "") })}\nSILT_SQL\necho`,
    )
    .join("\n");
}

interface Answer {
  block: number;
  status: number;
  command: string;
  errorClass?: string;
}

function parseLog(log: string): Answer[] {
  const answers: Answer[] = [];
  let block = -1;
  for (const line of log.split("\n")) {
    const marker = /^## block (\d+)$/.exec(line);
    if (marker) {
      block = Number(marker[1]);
      continue;
    }
    if (line === "") continue;
    const [status, command, body = ""] = line.split("\t");
    const errorClass = /"error_(?:class|code)"\s*:\s*"([A-Z0-9_.]+)"/.exec(body)?.[1];
    answers.push({ block, status: Number(status), command, errorClass });
  }
  return answers;
}

describe("the README's examples", () => {
  const blocks = readmeBlocks(readFileSync(path.join(ROOT, "README.md"), "utf8"));

  it("are each run here or say why not", () => {
    const known = new Set(Object.keys(NOT_RUN_HERE));
    const unknownReasons = [...known].filter((h) => !blocks.some((b) => b.heading === h));
    expect(unknownReasons, "sections listed as not run that the README no longer has").toEqual([]);
    expect(blocks.filter(runsHere).length).toBeGreaterThan(10);
  });

  it("run top to bottom against silt serve as written", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "silt-readme-"));
    const dataDir = path.join(dir, "data");
    const logFile = path.join(dir, "answers.log");
    const { url, child } = await startServe(dataDir);
    try {
      const runnable = blocks.filter(runsHere);
      const script = [
        CURL_LOGGER,
        ...runnable.map(
          (b, i) =>
            `echo "## block ${i}" >> "$SILT_README_LOG"\n${b.lang === "sql" ? sqlRequests(b) : b.text}`,
        ),
      ]
        .join("\n")
        .replaceAll("http://127.0.0.1:8080", url)
        .replaceAll(/(?<=[\s>])(\.\/)?\.silt\//g, "$SILT_DATA_DIR/");
      const shell = spawn("bash", ["-e", "-o", "pipefail"], {
        cwd: ROOT,
        env: { ...process.env, SILT_DATA_DIR: dataDir, SILT_README_LOG: logFile },
      });
      shell.stdin.end(script);
      let output = "";
      shell.stdout.on("data", (d) => {
        output += d;
      });
      shell.stderr.on("data", (d) => {
        output += d;
      });
      const code = await new Promise<number>((resolve) =>
        shell.on("close", (c) => resolve(c ?? -1)),
      );
      const answers = parseLog(await readFile(logFile, "utf8"));
      const lastBlock = runnable[answers.at(-1)?.block ?? 0];
      expect(code, `the shell stopped in "${lastBlock?.heading}":\n${output.slice(-3000)}`).toBe(0);
      const wrong = answers
        .filter(
          (a) =>
            a.status === 0 ||
            a.status >= 500 ||
            (a.status >= 400 &&
              (a.errorClass === undefined || !runnable[a.block].text.includes(a.errorClass))),
        )
        .map(
          (a) =>
            `README line ${runnable[a.block].line} (${runnable[a.block].heading}): ${a.status} ${a.errorClass ?? ""} for curl ${a.command}`,
        );
      expect(wrong, output.slice(-3000)).toEqual([]);
      expect(answers.length).toBeGreaterThan(50);
      // The local ingestion example's file reached its table (silt sql prints CSV off a terminal).
      expect(output).toMatch(/^A-1,9\.5\r?$/m);
    } finally {
      await stop(child);
      await rm(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
