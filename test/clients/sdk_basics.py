"""The `unitycatalog-client` 0.7.0 Python SDK (async, generated from UC's all.yaml) against a UC
server at --uri: catalogs and schemas created, read, listed, changed and deleted; an existing table listed
and read; temporary credentials for it; and the 404s a client gets for what is not there.

Note: the SDK maps only HTTP 200 to a result; a create answered 201 comes back as None.
Usage: sdk_basics.py --uri URL [--table inventory.stock.restock]   (prints one JSON object)
"""

import argparse
import asyncio
import sys

import uc_common

CATALOG = "sdk_cat"
SCHEMA = "sdk_schema"


def as_dict(model):
    return None if model is None else model.to_dict()


def refusal(err):
    return {
        "refused": True,
        "error_type": type(err).__name__,
        "status": getattr(err, "status", None),
        "body": getattr(err, "body", None),
    }


async def expect_error(call):
    from unitycatalog.client.exceptions import ApiException

    try:
        result = await call
    except ApiException as err:
        return refusal(err)
    return {"refused": False, "result": as_dict(result)}


async def run(uri, table):
    from unitycatalog.client import (
        ApiClient,
        CatalogsApi,
        Configuration,
        CreateCatalog,
        CreateSchema,
        GenerateTemporaryTableCredential,
        SchemasApi,
        TablesApi,
        TableOperation,
        TemporaryCredentialsApi,
        UpdateCatalog,
        UpdateSchema,
    )

    config = Configuration(host=f"{uri}/api/2.1/unity-catalog")
    async with ApiClient(config, header_name="Authorization", header_value="Bearer not-used") as client:
        catalogs, schemas = CatalogsApi(client), SchemasApi(client)
        tables, creds = TablesApi(client), TemporaryCredentialsApi(client)
        catalog_name, schema_name, _ = table.split(".")
        steps = []

        def step(name, make):
            steps.append((name, make))

        step("create_catalog", lambda: catalogs.create_catalog(
            CreateCatalog(name=CATALOG, comment="made by the SDK", properties={"team": "silt"})))
        step("get_catalog", lambda: catalogs.get_catalog(CATALOG))
        step("list_catalogs", lambda: catalogs.list_catalogs())
        step("create_schema", lambda: schemas.create_schema(
            CreateSchema(name=SCHEMA, catalog_name=CATALOG, comment="schema by the SDK")))
        step("get_schema", lambda: schemas.get_schema(f"{CATALOG}.{SCHEMA}"))
        step("list_schemas", lambda: schemas.list_schemas(catalog_name=CATALOG))
        step("update_catalog", lambda: catalogs.update_catalog(
            CATALOG, UpdateCatalog(comment="changed by the SDK", properties={"team": "core", "tier": "gold"})))
        step("update_schema", lambda: schemas.update_schema(
            f"{CATALOG}.{SCHEMA}", UpdateSchema(comment="schema changed")))
        step("get_updated_schema", lambda: schemas.get_schema(f"{CATALOG}.{SCHEMA}"))
        step("rename_catalog", lambda: expect_error(
            catalogs.update_catalog(CATALOG, UpdateCatalog(new_name="sdk_cat_renamed"))))
        step("get_updated_catalog", lambda: catalogs.get_catalog(CATALOG))
        step("list_tables", lambda: tables.list_tables(catalog_name=catalog_name, schema_name=schema_name))
        step("get_table", lambda: tables.get_table(table))
        results = {}

        async def credentials():
            table_id = results["get_table"]["table_id"]
            return await creds.generate_temporary_table_credentials(
                GenerateTemporaryTableCredential(table_id=table_id, operation=TableOperation.READ))

        step("temporary_table_credentials", credentials)
        step("get_missing_table", lambda: expect_error(tables.get_table(f"{catalog_name}.{schema_name}.no_such_table")))
        step("get_missing_schema", lambda: expect_error(schemas.get_schema(f"{CATALOG}.no_such_schema")))
        step("delete_schema", lambda: schemas.delete_schema(f"{CATALOG}.{SCHEMA}"))
        step("delete_catalog", lambda: catalogs.delete_catalog(CATALOG))
        step("get_deleted_catalog", lambda: expect_error(catalogs.get_catalog(CATALOG)))

        out = {"ok": True, "steps": results}
        for name, make in steps:
            try:
                value = await make()
                results[name] = value if isinstance(value, dict) else as_dict(value)
            except Exception as err:  # noqa: BLE001 - reported to the test
                out.update(ok=False, failed_step=name, **{k: v for k, v in refusal(err).items() if k != "refused"})
                out["error"] = uc_common.error_text(err)
                break
        return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--uri", required=True)
    p.add_argument("--table", default="inventory.stock.restock")
    args = p.parse_args()
    uc_common.json_stdout()
    out = asyncio.run(run(args.uri, args.table))
    uc_common.emit(out)
    sys.exit(0 if out["ok"] else 1)


if __name__ == "__main__":
    main()
