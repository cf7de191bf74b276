"""DuckDB over the Parquet lake: layered SQL views and marts, a typed query API, checks.

`connect()` opens the warehouse over a lake (see `warehouse.db`); `warehouse.queries` holds the
named queries the dashboard and the report read; `verify()` checks the lake against itself.
"""

from warehouse.db import connect
from warehouse.lake import EmptyLakeError, data_root
from warehouse.verify import verify

__all__ = ["EmptyLakeError", "connect", "data_root", "verify"]
