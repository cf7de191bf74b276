"""The package's public names: `__all__` is sorted, complete and importable."""

from __future__ import annotations

import flip7
import warehouse


def test_flip7_exports_are_sorted_and_importable():
    """Every name in flip7.__all__ exists; the list is sorted (constants first, as ruff sorts)."""
    assert flip7.__all__ == sorted(flip7.__all__, key=lambda n: (not n.isupper(), n))
    for name in flip7.__all__:
        assert getattr(flip7, name) is not None


def test_flip7_exports_play_a_game():
    """The README's three-line example works from the top-level names."""
    result = flip7.play_game(flip7.parse_ruleset("3.1"), flip7.parse_policies("ev,sum:20"), seed=1)
    assert result.winner in (0, 1)


def test_warehouse_exports():
    """warehouse.__all__ names what it exports."""
    assert all(hasattr(warehouse, n) for n in warehouse.__all__)
