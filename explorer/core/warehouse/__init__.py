"""Scale-out (../shared/DESIGN.md "Scale-out"): the requests stay in a warehouse (a Spark
Connect server: Spark >= 3.5, Databricks, EMR; `spark:local` starts one here), the eval cases
stay local and travel to the engine as small temporary views; binding and aggregates run there
from the same queries/*.sql (SQLGlot, portable.py); only the cohort's rows and aggregates come
back. Needs the optional extra: pip install 'trace-explorer[spark]' (and Java 17).

    from explorer.core.warehouse import open_warehouse
    ws = open_warehouse(local_store, "spark:local", "parquet:/data/requests/")
    write_report(ws, cohort, out_dir, cached=False)   # meta.engine from ws.engine_meta()
    ws.close()
"""
from .local import LocalSpark, WarehouseUnavailable
from .spark import Cancelled, SparkSource, WarehouseError, redact_url
from .store import WarehouseStore, open_warehouse, parse_columns

__all__ = ["open_warehouse", "parse_columns", "WarehouseStore", "SparkSource", "LocalSpark",
           "WarehouseUnavailable", "WarehouseError", "Cancelled", "redact_url"]
