"""Seed 002's DuckDB part against a UC server at --uri: attach `inventory`, read, insert, detach,
re-attach, insert again, read again.

DuckDB 1.5.5 (the seed's 1.5.6 has no extension packages), extensions loaded from their PyPI
packages with auto-install off (shared/reference/unity-catalog-api.md, section 3). The table
(default `restock`) must exist with 'delta.columnMapping.mode'='none': DuckDB writes logical
column names.
Usage: duckdb_seed_002.py --uri URL [--table restock] [--read-table restock]   (one JSON object)
"""

import argparse
import sys

import uc_common

ATTACH = "ATTACH 'inventory' AS inventory (TYPE unity_catalog, DEFAULT_SCHEMA 'stock')"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--uri", required=True)
    p.add_argument("--table", default="restock", help="the table the seed inserts into")
    p.add_argument("--read-table", help="the table the seed reads (default: --table)")
    args = p.parse_args()
    uc_common.json_stdout()
    import duckdb

    table = f"inventory.stock.{args.table}"
    read_table = f"inventory.stock.{args.read_table or args.table}"
    con = duckdb.connect(config={"autoinstall_known_extensions": "false"})

    def load():
        paths = uc_common.duckdb_extensions()
        for path in paths:
            con.execute(f"LOAD '{path}'")
        loaded = con.execute(
            "SELECT extension_name FROM duckdb_extensions() WHERE loaded ORDER BY extension_name"
        ).fetchall()
        return {"files": paths, "loaded": [r[0] for r in loaded], "duckdb": duckdb.__version__}

    def secret():
        con.execute(f"""
            CREATE SECRET (
                TYPE unity_catalog,
                TOKEN 'not-used',
                ENDPOINT '{args.uri}'
            )
        """)
        return True

    def attach():
        con.execute(ATTACH)
        return True

    def select():
        return [list(r) for r in con.sql(f"""
            SELECT sku, qty
            FROM {read_table}
            ORDER BY sku
        """).fetchall()]

    def insert(sku, qty):
        def step():
            con.execute(f"INSERT INTO {table} VALUES ('{sku}', {qty})")
            return True

        return step

    def detach():
        con.execute("DETACH inventory")
        return True

    def rows_after():
        return [list(r) for r in con.sql(f"SELECT sku, qty FROM {table} ORDER BY sku").fetchall()]

    out = uc_common.run_steps(
        [
            ("load", load),
            ("secret", secret),
            ("attach", attach),
            ("select", select),
            ("insert_fig", insert("fig", 7)),
            ("detach", detach),
            ("reattach", attach),
            ("insert_lime", insert("lime", 3)),
            ("rows_after", rows_after),
        ]
    )
    uc_common.emit(out)
    con.close()
    sys.exit(0 if out["ok"] else 1)


if __name__ == "__main__":
    main()
