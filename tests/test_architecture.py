"""The imports of the tree follow docs/architecture.md, and none of them forms a cycle.

The rules are the table in docs/architecture.md ("Import rules"): this test parses it, walks every
.py file of the first-party packages with `ast` (no module is imported), and fails naming each
import that breaks a rule (file, line, importer, imported, the row it breaks) and each cycle (the
modules in order, with the line of each import). Every import statement counts: at module level,
inside functions and under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
MARKER = "<!-- the test parses this table"
#: Top-level folders that are not Python packages of the project.
NOT_PACKAGES = {"docs", "scripts", "build", "dist", "results", "data", "node_modules"}


@dataclass(frozen=True)
class Rule:
    modules: tuple[str, ...]
    may: tuple[str, ...]
    never: tuple[str, ...]


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str  # a first-party module, or a third-party top-level name
    path: str  # relative to the repository root
    line: int
    first_party: bool

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def parse_rules(text: str) -> list[Rule]:
    """The rows of the table after MARKER: backticked names per column."""
    rules: list[Rule] = []
    after = text.split(MARKER, 1)[1]
    for line in after.splitlines()[1:]:
        line = line.strip()
        if not line:
            if rules:
                break
            continue
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        names = [tuple(re.findall(r"`([^`]+)`", c)) for c in cells]
        if len(cells) != 3 or not names[0]:
            continue  # the header and the |---| line
        rules.append(Rule(names[0], names[1], names[2]))
    return rules


def find_modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every first-party module: dotted name -> (file, is a package's __init__)."""
    mods: dict[str, tuple[Path, bool]] = {}
    for top in sorted(root.iterdir()):
        if not top.is_dir() or top.name.startswith((".", "_")) or top.name in NOT_PACKAGES:
            continue
        for path in sorted(top.rglob("*.py")):
            rel = path.relative_to(root)
            if any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
                continue
            parts = list(rel.with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts = parts[:-1]
            if all(p.isidentifier() for p in parts):
                mods[".".join(parts)] = (path, is_pkg)
    return mods


def find_edges(root: Path, mods: dict[str, tuple[Path, bool]]) -> list[Edge]:
    """Every import statement of every module, as edges."""
    tops = {m.split(".")[0] for m in mods}

    def deepest(name: str) -> str | None:
        while name:
            if name in mods:
                return name
            name = name.rpartition(".")[0]
        return None

    edges: list[Edge] = []
    for mod, (path, is_pkg) in mods.items():
        package = mod if is_pkg else mod.rpartition(".")[0]
        rel = str(path.relative_to(root))
        for target, line in imported_names(path, package, mods):
            if target.split(".")[0] not in tops:
                edges.append(Edge(mod, target.split(".")[0], rel, line, False))
                continue
            found = deepest(target)
            if found is not None and found != mod:
                edges.append(Edge(mod, found, rel, line, True))
    return edges


def imported_names(
    path: Path, package: str, mods: dict[str, tuple[Path, bool]]
) -> list[tuple[str, int]]:
    """(dotted name, line) of every import statement in the file, wherever it stands; for
    `from M import n`, M.n when that is a module, else M (relative imports resolved)."""
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}" if module else alias.name
                out.append((full if full in mods or not module else module, node.lineno))
    return out


def covers(name: str, module: str) -> bool:
    return name == "*" or module == name or module.startswith(name + ".")


def rule_for(rules: list[Rule], module: str) -> tuple[str, Rule] | None:
    """The most specific row naming `module` or a package above it."""
    best: tuple[str, Rule] | None = None
    for rule in rules:
        for name in rule.modules:
            if covers(name, module) and (best is None or len(name) > len(best[0])):
                best = (name, rule)
    return best


def broken_rules(rules: list[Rule], mods: Iterable[str], edges: list[Edge]) -> list[str]:
    """One line per module no row covers and per import a row does not allow."""
    out = [
        f"{m}: no row of docs/architecture.md covers it (add one)"
        for m in sorted(mods)
        if rule_for(rules, m) is None
    ]
    for e in edges:
        found = rule_for(rules, e.importer)
        if found is None:
            continue
        row, rule = found
        banned = [n for n in rule.never if covers(n, e.imported)]
        allowed = not e.first_party or any(covers(n, e.imported) for n in rule.may)
        if banned or not allowed:
            why = f"never `{banned[0]}`" if banned else "not in its 'may import'"
            out.append(
                f"{e.where()}: {e.importer} imports {e.imported}, "
                f"which the row `{row}` of docs/architecture.md forbids ({why})"
            )
    return out


def cycles(edges: list[Edge]) -> list[str]:
    """One line per strongly connected group of first-party modules: a cycle through it,
    each import with its file and line, and the group's size."""
    graph: dict[str, dict[str, Edge]] = {}
    for e in edges:
        if e.first_party:
            graph.setdefault(e.importer, {}).setdefault(e.imported, e)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's algorithm, iteratively (no recursion limit)
        work = [(v, iter(sorted(graph.get(v, {}))))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    out = []
    for group in groups:
        members = set(group)
        start = group[0]
        # the shortest way back to `start` inside the group (breadth first)
        back: dict[str, str] = {}
        frontier = [start]
        while frontier and start not in back:
            nxt = []
            for v in frontier:
                for w in sorted(graph.get(v, {})):
                    if w in members and w not in back:
                        back[w] = v
                        nxt.append(w)
            frontier = nxt
        path = [start]
        while True:
            path.append(back[path[-1]])
            if path[-1] == start:
                break
        path.reverse()
        steps = " -> ".join(
            f"{a} ({graph[a][b].where()})" for a, b in zip(path, path[1:], strict=False)
        )
        out.append(f"cycle among {len(group)} modules {group}: {steps} -> {start}")
    return out


def test_the_map_has_a_rule_table() -> None:
    """docs/architecture.md holds the table, with a row for each of the four packages."""
    rules = parse_rules(DOC.read_text())
    named = {n for r in rules for n in r.modules}
    assert {"flip7", "pipeline", "warehouse", "dashboard", "tests"} <= named, named


def test_every_import_follows_the_map() -> None:
    """Every import in the tree is allowed by the row of docs/architecture.md that covers its
    module (the most specific one), and every module has a row."""
    mods = find_modules(ROOT)
    broken = broken_rules(parse_rules(DOC.read_text()), mods, find_edges(ROOT, mods))
    assert not broken, "\n".join(broken)


def test_no_import_cycles() -> None:
    """No module reaches itself through imports (every import counts; docs/architecture.md)."""
    mods = find_modules(ROOT)
    found = cycles(find_edges(ROOT, mods))
    assert not found, "\n".join(found)


def test_the_checks_name_the_offending_import_and_cycle(tmp_path: Path) -> None:
    """On a made-up tree: a forbidden import (inside a function) and a cycle (one side under
    TYPE_CHECKING) are reported with their files and lines."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "__init__.py").write_text("")
    (tmp_path / "core" / "a.py").write_text("from core import b\n")
    (tmp_path / "core" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from core.a import x\n"
    )
    (tmp_path / "ui").mkdir()
    (tmp_path / "ui" / "__init__.py").write_text("")
    (tmp_path / "ui" / "page.py").write_text("def f():\n    from .. import core\n    import ray\n")
    rules = parse_rules(
        f"{MARKER} -->\n\n| modules | may import | never |\n|---|---|---|\n"
        "| `core` | `core` | |\n| `ui` | `ui` | `ray` |\n"
    )
    mods = find_modules(tmp_path)
    edges = find_edges(tmp_path, mods)
    assert broken_rules(rules, mods, edges) == [
        "ui/page.py:2: ui.page imports core, which the row `ui` of docs/architecture.md "
        "forbids (not in its 'may import')",
        "ui/page.py:3: ui.page imports ray, which the row `ui` of docs/architecture.md "
        "forbids (never `ray`)",
    ]
    assert cycles(edges) == [
        "cycle among 2 modules ['core.a', 'core.b']: "
        "core.a (core/a.py:1) -> core.b (core/b.py:3) -> core.a"
    ]
