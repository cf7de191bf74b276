"""The flip7 command: each subcommand runs, tees its output, and refuses bad input clearly."""

from __future__ import annotations

import os
import subprocess
import sys

from flip7.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_sim_prints_win_rates_with_standard_errors(capsys):
    """flip7 sim: one row per policy with win rate ± se and points per round ± se."""
    code, out, _ = run(capsys, "sim", "-n", "40", "-p", "ev,sum:20,bust:0.25", "--no-file")
    assert code == 0
    rows = [
        line for line in out.splitlines() if line.split()[:1] in (["ev"], ["sum:20"], ["bust:0.25"])
    ]
    assert len(rows) == 3
    assert all("±" in r for r in rows)
    assert "40 games, 3 players" in out


def test_sim_players_repeats_the_lineup(capsys):
    """--players fills the table by repeating the policy list."""
    code, out, _ = run(capsys, "sim", "-n", "10", "-p", "ev", "--players", "3", "--no-file")
    assert code == 0 and "3 players (ev, ev, ev)" in out


def test_round_prints_distribution(capsys):
    """flip7 round: mean, sd, bust and Flip 7 rates and a histogram per policy."""
    code, out, _ = run(capsys, "round", "-n", "200", "-p", "ev,sum:20", "--no-file")
    assert code == 0
    assert "distribution of ev" in out and "distribution of sum:20" in out


def test_watch_shows_a_game_card_by_card(capsys):
    """flip7 watch: every card, every round, the winner."""
    code, out, _ = run(capsys, "watch", "-p", "ev,ev,ev", "--seed", "4", "--no-file")
    assert code == 0
    assert "-- round 1" in out and " draws " in out and " wins with " in out


def test_rules_lists_deck_policies_and_rulesets(capsys):
    """flip7 rules: the deck, every policy and every ruleset."""
    code, out, _ = run(capsys, "rules", "--no-file")
    assert code == 0
    for word in ["94 cards", "sum:20", "bustc:0.25", "endgame", "immediate", "legacy", "3.1"]:
        assert word in out
    assert "dup:0.25" in out and "dupc:0.25" in out
    text = " ".join(out.split())
    assert "bust:P and dup:P differ only while you hold a Second Chance" in text


def test_output_is_teed_to_a_results_file(capsys, tmp_path):
    """-o PATH writes what was printed."""
    path = tmp_path / "sim.txt"
    code, out, _ = run(capsys, "sim", "-n", "5", "-p", "ev,ev", "-o", str(path))
    assert code == 0
    assert path.read_text().strip() == out.strip()


def test_default_results_file(capsys, tmp_path, monkeypatch):
    """Without -o, output goes to results/<command>-<timestamp>.txt; --no-file skips it."""
    monkeypatch.chdir(tmp_path)
    run(capsys, "rules")
    files = list((tmp_path / "results").glob("rules-*.txt"))
    assert len(files) == 1


def test_bad_policy_is_a_clear_error(capsys):
    """An unknown policy: exit 2 and a one-line message listing what is valid."""
    code, _, err = run(capsys, "sim", "-n", "5", "-p", "ev,bogus", "--no-file")
    assert code == 2
    assert "unknown policy 'bogus'" in err and "valid:" in err and "Traceback" not in err


def test_bad_ruleset_is_a_clear_error(capsys):
    """An unknown ruleset: exit 2 and the valid names."""
    code, _, err = run(capsys, "sim", "-n", "5", "--ruleset", "4.0", "--no-file")
    assert code == 2 and "valid: 3.1, immediate, legacy" in err


def test_play_against_bots_with_scripted_input(tmp_path):
    """flip7 play: a person's answers via stdin; bad input asks again; the game finishes."""
    answers = "maybe\n0\n1\n2\n3\ns\n" * 400
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "flip7", "play", "--seed", "7", "--ruleset", "3.1(target=60)"],
        input=answers,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Please type h (hit) or s (stay)." in proc.stdout
    assert "Bust risk" in proc.stdout and "one more card is worth" in proc.stdout
    assert " with " in proc.stdout.splitlines()[-1]


def test_rules_prints_the_vengeance_deck_in_use(capsys):
    """flip7 rules --variant vengeance: the deck in use (default 108, or the alt split)."""
    code, out, _ = run(capsys, "rules", "--variant", "vengeance", "--no-file")
    assert code == 0 and "108 cards" in out and "Lucky 13x1" in out and "Stealx2" in out
    code, out, _ = run(capsys, "rules", "--variant", "vengeance(deck=alt)", "--no-file")
    assert code == 0 and "-10x2" in out and "Stealx1" in out


def test_vengeance_rules_say_what_busts_you_there(capsys):
    """flip7 rules --variant vengeance says what bust:P counts in Vengeance (only numbers bust
    on arrival, the Unlucky 7 never, the Lucky 13 pair, no Second Chance) and what dup:P counts."""
    code, out, _ = run(capsys, "rules", "--variant", "vengeance", "--no-file")
    text = " ".join(out.split())
    assert code == 0
    for words in [
        "bust:P hits while the chance that the next card busts you on arrival is under P",
        "the Unlucky 7 never",
        "any 13 (the Lucky 13 too) once you hold two 13s",
        "There is no Second Chance in this deck",
        "dup:P hits while the chance that the next card shows a number you already show",
    ]:
        assert words in text


def test_sim_plays_the_vengeance_variant(capsys):
    """flip7 sim --variant vengeance runs the Vengeance engine."""
    code, out, _ = run(
        capsys, "sim", "-n", "20", "-p", "ev,sum:20", "--variant", "vengeance", "--no-file"
    )
    assert code == 0 and "variant vengeance" in out


def test_bad_variant_is_a_clear_error(capsys):
    """An unknown variant: exit 2 and what is valid."""
    code, _, err = run(capsys, "sim", "-n", "5", "-p", "ev", "--variant", "revenge", "--no-file")
    assert code == 2 and "valid: classic, vengeance" in err
