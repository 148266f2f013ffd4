"""Several independent DuckDB 1.5.5 databases attached to one UC server at --uri, driven one
statement at a time, so a test can interleave two writers deterministically.

Each named connection is its own in-memory database (duckdb.connect(), not a cursor of another),
with the httpfs, delta and unity_catalog extensions loaded from their PyPI packages, the seed's
unity_catalog secret and `ATTACH 'inventory' AS inventory (TYPE unity_catalog, DEFAULT_SCHEMA
'stock')`: two such connections behave like two separate DuckDB processes.

Serves one JSON object per line on stdin, each answered with one JSON line on stdout:
  {"conn": "a", "open": true}            new database, extensions, secret, ATTACH
  {"conn": "a", "sql": "BEGIN"}          {"ok": true, "rows": [...]} or
                                         {"ok": false, "error_type": ..., "error": ...}
  {"conn": "a", "close": true}           closes that database
Usage: duckdb_session.py --uri http://127.0.0.1:PORT [--catalog inventory] [--schema stock]
"""

import argparse
import json
import sys
import time
import traceback

import uc_common


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--uri", required=True)
    p.add_argument("--catalog", default="inventory")
    p.add_argument("--schema", default="stock")
    args = p.parse_args()
    uc_common.json_stdout()
    import duckdb

    connections = {}

    def open_connection():
        con = duckdb.connect(config={"autoinstall_known_extensions": "false"})
        for path in uc_common.duckdb_extensions():
            con.execute(f"LOAD '{path}'")
        con.execute(f"CREATE SECRET (TYPE unity_catalog, TOKEN 'not-used', ENDPOINT '{args.uri}')")
        con.execute(
            f"ATTACH '{args.catalog}' AS {args.catalog} (TYPE unity_catalog, DEFAULT_SCHEMA '{args.schema}')"
        )
        return con

    def handle(req):
        name = req["conn"]
        if req.get("open"):
            if name in connections:
                connections.pop(name).close()
            connections[name] = open_connection()
            return {"ok": True, "duckdb": duckdb.__version__}
        if req.get("close"):
            con = connections.pop(name, None)
            if con is not None:
                con.close()
            return {"ok": True}
        con = connections[name]
        result = con.execute(req["sql"])
        try:
            rows = [list(r) for r in result.fetchall()]
        except duckdb.InvalidInputException:
            rows = []  # a statement without a result set
        return {"ok": True, "rows": rows}

    for line in sys.stdin:
        if not line.strip():
            continue
        t0 = time.monotonic()
        try:
            out = handle(json.loads(line))
        except Exception as err:  # noqa: BLE001 - reported to the test, which asserts on it
            traceback.print_exc(file=sys.stderr)
            out = {"ok": False, "error_type": type(err).__name__, "error": uc_common.error_text(err)}
        out["ms"] = round((time.monotonic() - t0) * 1000)
        uc_common.emit(out)
    for con in connections.values():
        con.close()


if __name__ == "__main__":
    main()
