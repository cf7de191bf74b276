"""`flip7 init [DIR]`: copy the shipped example specs into DIR (default ./experiments) to edit.

Files already there are left alone and named, so running it twice changes nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline import specs

if TYPE_CHECKING:
    from flip7.cli import Output


def register_init(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "init",
        help="copy the example tournament specs into a folder to edit",
        description="Copy the tournament specs shipped with flip7 (demo, field-size, policies, "
        "...) into DIR, to read and edit; `flip7 tournament run DIR/demo.toml` runs a copy, "
        "`flip7 tournament run demo` the shipped original. Existing files are kept.",
    )
    p.add_argument("dir", nargs="?", default="experiments", help="where (default ./experiments)")
    p.set_defaults(func=cmd_init, tee=False)


def copy_specs(target: Path) -> tuple[list[Path], list[Path]]:
    """Copy every shipped spec into `target`: (written, left alone because they existed)."""
    if target.exists() and not target.is_dir():
        raise ValueError(f"{target} is a file; give a folder for the specs (created if missing)")
    target.mkdir(parents=True, exist_ok=True)
    written, kept = [], []
    for name, source in specs.shipped().items():
        path = target / f"{name}.toml"
        if path.exists():
            kept.append(path)
            continue
        path.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
        written.append(path)
    return written, kept


def cmd_init(args: argparse.Namespace, out: Output) -> int:
    target = Path(args.dir)
    written, kept = copy_specs(target)
    if written:
        out.print(f"wrote {len(written)} tournament specs to {target}/:")
        for path in written:
            out.print(f"  {path.name}")
    if kept:
        out.print(f"kept {len(kept)} existing file(s): {', '.join(p.name for p in kept)}")
    first = target / "demo.toml"
    out.print(f"Next: edit one, then  flip7 tournament run {first} --scale 0.1")
    return 0
