"""pipeline.memory: a shard worker's malloc keeps freed shard buffers (glibc), once per process."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the settings are glibc's (mallopt)")
def test_the_settings_take_once_and_shards_still_run(tmp_path: Path) -> None:
    """In a fresh process: mallopt accepts both settings, a second call changes nothing, and a
    shard simulated and written afterwards has all its rows."""
    code = (
        "from pipeline.memory import keep_freed_memory\n"
        "from pipeline.shard import ShardTask\n"
        "from pipeline.task import run_shard\n"
        "assert keep_freed_memory() is True and keep_freed_memory() is True\n"
        "t = ShardTask('m', 0, 0, 0, ('sum:20', 'ev'), '3.1', 'classic', 3, True, 0, 0, 50)\n"
        f"r = run_shard(t, {str(tmp_path)!r})\n"
        "assert r['rows']['games'] == 100, r\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
