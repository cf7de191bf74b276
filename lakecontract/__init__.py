"""The lake contract: what the pipeline writes and the warehouse and the dashboard read, said once.

The layout and schema versions (layout), the run-name rule (names), a manifest's shape
(manifest), the object store's checks and error lines (store), the English text of a logged
event (events), and how the events and rounds files store their rows (codec, with arrow's
columns from numpy buffers). It imports nothing of the engine, nor numpy or pyarrow until a
lake is opened (codec and arrow are imported only where one is read or written), so that every
layer may import it: the dashboard's promise that a policy name in a lake is only text to it
holds (tests/security).
"""

from lakecontract.events import describe as describe_event
from lakecontract.layout import (
    ROLLUPS_SINCE,
    SCHEMA_VERSION,
    TABLES,
    TMP_MARK,
    WRITE_OPTIONS,
    default_root,
)
from lakecontract.manifest import (
    MAX_COUNT,
    check_manifest,
    manifest_shape_problem,
    manifest_tables,
    schema_problem,
    stop_problem,
    view_problem,
)
from lakecontract.names import RUN_NAME_MAX, check_run_name, is_run_name
from lakecontract.store import (
    LakeUnreachable,
    check_bucket,
    probe_store,
    store_error,
    store_timeout,
)

__all__ = [
    "MAX_COUNT",
    "ROLLUPS_SINCE",
    "RUN_NAME_MAX",
    "SCHEMA_VERSION",
    "TABLES",
    "TMP_MARK",
    "WRITE_OPTIONS",
    "LakeUnreachable",
    "check_bucket",
    "check_manifest",
    "check_run_name",
    "default_root",
    "describe_event",
    "is_run_name",
    "manifest_shape_problem",
    "manifest_tables",
    "probe_store",
    "schema_problem",
    "stop_problem",
    "store_error",
    "store_timeout",
    "view_problem",
]
