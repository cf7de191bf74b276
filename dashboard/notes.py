"""What every page says about the lake's runs, above what it qualifies: the warehouse's notes
(`warehouse.db.problems`, one line per run) folded so that runs merely not verified take one
quiet line with the command that verifies them, while notes that change the figures (runs left
out, stray shards, a run still being written) stay one warning each."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

_UNVERIFIED = re.compile(
    r"^run (?P<run>.+?): (?P<kind>unverified|verified without replay): (?P<why>.*?)"
    r"(?:; run `flip7 warehouse verify [^`]*`.*)?$"
)


@dataclass
class Notes:
    unverified: dict[str, str] = field(default_factory=dict)  # run -> why it is not verified
    warnings: list[str] = field(default_factory=list)  # every other note, as the warehouse says

    def quiet_line(self, root: str, shown: int = 3) -> str | None:
        """One line naming the unverified runs (the first `shown`) and the command that
        verifies them all, or None when every run is verified."""
        runs = list(self.unverified)
        if not runs:
            return None
        names = ", ".join(runs[:shown]) + (
            f" and {len(runs) - shown} more" if len(runs) > shown else ""
        )
        one = len(runs) == 1
        partly = any(why.startswith("verified without replay") for why in self.unverified.values())
        state = (
            "not fully verified"  # some verified without replay: labels not bound by a replay
            if partly
            else f"not verified as {'it is' if one else 'they are'} now"
        )
        return (
            f"{len(runs)} {'run' if one else 'runs'} {state} ({names}): "
            f"`flip7 warehouse verify --data {shlex.quote(root)}` checks {'it' if one else 'them'}."
        )

    def reasons(self) -> str:
        """Each unverified run and why, one per line (the quiet line's tooltip)."""
        return "\n".join(f"- {run}: {why}" for run, why in self.unverified.items())


def fold(notes: list[str]) -> Notes:
    """Split the warehouse's notes into unverified runs and the rest."""
    out = Notes()
    for note in notes:
        m = _UNVERIFIED.match(note)
        if m:
            why = m["why"] if m["kind"] == "unverified" else f"verified without replay: {m['why']}"
            out.unverified[m["run"]] = why
        else:
            out.warnings.append(note)
    return out
