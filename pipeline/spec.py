"""The tournament spec: a TOML file, parsed and fully validated before anything launches.

A spec names the run, its seed, ruleset and variant, and a list of line-ups. A line-up is either
an explicit seat list (`seats = ["ev", "ev", "bust:0.25"]`, field size = its length) or an equal
mix of policies expanded to one or more field sizes (`mix = ["ev", "bust:0.25"]`,
`players = [2, 4, 6]`: seat s plays mix[s % len(mix)]). Line-ups that share a `pair` label are
played on common random numbers: at each field size, game i of every such line-up gets the same
seed, hence the same shuffles. Every error names the field (`lineups[1].mix[0]`) and what would
be valid; `load_spec` raises ValueError (or FileNotFoundError) and never starts Ray.

Rule choices cross like field sizes: `ruleset = "immediate"` (one) or `rulesets = ["3.1",
"legacy", "3.1(target=150)"]` (each line-up under each), at the top level (the default) or in a
line-up (its own). A cell is one line-up at one field size under one ruleset; two line-ups that
would give one cell the same label, field size and ruleset are an error (the marts would pool
them). Common random numbers pair line-ups under the same ruleset only.

See docs/pipeline.md for the full format.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flip7.policies import PolicySpecError, needs_a_person, parse_policy
from flip7.rules import parse_ruleset
from flip7.variants import deck_from_counts, parse_variant
from pipeline.lake import check_run_name

#: The card-game variants a tournament can play (flip7.variants), with their options:
#: `vengeance(deck=alt)`, `vengeance(brutal=1)`, or `vengeance(deck=custom)` with a [deck] table.
VARIANTS: tuple[str, ...] = ("classic", "vengeance")

MIN_PLAYERS = 2
#: One classic deck serves up to 18 players (flip7.rules.Ruleset.players_per_deck).
MAX_PLAYERS = 18
#: Event values (e.g. a winner's total) are stored as int16: keep targets far below 32767.
MAX_TARGET = 10_000
MAX_GAMES = 2**31 - 1  # cell_game is an int32 column
#: A shard is one Ray task holding all its rows in memory: 100,000 four-player games are about
#: 25M event rows (some hundreds of MB), ten times the default.
MAX_SHARD_SIZE = 100_000
#: A declared [deck]: at most this many cards in all (the classic deck has 94; a table past
#: `players_per_deck` players shuffles in more copies of the whole deck).
MAX_DECK_CARDS = 1_000
#: Games per shard when the spec does not say: about 0.15 s of work with the compiled kernel (each
#: shard also pays a few ms for its three files and the kernel call), a few seconds without.
DEFAULT_SHARD_SIZE = 10_000

_TOP_KEYS = {
    "name": "run name (letters, digits, '.', '_' or '-')",
    "description": "free text",
    "seed": "root seed, an integer >= 0",
    "ruleset": "a ruleset spec such as '3.1' or '3.1(target=150)'",
    "rulesets": "several ruleset specs, e.g. ['3.1', 'immediate', 'legacy']: each line-up under each",
    "variant": "classic or vengeance, e.g. 'vengeance(deck=alt,brutal=1)'",
    "deck": "a declared deck for variant '...(deck=custom)': [deck] table of card = copies",
    "games": "games per cell (default for every line-up)",
    "players": "default field sizes for mix line-ups",
    "rotate": "rotate seats game by game (true/false)",
    "shard_size": "games per shard (one Ray task)",
    "out": "output location (a directory or any pyarrow filesystem URI)",
    "policy_timeout": "seconds a shard may take before a policy that never answers is stopped",
    "lineups": "the line-ups, as [[lineups]] tables",
    "stop": "when to stop: a [stop] table (test = 'fixed', 'sprt' or 'ranking', see "
    "docs/sequential.md)",
}
_LINEUP_KEYS = {
    "name": "a label for the line-up",
    "seats": "explicit policies, one per seat",
    "mix": "policies in an equal mix, expanded to each field size",
    "players": "field sizes (with mix; with seats it must equal the seat count)",
    "games": "games per cell for this line-up",
    "pair": "a label: line-ups with the same label share shuffles (common random numbers)",
    "ruleset": "this line-up's ruleset, e.g. 'legacy' or '3.1(target=150)' (default: the run's)",
    "rulesets": "this line-up's rulesets, e.g. ['3.1', 'immediate']: one cell per ruleset",
}


@dataclass(frozen=True)
class LineupSpec:
    """One [[lineups]] entry, validated: one seat layout (policy specs) per field size, played
    under each of its rulesets (canonical specs)."""

    label: str
    layouts: tuple[tuple[str, ...], ...]  # one seat list per field size
    games: int
    pair: str | None
    rulesets: tuple[str, ...] = ("3.1",)


@dataclass(frozen=True)
class StopSpec:
    """The [stop] table, validated: `fixed` plays every game; `sprt` stops at a decision on
    one comparison, `ranking` once every adjacent pair of a league's ranking is decided."""

    test: str = "fixed"
    compare: tuple[str, ...] = ()  # (A, B): the test is on A - B
    metric: str = "win"
    h0: float = 0.0
    h1: float = 0.01
    alpha: float = 0.05
    beta: float = 0.05
    max_games: int = 0
    margin: float = 0.0  # ranking: the chance of finishing ahead beyond 1/2 that separates

    @property
    def sequential(self) -> bool:
        """True when the run stops at a decision (it then runs in waves)."""
        return self.test in ("sprt", "ranking")

    def to_json(self) -> dict[str, Any]:
        if self.test == "ranking":
            return {
                "test": self.test,
                "alpha": self.alpha,
                "beta": self.beta,
                "margin": self.margin,
            }
        return {
            "test": self.test,
            "compare": list(self.compare),
            "metric": self.metric,
            "h0": self.h0,
            "h1": self.h1,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_games": self.max_games,
        }


@dataclass(frozen=True)
class Spec:
    """A validated tournament spec. `text` is the file as given (saved next to the manifest)."""

    name: str
    seed: int
    ruleset: str  # canonical ruleset spec: the default (the first of a top-level `rulesets`)
    variant: str
    rotate: bool
    shard_size: int
    out: str | None
    lineups: tuple[LineupSpec, ...]
    description: str = ""
    policy_timeout: float | None = None  # seconds per shard; None: no limit
    text: str = ""
    deck: tuple[int, ...] = ()  # copies per card id of a declared [deck], else empty
    stop: StopSpec = StopSpec()

    @property
    def rulesets(self) -> tuple[str, ...]:
        """Every ruleset the line-ups play, in spec order (one for most specs)."""
        return tuple(dict.fromkeys(r for lu in self.lineups for r in lu.rulesets))


class SpecError(ValueError):
    """Every mistake found in a spec, so that one run names them all: `problems` holds one
    line each; the message is the one problem, or all of them numbered on one line."""

    def __init__(self, problems: list[str], where: str = "") -> None:
        self.problems = list(problems)
        self.where = where
        head = f"{where}: " if where else ""
        if len(self.problems) == 1:
            text = head + self.problems[0]
        else:
            listed = "; ".join(f"({i}) {p}" for i, p in enumerate(self.problems, 1))
            text = f"{head}{len(self.problems)} problems: {listed}"
        super().__init__(text)

    def lines(self) -> list[str]:
        """The problems as lines for a terminal: a header, then one line each."""
        if len(self.problems) == 1:
            return [str(self)]
        head = f"{self.where}: " if self.where else ""
        return [f"{head}{len(self.problems)} problems:"] + [f"  - {p}" for p in self.problems]


def _problems(exc: ValueError) -> list[str]:
    return exc.problems if isinstance(exc, SpecError) else [str(exc)]


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file; errors start with the file name.

    A bare name that is no file here (`demo`, `demo.toml`) names a spec shipped with the
    package (pipeline/specs: the checkout's experiments/), so it works without a checkout.
    """
    from pipeline import specs

    path = Path(path)
    if path.is_dir():
        raise ValueError(f"tournament spec {str(path)!r} is a directory; give a .toml file")
    shipped = specs.shipped()
    if not path.is_file() and path.parent == Path(".") and path.stem in shipped:
        source = shipped[path.stem]
        try:
            return parse_spec(source.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise SpecError(_problems(exc), f"{path.stem} (shipped spec)") from None
    if not path.is_file():
        raise FileNotFoundError(
            f"tournament spec {str(path)!r} not found; give a .toml file or a shipped spec "
            f"name ({', '.join(shipped)}; `flip7 init` copies them out for editing)"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "save the spec as UTF-8"
        ) from None
    try:
        return parse_spec(text)
    except ValueError as exc:
        raise SpecError(_problems(exc), str(path)) from None


def parse_spec(text: str) -> Spec:
    """Parse and validate spec text (TOML)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {exc}") from None
    except RecursionError:
        raise ValueError("not a spec: arrays or tables nested too deep to read") from None
    # Every field is checked on its own, so that one run names every mistake (SpecError);
    # the checks across line-ups run once the fields they compare are valid.
    problems: list[str] = []

    def check(fn: Callable[[], Any], fallback: Any = None) -> Any:
        try:
            return fn()
        except ValueError as exc:
            problems.extend(_problems(exc))
            return fallback

    check(lambda: _check_keys(data, _TOP_KEYS, ""))
    name = check(lambda: _name(data), "")
    seed = check(lambda: _seed(data), 0)
    default_rulesets = check(lambda: _rulesets(data, "") or ("3.1",), ("3.1",))
    variant, deck = check(lambda: _variant(data), ("classic", ()))
    rotate = check(lambda: _get(data, "rotate", bool, "", True), True)
    shard_size = check(lambda: _shard_size(data), DEFAULT_SHARD_SIZE)
    policy_timeout = check(lambda: _policy_timeout(data.get("policy_timeout")))
    out = check(lambda: _get(data, "out", str, "", None))
    description = check(lambda: _get(data, "description", str, "", ""), "")
    # a bad top-level games or players is one problem, not one more per line-up using it
    default_games = check(lambda: _get(data, "games", int, "", None), 1)
    stop = check(lambda: _stop(data))
    if stop is not None and stop.test == "sprt":
        default_games = stop.max_games
    default_players = (
        check(lambda: _players(data.get("players"), "players"), (MIN_PLAYERS,))
        if "players" in data
        else None
    )
    raw = data.get("lineups")
    if not isinstance(raw, list) or not raw or not all(isinstance(x, dict) for x in raw):
        problems.append(
            "lineups: missing; add one or more [[lineups]] tables, each with "
            "seats = [...] (one policy per seat) or mix = [...] with players = [...]"
        )
        raw = []
    found = [
        check(
            lambda i=i, item=item: _lineup(
                item, f"lineups[{i}]", default_games, default_players, default_rulesets
            )
        )
        for i, item in enumerate(raw)
    ]
    if problems:
        raise SpecError(problems)
    lineups = tuple(found)
    _check_cells(lineups)
    _check_pairs(lineups)
    assert stop is not None
    _check_stop(stop, lineups)
    return Spec(
        name=name,
        seed=seed,
        ruleset=default_rulesets[0],
        variant=variant,
        deck=deck,
        rotate=rotate,
        shard_size=shard_size,
        out=out,
        lineups=lineups,
        description=description,
        text=text,
        stop=stop,
        policy_timeout=policy_timeout,
    )


def _name(data: dict[str, Any]) -> str:
    name: str = _get(data, "name", str, "")
    try:
        check_run_name(name)
    except ValueError as exc:
        raise ValueError(f"name: {exc}") from None
    return name


def _seed(data: dict[str, Any]) -> int:
    seed: int = _get(data, "seed", int, "")
    if not 0 <= seed < 2**63:
        raise ValueError(f"seed: must be an integer in [0, 2**63), got {seed}")
    return seed


def _shard_size(data: dict[str, Any]) -> int:
    shard_size: int = _get(data, "shard_size", int, "", DEFAULT_SHARD_SIZE)
    if not 1 <= shard_size <= MAX_SHARD_SIZE:
        raise ValueError(f"shard_size: must be in 1..{MAX_SHARD_SIZE:,} games, got {shard_size}")
    return shard_size


def _variant(data: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """The variant's spec and, for a custom deck, its counts."""
    variant_text = _get(data, "variant", str, "", "classic")
    custom = None
    if "deck" in data:
        if not isinstance(data["deck"], dict):
            raise ValueError("deck: must be a [deck] table of card = copies, e.g. '\"-4\" = 2'")
        if "deck=custom" not in variant_text.replace(" ", ""):
            raise ValueError(
                "deck: a [deck] table needs variant = 'vengeance(deck=custom)' "
                f"(variant is {variant_text!r})"
            )
        _check_deck(data["deck"])
        try:
            custom = deck_from_counts("custom", data["deck"])
        except ValueError as exc:
            raise ValueError(f"deck: {exc}") from None
    try:
        parsed_variant = parse_variant(variant_text, custom)
    except ValueError as exc:
        raise ValueError(f"variant: {exc}") from None
    deck = parsed_variant.deck.counts if custom is not None else ()
    return parsed_variant.spec, deck


def _rulesets(data: dict[str, Any], where: str) -> tuple[str, ...]:
    """The canonical specs of `ruleset = "..."` or `rulesets = [...]` in `data` (at most one of
    the two), each checked; () when neither is given."""
    if "ruleset" in data and "rulesets" in data:
        raise ValueError(
            f"{where}rulesets: give ruleset = '...' (one) or rulesets = [...] (several), not both"
        )
    if "ruleset" in data:
        items, key = [_get(data, "ruleset", str, where)], "ruleset"
    elif "rulesets" in data:
        raw = data["rulesets"]
        if not isinstance(raw, list) or not raw:
            raise ValueError(
                f"{where}rulesets: expected a non-empty list of ruleset specs, e.g. "
                f"['3.1', 'immediate', 'legacy'], got {raw!r}"
            )
        items, key = raw, "rulesets"
    else:
        return ()
    out: list[str] = []
    for j, text in enumerate(items):
        field = f"{where}{key}" + (f"[{j}]" if key == "rulesets" else "")
        if not isinstance(text, str):
            raise ValueError(f"{field}: expected a ruleset spec string, e.g. '3.1', got {text!r}")
        try:
            ruleset = parse_ruleset(text)
        except ValueError as exc:
            raise ValueError(f"{field}: {exc}") from None
        if ruleset.target > MAX_TARGET:
            raise ValueError(
                f"{field}: target {ruleset.target} is too large for the event log (int16 "
                f"values); use a target <= {MAX_TARGET}"
            )
        if ruleset.spec in out:
            raise ValueError(
                f"{field}: {text!r} is {ruleset.spec!r}, already listed; list each ruleset once"
            )
        out.append(ruleset.spec)
    return tuple(out)


def _check_cells(lineups: tuple[LineupSpec, ...]) -> None:
    """A cell (label, field size, ruleset) comes from one line-up only: the marts key on it."""
    seen: dict[tuple[str, int, str], int] = {}
    for i, lu in enumerate(lineups):
        for ruleset in lu.rulesets:
            for layout in lu.layouts:
                key = (lu.label, len(layout), ruleset)
                j = seen.setdefault(key, i)
                if j != i:
                    raise ValueError(
                        f"lineups[{i}]: the cell {lu.label!r} at {len(layout)} players under "
                        f"ruleset {ruleset} is already lineups[{j}]'s; give one of them another "
                        "name = '...' (cells are told apart by name, field size and ruleset)"
                    )


def _policy_timeout(value: Any) -> float | None:
    """A finite number of seconds > 0, or None when absent."""
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"policy_timeout: expected a number of seconds > 0 (e.g. 600), got {value!r}"
        )
    return float(value)


def _check_deck(counts: dict[str, Any]) -> None:
    """Copies per card are integers >= 0 (not booleans), at most MAX_DECK_CARDS in all."""
    total = 0
    for label, k in counts.items():
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise ValueError(f"deck.{label}: copies must be an integer >= 0, got {k!r}")
        total += k
        if total > MAX_DECK_CARDS:
            raise ValueError(
                f"deck.{label}: the deck would hold more than {MAX_DECK_CARDS:,} cards "
                f"({k:,} copies of {label!r}); declare at most {MAX_DECK_CARDS:,} cards"
            )


def _check_keys(data: dict[str, Any], valid: dict[str, str], where: str) -> None:
    """SpecError naming every unknown field of a table (with its likely meaning)."""
    problems = []
    for key in data:
        if key not in valid:
            close = difflib.get_close_matches(key, list(valid), n=1)
            guess = f" (did you mean {close[0]}?)" if close else ""
            problems.append(f"{where}{key}: unknown field{guess}; valid fields: {', '.join(valid)}")
    if problems:
        raise SpecError(problems)


_MISSING = object()


def _get(data: dict[str, Any], key: str, kind: type, where: str, default: Any = _MISSING) -> Any:
    """data[key] checked against `kind` (bool is not an int here); default if absent."""
    if key not in data:
        if default is _MISSING:
            raise ValueError(f"{where}{key}: missing; expected {_what(kind, key, where)}")
        return default
    value = data[key]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise ValueError(
            f"{where}{key}: expected {_what(kind, key, where)}, got {type(value).__name__} {value!r}"
        )
    return value


def _what(kind: type, key: str, where: str) -> str:
    table = _LINEUP_KEYS if where else _TOP_KEYS
    names = {int: "an integer", str: "a string", bool: "true or false", list: "a list"}
    desc = table.get(key)
    return names.get(kind, kind.__name__) + (f": {desc}" if desc else "")


def _players(value: Any, where: str) -> tuple[int, ...]:
    """A field size or a list of them, each within [MIN_PLAYERS, MAX_PLAYERS]."""
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ValueError(f"{where}: empty; give one or more field sizes, e.g. [2, 4, 6]")
    sizes: list[int] = []
    for n in items:
        if not isinstance(n, int) or isinstance(n, bool):
            raise ValueError(f"{where}: field sizes must be integers, got {n!r}")
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(
                f"{where}: impossible field size {n}; valid: {MIN_PLAYERS} to {MAX_PLAYERS} players"
            )
        if n in sizes:
            raise ValueError(f"{where}: field size {n} is listed twice")
        sizes.append(n)
    return tuple(sizes)


def _policy_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(
            f"{where}: expected a non-empty list of policy specs, e.g. ['ev', 'bust:0.25']"
        )
    specs: list[str] = []
    for j, item in enumerate(value):
        if not isinstance(item, str):
            raise ValueError(f"{where}[{j}]: expected a policy spec string, got {item!r}")
        specs.append(check_policy(item, f"{where}[{j}]"))
    return tuple(specs)


def check_policy(spec: str, where: str) -> str:
    """The policy's canonical spec, or a ValueError naming `where` and what is valid."""
    try:
        policy = parse_policy(spec)
    except PolicySpecError as exc:
        raise ValueError(f"{where}: {exc}") from None
    person = needs_a_person(policy.spec)
    if person is not None:
        raise ValueError(
            f"{where}: {person} (it cannot play a tournament); see `flip7 rules` for the others"
        )
    return policy.spec


def _lineup(
    item: dict[str, Any],
    where: str,
    default_games: int | None,
    default_players: tuple[int, ...] | None,
    default_rulesets: tuple[str, ...] = ("3.1",),
) -> LineupSpec:
    prefix = f"{where}."
    _check_keys(item, _LINEUP_KEYS, prefix)
    has_seats, has_mix = "seats" in item, "mix" in item
    if has_seats == has_mix:
        raise ValueError(
            f"{where}: give exactly one of seats = [...] (one policy per seat) or "
            "mix = [...] (an equal mix, with players = [...])"
        )
    if has_seats:
        seats = _policy_list(item["seats"], f"{prefix}seats")
        if not MIN_PLAYERS <= len(seats) <= MAX_PLAYERS:
            raise ValueError(
                f"{prefix}seats: impossible field size {len(seats)}; "
                f"valid: {MIN_PLAYERS} to {MAX_PLAYERS} seats"
            )
        if "players" in item and _players(item["players"], f"{prefix}players") != (len(seats),):
            raise ValueError(
                f"{prefix}players: {item['players']!r} does not match the {len(seats)} seats listed; "
                "drop players or use mix = [...] to expand to several field sizes"
            )
        layouts: tuple[tuple[str, ...], ...] = (seats,)
        label = _get(item, "name", str, prefix, ",".join(seats))
    else:
        mix = _policy_list(item["mix"], f"{prefix}mix")
        if "players" in item:
            sizes = _players(item["players"], f"{prefix}players")
        elif default_players is not None:
            sizes = default_players
        else:
            raise ValueError(
                f"{prefix}players: missing; a mix needs field sizes, e.g. players = [2, 4, 6] "
                "(here or at the top level)"
            )
        k = len(mix)
        for n in sizes:
            if n % k:
                valid = [m for m in range(MIN_PLAYERS, MAX_PLAYERS + 1) if m % k == 0]
                raise ValueError(
                    f"{prefix}players: {n} players cannot seat an equal mix of {k} policies "
                    f"({', '.join(mix)}); valid field sizes for this mix: "
                    f"{', '.join(map(str, valid)) or 'none (too many policies)'}"
                )
        layouts = tuple(tuple(mix[s % k] for s in range(n)) for n in sizes)
        label = _get(item, "name", str, prefix, "mix " + ",".join(mix))
    games = _get(item, "games", int, prefix, default_games)
    if games is None:
        raise ValueError(f"{prefix}games: missing; set games = N here or at the top level")
    if not 1 <= games <= MAX_GAMES:
        raise ValueError(f"{prefix}games: must be in 1..{MAX_GAMES}, got {games}")
    pair = _get(item, "pair", str, prefix, None)
    if pair is not None and not pair:
        raise ValueError(f"{prefix}pair: must be a non-empty label")
    rulesets = _rulesets(item, prefix) or default_rulesets
    return LineupSpec(label, layouts, games, pair, rulesets)


def _check_pairs(lineups: tuple[LineupSpec, ...]) -> None:
    """At each field size and ruleset, a pair label must group two or more line-ups with equal
    games."""
    groups: dict[tuple[str, int, str], list[int]] = {}
    for i, lu in enumerate(lineups):
        if lu.pair is not None:
            for ruleset in lu.rulesets:
                for layout in lu.layouts:
                    groups.setdefault((lu.pair, len(layout), ruleset), []).append(i)
    for (label, n, ruleset), members in groups.items():
        if len(members) < 2:
            raise ValueError(
                f"lineups[{members[0]}].pair: pair {label!r} has no other line-up at {n} players "
                f"under ruleset {ruleset}; common random numbers compare two or more line-ups "
                "of one field size and ruleset that share a pair label"
            )
        first = lineups[members[0]]
        for j in members[1:]:
            if lineups[j].games != first.games:
                raise ValueError(
                    f"lineups[{j}].games: pair {label!r} needs equal games in every line-up "
                    f"({first.games} in lineups[{members[0]}], {lineups[j].games} here)"
                )


# -- the [stop] table: a fixed number of games, or a sequential test (pipeline/sprt.py) --------

_STOP_KEYS = {
    "test": "'fixed' (play every game, the default), 'sprt' (stop at a decision) or 'ranking' "
    "(stop once every adjacent pair of the ranking is decided)",
    "compare": "the two policies under test, e.g. ['ev', 'bust:0.25']: the test is on A - B",
    "metric": "'win' (win rate difference) or 'points' (points per round difference)",
    "h0": "the difference under H0, e.g. 0.0",
    "h1": "the smallest difference worth detecting, e.g. 0.01",
    "alpha": "the chance of accepting H1 when H0 holds, in (0, 0.5)",
    "beta": "the chance of accepting H0 when H1 holds, in (0, 0.5)",
    "max_games": "the ceiling: games after which the test ends inconclusive",
    "margin": "ranking: the chance of finishing ahead beyond 1/2 worth separating, e.g. 0.03",
}
#: The keys of a ranking test (its ceiling is the line-ups' games).
_RANKING_KEYS = ("test", "alpha", "beta", "margin")
_SEQUENTIAL_ONLY = ("max_games",)


def _stop(data: dict[str, Any]) -> StopSpec:
    """The [stop] table (default: a fixed test); errors name `stop.<field>`."""
    if "stop" not in data:
        return StopSpec()
    raw = data["stop"]
    if not isinstance(raw, dict):
        raise ValueError("stop: must be a [stop] table, e.g. test = 'sprt' with compare = [A, B]")
    _check_keys(raw, _STOP_KEYS, "stop.")
    test = raw.get("test", "fixed")
    if test not in ("fixed", "sprt", "ranking"):
        raise ValueError(f"stop.test: {test!r} is not a test; valid: 'fixed', 'sprt' or 'ranking'")
    if test == "ranking":
        return _ranking_stop(raw)
    if "margin" in raw:
        raise ValueError(
            "stop.margin: only a ranking test (test = 'ranking') takes margin; an SPRT "
            "takes h0 and h1"
        )
    sequential = test == "sprt"
    if not sequential:
        for key in _SEQUENTIAL_ONLY:
            if key in raw:
                raise ValueError(
                    f"stop.{key}: only a sequential test (test = 'sprt') takes {key}; "
                    "a fixed test plays the line-ups' games"
                )
    compare: tuple[str, ...] = ()
    if "compare" in raw:
        value = raw["compare"]
        if not isinstance(value, list) or len(value) != 2:
            raise ValueError(
                f"stop.compare: expected two policy specs, e.g. ['ev', 'bust:0.25'], got {value!r}"
            )
        compare = _policy_list(value, "stop.compare")
        if compare[0] == compare[1]:
            raise ValueError(f"stop.compare: the two policies are the same ({compare[0]!r})")
    elif sequential:
        raise ValueError(
            "stop.compare: missing; a sequential test compares two policies, "
            "e.g. compare = ['ev', 'bust:0.25']"
        )
    metric = raw.get("metric", "win")
    if metric not in ("win", "points"):
        raise ValueError(
            f"stop.metric: {metric!r} is not a metric; valid: 'win' (win rate difference) or "
            "'points' (points per round difference)"
        )
    h0 = _number(raw, "h0", 0.0)
    h1 = _number(raw, "h1", None if sequential else 0.01)
    if h1 == h0:
        raise ValueError(f"stop.h1: must differ from h0 ({h0}); h1 is the difference to detect")
    if metric == "win":
        for key, h in (("h0", h0), ("h1", h1)):
            if not -1.0 < h < 1.0:
                raise ValueError(f"stop.{key}: a win rate difference lies in (-1, 1), got {h}")
    alpha = _number(raw, "alpha", 0.05)
    beta = _number(raw, "beta", 0.05)
    for key, p in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < p < 0.5:
            raise ValueError(f"stop.{key}: must be in (0, 0.5), got {p}")
    max_games = 0
    if sequential:
        max_games = _get(raw, "max_games", int, "stop.", None)
        if max_games is None:
            raise ValueError(
                "stop.max_games: missing; a sequential test needs a ceiling, e.g. "
                "max_games = 2_000_000"
            )
        if not 2 <= max_games <= MAX_GAMES:
            raise ValueError(f"stop.max_games: must be in 2..{MAX_GAMES}, got {max_games}")
        where = ["games"] if "games" in data else []
        lineups = data.get("lineups")
        if isinstance(lineups, list):
            where += [
                f"lineups[{i}].games"
                for i, item in enumerate(lineups)
                if isinstance(item, dict) and "games" in item
            ]
        if where:
            raise ValueError(
                f"{where[0]}: a sequential test plays games until it decides, up to "
                "stop.max_games; drop games"
            )
    return StopSpec(test, compare, metric, h0, h1, alpha, beta, max_games)


def _ranking_stop(raw: dict[str, Any]) -> StopSpec:
    """A ranking test: alpha, beta and margin; its ceiling is the line-ups' games."""
    for key in raw:
        if key not in _RANKING_KEYS:
            raise ValueError(
                f"stop.{key}: a ranking test takes only {', '.join(_RANKING_KEYS[1:])} (it "
                "tests every adjacent pair of the ranking, up to the line-ups' games)"
            )
    alpha = _number(raw, "alpha", 0.05)
    beta = _number(raw, "beta", 0.05)
    for key, p in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < p < 0.5:
            raise ValueError(f"stop.{key}: must be in (0, 0.5), got {p}")
    margin = _number(raw, "margin", None)
    if not 0.0 < margin < 0.5:
        raise ValueError(
            f"stop.margin: a chance of finishing ahead beyond 1/2 lies in (0, 0.5), got "
            f"{margin}; e.g. 0.03 (53% against 47%)"
        )
    return StopSpec("ranking", alpha=alpha, beta=beta, margin=margin)


def _number(raw: dict[str, Any], key: str, default: float | None) -> float:
    if key not in raw:
        if default is None:
            raise ValueError(f"stop.{key}: missing; expected a number: {_STOP_KEYS[key]}")
        return default
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ValueError(f"stop.{key}: expected a number ({_STOP_KEYS[key]}), got {value!r}")
    return float(value)


def _check_stop(stop: StopSpec, lineups: tuple[LineupSpec, ...]) -> None:
    """A comparison needs exactly one cell, and both policies seated in it: every game is then
    one paired observation of A - B (docs/sequential.md)."""
    if stop.test == "ranking":
        _check_ranking(lineups)
        return
    if not stop.compare:
        return
    layouts = [layout for lu in lineups for _ in lu.rulesets for layout in lu.layouts]
    if len(layouts) != 1:
        raise ValueError(
            f"stop.compare: a comparison runs in exactly one cell (one line-up at one field "
            f"size under one ruleset), this spec has {len(layouts)}; keep one [[lineups]] with "
            "one field size and one ruleset, "
            f"e.g. mix = {list(stop.compare)!r} with players = [2]"
        )
    for j, policy in enumerate(stop.compare):
        if policy not in layouts[0]:
            raise ValueError(
                f"stop.compare[{j}]: {policy!r} sits at no seat of the line-up "
                f"({', '.join(layouts[0])}); both policies must share the table"
            )


def _check_ranking(lineups: tuple[LineupSpec, ...]) -> None:
    """A ranking test needs two or more policies, every two of which share a table (their
    head-to-head rate is the test), and no common shuffles (each game is its own cluster)."""
    for i, lu in enumerate(lineups):
        if lu.pair is not None:
            raise ValueError(
                f"lineups[{i}].pair: a ranking test treats every game as independent; common "
                "random numbers tie games of different line-ups together: drop pair"
            )
    tables = [set(layout) for lu in lineups for layout in lu.layouts]
    policies = sorted(set().union(*tables))
    if len(policies) < 2:
        raise ValueError(
            f"stop.test: a ranking test ranks two or more policies; the line-ups seat only "
            f"{policies[0]!r}"
        )
    for j, a in enumerate(policies):
        for b in policies[j + 1 :]:
            if not any(a in t and b in t for t in tables):
                raise ValueError(
                    f"stop.test: a ranking test compares every two policies head to head, "
                    f"but {a!r} and {b!r} never share a table; add a line-up seating both"
                )
