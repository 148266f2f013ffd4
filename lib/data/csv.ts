/**
 * CSV text -> records of fields, tokenized by csv-parse as Spark 4.1 reads an RFC 4180 file
 * (`multiLine` on, `escape` '"'): quoted fields may hold delimiters, newlines and doubled quotes;
 * blank lines are skipped, but a line holding only `""` is a record; records may be shorter or
 * longer than the header (Spark's PERMISSIVE mode reads missing fields as NULL and drops extra
 * ones). Whitespace is kept. Fields are returned as text: Spark, with its default `nullValue` "",
 * reads an empty field and a quoted empty string alike as NULL, so the text tells all it needs.
 */
import { CsvError, parse } from "csv-parse/sync";
import { siltError } from "../errors.ts";

/** The records of `text`, `source` naming it in errors. */
export function parseCsv(text: string, delimiter: string, source: string): string[][] {
  try {
    return parse(text, {
      delimiter,
      // A quote inside an unquoted field is data, as in Spark.
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: true,
    });
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    throw siltError("MALFORMED_RECORD_IN_PARSING:CSV", { source, message: err.message });
  }
}
