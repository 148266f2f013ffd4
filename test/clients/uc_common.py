"""Shared bits of the UC client programs in this folder.

Each program prints one JSON document on stdout (one JSON object per line in serve mode) and
everything else on stderr: `json_stdout()` moves file descriptor 1 to stderr before Spark's JVM or
DuckDB can write to it, and keeps the real stdout for the results.

The programs find the connector jars, the Ivy cache and DuckDB's extensions by themselves when
run by hand with the venv that test/helpers/uc-clients.ts builds; the tests pass them in
SILT_UC_JARS, SILT_UC_IVY and SILT_DUCKDB_EXTENSIONS.
"""

import glob
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
_results = None


def json_stdout():
    """Keeps the real stdout for results; anything else written to fd 1 goes to stderr."""
    global _results
    if _results is None:
        _results = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    return _results


def emit(obj):
    out = json_stdout()
    out.write(json.dumps(obj, default=str) + "\n")
    out.flush()


def connector_jars():
    env = os.environ.get("SILT_UC_JARS")
    if env:
        return env.split(",")
    jars = sorted(glob.glob(os.path.join(HERE, "..", "..", "..", "shared", "clients", "unitycatalog", "*.jar")))
    return [os.path.abspath(j) for j in jars]


def ivy_dir():
    # The cached venv lives at <cache>/<hash>/venv, its Ivy cache at <cache>/<hash>/ivy.
    return os.environ.get("SILT_UC_IVY") or os.path.join(os.path.dirname(sys.prefix), "ivy")


def duckdb_extensions():
    env = os.environ.get("SILT_DUCKDB_EXTENSIONS")
    if env:
        return env.split(":")
    import importlib

    paths = []
    for name in ("httpfs", "delta", "unity_catalog"):  # httpfs first
        mod = importlib.import_module(f"duckdb_extension_{name}")
        found = sorted(glob.glob(os.path.join(os.path.dirname(mod.__file__), "extensions", "v*", "*.duckdb_extension")))
        if not found:
            raise RuntimeError(f"no .duckdb_extension file in duckdb_extension_{name}")
        paths.append(found[-1])
    return paths


def error_text(err, limit=4000):
    """str(err), cut: a Py4JJavaError's str carries the whole Java stack."""
    text = str(err)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def run_steps(steps):
    """Runs (name, fn) pairs in order; stops at the first unexpected exception.

    Returns {"ok": bool, "steps": {name: result}, "failed_step"?, "error"?, "error_type"?}.
    Expected refusals are caught inside their step and returned as its result.
    """
    out = {"ok": True, "steps": {}}
    for name, fn in steps:
        try:
            out["steps"][name] = fn()
        except Exception as err:  # noqa: BLE001 - reported to the test, which asserts on it
            traceback.print_exc(file=sys.stderr)
            out.update(ok=False, failed_step=name, error_type=type(err).__name__, error=error_text(err))
            break
    return out


def rows(df):
    return [list(r) for r in df.collect()]
