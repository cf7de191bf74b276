"""Policies and their registry: specs like `sum:20`, `bust:0.25`, `dup:0.25`, `ev`, or `mypkg.mine:MyPolicy`.

A built-in spec is `name` or `name:ARG`. Anything else containing a colon is an import path
`module:Class`: the module's source must define a top-level `class Class` (read, not run, so
naming a module that does not runs none of its code), and the class, once imported, must be a
`Policy` subclass (checked before anything is called);
`module:Class:ARG` passes ARG (a string) to its constructor. Factories register as built-ins
with `register_policy` (the solver's `dp` policy does).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from typing import Any, TypeVar

from flip7.policies.base import Policy, PolicySpecError
from flip7.policies.ev import EndgamePolicy, EVPolicy
from flip7.policies.human import HumanPolicy
from flip7.policies.thresholds import BustPolicy, CountPolicy, DupPolicy, SumPolicy


@dataclass(frozen=True)
class PolicyEntry:
    name: str
    make: Callable[[str | None], Policy]
    help: str
    arg: str | None = None  # what ARG means, or None if the policy takes none
    example: str | None = None
    #: True for a policy that asks a person (it cannot play a tournament nor be replayed)
    interactive: bool = False


REGISTRY: dict[str, PolicyEntry] = {}

_N = TypeVar("_N", int, float)


def register_policy(entry: PolicyEntry) -> None:
    """Add a built-in policy to the registry (name must be new)."""
    if entry.name in REGISTRY:
        raise ValueError(f"policy {entry.name!r} is already registered")
    REGISTRY[entry.name] = entry


def _number_arg(
    name: str,
    convert: Callable[[Any], _N],
    letter: str,
    lo: _N,
    hi: _N,
    span: str,
    what: str,
    example: object,
) -> Callable[[str | None], _N]:
    """The parser of `name:LETTER`: `what` LETTER in `span` (lo..hi), an error naming `example`."""

    def parse(arg: str | None) -> _N:
        try:
            value = convert(arg)
        except (TypeError, ValueError):
            raise PolicySpecError(
                f"policy {name}:{letter} needs {what} {letter} in {span}, got {arg!r} (e.g. {name}:{example})"
            ) from None
        if not lo <= value <= hi:
            raise PolicySpecError(f"policy {name}:{letter} needs {letter} in {span}, got {value}")
        return value

    return parse


def _int_arg(name: str, lo: int, hi: int) -> Callable[[str | None], int]:
    return _number_arg(name, int, "N", lo, hi, f"{lo}..{hi}", "an integer", lo + (hi - lo) // 4)


def _prob_arg(name: str) -> Callable[[str | None], float]:
    return _number_arg(name, float, "P", 0.0, 1.0, "[0, 1]", "a probability", 0.25)


def _no_arg(name: str, make: Callable[[], Policy]) -> Callable[[str | None], Policy]:
    def build(arg: str | None) -> Policy:
        if arg is not None:
            raise PolicySpecError(f"policy {name!r} takes no argument, got {name}:{arg}")
        return make()

    return build


_sum, _count = _int_arg("sum", 0, 200), _int_arg("count", 0, 7)
_bust, _bustc = _prob_arg("bust"), _prob_arg("bustc")
_dup, _dupc = _prob_arg("dup"), _prob_arg("dupc")

for _entry in (
    PolicyEntry(
        "sum", lambda a: SumPolicy(_sum(a)), "hit until your numbers total N or more", "N", "sum:20"
    ),
    PolicyEntry(
        "count",
        lambda a: CountPolicy(_count(a)),
        "hit until you hold N distinct numbers",
        "N",
        "count:4",
    ),
    PolicyEntry(
        "bust",
        lambda a: BustPolicy(_bust(a)),
        "hit while the next card's chance of busting you is under P (0 holding a Second Chance)",
        "P",
        "bust:0.25",
    ),
    PolicyEntry(
        "bustc",
        lambda a: BustPolicy(_bustc(a), counting=True),
        "bust:P counting the discard pile exactly",
        "P",
        "bustc:0.25",
    ),
    PolicyEntry(
        "dup",
        lambda a: DupPolicy(_dup(a)),
        "hit while the chance of a duplicate of your numbers is under P, Second Chance or not",
        "P",
        "dup:0.25",
    ),
    PolicyEntry(
        "dupc",
        lambda a: DupPolicy(_dupc(a), counting=True),
        "dup:P counting the discard pile exactly",
        "P",
        "dupc:0.25",
    ),
    PolicyEntry(
        "ev",
        _no_arg("ev", EVPolicy),
        "hit when one more card then stopping beats stopping (one-step lookahead)",
    ),
    PolicyEntry(
        "evc",
        _no_arg("evc", lambda: EVPolicy(counting=True)),
        "ev with perfect card counting (the discard pile too)",
    ),
    PolicyEntry(
        "endgame",
        _no_arg("endgame", EndgamePolicy),
        "ev, but once someone is within 60 of the target: gamble when trailing, coast when ahead",
    ),
    PolicyEntry(
        "human",
        _no_arg("human", HumanPolicy),
        "you, at the terminal (flip7 play)",
        interactive=True,
    ),
):
    register_policy(_entry)


def _dp(arg: str | None) -> Policy:
    """dp[:MODEL]: imported on first use, so `import flip7` never loads the solver."""
    from flip7.policies.dp import DPPolicy

    return DPPolicy(arg or "basic")


def _race(arg: str | None) -> Policy:
    """race[:MODEL]: imported on first use, like dp."""
    from flip7.policies.race import RacePolicy

    return RacePolicy(arg or "basic")


def _win(arg: str | None) -> Policy:
    """win[:MODEL][:fast]: imported on first use, like dp."""
    from flip7.policies.win import WinPolicy

    parts = (arg or "").split(":") if arg else []
    fast = bool(parts) and parts[-1] == "fast"
    if fast:
        parts = parts[:-1]
    if len(parts) > 1:
        raise PolicySpecError(f"policy win[:MODEL][:fast] takes a model and 'fast', got {arg!r}")
    model = parts[0] if parts else "basic"
    return WinPolicy(model, endgame=not fast, freeze=not fast)


# The solver's policies, each built by its loader above.
for _entry in (
    PolicyEntry(
        "dp",
        _dp,
        "the exact solo optimum, one table lookup (dp:real, dp:full: other solver models)",
    ),
    PolicyEntry(
        "race",
        _race,
        "the solo race's optimum: fewest expected rounds to the target from its own score "
        "(race:real: the other model)",
    ),
    PolicyEntry(
        "win",
        _win,
        "hit or stay to win the game: a round policy picked from the scores, the target and "
        "the field size, the round in play solved once it decides the game (win:real: the "
        "other model; win:fast: the table alone, at the kernel's full speed)",
    ),
):
    register_policy(_entry)


def needs_a_person(spec: str) -> str | None:
    """Why the built-in policy `spec` names cannot play unattended (a tournament, a replay, a
    verify), or None: it asks a person at the terminal."""
    name = str(spec).strip().partition(":")[0]
    entry = REGISTRY.get(name)
    if entry is None or not entry.interactive:
        return None
    return f"policy {name!r} needs a person at the terminal and cannot play unattended"


def valid_specs() -> str:
    """A one-line list of what parse_policy accepts."""
    names = [e.example or e.name for e in REGISTRY.values()]
    return ", ".join(names) + ", or an import path module:Class"


def parse_policy(spec: str) -> Policy:
    """Build a policy from its spec; PolicySpecError names what is valid."""
    spec = spec.strip()
    name, sep, arg = spec.partition(":")
    entry = REGISTRY.get(name)
    if entry is not None:
        if entry.arg is not None and not sep:
            raise PolicySpecError(
                f"policy {name!r} needs an argument {entry.arg}, e.g. {entry.example}"
            )
        policy = entry.make(arg if sep else None)
    elif (
        sep
        and all(part.isidentifier() for part in name.split("."))
        and arg.split(":")[0].isidentifier()
    ):
        policy = _import_policy(spec)
    else:
        from flip7.format import suggest

        # the name's closest match, the argument kept: 'bsut:0.2' -> 'bust:0.2'
        hint = suggest(name, list(REGISTRY), then=f"{sep}{arg}")
        raise PolicySpecError(f"unknown policy {spec!r}; valid: {valid_specs()}{hint}")
    policy.spec = spec
    return policy


def _import_policy(spec: str) -> Policy:
    """Check, without running it, that `module` defines a top-level `class attribute`; only then
    import it, check that the class is a Policy subclass, and build it. A spec naming a module
    that defines no such class (`this:Nothing`, `os:system:...`) is refused before the module
    or any package above it runs a line."""
    module_name, _, rest = spec.partition(":")
    attr, _, arg = rest.partition(":")
    _check_source(spec, module_name, attr)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PolicySpecError(
            f"policy {spec!r}: cannot import module {module_name!r} ({_first_line(exc)})"
        ) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the module's own code failed (sys.exit included)
        raise PolicySpecError(
            f"policy {spec!r}: importing module {module_name!r} raised "
            f"{type(exc).__name__}: {_first_line(exc)}"
        ) from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise PolicySpecError(f"policy {spec!r}: module {module_name!r} has no attribute {attr!r}")
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        what = "class" if isinstance(cls, type) else type(cls).__name__
        raise PolicySpecError(
            f"policy {spec!r}: {module_name}.{attr} is a {what}, not a flip7 Policy subclass; "
            "name a class that subclasses flip7.policies.Policy (or register a factory with "
            "register_policy)"
        )
    try:
        policy = cls(arg) if arg else cls()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit included: never a silent success
        raise PolicySpecError(
            f"policy {spec!r}: its constructor raised {type(exc).__name__}: {_first_line(exc)}"
        ) from None
    return policy


_RIGHT = "name the module whose source defines your Policy subclass (module:Class)"


def _in_working_directory(name: str) -> ModuleSpec | None:
    """A top-level module (or package) `name` in the current directory, for a policy named
    from the folder holding it (`flip7 sim -p mine:Cautious` beside mine.py): the `flip7`
    script's Python path starts at its own folder, not the current one, as `python -m` would.
    The directory is added at the end of the Python path, so it never shadows an installed
    module (it is searched only when nothing on the path has that name), and to PYTHONPATH, so
    that the processes a run starts (a local Ray's workers) find the module too."""
    import os
    from importlib.machinery import PathFinder

    try:
        here = os.getcwd()
    except OSError:  # the directory was removed
        return None
    found = PathFinder.find_spec(name, [here])
    if found is None:
        return None
    if here not in sys.path:
        sys.path.append(here)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if here not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([*paths, here])
    return found


def _locate(spec: str, module_name: str) -> ModuleSpec:
    """Where `module_name` would be imported from, found the way `import` finds it (the
    meta-path finders, each package's search path) but without importing it or any package
    above it: `importlib.util.find_spec` would run the parents' `__init__`."""
    path: list[str] | None = None
    parts = module_name.split(".")
    found: ModuleSpec | None = None
    for i in range(len(parts)):
        name = ".".join(parts[: i + 1])
        loaded = sys.modules.get(name)
        found = getattr(loaded, "__spec__", None) if loaded is not None else None
        if found is None:
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue
                try:
                    found = find(name, path)
                except (ImportError, OSError, ValueError):
                    found = None
                if found is not None:
                    break
        if found is None and i == 0:
            found = _in_working_directory(name)
        if found is None:
            raise PolicySpecError(
                f"policy {spec!r}: cannot import module {module_name!r} (no module named "
                f"{name!r} on the Python path or in the current directory); {_RIGHT}"
            )
        if i < len(parts) - 1:
            locations = found.submodule_search_locations
            if locations is None:
                raise PolicySpecError(
                    f"policy {spec!r}: cannot import module {module_name!r} ({name!r} is not a "
                    f"package); {_RIGHT}"
                )
            path = list(locations)
    assert found is not None
    return found


def _check_source(spec: str, module_name: str, attr: str) -> None:
    """A PolicySpecError unless the source of `module_name` (read, never run) defines a
    top-level `class attr`; says what `attr` is there instead when it is something else."""
    found = _locate(spec, module_name)
    source = None
    get_source = getattr(found.loader, "get_source", None)
    if found.origin and found.has_location and get_source is not None:
        try:
            source = get_source(module_name)
        except (ImportError, OSError, UnicodeDecodeError, SyntaxError):
            source = None
    if source is None:
        raise PolicySpecError(
            f"policy {spec!r}: module {module_name!r} has no Python source to check "
            f"({found.origin or 'no file'}), so {module_name}.{attr} is not a flip7 Policy "
            f"subclass flip7 will load; {_RIGHT}"
        )
    try:
        tree = ast.parse(source, filename=found.origin or module_name)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise PolicySpecError(
            f"policy {spec!r}: module {module_name!r} ({found.origin}) does not parse "
            f"({type(exc).__name__}); {_RIGHT}"
        ) from None
    what = None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == attr:
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == attr:
            what = "function"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and any(
            isinstance(t, ast.Name) and t.id == attr
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        ):
            what = "value"
        elif isinstance(node, ast.Import | ast.ImportFrom) and any(
            (a.asname or a.name.split(".")[0]) == attr or a.name == "*" for a in node.names
        ):
            what = "name imported from elsewhere"
    if what is None:
        raise PolicySpecError(
            f"policy {spec!r}: module {module_name!r} has no attribute {attr!r} (its source "
            f"defines no top-level class {attr}), so {module_name}.{attr} is not a flip7 "
            f"Policy subclass; {_RIGHT}"
        )
    raise PolicySpecError(
        f"policy {spec!r}: {module_name}.{attr} is a {what}, not a flip7 Policy subclass "
        f"defined there (a top-level `class {attr}(Policy)`); {_RIGHT}"
    )


def _first_line(exc: BaseException) -> str:
    lines = [s for s in str(exc).strip().splitlines() if s.strip()]
    return lines[0] if lines else "(no message)"


def parse_policies(specs: str | list[str]) -> list[Policy]:
    """Comma-separated specs (or a list) to policies."""
    items = specs.split(",") if isinstance(specs, str) else specs
    items = [s for s in (i.strip() for i in items) if s]
    if not items:
        raise PolicySpecError(f"no policy given; valid: {valid_specs()}")
    policies = []
    for seat, item in enumerate(items):
        try:
            policies.append(parse_policy(item))
        except PolicySpecError as exc:
            raise PolicySpecError(f"seat {seat}: {exc}") from None
    return policies


__all__ = [
    "REGISTRY",
    "BustPolicy",
    "CountPolicy",
    "DupPolicy",
    "EVPolicy",
    "EndgamePolicy",
    "HumanPolicy",
    "Policy",
    "PolicyEntry",
    "PolicySpecError",
    "SumPolicy",
    "parse_policies",
    "needs_a_person",
    "parse_policy",
    "register_policy",
    "valid_specs",
]
