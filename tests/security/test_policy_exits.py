"""A policy that raises SystemExit or another BaseException is a failing policy like any other:
`sys.exit(0)` in a policy once made `flip7 sim` exit 0 with no output, a bare BaseException
printed a 21-line traceback, and in a tournament the shard's worker died "unexpectedly" without
naming the policy. Each is now one line naming the policy and its seat, and the command fails.
Only the user's Ctrl-C (KeyboardInterrupt) goes to the top, as an interruption.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flip7.cli import main
from flip7.engine import PolicyError
from pipeline.task import run_shard
from tests.security.helpers import one_line
from tests.security.test_policy_failures import COMMANDS, MOD, run, shard

pytestmark = pytest.mark.usefixtures("no_ray")


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(
    "policy, culprit",
    [
        ("ExitsZero", "raised SystemExit in hit"),
        ("RaisesBase", "raised BaseException in hit: out of band"),
    ],
)
def test_a_policy_exiting_fails_the_command_naming_policy_and_seat(
    command: str, policy: str, culprit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run([*COMMANDS[command], "-p", f"{MOD}:{policy},ev"], capsys)
    assert code == 2, err
    one_line(err, f"policy '{MOD}:{policy}' at seat ", culprit)


def test_an_exit_in_a_choice_names_policy_and_seat(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["sim", "-n", "200", "-p", f"{MOD}:ExitsInTarget,ev,ev"], capsys)
    assert code == 2, err
    one_line(err, f"policy '{MOD}:ExitsInTarget' at seat ", "raised SystemExit in choose_target")


def test_an_exit_in_a_constructor_names_policy_and_seat(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = run(["sim", "-p", f"ev,{MOD}:ExitsInInit"], capsys)
    assert code == 2, err
    one_line(err, "seat 1", f"'{MOD}:ExitsInInit'", "constructor raised SystemExit")


def test_ctrl_c_in_a_policy_is_an_interruption(capsys: pytest.CaptureFixture[str]) -> None:
    """KeyboardInterrupt is the user's, not the policy's failure: the command is interrupted."""
    code = main(["sim", "-n", "5", "-p", f"{MOD}:InterruptedInHit,ev", "--no-file"])
    err = capsys.readouterr().err
    assert code == 130 and "PolicyError" not in err and "seat" not in err, err


@pytest.mark.parametrize("policy", ["ExitsZero", "RaisesBase"])
def test_a_tournament_shard_names_an_exiting_policy(policy: str, tmp_path: Path) -> None:
    """The shard task raises a PolicyError naming the policy (its worker does not die) and
    writes nothing."""
    with pytest.raises(PolicyError, match=f"policy '{MOD}:{policy}' at seat \\d raised"):
        run_shard(shard(("ev", f"{MOD}:{policy}")), str(tmp_path))  # type: ignore[arg-type]
    assert not list(tmp_path.rglob("*.parquet"))
