/**
 * Regenerates test/spark-parity/expected/<topic>.json from real Spark:
 *   npm run spark-parity                 every topic
 *   npm run spark-parity -- joins ctes   those topics
 * Uses the Python venv the UC client tests keep (test/helpers/uc-clients.ts: pyspark 4.1.0; Spark
 * fetches delta-spark 4.3.1 into its Ivy cache). A case whose Spark answer does not fit its
 * directive (an `-- error` case Spark runs, a `-- query` Spark refuses) is reported and its topic is
 * not written, so a wrong expectation is never recorded.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLIENTS_DIR, ensureUcClients, IVY_DIR, ucPython } from "../helpers/uc-clients.ts";
import {
  type Case,
  directiveMismatch,
  EXPECTED_DIR,
  type Expected,
  readCases,
  type SparkAnswer,
  topics,
} from "./cases.ts";

const SPARK = "4.1.0";
const DELTA = "4.3.1";

async function main(selected: string[]) {
  const all = topics();
  const unknown = selected.filter((t) => !all.includes(t));
  if (unknown.length > 0) throw new Error(`no case file for ${unknown.join(", ")} (have ${all})`);
  const chosen = selected.length > 0 ? selected : all;
  const cases = new Map(chosen.map((t) => [t, readCases(t)]));
  await ensureUcClients();
  const answers = await sparkAnswers(
    chosen.map((topic) => ({ topic, statements: cases.get(topic)!.map((c) => c.sql) })),
  );
  mkdirSync(EXPECTED_DIR, { recursive: true });
  let failed = false;
  for (const topic of chosen) {
    const got = answers.get(topic);
    if (!got) throw new Error(`Spark gave no answers for ${topic}`);
    const merged = cases.get(topic)!.map((c: Case, i) => ({ ...c, spark: got[i]! }));
    const wrong = merged.flatMap((c) => {
      const why = directiveMismatch(c, c.spark);
      return why ? [`  ${topic}.sql:${c.line}: ${why}\n    ${c.sql.split("\n")[0]}`] : [];
    });
    if (wrong.length > 0) {
      failed = true;
      process.stderr.write(`${topic}: not written\n${wrong.join("\n")}\n`);
      continue;
    }
    const expected: Expected = { topic, spark: SPARK, delta: DELTA, cases: merged };
    writeFileSync(join(EXPECTED_DIR, `${topic}.json`), `${JSON.stringify(expected, null, 1)}\n`);
    process.stdout.write(`${topic}: ${merged.length} answers written\n`);
  }
  if (failed) process.exitCode = 1;
}

async function sparkAnswers(
  request: { topic: string; statements: string[] }[],
): Promise<Map<string, SparkAnswer[]>> {
  const python = await ucPython();
  const child = spawn(python, [join(import.meta.dirname, "spark_answers.py")], {
    env: { ...process.env, TZ: "UTC", SILT_UC_IVY: IVY_DIR, PYTHONPATH: CLIENTS_DIR },
    stdio: ["pipe", "pipe", "pipe"],
  });
  // Spark logs every refused statement with its Java stack: shown only when the run fails.
  let log = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    log = (log + d).slice(-20_000);
  });
  child.stdin.end(JSON.stringify({ topics: request }));
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`spark_answers.py exited with ${code}:\n${log}`);
  const answers = new Map<string, SparkAnswer[]>();
  for (const line of out.split("\n").filter((l) => l.trim() !== "")) {
    const { topic, answers: a } = JSON.parse(line) as { topic: string; answers: SparkAnswer[] };
    answers.set(topic, a);
  }
  return answers;
}

await main(process.argv.slice(2));
