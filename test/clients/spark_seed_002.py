"""Seed 002's Spark part, statement for statement: catalog `inventory`, schema `stock`.

run(spark) does everything up to DESCRIBE HISTORY and leaves `items` in place, so the test can
read it through Silt's own API; drop(spark) is the seed's last statement.
Usage: spark_seed_002.py --uri URL [--mode S|SL] [--keep]   (prints one JSON object)
"""

import argparse
import sys

import uc_common


def run(spark):
    def create():
        spark.sql("""
            CREATE TABLE inventory.stock.items (
                sku STRING,
                qty INT
            ) USING DELTA
        """)
        return True

    def detail():
        row = (
            spark.sql("""
                DESCRIBE DETAIL inventory.stock.items
            """)
            .select("minReaderVersion", "minWriterVersion", "tableFeatures")
            .collect()[0]
        )
        return {
            "minReaderVersion": row["minReaderVersion"],
            "minWriterVersion": row["minWriterVersion"],
            "tableFeatures": sorted(row["tableFeatures"]),
        }

    def create_without_dvs():
        # The seed expects this to fail; print(err) is what the seed shows.
        try:
            spark.sql("""
                CREATE TABLE inventory.stock.returns (sku STRING, qty INT)
                USING DELTA
                TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')
            """)
        except Exception as err:  # noqa: BLE001
            print(err, file=sys.stderr)
            return {"refused": True, "error_type": type(err).__name__, "error": str(err)}
        return {"refused": False}

    def insert():
        spark.sql("""
            INSERT INTO inventory.stock.items VALUES
                ('apple', 10),
                ('pear', 4),
                ('plum', 0)
        """)
        return True

    def update():
        spark.sql("UPDATE inventory.stock.items SET qty = qty + 5 WHERE sku = 'pear'")
        return True

    def delete():
        spark.sql("DELETE FROM inventory.stock.items WHERE qty = 0")
        return True

    def select():
        return uc_common.rows(
            spark.sql("""
                SELECT sku, qty
                FROM inventory.stock.items
                ORDER BY sku
            """)
        )

    def version_1():
        return uc_common.rows(
            spark.sql("""
                SELECT sku, qty
                FROM inventory.stock.items VERSION AS OF 1
                ORDER BY sku
            """)
        )

    def history():
        df = spark.sql("DESCRIBE HISTORY inventory.stock.items").select("version", "operation")
        return sorted(uc_common.rows(df))

    return uc_common.run_steps(
        [
            ("create", create),
            ("detail", detail),
            ("create_without_dvs", create_without_dvs),
            ("insert", insert),
            ("update", update),
            ("delete", delete),
            ("select", select),
            ("version_1", version_1),
            ("history", history),
        ]
    )


def drop(spark):
    def drop_table():
        spark.sql("DROP TABLE inventory.stock.items")
        return True

    def tables_after():
        return sorted(r[1] for r in uc_common.rows(spark.sql("SHOW TABLES IN inventory.stock")))

    return uc_common.run_steps([("drop", drop_table), ("tables_after", tables_after)])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--uri", required=True)
    p.add_argument("--mode", default="S", choices=["S", "SL"])
    p.add_argument("--keep", action="store_true", help="skip the DROP TABLE")
    args = p.parse_args()
    uc_common.json_stdout()
    import spark_session

    spark = spark_session.build_session(args.uri, ["inventory"], args.mode, app_name="seed-002")
    out = run(spark)
    if out["ok"] and not args.keep:
        dropped = drop(spark)
        out["steps"].update(dropped["steps"])
        out.update({k: v for k, v in dropped.items() if k != "steps"})
    uc_common.emit(out)
    spark.stop()
    sys.exit(0 if out["ok"] else 1)


if __name__ == "__main__":
    main()
