"""Runs the statements of Spark-parity case files in real Spark and prints Spark's answers.

Driven by test/spark-parity/generate.ts, which parses the case files and writes the answers as
test/spark-parity/expected/<topic>.json. Reads one JSON document on stdin:
  {"topics": [{"topic": "joins", "statements": ["CREATE TABLE ...", "SELECT ..."]}, ...]}
and prints one JSON line per topic on stdout:
  {"topic": ..., "answers": [{"columns": [{"name", "type"}], "rows": [[...]]} | {"error": CLASS}]}

Spark runs as the issue asks: local[1], ANSI on, session time zone UTC, plain Delta tables
(spark_catalog) created with Silt's table profile (deletion vectors, column mapping by name, row
tracking, in-commit timestamps, v2 checkpoints). Each topic runs in its own database, named for the
topic, as the default database; a topic that needs more schemas creates them itself, dropped again
at its end so topics do not see each other.

Values are written in Silt's JSON encoding of query results, so the test compares them as they are:
integers as numbers (beyond 2^53 as strings), decimals as strings with their scale, dates
'YYYY-MM-DD', timestamps ISO-8601 with microseconds ('Z' for TIMESTAMP, none for TIMESTAMP_NTZ),
NaN and infinities as strings, binary as base64, structs and maps as objects, arrays as arrays.
"""

import base64
import decimal
import json
import math
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients"))
import uc_common  # noqa: E402

DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.3.1"
TABLE_PROFILE = {
    "enableDeletionVectors": "true",
    "columnMapping.mode": "name",
    "enableRowTracking": "true",
    "enableInCommitTimestamps": "true",
    "checkpointPolicy": "v2",
}


def build_session():
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.appName("silt-spark-parity")
        .master("local[1]")
        .config("spark.jars.packages", DELTA_PACKAGE)
        .config("spark.jars.ivy", uc_common.ivy_dir())
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="silt-spark-parity-"))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.ansi.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
    )
    for key, value in TABLE_PROFILE.items():
        builder = builder.config(f"spark.databricks.delta.properties.defaults.{key}", value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def encode(value, data_type):
    from pyspark.sql import types as T

    if value is None:
        return None
    if isinstance(data_type, T.BooleanType):
        return bool(value)
    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return value if abs(value) <= 2**53 - 1 else str(value)
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return shortest_float32(value) if isinstance(data_type, T.FloatType) else value
    if isinstance(data_type, T.DecimalType):
        return format(decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-data_type.scale)), "f")
    if isinstance(data_type, T.StringType):
        return value
    if isinstance(data_type, T.BinaryType):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(data_type, T.DateType):
        return value.isoformat()
    if isinstance(data_type, T.TimestampNTZType):
        return value.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if isinstance(data_type, T.TimestampType):
        # Collected TIMESTAMPs are naive datetimes in the Python process's zone: generate.ts runs
        # this program with TZ=UTC.
        return value.replace(tzinfo=None).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(data_type, T.ArrayType):
        return [encode(v, data_type.elementType) for v in value]
    if isinstance(data_type, T.MapType):
        return {str(encode(k, data_type.keyType)): encode(v, data_type.valueType) for k, v in value.items()}
    if isinstance(data_type, T.StructType):
        return {f.name: encode(value[f.name], f.dataType) for f in data_type.fields}
    raise TypeError(f"no Silt encoding for Spark type {data_type.simpleString()}")


def shortest_float32(value):
    """A FLOAT as Silt writes it: the shortest decimal that reads back as the same 32-bit float
    (Python collects a FLOAT as the double it widens to: 0.1f is 0.10000000149011612)."""
    as32 = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(1, 10):
        text = f"{as32:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == as32:
            return float(text)
    return as32


def answer(spark, statement):
    try:
        df = spark.sql(statement)
        fields = df.schema.fields
        rows = df.collect()
    except Exception as err:  # noqa: BLE001 - every Spark refusal is an answer
        condition = getattr(err, "getCondition", lambda: None)()
        if not condition:
            return {"error": None, "message": uc_common.error_text(err, 600)}
        return {"error": condition}
    return {
        "columns": [{"name": f.name, "type": f.dataType.simpleString()} for f in fields],
        "rows": [[encode(row[i], f.dataType) for i, f in enumerate(fields)] for row in rows],
    }


def main():
    request = json.load(sys.stdin)
    out = uc_common.json_stdout()
    spark = build_session()
    for item in request["topics"]:
        topic = item["topic"]
        before = {d.name for d in spark.catalog.listDatabases()}
        spark.sql(f"CREATE DATABASE `{topic}`")
        spark.sql(f"USE `{topic}`")
        answers = [answer(spark, s) for s in item["statements"]]
        spark.sql("USE default")
        for d in spark.catalog.listDatabases():
            if d.name not in before:
                spark.sql(f"DROP DATABASE `{d.name}` CASCADE")
        out.write(json.dumps({"topic": topic, "answers": answers}) + "\n")
        out.flush()
    spark.stop()


if __name__ == "__main__":
    main()
