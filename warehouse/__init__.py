"""DuckDB over the Parquet lake: layered SQL views and marts, a typed query API, checks.

`connect()` opens the warehouse over a lake (see `warehouse.db`); `warehouse.queries` holds the
named queries the dashboard and the report read; `verify()` checks the lake against itself.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from warehouse.db import connect
    from warehouse.lake import EmptyLakeError, data_root
    from warehouse.verify import verify

__all__ = ["EmptyLakeError", "connect", "data_root", "verify"]

#: Where each name lives: imported on first use, so that `flip7 --help` (which imports
#: warehouse.cli) loads no DuckDB or pyarrow.
_LAZY = {
    "connect": "warehouse.db",
    "EmptyLakeError": "warehouse.lake",
    "data_root": "warehouse.lake",
}


class _Package(types.ModuleType):
    """This package, whose `verify` is always the function `warehouse.verify.verify`: importing
    the submodule of that name sets the package's attribute `verify` to the submodule (after
    it loads, whoever imports it), which would shadow the function for every later
    `from warehouse import verify`; here that binding is ignored."""

    @property
    def verify(self) -> Any:
        from warehouse.verify import verify

        return verify

    @verify.setter
    def verify(self, value: object) -> None:
        pass  # the import system binding the submodule: the name stays the function


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'warehouse' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "verify"})
