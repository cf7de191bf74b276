"""Imported by each Ray worker as it starts, before it takes work: load the compiled kernel.

A driver that starts a local Ray names this module in Ray's `preload_python_modules` and the
run's kernel in `pipeline.task.PRELOAD_ENV` (a cluster does the same on `ray start`; see
docs/pipeline.md). Each worker then imports the shard task (numpy, pyarrow) and loads the
kernel from numba's cache while the driver is still handing out the first tasks, rather than in
its first task: about a second of CPU per worker, and Ray's first hand-off alone takes a few
tenths of a second (`benchmarks/whole_run.py` times both). Importing this module is the whole
of its work, so only Ray imports it: the driver and the commands never do.
"""

from __future__ import annotations

import os

from pipeline.task import PRELOAD_ENV, load_kernel

load_kernel(os.environ.get(PRELOAD_ENV))
