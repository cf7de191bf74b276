"""A module that leaves a mark when imported: nothing read from a lake may import it."""

from __future__ import annotations

import os

from flip7.observation import Observation
from flip7.policies import Policy

MARK = os.environ.get("FLIP7_TEST_IMPORT_MARK")
if MARK:
    with open(MARK, "a", encoding="utf-8") as f:
        f.write("imported\n")


class Quiet(Policy):
    def hit(self, obs: Observation) -> bool:
        return bool(obs.nsum[obs.seat] < 15)
