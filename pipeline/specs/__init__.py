"""The example tournament specs shipped inside the package (copies of the checkout's
experiments/*.toml, kept identical by a test), so that `flip7 tournament run demo` works after
`pip install flip7` and `flip7 init` can copy them out for editing."""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable


def shipped() -> dict[str, Traversable]:
    """{name: file} of every shipped spec (`demo` for demo.toml), sorted by name."""
    found = [f for f in files(__name__).iterdir() if f.name.endswith(".toml")]
    return {f.name.removesuffix(".toml"): f for f in sorted(found, key=lambda f: f.name)}


def names() -> list[str]:
    return list(shipped())
