"""`--engine` on sim, round and watch: the kernel prints the same figures and says it ran."""

from __future__ import annotations

import numba  # noqa: F401  (a dependency: missing, it fails the suite rather than skipping it)
import pytest

from flip7 import kernel
from flip7.cli import main


@pytest.fixture(scope="module", autouse=True)
def compiled() -> kernel.LoadInfo:
    """Compile (or load from the cache) once for the whole module."""
    return kernel.load_info()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--no-file"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def without_engine_lines(out: str) -> list[str]:
    """The output minus what names the engine or its speed."""
    return [
        line.split("; engine:")[0]
        for line in out.splitlines()
        if not line.startswith("engine:") and "games/s" not in line
    ]


@pytest.mark.parametrize(
    "command",
    [["sim", "-n", "300"], ["sim", "-n", "200", "--players", "1"], ["round", "-n", "500"]],
)
def test_kernel_and_reference_print_the_same_figures(capsys, command):
    """sim (a table, and alone: the solo challenge) and round: every figure, intervals
    included, equal across engines; each says which engine ran."""
    argv = [*command, "-p", "ev,bustc:0.25,sum:20", "--ruleset", "legacy"]
    code_k, out_k, _ = run(capsys, *argv, "--engine", "kernel")
    code_r, out_r, _ = run(capsys, *argv, "--engine", "reference")
    assert code_k == code_r == 0
    assert "engine: kernel" in out_k and "engine: reference (as asked)" in out_r
    assert without_engine_lines(out_k) == without_engine_lines(out_r)


def test_watch_shows_the_same_game(capsys):
    """watch: the same cards, in the same order, from either engine."""
    argv = ["watch", "-p", "ev,endgame,count:4", "--seed", "9"]
    _, out_k, _ = run(capsys, *argv, "--engine", "kernel")
    _, out_r, _ = run(capsys, *argv, "--engine", "reference")
    assert " draws " in out_k
    assert without_engine_lines(out_k) == without_engine_lines(out_r)


def test_auto_falls_back_and_says_why(capsys, tmp_path, monkeypatch):
    """auto with a user's policy runs the reference engine and names the policy; --engine
    kernel with it is a one-line error (exit 2)."""
    (tmp_path / "mine_cli.py").write_text(
        "from flip7.policies import Policy\n"
        "class Mine(Policy):\n"
        "    def hit(self, obs):\n"
        "        return obs.nsum[obs.seat] < 12\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = run(capsys, "sim", "-n", "20", "-p", "ev,mine_cli:Mine")
    assert code == 0
    assert "engine: reference (kernel not used: policy 'mine_cli:Mine'" in out
    code, _, err = run(capsys, "sim", "-n", "20", "-p", "ev,mine_cli:Mine", "--engine", "kernel")
    assert code == 2 and "mine_cli:Mine" in err
