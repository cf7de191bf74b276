"""A user policy that fails is named, with its seat, in one line: in `sim`, `round`, `watch` and
tournament shards; whether it raises, answers something that is not an answer, or never
answers (a time limit stops it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flip7.cli import main
from flip7.engine import PolicyError
from pipeline.plan import make_plan
from pipeline.spec import parse_spec
from pipeline.task import run_shard
from tests.security.helpers import one_line, spec_text

pytestmark = pytest.mark.usefixtures("no_ray")

MOD = "tests.security.policies"
COMMANDS = {
    "sim": ["sim", "-n", "30"],
    "round": ["round", "-n", "60"],
    "watch": ["watch"],
}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main([*argv, "--engine", "reference", "--no-file"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(
    "policy, culprit",
    [
        ("RaisesInHit", "raised ZeroDivisionError in hit: my threshold table is empty"),
        ("AnswersNone", "answered hit with None (NoneType); hit must return True"),
        ("AnswersOne", "answered hit with 1 (int); hit must return True"),
    ],
)
def test_a_failing_hit_names_policy_and_seat(
    command: str, policy: str, culprit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An exception in hit, or an answer that is not a bool (None used to mean `stay`, 1 to
    mean `hit`), stops the command with one line naming the policy, its seat and the fault."""
    code, err = run([*COMMANDS[command], "-p", f"{MOD}:{policy},ev"], capsys)
    assert code == 2
    one_line(err, f"policy '{MOD}:{policy}' at seat ", culprit)


@pytest.mark.parametrize(
    "policy, argv, culprit",
    [
        ("RaisesInTarget", [], "raised KeyError in choose_target: 'no target table'"),
        ("TargetTrue", [], "answered choose_target with True; legal choices were"),
        (
            "RaisesInMove",
            ["--variant", "vengeance"],
            "raised IndexError in choose_move: no move table",
        ),
    ],
)
def test_a_failing_choice_names_policy_and_seat(
    policy: str, argv: list[str], culprit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Target and move choices too (True is not a seat, though True == 1)."""
    code, err = run(["sim", "-n", "200", "-p", f"{MOD}:{policy},ev,ev", *argv], capsys)
    assert code == 2
    one_line(err, f"policy '{MOD}:{policy}' at seat ", culprit)


def test_a_failing_constructor_names_policy_and_seat(capsys: pytest.CaptureFixture[str]) -> None:
    """A constructor that raises is named with the seat it was to take."""
    code, err = run(["sim", "-p", f"ev,{MOD}:BrokenInit:w9"], capsys)
    assert code == 2
    one_line(err, "seat 1", f"'{MOD}:BrokenInit:w9'", "constructor raised RuntimeError")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_policy_that_never_answers_is_stopped(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--policy-timeout ends a policy stuck in a loop (that swallows ordinary exceptions) and
    names it and its seat."""
    argv = [*COMMANDS[command], "-p", f"ev,{MOD}:NeverAnswers", "--policy-timeout", "1"]
    code, err = run(argv, capsys)  # without the limit, a hang that the per-test timeout names
    assert code == 2
    one_line(err, f"policy '{MOD}:NeverAnswers' at seat ", "did not answer hit", "1 s")


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_policy_timeout_must_be_positive_and_finite(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(["sim", "-n", "1", "--policy-timeout", value], capsys)
    assert code == 2
    one_line(err, "--policy-timeout must be a number of seconds > 0")


def shard(seats: tuple[str, ...], extra: str = "") -> object:
    spec = parse_spec(spec_text(seats=seats, games=4, shard_size=4, extra=extra))
    return make_plan(spec).shards[0]


def test_a_tournament_shard_names_the_failing_policy(tmp_path: Path) -> None:
    """The shard task (what each Ray task runs) fails with the policy and seat in its message,
    and writes nothing."""
    with pytest.raises(PolicyError, match=f"policy '{MOD}:RaisesInHit' at seat \\d raised"):
        run_shard(shard(("ev", f"{MOD}:RaisesInHit")), str(tmp_path))  # type: ignore[arg-type]
    assert not list(tmp_path.rglob("*.parquet"))


def test_a_tournament_shard_stops_a_policy_that_never_answers(tmp_path: Path) -> None:
    """A shard's time limit (--policy-timeout, or the spec's policy_timeout) stops it."""
    spec = parse_spec(spec_text(seats=("ev", f"{MOD}:NeverAnswers"), extra="policy_timeout = 1"))
    assert spec.policy_timeout == 1.0
    with pytest.raises(PolicyError, match=f"'{MOD}:NeverAnswers' at seat \\d did not answer"):
        run_shard(make_plan(spec).shards[0], str(tmp_path), policy_timeout=spec.policy_timeout)
    assert not list(tmp_path.rglob("*.parquet"))
