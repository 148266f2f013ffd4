"""A SparkSession configured as seeds 002 and 000 configure it, for a UC server at --uri.

The seeds load `io.unitycatalog:unitycatalog-spark_4.1_2.13:0.7.0` from Maven; that release is not
on Maven Central here, so the connector comes from shared/clients/unitycatalog/ (spark.jars) and
delta-spark's own unitycatalog-client/-hadoop 0.5.0 are excluded (shared/reference/
unity-catalog-api.md, section 3).

Modes: "S" is the seeds' default (the UC Delta API, /delta/v1); "SL" sets
spark.sql.catalog.<c>.deltaRestApi.enabled=false (legacy API only).

Run as a program it serves requests, one JSON object per line on stdin, each answered with one
JSON line on stdout, so one JVM serves a whole test file:
  {"run": "spark_seed_002", "fn": "run", "mode": "S"}   calls spark_seed_002.run(spark)
  {"sql": "SELECT ...", "mode": "SL"}                    returns {"ok", "rows"} or {"ok": false, "error"}
  {"conf": {"k": "v"}, "mode": "S"}                      spark.conf.set for that mode's session
Usage: spark_session.py --uri http://127.0.0.1:PORT [--catalog NAME]... [--default-catalog NAME]
"""

import argparse
import importlib
import json
import os
import sys
import tempfile
import time

import uc_common

DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.3.1"
UC_CATALOG_CLASS = "io.unitycatalog.spark.UCSingleCatalog"
MODES = ("S", "SL")


def catalog_conf(name, uri, mode):
    conf = {
        f"spark.sql.catalog.{name}": UC_CATALOG_CLASS,
        f"spark.sql.catalog.{name}.uri": uri,
        f"spark.sql.catalog.{name}.auth.type": "static",
        f"spark.sql.catalog.{name}.auth.token": "not-used",
    }
    if mode == "SL":
        conf[f"spark.sql.catalog.{name}.deltaRestApi.enabled"] = "false"
    return conf


def build_session(uri, catalogs, mode="S", default_catalog=None, app_name="silt-uc-client"):
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    from pyspark.sql import SparkSession

    # Spark would otherwise bind its driver to the host's first non-loopback address.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.appName(app_name)
        .master("local[2]")
        .config("spark.jars.packages", DELTA_PACKAGE)
        .config("spark.jars.excludes", "io.unitycatalog:unitycatalog-client,io.unitycatalog:unitycatalog-hadoop")
        .config("spark.jars", ",".join(uc_common.connector_jars()))
        .config("spark.jars.ivy", uc_common.ivy_dir())
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # Managed tables live where the UC server says; this only keeps Spark's default out of the cwd.
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="silt-spark-warehouse-"))
        .config("spark.default.parallelism", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    )
    for name in catalogs:
        for key, value in catalog_conf(name, uri, mode).items():
            builder = builder.config(key, value)
    if default_catalog:
        builder = builder.config("spark.sql.defaultCatalog", default_catalog)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


class Sessions:
    """One JVM; the first mode asked for builds the session, the other mode gets newSession()
    with its catalog settings changed (catalog plugins are created per session, from its conf)."""

    def __init__(self, uri, catalogs, default_catalog):
        self.uri, self.catalogs, self.default_catalog = uri, catalogs, default_catalog
        self.by_mode = {}
        self.started_ms = None

    def get(self, mode):
        if mode in self.by_mode:
            return self.by_mode[mode]
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if not self.by_mode:
            t0 = time.monotonic()
            spark = build_session(self.uri, self.catalogs, mode, self.default_catalog)
            self.started_ms = round((time.monotonic() - t0) * 1000)
        else:
            spark = next(iter(self.by_mode.values())).newSession()
            for name in self.catalogs:
                key = f"spark.sql.catalog.{name}.deltaRestApi.enabled"
                if mode == "SL":
                    spark.conf.set(key, "false")
                else:
                    spark.conf.unset(key)
        self.by_mode[mode] = spark
        return spark


def handle(sessions, req):
    mode = req.get("mode", "S")
    t0 = time.monotonic()
    try:
        spark = sessions.get(mode)
    except Exception as err:  # noqa: BLE001
        return {"ok": False, "failed_step": "session", "error_type": type(err).__name__, "error": uc_common.error_text(err)}
    if "conf" in req:
        for key, value in req["conf"].items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
        out = {"ok": True}
    elif "sql" in req:
        out = uc_common.run_steps([("sql", lambda: uc_common.rows(spark.sql(req["sql"])))])
        out["rows"] = out["steps"].pop("sql", None)
    else:
        module = importlib.import_module(req["run"])
        out = getattr(module, req.get("fn", "run"))(spark)
    out["ms"] = round((time.monotonic() - t0) * 1000)
    out["session_start_ms"] = sessions.started_ms
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--uri", required=True)
    p.add_argument("--catalog", action="append", default=[])
    p.add_argument("--default-catalog")
    args = p.parse_args()
    uc_common.json_stdout()
    sessions = Sessions(args.uri, args.catalog or ["inventory"], args.default_catalog)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = handle(sessions, json.loads(line))
        except Exception as err:  # noqa: BLE001 - a bad request must not kill the session
            out = {"ok": False, "failed_step": "request", "error_type": type(err).__name__, "error": uc_common.error_text(err)}
        uc_common.emit(out)
    for spark in sessions.by_mode.values():
        spark.stop()
        break


if __name__ == "__main__":
    main()
