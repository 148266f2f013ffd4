/**
 * Every failure a caller can see is a SiltError: a Spark/Delta error class, the parameters its
 * message was rendered from, the HTTP status the API answers with, and the SQLSTATE where Spark
 * defines one. Classes, statuses, SQLSTATEs and message templates live in one registry
 * (error-classes.ts); raising through `siltError` checks a class's parameters
 * against its template at compile time.
 */
import { type ERROR_CLASSES, type ErrorClassEntry, errorClassEntry } from "./error-classes.ts";

/** A message parameter: what a template's `{name}` renders (with String(), as `${}` does). */
export type ParamValue = string | number | bigint | boolean | null | undefined;
export type ErrorParameters = Readonly<Record<string, ParamValue>>;

type Classes = typeof ERROR_CLASSES;

/**
 * A class, or `CLASS:VARIANT` for a class the engine raises with more than one message (Spark
 * would give those subclasses; Silt keeps the reported class as it is).
 */
export type ErrorCondition = {
  [C in keyof Classes & string]: Classes[C] extends { messages: infer M }
    ? `${C}:${keyof M & string}`
    : C;
}[keyof Classes & string];

type TemplateOf<K extends ErrorCondition> = K extends `${infer C extends keyof Classes}:${infer V}`
  ? Classes[C] extends { messages: infer M }
    ? M[V & keyof M]
    : never
  : K extends keyof Classes
    ? Classes[K] extends { message: infer T }
      ? T
      : never
    : never;

/** `{name}` placeholders; braces around anything but a bare name (JSON examples) are text. */
type Placeholders<T> = T extends `${string}{${infer P}}${infer Rest}`
  ? (P extends `${string}${" " | '"' | ":" | "," | "{"}${string}` ? never : P) | Placeholders<Rest>
  : never;

/** The parameters argument of `siltError(condition, …)`: absent when the template has none. */
export type ParamsOf<K extends ErrorCondition> = [Placeholders<TemplateOf<K>>] extends [never]
  ? []
  : [params: { readonly [P in Placeholders<TemplateOf<K>>]: ParamValue }];

const PLACEHOLDER = /\{(\w+)\}/g;

export interface ErrorBody {
  error_class: string;
  message: string;
  sqlstate?: string;
  message_parameters?: Record<string, string>;
}

export class SiltError extends Error {
  readonly errorClass: string;
  readonly status: number;
  readonly sqlstate: string | undefined;
  readonly parameters: ErrorParameters;

  constructor(
    errorClass: string,
    message: string,
    status: number,
    sqlstate: string | undefined,
    parameters: ErrorParameters,
  ) {
    super(message);
    this.name = "SiltError";
    this.errorClass = errorClass;
    this.status = status;
    this.sqlstate = sqlstate;
    this.parameters = parameters;
  }

  /** The same error with more context around its message (the file, the row, the position). */
  withMessage(message: string, sqlstate = this.sqlstate): SiltError {
    return new SiltError(this.errorClass, message, this.status, sqlstate, this.parameters);
  }

  /**
   * The API's error body. `message_parameters` carries the values the message was rendered from,
   * as Spark's `messageParameters` does, so a caller can act on them without parsing text.
   */
  toJSON(): ErrorBody {
    const body: ErrorBody = { error_class: this.errorClass, message: this.message };
    if (this.sqlstate !== undefined) body.sqlstate = this.sqlstate;
    const params = Object.entries(this.parameters).filter(([, v]) => v !== undefined);
    if (params.length > 0) {
      body.message_parameters = Object.fromEntries(params.map(([k, v]) => [k, String(v)]));
    }
    return body;
  }
}

/** The entry and message template of a condition. */
function conditionOf(condition: string): {
  errorClass: string;
  entry: ErrorClassEntry;
  template: string;
} {
  const [errorClass, variant] = condition.split(":");
  const entry = errorClassEntry(errorClass);
  const template = variant === undefined ? entry?.message : entry?.messages?.[variant];
  if (entry === undefined || template === undefined) {
    throw new Error(`No error condition ${condition} in the registry`);
  }
  return { errorClass, entry, template };
}

function renderMessage(template: string, params: ErrorParameters): string {
  return template.replace(PLACEHOLDER, (text, name: string) =>
    name in params ? String(params[name]) : text,
  );
}

export function siltError<K extends ErrorCondition>(condition: K, ...args: ParamsOf<K>): SiltError {
  const params: ErrorParameters = args[0] ?? {};
  const { errorClass, entry, template } = conditionOf(condition);
  return new SiltError(
    errorClass,
    renderMessage(template, params),
    entry.status,
    entry.sqlstate,
    params,
  );
}
