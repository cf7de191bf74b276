"""Small real lakes for the dashboard tests: real specs, real shards, real manifests, no Ray.

Each run goes through the pipeline's own planning and bookkeeping in this process
(tests/pipeline/helpers.py: `write_run`), so the files and manifests are exactly what
`flip7 tournament run` writes.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.spec import VARIANTS
from tests.pipeline.helpers import write_run

# Field sizes 2 and 4 for ev vs bust:0.25, and on common random numbers ev vs evc at 3 players
# and bust:0.25 vs bustc:0.25 at 2: every page has something to show. About 1 s of engine time.
FIELD_SPEC = """
name = "field"
seed = 11
ruleset = "3.1"
variant = "classic"
games = 60
shard_size = 30

[[lineups]]
name = "field size"
mix = ["ev", "bust:0.25"]
players = [2, 4]

[[lineups]]
name = "ev"
seats = ["ev", "bust:0.25", "bust:0.25"]
pair = "counting"

[[lineups]]
name = "evc"
seats = ["evc", "bust:0.25", "bust:0.25"]
pair = "counting"

[[lineups]]
name = "bust"
seats = ["bust:0.25", "ev"]
pair = "bust"

[[lineups]]
name = "bustc"
seats = ["bustc:0.25", "ev"]
pair = "bust"
"""

# A second run under another ruleset with other policies, so that filters have a choice. Its
# line-up has no name: its cells are labelled by the mix ("mix sum:20,count:4").
OTHER_SPEC = """
name = "other"
seed = 12
ruleset = "immediate"
variant = "classic"
games = 40
shard_size = 40

[[lineups]]
mix = ["sum:20", "count:4"]
players = [2]
"""

# The Vengeance run's line-up is named like the classic run's, so the variants page compares
# the two cell for cell.
VENGEANCE_SPEC = """
name = "venge"
seed = 13
ruleset = "3.1"
variant = "vengeance"
games = 30
shard_size = 30

[[lineups]]
name = "field size"
mix = ["ev", "bust:0.25"]
players = [2]
"""


def specs() -> list[str]:
    """The specs of the test lake: a vengeance run too once the pipeline can play it."""
    out = [FIELD_SPEC, OTHER_SPEC]
    if "vengeance" in VARIANTS:
        out.append(VENGEANCE_SPEC)
    return out


def make_lake(root: Path) -> list[str]:
    """A small lake with every test run; the names of its runs."""
    return [write_run(text, root) for text in specs()]
