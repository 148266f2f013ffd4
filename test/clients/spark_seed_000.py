"""Seed 000's statements through Spark: catalog `replace_demo` (the session's default), schema
`sales`, table `orders`.

run(spark) needs spark.sql.defaultCatalog=replace_demo; it sets it for its session.
Usage: spark_seed_000.py --uri URL [--mode S|SL]   (prints one JSON object)
"""

import argparse
import sys

import uc_common


def run(spark):
    spark.conf.set("spark.sql.defaultCatalog", "replace_demo")

    def sql(statement):
        def step():
            spark.sql(statement)
            return True

        return step

    def orders():
        return uc_common.rows(spark.sql("SELECT * FROM sales.orders ORDER BY order_id"))

    def arity_error():
        try:
            spark.sql("INSERT OVERWRITE sales.orders VALUES (9, 'ada')")
        except Exception as err:  # noqa: BLE001
            return {"refused": True, "error_type": type(err).__name__, "error": uc_common.error_text(err)}
        return {"refused": False}

    def dynamic_overwrite():
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        try:
            spark.sql("""
                INSERT OVERWRITE sales.orders VALUES
                    (8, 'grace', 4.00, DATE'2026-10-04', 0.80)
            """)
        finally:
            spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
        return True

    def history():
        df = spark.sql("DESCRIBE HISTORY sales.orders").select("version", "operation")
        return sorted(uc_common.rows(df))

    def version_3():
        return uc_common.rows(spark.sql("SELECT order_id, day FROM sales.orders VERSION AS OF 3 ORDER BY order_id"))

    return uc_common.run_steps(
        [
            (
                "ctas",
                sql("""
                    CREATE TABLE sales.orders USING DELTA AS
                    SELECT * FROM VALUES
                        (1, 'ada',   9.50,  DATE'2026-10-01'),
                        (2, 'grace', 20.00, DATE'2026-10-01'),
                        (3, 'linus', 3.25,  DATE'2026-10-02')
                    AS t(order_id, customer, amount, day)
                """),
            ),
            ("after_ctas", orders),
            (
                "create_or_replace",
                sql("""
                    CREATE OR REPLACE TABLE sales.orders USING DELTA
                    PARTITIONED BY (day) AS
                    SELECT *, amount * 0.20 AS tax FROM sales.orders
                """),
            ),
            ("after_create_or_replace", orders),
            (
                "insert_overwrite",
                sql("""
                    INSERT OVERWRITE sales.orders VALUES
                        (4, 'ada',   12.00, DATE'2026-10-03', 2.40),
                        (5, 'grace', 8.00,  DATE'2026-10-03', 1.60),
                        (6, 'linus', 5.00,  DATE'2026-10-04', 1.00)
                """),
            ),
            ("after_insert_overwrite", orders),
            ("arity_error", arity_error),
            (
                "replace_where",
                sql("""
                    INSERT INTO sales.orders
                    REPLACE WHERE day = DATE'2026-10-03'
                    VALUES (7, 'ada', 30.00, DATE'2026-10-03', 6.00)
                """),
            ),
            ("after_replace_where", orders),
            ("dynamic_overwrite", dynamic_overwrite),
            ("after_dynamic_overwrite", orders),
            ("history", history),
            ("version_3", version_3),
            ("restore", sql("RESTORE TABLE sales.orders TO VERSION AS OF 3")),
            ("after_restore", orders),
            ("history_after_restore", history),
        ]
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--uri", required=True)
    p.add_argument("--mode", default="S", choices=["S", "SL"])
    args = p.parse_args()
    uc_common.json_stdout()
    import spark_session

    spark = spark_session.build_session(
        args.uri, ["replace_demo"], args.mode, default_catalog="replace_demo", app_name="seed-000"
    )
    out = run(spark)
    uc_common.emit(out)
    spark.stop()
    sys.exit(0 if out["ok"] else 1)


if __name__ == "__main__":
    main()
