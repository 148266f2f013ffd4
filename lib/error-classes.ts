/**
 * The error registry: every error class Silt raises, with the HTTP status the API answers it with,
 * its SQLSTATE (Spark's, where Spark defines the class), its Unity Catalog error code where UC
 * has one of its own, and its message template. `{name}` in a template is a parameter the raiser
 * passes (errors.ts checks them at compile time); a class raised with several messages lists
 * them under `messages`, each raised as `CLASS:VARIANT` and reported as CLASS.
 */

/** The UC error codes a class can map to (lib/api/uc/errors.ts maps the rest by status). */
export type UcErrorCode =
  | "CATALOG_NOT_FOUND"
  | "SCHEMA_NOT_FOUND"
  | "TABLE_NOT_FOUND"
  | "CATALOG_ALREADY_EXISTS"
  | "SCHEMA_ALREADY_EXISTS"
  | "TABLE_ALREADY_EXISTS"
  | "FAILED_PRECONDITION"
  | "PERMISSION_DENIED"
  | "UNAUTHENTICATED"
  | "COMMIT_VERSION_CONFLICT"
  | "UPDATE_REQUIREMENT_CONFLICT"
  | "RESOURCE_EXHAUSTED"
  | "UNIMPLEMENTED";

export interface ErrorClassEntry {
  readonly status: number;
  readonly sqlstate?: string;
  readonly uc?: UcErrorCode;
  readonly message?: string;
  readonly messages?: Readonly<Record<string, string>>;
}

export const ERROR_CLASSES = {
  ALTER_TABLE_COLUMN_DESCRIPTOR_DUPLICATE: {
    status: 400,
    sqlstate: "42710",
    message:
      'ALTER TABLE ADD column {name} specifies descriptor "{label}" more than once, which is invalid.',
  },
  AMBIGUOUS_REFERENCE: {
    status: 400,
    sqlstate: "42704",
    message: "Reference {name} is ambiguous, could be: [{refs}].",
  },
  ARITHMETIC_OVERFLOW: {
    status: 400,
    sqlstate: "22003",
    message: '{message}.{alt} If necessary set {config} to "false" to bypass this error.',
  },
  ASSIGNMENT_ARITY_MISMATCH: {
    status: 400,
    sqlstate: "42802",
    message:
      "Number of column aliases does not match number of columns. Number of column aliases: {columnsCount}; number of columns: {width}.",
  },
  BINARY_ARITHMETIC_OVERFLOW: {
    status: 400,
    sqlstate: "22003",
    message:
      "{left} {symbol} {right} caused overflow. Use `{tryFunction}` to ignore overflow problem and return NULL.",
  },
  CANNOT_PARSE_TIMESTAMP: {
    status: 400,
    sqlstate: "22007",
    message:
      "Text '{text}' could not be parsed at index {index}. Use `try_to_timestamp` to tolerate invalid input string and return NULL instead.",
  },
  CANNOT_RENAME_ACROSS_SCHEMA: {
    status: 400,
    sqlstate: "0AKNC",
    message:
      "Renaming a table across schemas is not allowed: {from} cannot become {to}. Give the new name alone, or qualify it with the table's own catalog and schema.",
  },
  CANNOT_RESOLVE_STAR_EXPAND: {
    status: 400,
    sqlstate: "42704",
    message: "Cannot resolve {qualifier}.* given input columns {fields}.",
  },
  CAST_INVALID_INPUT: {
    status: 400,
    sqlstate: "22018",
    messages: {
      AT_LOCATION:
        'The value {expression} of the type "{sourceType}" cannot be cast to "{targetType}" because it is malformed ({loc}). Correct the value as per the syntax, or change its target type.',
      USE_TRY_CAST:
        "The value {value} of the type {from} cannot be cast to {to} because it is malformed. Correct the value as per the syntax, or change its target type. Use `try_cast` to tolerate malformed input and return NULL instead.",
    },
  },
  CAST_OVERFLOW: {
    status: 400,
    sqlstate: "22003",
    message:
      "The value {value} of the type {from} cannot be cast to {to} due to an overflow. Use `try_cast` to tolerate overflow and return NULL instead.",
  },
  CAST_OVERFLOW_IN_TABLE_INSERT: {
    status: 400,
    sqlstate: "22003",
    message:
      'Fail to assign a value of "{sourceType}" type to the "{targetType}" type column or variable {columnName} due to an overflow{row}.',
  },
  CATALOG_ALREADY_EXISTS: {
    status: 409,
    sqlstate: "42P04",
    uc: "CATALOG_ALREADY_EXISTS",
    message:
      "Cannot create catalog {catalog} because it already exists.\nChoose a different name, drop the existing catalog, or add the IF NOT EXISTS clause to tolerate pre-existing catalog.",
  },
  CATALOG_CORRUPT: {
    status: 500,
    messages: {
      MISSING_ATTRIBUTE: "catalog item lacks {key}",
      MISSING_ID: "catalog item lacks its id",
    },
  },
  CATALOG_INVALID_STATE: {
    status: 500,
    messages: {
      ABORT_CREATE: "cannot abort the creation of table {tableId}: it is {state}",
      FINISH_DROP: "finishDropTable on table {tableId} in state {state}; call beginDropTable first",
    },
  },
  CATALOG_NOT_EMPTY: {
    status: 409,
    sqlstate: "2BP01",
    uc: "FAILED_PRECONDITION",
    message:
      "Cannot drop a catalog {catalog} because it contains schemas.\nUse DROP CATALOG ... CASCADE to drop the catalog and all its objects.",
  },
  CATALOG_NOT_FOUND: {
    status: 404,
    sqlstate: "42P08",
    uc: "CATALOG_NOT_FOUND",
    message:
      "The catalog {catalog} not found. Verify the spelling of the catalog name, or create it with CREATE CATALOG.",
  },
  COLUMN_ALREADY_EXISTS: {
    status: 400,
    sqlstate: "42711",
    messages: {
      EXISTS:
        "The column {path} already exists. Choose another name or rename the existing column.",
      PARTITIONED_BY_TWICE: "The column `{name}` is listed twice in PARTITIONED BY.",
    },
  },
  COMMIT_VERSION_CONFLICT: {
    status: 409,
    uc: "COMMIT_VERSION_CONFLICT",
    message:
      "Commit version already accepted. Version {version} was accepted with commit file {winner}, but the request carried {fileName}. Reload the table and commit at the next version.",
  },
  CREATE_TABLE_COLUMN_DESCRIPTOR_DUPLICATE: {
    status: 400,
    sqlstate: "42710",
    message:
      'CREATE TABLE column {name} specifies descriptor "{label}" more than once, which is invalid.',
  },
  CREDENTIAL_VENDING_NOT_CONFIGURED: {
    status: 501,
    messages: {
      READ: "This deployment vends no table credentials: set SILT_TABLE_ACCESS_ROLE_ARN to the role readers assume (the CDK stack creates it and sets the variable).",
      READ_WRITE:
        "This deployment vends no credentials that write tables (SILT_TABLE_WRITE_ROLE_ARN is not set; the CDK stack creates the table-write role and sets it), so table {table} (id {tableId}) cannot be written from outside of Silt here. Request READ credentials to read its files, and write through Silt (the insert, merge or SQL routes, or objects under {ingestPrefix} in the bucket).",
    },
  },
  "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES": {
    status: 400,
    sqlstate: "42K09",
    message:
      'Cannot resolve "{sqlExpr}" due to data type mismatch: the left and right operands of the binary operator have incompatible types ({left} and {right}).',
  },
  "DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE": {
    status: 400,
    sqlstate: "42K09",
    message:
      'Cannot resolve "{sqlExpr}" due to data type mismatch: the binary operator requires the input type {inputType}, not {type}.',
  },
  "DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION": {
    status: 400,
    sqlstate: "42K09",
    message:
      'Cannot resolve "{sqlExpr}" due to data type mismatch: cannot cast {srcType} to {targetType}.',
  },
  "DATATYPE_MISMATCH.CAST_WITH_CONF_SUGGESTION": {
    status: 400,
    sqlstate: "42K09",
    message:
      "Cannot resolve \"{sqlExpr}\" due to data type mismatch: cannot cast {srcType} to {targetType} with ANSI mode on.\nIf you have to cast {srcType} to {targetType}, you can set {config} as 'false'.",
  },
  "DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION": {
    status: 400,
    sqlstate: "42K09",
    message:
      'Cannot resolve "{sqlExpr}" due to data type mismatch: cannot cast {srcType} to {targetType}.\nTo convert values from {srcType} to {targetType}, you can use the functions {functionNames} instead.',
  },
  "DATATYPE_MISMATCH.DATA_DIFF_TYPES": {
    status: 400,
    sqlstate: "42K09",
    messages: {
      IN: 'Cannot resolve "{sqlExpr}" due to data type mismatch: Input to `in` should all be the same type, but it\'s [{types}].',
      FUNCTION:
        'Cannot resolve "{sqlExpr}" due to data type mismatch: Input to {fn} should all be the same type, but it\'s [{values}].',
    },
  },
  "DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN": {
    status: 400,
    sqlstate: "42K09",
    message:
      'Cannot resolve "{sqlExpr}" due to data type mismatch: Filter expression "{sqlExpr}" of type {type} is not a boolean.',
  },
  "DATATYPE_MISMATCH.INVALID_ORDERING_TYPE": {
    status: 400,
    sqlstate: "42K09",
    messages: {
      OPERATOR:
        'Cannot resolve "{sqlExpr}" due to data type mismatch: The {op} does not support ordering on type {type}.',
      IN: 'Cannot resolve "{sqlExpr}" due to data type mismatch: The `in` does not support ordering on type {type}.',
      FUNCTION:
        'Cannot resolve "{sqlExpr}" due to data type mismatch: The `{name}` does not support ordering on type {type}.',
    },
  },
  "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT": {
    status: 400,
    sqlstate: "42K09",
    message:
      'Cannot resolve "{sqlExpr}" due to data type mismatch: the input scale should be a foldable "INT" expression; however, got "{sqlExpr}".',
  },
  "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE": {
    status: 400,
    sqlstate: "42K09",
    message:
      'Cannot resolve "{sqlExpr}" due to data type mismatch: The {index} parameter requires the {required} type, however "{arg}" has the type {type}.',
  },
  DATATYPE_MISSING_SIZE: {
    status: 400,
    sqlstate: "42K01",
    message:
      'DataType "{shown}" requires a length parameter, for example "{shown}"(10). Please specify the length.',
  },
  DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION: {
    status: 400,
    sqlstate: "22003",
    message: "Decimal precision {precision} exceeds max precision {maxPrecision}.",
  },
  DELTA_ADD_COLUMN_PARENT_NOT_STRUCT: {
    status: 400,
    message: "Cannot add {column} because its parent is not a StructType. Found {type}.",
  },
  DELTA_AGGREGATION_NOT_SUPPORTED: {
    status: 400,
    sqlstate: "42903",
    messages: {
      OPERATION_CONDITION:
        "Aggregate functions are not supported in the {operation} (condition = {condition}).",
      MERGE_CONDITION:
        "Aggregate functions are not supported in the MERGE {clause} (condition = {condition}).",
      MERGE_EXPRESSION:
        "Aggregate functions are not supported in the MERGE {clause} ({expression}).",
      UPDATE_ASSIGNMENT: "Aggregate functions are not supported in the UPDATE ({path} = {value}).",
    },
  },
  DELTA_CANNOT_MODIFY_APPEND_ONLY: {
    status: 400,
    sqlstate: "42809",
    message:
      "This table is configured to only allow appends. If you would like to permit updates or deletes, use 'ALTER TABLE {tableName} SET TBLPROPERTIES (delta.appendOnly=false)'.",
  },
  DELTA_CANNOT_RESTORE_TABLE_VERSION: {
    status: 400,
    sqlstate: "22003",
    message:
      "Cannot restore table to version {version}. Available versions: [{startVersion}, {endVersion}].",
  },
  DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER: {
    status: 400,
    sqlstate: "22003",
    message:
      "Cannot restore table to timestamp ({requestedTimestamp}) as it is before the earliest version available. Please use a timestamp after ({earliestTimestamp}).",
  },
  DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER: {
    status: 400,
    sqlstate: "22003",
    message:
      "Cannot restore table to timestamp ({requestedTimestamp}) as it is after the latest version available. Please use a timestamp before ({latestTimestamp}).",
  },
  DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION: {
    status: 400,
    sqlstate: "428FT",
    message: "Cannot use all columns for partition columns",
  },
  DELTA_COLUMN_MAPPING_PHYSICAL_NAMES_MISSING: {
    status: 400,
    message:
      "Table {tableName} uses column mapping, so its data files must name columns by their physical names, but {path} has column(s) {unknown}. The engine that wrote it does not support column mapping; write with one that does, or use a table created with 'delta.columnMapping.mode' = 'none'.",
  },
  DELTA_CONCURRENT_APPEND: {
    status: 409,
    sqlstate: "2D521",
    message:
      "Transaction conflict detected. A concurrent {op} added data to table {table} {at}. Please try the operation again.",
  },
  DELTA_CONCURRENT_DELETE_DELETE: {
    status: 409,
    sqlstate: "2D521",
    message:
      "Transaction conflict detected. A concurrent {op} deleted data from table {table} {at} that this transaction attempted to delete. Please try the operation again.",
  },
  DELTA_CONCURRENT_DELETE_READ: {
    status: 409,
    sqlstate: "2D521",
    message:
      "Transaction conflict detected. A concurrent {op} deleted data from table {table} {at} that this transaction read. Please try the operation again.",
  },
  DELTA_CONCURRENT_TRANSACTION: {
    status: 409,
    sqlstate: "2D521",
    messages: {
      DOMAIN:
        "ConcurrentTransactionException: A conflicting metadata domain {domain} is added. Please try the operation again. {conflictingCommit}",
      APP_ID:
        "ConcurrentTransactionException: This error occurs when multiple writers use the same application transaction id ({appId}) to write into table {table}. Did you run multiple instances of the same job at the same time? {conflictingCommit}",
      INGESTED: "Objects {done} were ingested by a concurrent commit.",
    },
  },
  DELTA_CONCURRENT_WRITE: {
    status: 409,
    sqlstate: "2D521",
    message:
      "ConcurrentWriteException: A concurrent transaction has written new data since the current transaction read the table {tableName}, {attempts} times in a row over {retryingMs} ms (last at version {target}). Please try the operation again.",
  },
  DELTA_CONFLICT_SET_COLUMN: {
    status: 400,
    sqlstate: "42701",
    message: "There is a conflict from these SET columns: [{mine}].",
  },
  DELTA_DELETION_VECTOR_CARDINALITY_MISMATCH: {
    status: 500,
    message: "The {deletionVector} holds {rows} rows but its descriptor says {cardinality}",
  },
  DELTA_DELETION_VECTOR_CHECKSUM_MISMATCH: {
    status: 500,
    message: "The {deletionVector} in {key} is corrupt: stored CRC-32 {stored}, computed {actual}",
  },
  DELTA_DELETION_VECTOR_INVALID_BITMAP: {
    status: 500,
    message: "Malformed deletion vector bitmap: {message}",
  },
  DELTA_DELETION_VECTOR_INVALID_ROW_INDEX: {
    status: 500,
    messages: {
      OUTSIDE_FILE: "Deletion vector row index {rowIndex} is outside the file's {numRows} rows",
      NOT_AN_INDEX:
        "Invalid deletion vector row index {value} at position {position}: expected an integer in [0, 2^53)",
      NOT_ASCENDING:
        "Deletion vector row indexes must be strictly ascending: {value} follows {prev} at position {position}",
    },
  },
  DELTA_DELETION_VECTOR_SIZE_MISMATCH: {
    status: 500,
    message:
      "The {deletionVector} does not match its descriptor's sizeInBytes {sizeInBytes}: {detail}",
  },
  DELTA_DELETION_VECTOR_TOO_LARGE: {
    status: 500,
    message: "A deletion vector file of {total} bytes exceeds the 2 GiB a descriptor can address",
  },
  DELTA_DELETION_VECTOR_WRITE_FAILED: {
    status: 500,
    message: "Could not create a deletion vector file with a fresh name after 3 attempts",
  },
  DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA: {
    status: 400,
    sqlstate: "0AKDC",
    message: "Cannot drop column from a schema with a single column. Schema:\n{schema}",
  },
  DELTA_DYNAMIC_PARTITION_OVERWRITE_INCOMPATIBLE_REPLACE_ON_OR_USING: {
    status: 400,
    sqlstate: "42613",
    message:
      "Dynamic partition overwrite ('partitionOverwriteMode'='dynamic') cannot be used together with 'replaceOn' or 'replaceUsing'.",
  },
  DELTA_EMPTY_SCHEMA: {
    status: 400,
    sqlstate: "42000",
    message: "A table needs at least one column. List its columns, e.g. (id INT, name STRING).",
  },
  DELTA_FILE_NOT_FOUND_DETAILED: {
    status: 500,
    sqlstate: "42K03",
    messages: {
      DELETION_VECTOR:
        "File {key} referenced in the transaction log ({deletionVector}) cannot be found. This occurs when data has been manually deleted from the file system rather than using the table `DELETE` statement.",
      DATA_FILE:
        "File {path} referenced in the transaction log cannot be found. This occurs when data has been manually deleted from the file system rather than using the table `DELETE` statement.",
    },
  },
  DELTA_INCOMPATIBLE_DATAFRAME_OPTIONS: {
    status: 400,
    sqlstate: "42613",
    message:
      "Option(s) 'replaceOn' and 'replaceUsing' cannot be used together. Give either the USING columns or the ON condition.",
  },
  DELTA_INSERT_COLUMN_ARITY_MISMATCH: {
    status: 400,
    sqlstate: "42802",
    messages: {
      NESTED:
        "Cannot write to '{table}', not enough nested fields in {path}; target table has {targetColumns} column(s) but the inserted data has {dataColumns} column(s).",
      TOP_LEVEL:
        "Cannot write to '{table}', not enough data columns; target table has {targetColumns} column(s) but the inserted data has {dataColumns} column(s).",
    },
  },
  DELTA_INSERT_REPLACE_ON_AMBIGUOUS_COLUMNS_IN_CONDITION: {
    status: 400,
    sqlstate: "42702",
    message:
      "Column(s) {ambiguous} are ambiguous in the condition of INSERT REPLACE ON. Qualify them with the target table's alias or the source's alias.",
  },
  DELTA_INSERT_REPLACE_ON_UNRESOLVED_COLUMNS_IN_CONDITION: {
    status: 400,
    sqlstate: "42703",
    message:
      "Column(s) {unresolved} cannot be resolved in the condition of INSERT REPLACE ON: they are neither columns of the target table nor of the source.",
  },
  DELTA_INVALID_CALENDAR_INTERVAL_EMPTY: {
    status: 400,
    sqlstate: "2200P",
    message: "Interval cannot be null or blank.",
  },
  DELTA_INVALID_DELETION_VECTOR_DESCRIPTOR: {
    status: 500,
    message: "Invalid {deletionVector}: {why}",
  },
  DELTA_INVALID_DELETION_VECTOR_PREFIX: {
    status: 500,
    message: 'Deletion vector prefix {prefix} may only use letters, digits, "_" and "-"',
  },
  DELTA_INVALID_INGEST_MERGE_KEYS: {
    status: 400,
    message: "Table property silt.ingest.mergeKeys names `{key}`, which is not a column.",
  },
  DELTA_INVALID_INTERVAL: {
    status: 400,
    sqlstate: "22006",
    message: "{interval} is not a valid INTERVAL.",
  },
  DELTA_INVALID_ISOLATION_LEVEL: {
    status: 400,
    sqlstate: "25000",
    message: "invalid isolation level '{isolationLevel}'",
  },
  DELTA_INVALID_PARTITION_COLUMN_TYPE: {
    status: 400,
    sqlstate: "42996",
    message: "Using column `{name}` of type {type} as a partition column is not supported.",
  },
  DELTA_INVALID_PROTOCOL_VERSION: {
    status: 400,
    sqlstate: "KD004",
    messages: {
      READ: "Unsupported Delta protocol version: table requires reader version {minReaderVersion} and writer version {minWriterVersion}, but Silt supports reader versions 1 to {MAX_READER_VERSION}.",
      WRITE:
        "Unsupported Delta protocol version: the table requires writer version {minWriterVersion}, but Silt supports up to 7.",
    },
  },
  DELTA_INVALID_TABLE_ROOT: {
    status: 500,
    message: 'Table root {tableRoot} must be empty or end with "/"',
  },
  // Bad Z85 only comes from a corrupt log or a bug, so it is a server-side failure.
  DELTA_INVALID_Z85_ENCODING: {
    status: 500,
    messages: {
      TEXT_LENGTH: "Invalid Z85 text: length {length} is not a multiple of 5",
      BYTE_LENGTH:
        "Invalid Z85 byte length {byteLength}: the text decodes to {decodedLength} bytes",
      CHARACTER: "Invalid Z85 character {text} at position {position}",
      GROUP_OVERFLOW: "Invalid Z85 group {text}: overflows",
      UUID: "Invalid UUID {uuid}",
      UUID_LENGTH: "Invalid Z85 UUID {text}: expected 20 characters",
    },
  },
  DELTA_LOG_FILE_NOT_FOUND: {
    status: 500,
    sqlstate: "42K03",
    message:
      "Unable to retrieve the delta log files to construct table version {target}: version {gap} is missing and no usable checkpoint covers it.{why}",
  },
  DELTA_MERGE_ADD_VOID_COLUMN: {
    status: 400,
    sqlstate: "42K09",
    message:
      "Cannot add column `{name}` with type VOID. Please explicitly specify a non-void type.",
  },
  DELTA_MERGE_INSERT_COLUMN_ARITY_MISMATCH: {
    status: 400,
    sqlstate: "42802",
    message:
      "The INSERT clause of MERGE names {columnsCount} column(s) but gives {valuesCount} value(s).",
  },
  DELTA_MERGE_UNRESOLVED_EXPRESSION: {
    status: 400,
    sqlstate: "42601",
    message: "Cannot resolve {name} in {clause} given columns {cols}.",
  },
  DELTA_METADATA_CHANGED: {
    status: 409,
    sqlstate: "2D521",
    message:
      "MetadataChangedException: The metadata of the Delta table {table} has been changed by a concurrent update. Please try the operation again. {conflictingCommit}",
  },
  DELTA_MISSING_SET_COLUMN: {
    status: 400,
    sqlstate: "42703",
    message: "{column} column not found given columns: {fields}.",
  },
  DELTA_MODE_NOT_SUPPORTED: {
    status: 400,
    sqlstate: "0AKDC",
    message:
      "Specified mode '{props}' is not supported for 'delta.columnMapping.mode'. Supported modes are: none, name, id.",
  },
  DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE: {
    status: 400,
    sqlstate: "21506",
    message:
      "Cannot perform Merge as multiple source rows matched and attempted to modify the same\ntarget row in the Delta table in possibly conflicting ways. By SQL semantics of Merge,\nwhen multiple source rows match on the same target row, the result may be ambiguous\nas it is unclear which source row should be used to update or delete the matching\ntarget row. You can preprocess the source table to eliminate the possibility of\nmultiple matches. Please refer to\nhttps://docs.delta.io/latest/delta-update.html#upsert-into-a-table-using-merge",
  },
  DELTA_NON_PARTITION_COLUMN_REFERENCE: {
    status: 400,
    sqlstate: "42P10",
    message:
      "Predicate references non-partition column '{name}'. Only the partition columns may be referenced: [{partitionColumns}]",
  },
  DELTA_NOT_NULL_CONSTRAINT_VIOLATED: {
    status: 400,
    sqlstate: "23502",
    message: "NOT NULL constraint violated for column: {path}.",
  },
  DELTA_OPERATION_NOT_ALLOWED: {
    status: 400,
    sqlstate: "0AKDC",
    message:
      "Operation not allowed: `NOT NULL in ALTER TABLE ADD COLUMNS` is not supported for Delta tables",
  },
  DELTA_OVERWRITE_BY_FILTER_INCOMPATIBLE_REPLACE_ON_OR_USING: {
    status: 400,
    sqlstate: "42613",
    message:
      "Overwrite by filter ('replaceWhere') cannot be used together with 'replaceOn' or 'replaceUsing'.",
  },
  DELTA_PARQUET_CORRUPT: { status: 400, message: "Invalid Parquet file: {why}" },
  DELTA_PARTITION_COLUMN_NOT_FOUND: {
    status: 400,
    sqlstate: "42703",
    message: "Partition column `{name}` not found in schema [{fields}].",
  },
  DELTA_PROTOCOL_CHANGED: {
    status: 409,
    sqlstate: "2D521",
    message:
      "ProtocolChangedException: The protocol version of the Delta table {table} has been changed by a concurrent update. Please try the operation again. {conflictingCommit}",
  },
  DELTA_REPLACE_WHERE_MISMATCH: {
    status: 400,
    sqlstate: "44000",
    message:
      "Written data does not conform to partial table overwrite condition or constraint '{text}'.\nCHECK constraint EXPRESSION({text}) {text} violated by row with values:\n{values}",
  },
  DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE: {
    status: 400,
    sqlstate: "42613",
    message:
      "A 'replaceWhere' expression and 'partitionOverwriteMode'='dynamic' cannot both be set in the DataFrameWriter options.",
  },
  DELTA_SCHEMA_MISMATCH: {
    status: 400,
    sqlstate: "42KDG",
    message:
      "Object {key} does not match the schema of {name}: column `{column}` is not in the table (columns: {fields}).",
  },
  DELTA_SCHEMA_NOT_PROVIDED: {
    status: 400,
    sqlstate: "42908",
    message:
      "Table schema is not provided. Please provide the schema (column definition) of the table when using REPLACE table and an AS SELECT query is not provided.",
  },
  DELTA_SCHEMA_NOT_SET: {
    status: 400,
    sqlstate: "KD008",
    message:
      "Table schema is not set: the metadata of version {version} declares no columns. Write data into it or use CREATE TABLE to set the schema.",
  },
  DELTA_STATE_RECOVER_ERROR: {
    status: 500,
    sqlstate: "XXKDS",
    messages: {
      CORRUPT_COMMIT:
        "Commit file {key} for version {version} {problem}. The table cannot be read or written at this version until the file is restored.",
      NOT_RECOVERED:
        "The {what} of your Delta table could not be recovered while Reconstructing version: {version}. Did you manually delete files in the _delta_log directory?",
    },
  },
  DELTA_TABLE_NOT_FOUND: {
    status: 404,
    sqlstate: "42P01",
    message: "Delta table {tableRoot} doesn't exist: {logDir} holds no commits or checkpoints.",
  },
  DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION: {
    status: 400,
    sqlstate: "42816",
    message:
      "The provided timestamp ({providedTimestamp}) is before the earliest version available to this table ({earliestTimestamp}). Please use a timestamp after {minimumTimestamp}.",
  },
  DELTA_TIMESTAMP_GREATER_THAN_COMMIT: {
    status: 400,
    sqlstate: "42816",
    message:
      "The provided timestamp ({providedTimestamp}) is after the latest version available to this table ({latestTimestamp}). Please use a timestamp before or at {maximumTimestamp}.",
  },
  DELTA_TIMESTAMP_INVALID: {
    status: 400,
    sqlstate: "42816",
    message: "The provided timestamp ({text}) cannot be converted to a valid timestamp.",
  },
  DELTA_UNKNOWN_CONFIGURATION: {
    status: 400,
    sqlstate: "F0000",
    message: "Unknown configuration was specified: {rawKey}",
  },
  DELTA_UNSUPPORTED_ABSOLUTE_PATH: {
    status: 400,
    message:
      "Data file {path} is outside the table's location; Silt reads files under the table root only.",
  },
  DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE: {
    status: 400,
    sqlstate: "0AKDC",
    message:
      "The column mapping mode `{raw}` is not supported for this Delta version. Please upgrade if you want to use this mode.",
  },
  DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE: {
    status: 400,
    sqlstate: "0AKDC",
    message: "Changing column mapping mode from '{oldMode}' to '{newMode}' is not supported.",
  },
  DELTA_UNSUPPORTED_DATA_TYPE: {
    status: 400,
    message: "Cannot write nested type {type} containing timestamps to Parquet",
  },
  DELTA_UNSUPPORTED_DATA_TYPES: {
    status: 400,
    sqlstate: "0AKDC",
    message: "Found columns using unsupported data types: [{list}].",
  },
  DELTA_UNSUPPORTED_DELETION_VECTOR_PATH: {
    status: 400,
    message:
      "Cannot read {deletionVector}: {why}. Only absolute paths inside the table's own directory ({tableRoot}) can be read.",
  },
  DELTA_UNSUPPORTED_DML_WITHOUT_DELETION_VECTORS: {
    status: 400,
    sqlstate: "0AKDC",
    message:
      "Table {tableName} has 'delta.enableDeletionVectors' turned off; Silt writes row-level changes as deletion vectors only. Set the property to true and retry.",
  },
  DELTA_UNSUPPORTED_DROP_COLUMN: {
    status: 400,
    sqlstate: "0AKDC",
    message:
      "DROP COLUMN is not supported for your Delta table. It needs column mapping ('delta.columnMapping.mode' = 'name'), which Silt turns on when a table is created unless TBLPROPERTIES turn it off; it cannot be enabled later, so recreate the table with column mapping (CREATE OR REPLACE TABLE … AS SELECT) to rename or drop columns.",
  },
  DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN: {
    status: 400,
    sqlstate: "42000",
    message: "Dropping partition columns ({partitions}) is not allowed.",
  },
  DELTA_UNSUPPORTED_FEATURES_FOR_READ: {
    status: 400,
    sqlstate: "56038",
    message:
      "Unable to read this table because it requires table feature(s) that Silt does not support: {features}.",
  },
  DELTA_UNSUPPORTED_FEATURES_FOR_WRITE: {
    status: 400,
    sqlstate: "56038",
    messages: {
      FEATURES:
        "Unable to write this table because it requires table feature(s) that Silt does not support: {features}.",
      CHANGE_DATA_FEED:
        "Unable to write this table because it requires writer table feature(s) that are unsupported by Silt: changeDataFeed. Leave 'delta.enableChangeDataFeed' unset or false.",
      ALTER_TABLE:
        "Cannot alter table {tableName}: Silt enables table features only when a table is created; '{key}' cannot be set by ALTER TABLE.",
    },
  },
  DELTA_UNSUPPORTED_FEATURE_STATUS: {
    status: 400,
    sqlstate: "0AKDE",
    message:
      "Table feature {feature} must be 'supported' to be enabled through '{key}', but it is '{value}'.",
  },
  DELTA_UNSUPPORTED_RENAME_COLUMN: {
    status: 400,
    sqlstate: "0AKDC",
    message:
      "Column rename is not supported for your Delta table. It needs column mapping ('delta.columnMapping.mode' = 'name'), which Silt turns on when a table is created unless TBLPROPERTIES turn it off; it cannot be enabled later, so recreate the table with column mapping (CREATE OR REPLACE TABLE … AS SELECT) to rename or drop columns.",
  },
  DELTA_UNSUPPORTED_TABLE_PROPERTY_CHANGE: {
    status: 400,
    messages: {
      WITH_VALUE:
        "Cannot alter table {tableName}: '{key}' is '{currentValue}' and can only be chosen when the table is created (use CREATE OR REPLACE TABLE to change it).",
      AT_CREATE_ONLY:
        "Cannot alter table {tableName}: '{key}' can only be chosen when the table is created.",
    },
  },
  DELTA_UPDATE_NON_STRUCT_TYPE_FIELD: {
    status: 400,
    sqlstate: "0AKDC",
    message:
      "Updating nested fields is only supported for StructType, but you are trying to update a field of `{field}`, which is of type: {type}.",
  },
  DELTA_UPDATE_SCHEMA_MISMATCH_EXPRESSION: {
    status: 400,
    sqlstate: "42846",
    message: "Cannot cast {from} to {target}. All nested columns must match.",
  },
  DELTA_VACUUM_RETENTION_NEGATIVE: {
    status: 400,
    sqlstate: "22003",
    message: "Retention for VACUUM must be a non-negative number of hours, got {retainHours}.",
  },
  DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT: {
    status: 400,
    sqlstate: "22003",
    message:
      'Are you sure you would like to vacuum files with such a low retention period? If you have writers that are currently writing to this table, there is a risk that you may corrupt the state of your Delta table.\n\nIf you are certain that there are no operations being performed on this table, such as insert/upsert/delete/optimize, then you may turn off this check by setting:\nspark.databricks.delta.retentionDurationCheck.enabled = false\n\nIf you are not sure, please use a value not less than "{retentionHours} hours".',
  },
  DELTA_VERSIONS_NOT_CONTIGUOUS: {
    status: 500,
    sqlstate: "KD00C",
    message:
      "Versions ({listed}) are not contiguous. A gap in the delta log was detected at version {gap} while trying to load version {target}.{why}",
  },
  DELTA_VERSION_NOT_FOUND: {
    status: 400,
    sqlstate: "22003",
    message:
      "Cannot time travel Delta table to version {userVersion}. Available versions: [{earliest}, {latest}].",
  },
  DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST: {
    status: 400,
    sqlstate: "42703",
    message: "Z-Ordering column {column} does not exist in data schema.",
  },
  DELTA_ZORDERING_ON_PARTITION_COLUMN: {
    status: 400,
    sqlstate: "42P10",
    message: "{column} is a partition column. Z-Ordering can only be performed on data columns",
  },
  DIVIDE_BY_ZERO: {
    status: 400,
    sqlstate: "22012",
    // Spark's hints (try_divide, turning ANSI off) name nothing Silt has.
    message: "Division by zero.",
  },
  DUPLICATED_MAP_KEY: {
    status: 400,
    sqlstate: "23505",
    message: "Duplicate map key {key} was found, please check the input data.",
  },
  DUPLICATE_CLAUSES: {
    status: 400,
    sqlstate: "42614",
    message: "Found duplicate clauses: {label}. Please, remove one of them.",
  },
  DUPLICATE_KEY: { status: 400, sqlstate: "23505", message: "Found duplicate keys {key}." },
  FAILED_READ_FILE: {
    status: 500,
    messages: {
      BATCH_TOO_LARGE: "Column {column} holds more than 2 GiB in one batch.",
      TOO_MANY_LIST_ELEMENTS: "Column {column} holds more than 2^31 list elements.",
    },
  },
  "FAILED_READ_FILE.FILE_NOT_EXIST": {
    status: 400,
    sqlstate: "KD001",
    message:
      "Encountered error while reading file {path}. File does not exist. It is possible the underlying files have been updated: version {version} references it, but it was removed since and deleted (by VACUUM, or by hand). Time travel to a more recent version or timestamp instead.",
  },
  "FAILED_READ_FILE.NO_HINT": {
    status: 500,
    sqlstate: "KD001",
    message:
      "Encountered error while reading file {path}. It is not a valid Parquet file ({why}); replace it with an intact copy.",
  },
  "FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH": {
    status: 500,
    messages: {
      IN_A_FILE: "Column {column} is {target} in the table schema but {source} in a data file.",
      IN_THE_FILE:
        "Column {path} is a {expected} in the table schema but {found} in the data file.",
    },
  },
  FIELDS_ALREADY_EXISTS: {
    status: 400,
    sqlstate: "42710",
    message: "Cannot {op} column, because {path} already exists in {struct}.",
  },
  FIELD_NOT_FOUND: {
    status: 400,
    sqlstate: "42704",
    message: "No such struct field {name} in {fields}.",
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    message:
      "Idempotency-Key {callerKey} was already used for a different request to this route; use a new key for a new request.",
  },
  IDEMPOTENCY_REQUEST_IN_PROGRESS: {
    status: 409,
    message:
      "A request with Idempotency-Key {callerKey} is in progress; retry after it finishes to get its result.",
  },
  IDENTIFIER_TOO_MANY_NAME_PARTS: {
    status: 400,
    sqlstate: "42601",
    message:
      "{name} is not a valid identifier as it has more than 3 name parts. Use catalog.schema.table.",
  },
  "INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_STRUCT_FIELDS": {
    status: 400,
    sqlstate: "KD000",
    message:
      "Cannot write incompatible data for the table {table}: Cannot write extra fields {column} to the struct {path}.",
  },
  "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS": {
    status: 400,
    sqlstate: "21S01",
    messages: {
      COLUMN_LISTS:
        "Cannot write to {table}, the reason is too many data columns:\nTable columns: {tableColumns}.\nData columns: {dataColumns}.",
      COLUMN_COUNTS:
        "Cannot write to '{table}', the reason is too many data columns: target table has {targetColumns} column(s) but the inserted data has {dataColumns} column(s).",
    },
  },
  INSERT_REPLACE_USING_DISALLOW_MISALIGNED_COLUMNS: {
    status: 400,
    sqlstate: "42802",
    message:
      "All columns in the USING clause must appear in the same position in both the target and source schemas. USING columns that are misaligned: {misaligned}.",
  },
  INSUFFICIENT_PERMISSIONS: {
    status: 403,
    sqlstate: "42501",
    uc: "PERMISSION_DENIED",
    messages: {
      NOT_STAGER:
        "Insufficient privileges: User {principal} did not stage table {catalog}.{schema}.{name}.",
      NOT_OWNER:
        "Insufficient privileges: User {principal} is not an owner of {securable} '{fullName}'. Only {owners} can {action}.",
      MISSING_PRIVILEGE:
        "Insufficient privileges: User {principal} does not have {privilege} on {securable} '{fullName}'. Ask its owner to run: GRANT {privilege} ON {securableKeyword} {fullName} TO `{principal}`.",
      STAGED_BY_OTHER:
        "Insufficient privileges: User {principal} did not stage table {name}; {owner} did.",
      NO_PRIVILEGE:
        "Insufficient privileges: User {principal} does not have any privilege on {kind} '{name}'.",
    },
  },
  INTERNAL_ERROR: {
    status: 500,
    messages: {
      UNEXPECTED_FAILURE:
        "An internal error occurred. Quote request id {requestId} when reporting it.",
      STS_NO_CREDENTIALS: "STS AssumeRole answered without credentials.",
      ARROW_STREAM_SCHEMA:
        "A part of an Arrow answer was encoded with another schema message than its first part.",
      ARROW_TO_ROWS_WIDTH:
        "arrowToRows: the schema has {fieldsCount} column(s) but the data has {ncols}.",
      EVALUATE_NO_COLUMN: "evaluate: the batch has no column {ordinal} ({name}) for {kind}.",
      EVALUATE_SCALAR_NO_VALUE: "evaluateScalar: column {name} has no value.",
      AGGREGATE_AS_SCALAR:
        "The aggregate {name}() must be computed by the query engine, not evaluated as a scalar.",
      NO_EVALUATOR: "No evaluator for function {name}.",
      INTEGRAL_NOT_COERCED: "Integral {op} must be coerced to double first.",
      UNEXPECTED_OPERATOR: "Unexpected {op} on {type}.",
      SQL_PARSER_FAILED: "The SQL parser failed unexpectedly: {reason}",
      LOCAL_OBJECT_KEY: "Invalid object key for a local store: {key}",
    },
  },
  INVALID_ARGUMENT: {
    status: 2,
    messages: {
      READ_ONE_PATH: "silt read needs exactly one table path or s3:// URI.",
      READ_TABLE_NAME:
        "'{name}' is not a path: silt read reads a table's files (its directory or an s3:// URI). To read the table {name} by its name, run: silt sql \"SELECT * FROM {name}\"",
      NOT_NON_NEGATIVE_INTEGER: "{flag} needs a non-negative integer, got '{text}'.",
      OPTIONS: "{problem} See silt {command} --help.",
      SQL_STATEMENT_OR_FILE:
        'silt sql takes one statement or -f <file>, not {given}. Quote the statement as one argument: silt sql "SELECT 1".',
      SQL_FILE_UNREADABLE: "Cannot read SQL file {file}: {reason}.",
      FORMAT: "--format must be one of {formats} (got '{text}').",
      UNKNOWN_COMMAND: "Unknown command '{command}'. Commands: {commands}. See silt --help.",
    },
  },
  INVALID_ATTRIBUTE_NAME_SYNTAX: {
    status: 400,
    sqlstate: "42601",
    message:
      "Syntax error in the name {text}: {detail}. Check that back-quotes appear in pairs, a quoted string is a complete name part, and use a back-quote only inside quoted name parts (written as ``).",
  },
  INVALID_COLUMN_NAME: {
    status: 400,
    sqlstate: "42000",
    messages: {
      EMPTY: "Column {ordinal} has no name. Give every column a non-empty name.",
      CONTROL_CHARACTER: "Column name '{name}' contains a control character.",
    },
  },
  "INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER": {
    status: 400,
    sqlstate: "22007",
    message:
      "Unrecognized datetime pattern: {pattern}. Illegal pattern character found in datetime pattern: {c}. Please provide legal character.",
  },
  INVALID_ESC: {
    status: 400,
    sqlstate: "42604",
    message:
      "Found an invalid escape string: {escapeChar}. The escape string must contain only one character.",
  },
  INVALID_ESCAPE_CHAR: {
    status: 400,
    sqlstate: "42604",
    message: "The escape character must be a string literal of length one, but got {escape}.",
  },
  INVALID_EXTRACT_BASE_FIELD_TYPE: {
    status: 400,
    sqlstate: "42000",
    message:
      'Can\'t extract a value from "{base}". Need a complex type [STRUCT, ARRAY, MAP] but got {other}.',
  },
  "INVALID_FORMAT.ESC_AT_THE_END": {
    status: 400,
    sqlstate: "42601",
    message: "The format is invalid: '{pattern}'. The escape character is not allowed to end with.",
  },
  "INVALID_FORMAT.ESC_IN_THE_MIDDLE": {
    status: 400,
    sqlstate: "42601",
    message:
      "The format is invalid: '{pattern}'. The escape character is not allowed to precede '{next}'.",
  },
  INVALID_IDEMPOTENCY_KEY: {
    status: 400,
    message: "Header Idempotency-Key must be 1 to {maxLength} characters (a UUID is typical).",
  },
  INVALID_IDENTIFIER: {
    status: 400,
    sqlstate: "42602",
    messages: {
      NAME_PART:
        "The unquoted identifier {ident} is invalid and must be back quoted as: {quoted}.\nUnquoted identifiers can only contain ASCII letters ('a' - 'z', 'A' - 'Z'), digits ('0' - '9'), and underbar ('_').",
      DASHED:
        "The unquoted identifier {text} is invalid and must be back quoted as: `{text}`.\nUnquoted identifiers can only contain ASCII letters ('a' - 'z', 'A' - 'Z'), digits ('0' - '9'), and underbar ('_').\nUnquoted identifiers must also not start with a digit.\nDifferent data sources and meta stores may impose additional restrictions on valid identifiers.",
    },
  },
  INVALID_INGEST_EVENT: {
    status: 500,
    message: 'Expected an S3 "Object Created" event from EventBridge, got {source} "{event}".',
  },
  "INVALID_INLINE_TABLE.INCOMPATIBLE_TYPES_IN_INLINE_TABLE": {
    status: 400,
    sqlstate: "42000",
    message:
      "Invalid inline table. Found incompatible types in the column `col{ordinal}` for inline table.",
  },
  "INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH": {
    status: 400,
    sqlstate: "42000",
    message:
      "Invalid inline table. Inline table expected {expectedNumCols} columns but found {actualNumCols} columns in row {rowIndex}.",
  },
  INVALID_JSON_DATA_TYPE: {
    status: 400,
    sqlstate: "2203G",
    message: "Failed to convert the JSON string '{json}' to a data type. Please verify the input.",
  },
  "INVALID_LIMIT_LIKE_EXPRESSION.DATA_TYPE": {
    status: 400,
    sqlstate: "42K0E",
    message:
      "The limit like expression {expr} is invalid. The {name} expression must be integer type, but got {dataType}.",
  },
  "INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE": {
    status: 400,
    sqlstate: "42K0E",
    messages: {
      HISTORY_LIMIT: "The history limit must be a positive integer.",
      EXPRESSION:
        "The limit like expression {expr} is invalid. The {name} expression must be equal to or greater than 0, but got {v}.",
    },
  },
  "INVALID_LIMIT_LIKE_EXPRESSION.IS_NULL": {
    status: 400,
    sqlstate: "42K0E",
    message:
      "The limit like expression {expr} is invalid. The evaluated {name} expression must not be null.",
  },
  "INVALID_LIMIT_LIKE_EXPRESSION.IS_UNFOLDABLE": {
    status: 400,
    sqlstate: "42K0E",
    message:
      "The limit like expression {expr} is invalid. The {name} expression must evaluate to a constant value.",
  },
  INVALID_NUMERIC_LITERAL_RANGE: {
    status: 400,
    sqlstate: "22003",
    message:
      "Numeric literal {raw} is outside the valid range for {typeName} with minimum value of {min} and maximum value of {max}. Please adjust the value accordingly.",
  },
  INVALID_PARAMETER_VALUE: {
    status: 400,
    sqlstate: "22023",
    messages: {
      TABLE_ID_MISMATCH: "table-id {tableId} is not the id of {table}.",
      // Delta's own messages for these carry no error class (IllegalArgumentException).
      PROPERTY_NOT_BOOLEAN: 'For input string: "{value}". {key} needs to be true or false.',
      PROPERTY_NOT_POSITIVE_INTEGER: "{key} needs to be a positive integer.",
      PROPERTY_INDEXED_COLUMNS: "{key} needs to be larger than or equal to -1.",
      PROPERTY_NOT_DURATION:
        "{key} needs to be provided as a calendar interval such as '2 weeks'. Months and years are not accepted. You may specify '365 days' for a year instead.",
      LOG_RETENTION_BELOW_DELETED_FILE_RETENTION:
        "The table property {logKey}({log}) needs to be greater than or equal to {deletedKey}({deleted}).",
      DELETED_FILE_RETENTION_ABOVE_LOG_RETENTION:
        "The table property {deletedKey}({deleted}) needs to be less than or equal to {logKey}({log}).",
      NO_UPDATES: "Field 'updates' must list at least one update.",
      UNKNOWN_REQUIREMENT_TYPE: "Unknown requirement type '{type}'.",
      UNKNOWN_UPDATE_ACTION: "Unknown update action '{action}'.",
      UPDATE_ACTION_TWICE: "Update action '{action}' is given twice.",
      UPDATE_WITHOUT_COMMIT:
        "Update {alone} needs an add-commit: Silt reads a table's metadata from its Delta log, so metadata changes arrive as commits.",
      PUBLISHED_VERSION_AHEAD:
        "latest-published-version {published} is above the table's latest version {last}.",
      FIELD_NOT_LIST: "Field '{field}' must be a list.",
      BACKFILLED_VERSION_AHEAD:
        "latest_backfilled_version {backfilled} is above the table's latest version {latestBefore}.",
      STORAGE_FIELD: "Field '{field}' cannot be set: Silt allocates every table's storage itself.",
      NON_DELTA_FORMAT:
        "Unity Catalog does not support non-Delta managed table. Create {catalog}.{schema}.{table} with data_source_format DELTA.",
      NO_COLUMNS:
        "Field 'columns' must list the table's columns, each with name and type_text or type_json.",
      TABLE_URI_MISMATCH: "table_uri {uri} is not the location of table {tableId}.",
      SCHEMA_FULL_NAME: "A schema is named catalog.schema, not '{fullName}'.",
      TABLE_FULL_NAME: "A table is named catalog.schema.table, not '{fullName}'.",
      FIELD_NOT_INTEGER: "Field '{field}' must be an integer >= {min}.",
      UNKNOWN_FIELD:
        "Unknown field '{field}' in {where}{suggestion}? The known fields are: {known}.",
      INVALID_COLUMN_TYPE: "Invalid column type: {message}",
      OPERATION: "Field 'operation' must be READ or READ_WRITE (got {operation}).",
      TABLE_ID_OR_NAME:
        "Name the table by exactly one of 'table_id' (its id, as DESCRIBE DETAIL shows it) or 'table_name' (catalog.schema.table).",
      SECURABLE_NAME_PARTS: "A {type} is named by {allowedParts}, not {parts}.",
      UNKNOWN_SECURABLE_TYPE: "Unknown securable type {type}; Silt has catalog, schema and table.",
      FULL_NAME_PARTS:
        "The full name of a {securableType} has {depth} part(s) ({expected}), not {fullName}.",
      PRIVILEGES_NOT_LIST: "'{field}' must be a list of privileges.",
      UNKNOWN_PRIVILEGE: "Unknown privilege {text}. Silt knows {privileges}.",
      PRIVILEGE_NOT_APPLICABLE:
        "Privilege {privilege} is not applicable to {securable} '{fullName}'. A {type} accepts {privileges}.",
      PRINCIPAL:
        "A principal must be a non-empty name of at most 512 characters without control characters, like `arn:aws:iam::123456789012:user/alice` (got {principal}).",
      MANAGED_PROPERTY:
        "Cannot {verb} table {tableName}: table property '{key}' is managed by the catalog and cannot be set. Remove the TBLPROPERTIES entry and retry.",
      ALTER_MANAGED_PROPERTY:
        "Cannot alter table {tableName}: table property '{key}' is managed by the catalog and cannot be set.",
      UNSET_REQUIRED_PROPERTY:
        "Cannot alter table {tableName}: table property '{key}' is required by the catalog and cannot be unset.",
      REQUIRED_PROPERTY_VALUE:
        "Cannot {verb} table {tableName}: catalog requires table property '{key}'='{required}' but the caller supplied '{key}'='{supplied}'. Remove the conflicting TBLPROPERTIES entry and retry.",
      REQUIRED_PROPERTY_MISSING:
        "Cannot {verb} table {tableName}: catalog requires table property '{key}'='{required}' but the commit does not set it.",
      REQUIRED_PROTOCOL:
        "Cannot {verb} table {tableName}: catalog requires reader version 3 and writer version 7 but the commit's protocol has {minReaderVersion} and {minWriterVersion}.",
      REQUIRED_FEATURE:
        "Cannot {verb} table {tableName}: catalog requires table feature '{feature}' but the commit's protocol does not list it{featureLists}.",
      READER_FEATURES_NOT_WRITER:
        "Cannot {verb} table {tableName}: reader features {notWritten} are missing from the writer features.",
      TABLE_ID_PROPERTY:
        "Cannot {verb} table {tableName}: table property 'io.unitycatalog.tableId' must be '{tableId}', the id the catalog gave the table, but the commit has {found}.",
      NON_DELTA_SQL:
        "Unity Catalog does not support non-Delta managed table. Add USING DELTA to create {tableName}.",
      COMMIT_FILE_NAME:
        "Commit file name '{fileName}' must be <version as 20 digits>.<uuid>.json for version {version}, as written under {stagedDir}.",
      COMMIT_WITHOUT_ICT:
        "Commit {fileName} has no commitInfo with an inCommitTimestamp; the table requires in-commit timestamps.",
      COMMIT_ICT_NOT_INCREASING:
        "Commit {fileName} has inCommitTimestamp {ict}, not above {previousIct} of version {previousVersion}; in-commit timestamps must increase.",
      COMMIT_SKIPS_VERSIONS:
        "Commit version {version} of table {tableId} skips versions: the latest accepted version is {last}, so the next commit must be version {nextVersion}.",
      COMMIT_FILE_MISSING:
        "Commit file {stagedDir}{fileName} does not exist at the table's location. Write the staged commit before committing it.",
      COMMIT_FILE_SIZE:
        "Commit file {fileName} is {infoSize} bytes, but the request says {fileSize}.",
      COMMIT_FILE_NOT_JSON: "Commit file {fileName} is not valid JSON lines: {message}",
      DATA_FILE_NOT_PARQUET: "Data file {path} of the commit cannot be read as Parquet: {message}",
      FIRST_COMMIT_MISSING:
        "Cannot create table {tableName}: its first commit {logDir}{firstCommit} is not at the table's location. Write version 0 before creating the table.",
      FIRST_COMMIT_NOT_JSON:
        "Cannot create table {tableName}: its first commit is not valid JSON lines ({message}).",
      FIRST_COMMIT_INCOMPLETE:
        "Cannot create table {tableName}: its first commit must hold a protocol and a metaData action.",
      FIRST_COMMIT_WITHOUT_ICT:
        "Cannot create table {tableName}: its first commit has no in-commit timestamp, which the catalog requires (inCommitTimestamp).",
      MANAGED_LOCATION:
        "Managed table {name} cannot have a LOCATION: the catalog allocates it. Remove the LOCATION clause.",
    },
  },
  "INVALID_PARAMETER_VALUE.PATTERN": {
    status: 400,
    sqlstate: "22023",
    message: "The value of parameter(s) `regexp` in `rlike` is invalid: {message}.",
  },
  INVALID_PARQUET_OPTION: { status: 400, message: "Unknown Parquet compression: {codec}" },
  INVALID_PARQUET_ROW_GROUP: {
    status: 400,
    message: "Row group index {index} is out of range: the file has {count} row group(s)",
  },
  INVALID_PARTITION_COLUMN_DATA_TYPE: {
    status: 400,
    sqlstate: "0A000",
    message: "Cannot use {type} for partition column.",
  },
  INVALID_STATEMENT_TIMEOUT: {
    status: 400,
    sqlstate: "22023",
    message:
      "The time budget '{value}' that {setting} gives is not a whole number of seconds from 1 to {maxSec}, the most this server allows. Give one in that range, or leave it out for the default.",
  },
  INVALID_PAGE_TOKEN: {
    status: 400,
    sqlstate: "22023",
    messages: {
      MALFORMED:
        "The page_token is not one this server issued: it was altered or cut short, or names a file the table version it pins does not have. Pass next_page_token exactly as the previous page returned it, or leave page_token out to start again from the first page.",
      OTHER_REQUEST:
        "The page_token continues a different request (another table, statement, columns, limit or time travel). Repeat the request that returned it, changing only page_token.",
    },
  },
  INVALID_REQUEST: {
    status: 400,
    messages: {
      NO_BODY: "The request needs a JSON body.",
      LOCAL_TABLE:
        "The body must be empty, an empty JSON object, or one whose field 'table' names a table as catalog.schema.table.",
      FIELD_COLUMNS_ARRAY:
        'Field \'columns\' must be an array like [{"name": "id", "type": "INT"}].',
      FIELD_SOURCE_DELIMITER: "Field 'source.delimiter' must be one character.",
      SOURCE_ROW_NOT_OBJECT:
        "Source row {index} is not an object; rows given as arrays need 'source.columns'.",
      SOURCE_COLUMN_NESTED:
        "Source column '{name}' holds nested values; declare its type in 'source.columns'.",
      SOURCE_OBJECT_KEY:
        "Source object keys must lie under 'ingest/' in the bucket, with no empty, '.' or '..' segment (got {key}).",
      NOT_AN_OBJECT: "The {what} must be a JSON object.",
      UNKNOWN_FIELD:
        "Unknown field '{field}' in the {where}{suggestion}. The fields allowed there are: {known}.",
      FIELD_INVALID: "Field '{field}' {problem}.",
      FIELD_REQUIRED_STRING: "Field '{field}' is required and must be a non-empty string.",
      FIELD_NOT_STRING: "Field '{field}' must be a string.",
      FIELD_NOT_BOOLEAN: "Field '{field}' must be true or false.",
      FIELD_ENTRY_NOT_STRING: "Field '{field}.{key}' must be a string.",
      FIELD_CHANGES_REQUIRED:
        'Field \'changes\' is required: a list like [{"principal": "alice", "add": ["SELECT"], "remove": []}].',
      FIELD_SET_EMPTY: "Field 'set' needs at least one column.",
      FIELD_KEY_NOT_COLUMN: "Field '{field}' has key {text}, which is not a column name.",
      CLAUSE_ACTION: "Each {field} clause needs exactly one of {allowed}.",
      QUERY_AND_COLUMNS:
        "Give either 'query' (its result defines the columns and rows) or 'columns' with optional 'rows', not both.",
      FIELD_ROWS_ARRAY: "Field 'rows' must be an array of rows.",
      REPLACE_WITHOUT_MATCH:
        "A replace by matching rows needs the USING columns or an ON condition.",
      REPLACE_USING_EMPTY: "REPLACE USING needs at least one column.",
      RESTORE_TARGET: "RESTORE needs exactly one of a version or a timestamp to restore to.",
    },
  },
  INVALID_SCHEMA_OR_RELATION_NAME: {
    status: 400,
    sqlstate: "42602",
    messages: {
      INVALID_NAME:
        "{shown} is not a valid {kind} name: {problem}. Names must be 1 to {maxLength} characters long and cannot contain '.', '/', '\\' or control characters.",
      NO_DEFAULT_SCHEMA:
        "The table name {table} has no schema and no default schema is set. Write it as <schema>.{table} or <catalog>.<schema>.{table}, or set a default schema.",
      NO_DEFAULT_CATALOG:
        "The table name {schemaTable} has no catalog and no default catalog is set. Write it as <catalog>.{schemaTable}, or set a default catalog.",
      SHOW_SCHEMAS_NEEDS_CATALOG:
        "SHOW SCHEMAS needs a catalog: write SHOW SCHEMAS IN <catalog>, or send a default catalog.",
    },
  },
  INVALID_CONF_VALUE: {
    status: 400,
    sqlstate: "22022",
    message:
      "The value '{confValue}' in the config \"{confName}\" is invalid. It takes one of: {allowed}.",
  },
  INVALID_SET_SYNTAX: {
    status: 400,
    sqlstate: "42000",
    message:
      "Expected format is 'SET', 'SET key', or 'SET key=value'. If you want to include special characters in key, or include semicolon in value, please use backquotes, e.g., SET `key`=`value`.",
  },
  "INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX": {
    status: 400,
    sqlstate: "42000",
    message: "Invalid SQL syntax: The function {name} does not support DISTINCT.",
  },
  INVALID_TIME_TRAVEL_SPEC: {
    status: 400,
    sqlstate: "42K0E",
    message: "Cannot specify both version and timestamp when time travelling the table.",
  },
  INVALID_TYPED_LITERAL: {
    status: 400,
    sqlstate: "42604",
    message: "The value of the typed literal \"{kind}\" is invalid: '{text}'.",
  },
  INVALID_USAGE_OF_STAR_OR_REGEX: {
    status: 400,
    sqlstate: "42000",
    messages: {
      EXPRESSION: "Invalid usage of '*' in expression.",
      IN_CLAUSE: "Invalid usage of '*' in {name}.",
    },
  },
  ITEM_STORE_NO_SORT_KEY: { status: 500, message: "Table {tableName} has no sort key." },
  MALFORMED_RECORD_IN_PARSING: {
    status: 400,
    sqlstate: "22023",
    messages: {
      CSV: "Malformed records are detected in record parsing: {source} is not CSV ({message}).",
      JSON_LINE:
        "Malformed records are detected in record parsing: line {ordinal} of {json} is not JSON ({message}).",
      ROW_SHAPE:
        "Malformed records are detected in record parsing: rows[{index}] is {row}, not an object or an array.",
    },
  },
  MALFORMED_REQUEST: {
    status: 400,
    messages: {
      BODY_NOT_JSON: "The request body is not valid JSON: {message}",
      BODY_NOT_ARROW: "The body is not a valid Arrow IPC stream: {message}",
      SOURCE_ARROW: "Field 'source.arrow' is not a base64 Arrow IPC stream: {message}",
    },
  },
  MERGE_WITHOUT_WHEN: {
    status: 400,
    sqlstate: "42601",
    message: "There must be at least one WHEN clause in a MERGE statement.",
  },
  MISSING_AGGREGATION: {
    status: 400,
    sqlstate: "42803",
    message:
      "The non-aggregating expression * is based on columns which are not participating in the GROUP BY clause.",
  },
  MISSING_GROUP_BY: {
    status: 400,
    sqlstate: "42803",
    message:
      "The query does not include a GROUP BY clause. Add GROUP BY or turn it into the window functions using OVER clauses.",
  },
  NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION: {
    status: 400,
    sqlstate: "42613",
    message:
      "When there are more than one MATCHED clauses in a MERGE statement, only the last MATCHED clause can omit the condition.",
  },
  NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION: {
    status: 400,
    sqlstate: "42613",
    message:
      "When there are more than one NOT MATCHED BY SOURCE clauses in a MERGE statement, only the last NOT MATCHED BY SOURCE clause can omit the condition.",
  },
  NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION: {
    status: 400,
    sqlstate: "42613",
    message:
      "When there are more than one NOT MATCHED [BY TARGET] clauses in a MERGE statement, only the last NOT MATCHED [BY TARGET] clause can omit the condition.",
  },
  NON_PARTITION_COLUMN: {
    status: 400,
    sqlstate: "42000",
    message: "PARTITION clause cannot contain the non-partition column: {column}.",
  },
  NOT_FOUND: { status: 404, message: "No route for {method} {path}. See the README for the API." },
  NULL_MAP_KEY: { status: 400, sqlstate: "2200E", message: "Cannot use null as map key." },
  "NUMERIC_VALUE_OUT_OF_RANGE.WITHOUT_SUGGESTION": {
    status: 400,
    sqlstate: "22003",
    message: "{value} cannot be represented as Decimal({precision}, {scale}) ({loc}).",
  },
  "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION": {
    status: 400,
    sqlstate: "22003",
    message:
      '{value} cannot be represented as Decimal({precision}, {scale}). If necessary set {config} to "false" to bypass this error, and return NULL instead.',
  },
  OPERATION_CANCELED: {
    status: 499,
    sqlstate: "HY008",
    message: "Operation has been canceled.",
  },
  ORDER_BY_POS_OUT_OF_RANGE: {
    status: 400,
    sqlstate: "42805",
    message: "ORDER BY position {value} is not in select list (valid range is [1, {fieldsCount}]).",
  },
  PARSE_EMPTY_STATEMENT: {
    status: 400,
    sqlstate: "42617",
    message: "Syntax error, unexpected empty statement.",
  },
  PARSE_SYNTAX_ERROR: {
    status: 400,
    sqlstate: "42601",
    messages: {
      NEAR: "Syntax error at or near {near}.",
      NEAR_TOKEN: "Syntax error at or near {near}{hint}.",
      NEAR_TEXT: "Syntax error at or near '{raw}'.",
      TOO_DEEP: "Syntax error at or near end of input: the statement nests too deeply.",
    },
  },
  PATH_NOT_FOUND: { status: 400, sqlstate: "42K03", message: "Path does not exist: {key}." },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    message:
      'The request body is larger than {maxBytes} bytes (6 MiB), the most a request to Silt may carry. Write big inputs to storage instead (S3 deployed, storage/ in the data directory locally): Parquet, CSV or JSON-lines objects written under {ingest} are appended to that table, and a MERGE takes its source as objects under ingest/ ("source": {"parquet": "ingest/..."}).',
  },
  PERMISSION_DENIED: {
    status: 403,
    message:
      "Silt has no external locations: every table is managed, and its storage is reached through the table's own credentials (temporary-table-credentials).",
  },
  QUERY_EXECUTION_TIMEOUT_EXCEEDED: {
    // 408, as Snowflake's SQL API answers a statement past its timeout: the caller's budget ran
    // out, which is no server fault (a 5xx would page the operators).
    status: 408,
    sqlstate: "57KD0",
    message:
      "The statement was cancelled after exceeding its time budget of {timeoutSec} s, and changed nothing. Raise the budget (at most {maxSec} s) with {setting}, or give it less work: filter on partition columns, select fewer columns, or page the result with max_rows.",
  },
  REMAINDER_BY_ZERO: {
    status: 400,
    sqlstate: "22012",
    // Spark's hints (try_mod, turning ANSI off) name nothing Silt has.
    message: "Remainder by zero.",
  },
  RESULT_TOO_LARGE: {
    status: 400,
    message:
      "The answer is larger than {maxBytes} bytes, the most this deployment can return in one response. Ask for it a page at a time: add max_rows (e.g. {suggestedRows}) and pass each answer's next_page_token back as page_token; or select fewer columns, or ask for Arrow (format=arrow), which is smaller.",
  },
  RESOURCE_EXHAUSTED: {
    status: 429,
    uc: "RESOURCE_EXHAUSTED",
    message:
      "Table {tableName} has {unpublishedCount} commits that are not yet published to _delta_log/; retry once they are.",
  },
  SCHEMA_ALREADY_EXISTS: {
    status: 409,
    sqlstate: "42P06",
    uc: "SCHEMA_ALREADY_EXISTS",
    message:
      "Cannot create schema {schemaName} because it already exists.\nChoose a different name, drop the existing schema, or add the IF NOT EXISTS clause to tolerate pre-existing schema.",
  },
  SCHEMA_NOT_EMPTY: {
    status: 409,
    sqlstate: "2BP01",
    uc: "FAILED_PRECONDITION",
    message:
      "Cannot drop a schema {schemaName} because it contains objects.\nUse DROP SCHEMA ... CASCADE to drop the schema and all its objects.",
  },
  SCHEMA_NOT_FOUND: {
    status: 404,
    sqlstate: "42704",
    uc: "SCHEMA_NOT_FOUND",
    message:
      "The schema {schemaName} cannot be found. Verify the spelling and correctness of the schema and catalog.\nIf you did not qualify the name with a catalog, verify the current_schema() output, or qualify the name with the correct catalog.\nTo tolerate the error on drop use DROP SCHEMA IF EXISTS.",
  },
  SILT_COMMIT_INFO_IN_ACTIONS: {
    status: 500,
    message: "Pass commitInfo separately from the actions.",
  },
  SILT_COMMIT_NOT_RATIFIED: {
    status: 500,
    message: "Cannot mark version {version} of table {tableId} published: it was never ratified.",
  },
  SILT_COMMIT_ROW_MALFORMED: {
    status: 500,
    message: "Commit arbiter row {tableId}@{version} lacks attribute {attribute}.",
  },
  SILT_COMMIT_WITHOUT_OPERATION: { status: 500, message: "A commit needs commitInfo.operation." },
  SILT_DATA_DIR_IN_USE: {
    status: 409,
    message:
      "Data directory {dataDir} is in use by process {pid} (another silt serve, or a silt command using it directly). Stop that process, or choose another directory with SILT_DATA_DIR. If no such process runs, delete {lockFile}.",
  },
  SILT_MISCONFIGURED: {
    status: 500,
    messages: {
      AUTH_MODE: "Environment variable SILT_AUTH must be one of {modes} (got {value}).",
      TOKEN_PAIR: "SILT_TOKENS must list token=principal pairs separated by commas (got {pair}).",
      NO_TOKENS:
        "SILT_AUTH=token needs SILT_TOKENS, e.g. SILT_TOKENS='not-used=alice@example.com'.",
      POST_COMMIT_MODE:
        "Environment variable SILT_POST_COMMIT must be one of {modes} (got {value}).",
      SERVE_AUTH_MODE:
        "SILT_AUTH for silt serve must be none or token (got {mode}); iam and jwt are for the deployed API.",
      VARIABLE_NOT_SET: "Environment variable {name} is not set.",
      NOT_MILLISECONDS:
        "Environment variable {name} must be a whole number of milliseconds above 0 (got {value}).",
      SERVE_PORT: "PORT for silt serve must be an integer from 0 to 65535 (got {value}).",
      MAINTENANCE_INTERVAL:
        "SILT_MAINTENANCE_INTERVAL must be a whole number of seconds above 0, or one with a unit such as 90s, 10m or 1h (got {value}).",
    },
  },
  SILT_SERVER_UNREACHABLE: {
    status: 3,
    messages: {
      URL: "Could not reach a Silt server at {url} ({reason}). Start one with npm start, or pass the server's address with --url.",
      NOT_LISTENING:
        "Data directory {dataDir} is held by process {pid}, which serves no URL (a silt command using it directly, or a server still starting). Wait for it, or pass the server's address with --url.",
      NOT_SILT:
        "{url} answered {status} with a body that is not Silt's JSON; is --url the address of a Silt server?",
    },
  },
  SILT_PORT_IN_USE: {
    status: 409,
    message:
      "Port {port} on {host} is in use by another program. Stop it, or choose another port with PORT, e.g. PORT={suggestion} npm start.",
  },
  SILT_READ_VERSION_AHEAD: {
    status: 500,
    message:
      "Table {tableName} has no ratified version {readVersion} (latest is {latestVersion}); the snapshot did not come from the catalog.",
  },
  SILT_RESTORE_FILES_MISSING: {
    status: 400,
    message:
      "Not all files from version {version} are available in file system. Missed files (top 100 files): {missing}. They were removed (by VACUUM or by hand); restore a more recent version or timestamp instead.",
  },
  SILT_ROW_TRACKING_REBASE: {
    status: 500,
    message:
      "Cannot rebase row ids: an add has a baseRowId but no numRecords statistic and the commit carries no delta.rowTracking domain metadata.",
  },
  SILT_STAGED_COMMIT_EXISTS: { status: 500, message: "Staged commit {stagedKey} already exists." },
  SILT_STAGED_COMMIT_MISSING: {
    status: 500,
    message:
      "Version {version} of table {tableId} was ratified with staged file {stagedKey}, which no longer exists, and was never published.",
  },
  SILT_TABLE_NOT_ACTIVE: {
    status: 500,
    message: "DynamoDB table {tableName} did not become ACTIVE within {timeoutMs} ms: {reason}",
  },
  SILT_VERSION_ZERO_TAKEN: {
    status: 500,
    message: "Version 0 of table {tableName} was already ratified from {stagedKey}.",
  },
  SILT_WINNING_COMMIT_MISSING: {
    status: 500,
    message: "Version {version} of table {tableId} is ratified but neither {keys} exists.",
  },
  SPECIFY_CLUSTER_BY_WITH_PARTITIONED_BY_IS_NOT_ALLOWED: {
    status: 400,
    sqlstate: "42908",
    message: "Cannot specify both CLUSTER BY and PARTITIONED BY.",
  },
  STATEMENT_TOO_COMPLEX: {
    status: 400,
    sqlstate: "54001",
    message:
      "The statement's expressions nest too deeply to evaluate, as a chain of thousands of OR or AND terms does. Split the statement, or write a long list of alternatives as IN (…).",
  },
  TABLE_NOT_FOUND: {
    status: 404,
    uc: "TABLE_NOT_FOUND",
    messages: {
      STAGING_ID:
        "No staging table has id {tableId}. Stage the table first (POST /staging-tables).",
      STAGING_LOCATION:
        "No staging table of {name} has location {location}. Stage the table first (POST /staging-tables) and create it at the location that answer gave.",
      BEING_DROPPED: "Table {name} is being dropped.",
    },
  },
  TABLE_OR_VIEW_ALREADY_EXISTS: {
    status: 409,
    sqlstate: "42P07",
    uc: "TABLE_ALREADY_EXISTS",
    message:
      "Cannot create table or view {tableName} because it already exists.\nChoose a different name, drop or replace the existing object, or add the IF NOT EXISTS clause to tolerate pre-existing objects.",
  },
  TABLE_OR_VIEW_NOT_FOUND: {
    status: 404,
    sqlstate: "42P01",
    uc: "TABLE_NOT_FOUND",
    messages: {
      BY_NAME:
        "The table or view {relationName} cannot be found. Verify the spelling and correctness of the schema and catalog.\nIf you did not qualify the name with a schema, verify the current_schema() output, or qualify the name with the correct schema and catalog.\nTo tolerate the error on drop use DROP VIEW IF EXISTS or DROP TABLE IF EXISTS.",
      BY_ID:
        "The table with id {tableId} cannot be found. It may have been dropped; look the table up by name instead.",
    },
  },
  TABLE_RENAME_IN_PROGRESS: {
    status: 409,
    message:
      "The table {tableName} is being renamed by another request. Retry once it has finished.",
  },
  UNAUTHENTICATED: {
    status: 401,
    uc: "UNAUTHENTICATED",
    message: "The request names no authenticated caller. {how}",
  },
  UNCLOSED_BRACKETED_COMMENT: {
    status: 400,
    sqlstate: "42601",
    message: "Found an unclosed bracketed comment. Please, append */ at the end of the comment.",
  },
  UNIMPLEMENTED: {
    status: 501,
    uc: "UNIMPLEMENTED",
    messages: {
      TABLE_TYPE: "Silt keeps managed tables only; table-type {tableType} is not supported.",
      UNIFORM: "Silt does not convert tables to Iceberg (UniForm); commit without 'uniform'.",
      RENAME_NAMESPACE:
        "Silt cannot rename a {kind} ({current} to {newName}) yet: its tables are kept under its name. Change the comment or properties, or create a new {kind}.",
      LEGACY_TABLE_TYPE:
        "Silt keeps managed tables only; table_type {tableType} is not supported. Create a MANAGED table.",
    },
  },
  "UNRESOLVED_COLUMN.WITHOUT_SUGGESTION": {
    status: 400,
    sqlstate: "42703",
    message: "A column, variable, or function parameter with name {objectName} cannot be resolved.",
  },
  "UNRESOLVED_COLUMN.WITH_SUGGESTION": {
    status: 400,
    sqlstate: "42703",
    messages: {
      NAME: "A column, variable, or function parameter with name {key} cannot be resolved. Did you mean one of the following? [{suggestions}].",
      QUOTED_NAME:
        "A column, variable, or function parameter with name `{name}` cannot be resolved. Did you mean one of the following? [{fields}].",
    },
  },
  UNRESOLVED_INSERT_REPLACE_USING_COLUMN: {
    status: 400,
    sqlstate: "42703",
    message:
      "REPLACE USING column {col} cannot be resolved in the {relationType}. Did you mean one of the following? [{suggestion}].",
  },
  UNRESOLVED_ROUTINE: {
    status: 400,
    sqlstate: "42883",
    message: "Cannot resolve routine {name} on search path [{path}].",
  },
  UNSET_NONEXISTENT_PROPERTIES: {
    status: 400,
    sqlstate: "42K0J",
    message: "Attempted to unset non-existent properties [{missing}] in table {tableName}.",
  },
  UNSUPPORTED_DATATYPE: {
    status: 400,
    sqlstate: "0A000",
    messages: {
      TYPE: 'Unsupported data type "{name}".',
      COLUMN_TYPE: 'Unsupported data type "{name}" (column {path}).',
      DATE_DIFFERENCE:
        'Unsupported data type "INTERVAL DAY": the difference of two dates; use datediff({left}, {right}) instead.',
      INTERVAL: 'Unsupported data type "INTERVAL".',
    },
  },
  UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE: {
    status: 400,
    sqlstate: "0A000",
    messages: {
      VOID_COLUMN:
        'The Delta datasource doesn\'t support the column `{name}` of the type "VOID". Cast the NULL to a type.',
      VOID_NULL:
        'The Delta datasource doesn\'t support the column {name} of the type "VOID". Cast the NULL to a type, e.g. CAST(NULL AS STRING).',
    },
  },
  "UNSUPPORTED_FEATURE.AGGREGATE": {
    status: 400,
    sqlstate: "0A000",
    message: "The aggregate function {name} is not supported by Silt yet.",
  },
  "UNSUPPORTED_FEATURE.JOIN": {
    status: 400,
    sqlstate: "0A000",
    message: "Joins are not supported by Silt yet; query the tables separately.",
  },
  "UNSUPPORTED_FEATURE.SET_OPERATION": {
    status: 400,
    sqlstate: "0A000",
    message: "{op} is not supported by Silt yet; run the queries separately.",
  },
  "UNSUPPORTED_FEATURE.CONF": {
    status: 400,
    sqlstate: "0A000",
    message:
      "Silt does not honour the Spark setting {key}, so it would change nothing; leave it out.{hint} The settings this request honours: {honoured}.",
  },
  "UNSUPPORTED_FEATURE.SET": {
    status: 400,
    sqlstate: "0A000",
    message:
      'Silt\'s SQL endpoint is stateless: SET {key}={value} would last only for this statement. Send the setting with each request instead: "conf": {"{key}": "{value}"}.',
  },
  "UNSUPPORTED_FEATURE.USE": {
    status: 400,
    sqlstate: "0A000",
    message:
      'Silt\'s SQL endpoint is stateless: instead of USE {value}, send "catalog" and "schema" with each request, or qualify table names.',
  },
  UNSUPPORTED_INGEST_FORMAT: {
    status: 400,
    message:
      "Object {key} has no supported extension: ingestion reads .parquet, .csv (with a header) and .json/.ndjson/.jsonl (one JSON object per line).",
  },
  UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY: {
    status: 400,
    sqlstate: "0A000",
    message: "Subquery expressions are not supported here.",
  },
  UPDATE_REQUIREMENT_CONFLICT: {
    status: 409,
    uc: "UPDATE_REQUIREMENT_CONFLICT",
    messages: {
      UUID: "Table {tableName} has uuid {tableId}, not {uuid}.",
      ETAG: "Table {tableName} changed since it was loaded (etag {etag}, now {current}). Reload it and retry.",
    },
  },
  "WRONG_NUM_ARGS.WITHOUT_SUGGESTION": {
    status: 400,
    sqlstate: "42605",
    message:
      "The {name} requires {expected} parameters but the actual number is {actual}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.",
  },
  _LEGACY_ERROR_TEMP_0035: {
    status: 400,
    sqlstate: "42000",
    message:
      "Operation not allowed: Schema may not be specified in a Create Table As Select (CTAS) statement.",
  },
} as const satisfies Record<string, ErrorClassEntry>;

/** The registry entry of a reported class (`CLASS`, never `CLASS:VARIANT`), if it has one. */
export function errorClassEntry(errorClass: string): ErrorClassEntry | undefined {
  return Object.hasOwn(ERROR_CLASSES, errorClass)
    ? (ERROR_CLASSES as Record<string, ErrorClassEntry>)[errorClass]
    : undefined;
}
