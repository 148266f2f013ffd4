/**
 * Errors in the shapes Unity Catalog's clients read. The engine raises Spark/Delta error classes
 * (SiltError); each UC API answers them in its own body and, where UC differs, its own status:
 *
 * - legacy API: `{"error_code", "message", "details": [{"@type": …ErrorInfo, "reason"}]}`, with
 *   *_ALREADY_EXISTS as 400 (UC's legacy server answers them so);
 * - UC Delta API: `{"error": {"message", "type", "code"}}`, `type` one of delta.yaml's exception
 *   names, which Delta's client maps to its own exceptions (404 NoSuchTableException drives
 *   "table does not exist"; 409 makes a committer reload and retry).
 */
import { errorClassEntry } from "../../error-classes.ts";
import { type SiltError, siltError } from "../../errors.ts";

export const UC_PREFIX = "/api/2.1/unity-catalog";
export const UC_DELTA_PREFIX = `${UC_PREFIX}/delta/v1`;

/** The code of any other error, by its status. */
const BY_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  501: "UNIMPLEMENTED",
};

/** UC error code -> the UC Delta API's exception type and status. */
const DELTA_TYPES: Record<string, [string, number]> = {
  CATALOG_NOT_FOUND: ["NoSuchCatalogException", 404],
  SCHEMA_NOT_FOUND: ["NoSuchSchemaException", 404],
  TABLE_NOT_FOUND: ["NoSuchTableException", 404],
  NOT_FOUND: ["NotFoundException", 404],
  CATALOG_ALREADY_EXISTS: ["AlreadyExistsException", 409],
  SCHEMA_ALREADY_EXISTS: ["AlreadyExistsException", 409],
  TABLE_ALREADY_EXISTS: ["AlreadyExistsException", 409],
  ALREADY_EXISTS: ["AlreadyExistsException", 409],
  ABORTED: ["CommitVersionConflictException", 409],
  COMMIT_VERSION_CONFLICT: ["CommitVersionConflictException", 409],
  UPDATE_REQUIREMENT_CONFLICT: ["UpdateRequirementConflictException", 409],
  PERMISSION_DENIED: ["PermissionDeniedException", 403],
  UNAUTHENTICATED: ["NotAuthorizedException", 401],
  RESOURCE_EXHAUSTED: ["ResourceExhaustedException", 429],
  FAILED_PRECONDITION: ["BadRequestException", 400],
  INVALID_ARGUMENT: ["InvalidParameterValueException", 400],
  UNIMPLEMENTED: ["NotImplementedException", 501],
  INTERNAL: ["InternalServerErrorException", 500],
};

const LEGACY_STATUS: Record<string, number> = {
  CATALOG_ALREADY_EXISTS: 400,
  SCHEMA_ALREADY_EXISTS: 400,
  TABLE_ALREADY_EXISTS: 400,
  FAILED_PRECONDITION: 400,
};

/** The class's own UC code from the registry, else the code of its status. */
export function ucErrorCode(err: SiltError): string {
  return errorClassEntry(err.errorClass)?.uc ?? BY_STATUS[err.status] ?? "INTERNAL";
}

/** The status and body a UC route answers `err` with; undefined outside the UC APIs. */
export function ucErrorResponse(
  path: string,
  err: SiltError,
): { status: number; body: unknown } | undefined {
  if (!path.startsWith(UC_PREFIX)) return undefined;
  const code = ucErrorCode(err);
  if (path.startsWith(UC_DELTA_PREFIX)) {
    const [type, status] = DELTA_TYPES[code] ?? ["InternalServerErrorException", 500];
    return { status, body: { error: { message: err.message, type, code: status } } };
  }
  const status = LEGACY_STATUS[code] ?? err.status;
  return {
    status,
    body: {
      error_code: code,
      message: err.message,
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: code }],
    },
  };
}

export const noUniForm = () => siltError("UNIMPLEMENTED:UNIFORM");

/** Path credentials are for external tables and locations, which Silt does not have. */
export const noExternalLocations = () => siltError("PERMISSION_DENIED");
