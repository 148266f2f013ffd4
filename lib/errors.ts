/**
 * Every failure a caller can see is a SiltError: a Spark/Delta error class, a message that says
 * what to fix, the HTTP status the API answers with, and the SQLSTATE where Spark defines one.
 */
export class SiltError extends Error {
  readonly errorClass: string;
  readonly status: number;
  readonly sqlstate: string | undefined;

  constructor(errorClass: string, message: string, status: number, sqlstate?: string) {
    super(message);
    this.name = "SiltError";
    this.errorClass = errorClass;
    this.status = status;
    this.sqlstate = sqlstate;
  }

  toJSON(): { error_class: string; message: string; sqlstate?: string } {
    return this.sqlstate === undefined
      ? { error_class: this.errorClass, message: this.message }
      : { error_class: this.errorClass, message: this.message, sqlstate: this.sqlstate };
  }
}

export const badRequest = (errorClass: string, message: string, sqlstate?: string) =>
  new SiltError(errorClass, message, 400, sqlstate);

export const notFound = (errorClass: string, message: string, sqlstate?: string) =>
  new SiltError(errorClass, message, 404, sqlstate);

export const conflict = (errorClass: string, message: string, sqlstate?: string) =>
  new SiltError(errorClass, message, 409, sqlstate);

export const internal = (errorClass: string, message: string) =>
  new SiltError(errorClass, message, 500);

/** A table needs a protocol feature this engine does not implement. */
export const unsupportedFeature = (features: string[], forWrite = false) =>
  new SiltError(
    forWrite ? "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE" : "DELTA_UNSUPPORTED_FEATURES_FOR_READ",
    `Unable to ${forWrite ? "write" : "read"} this table because it requires table feature(s) ` +
      `that Silt does not support: ${features.join(", ")}.`,
    400,
    "56038",
  );
