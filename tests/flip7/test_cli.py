"""The flip7 command: each subcommand runs, tees its output, and refuses bad input clearly."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

from flip7.cli import main
from flip7.engine import Engine
from flip7.policies import parse_policies
from flip7.rng import derive_seed
from flip7.rules import parse_ruleset
from flip7.simulate import rotated, simulate
from flip7.stats import RatioSums


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def game_pairs(specs: list[str], n_games: int, seed: int) -> dict[str, list[tuple[int, ...]]]:
    """Per spec and game, straight from the reference engine's results (not from simulate):
    (wins, seats, points, seat-rounds), the (y, n) pairs of the statistics contract."""
    lineup = parse_policies(specs)
    out: dict[str, list[tuple[int, ...]]] = {}
    for i in range(n_games):
        seats = rotated(lineup, i)
        result = Engine(parse_ruleset("3.1"), seats, derive_seed(seed, 0, i), capture=False).run()
        for spec in dict.fromkeys(p.spec for p in seats):
            mine = [s for s, p in enumerate(seats) if p.spec == spec]
            wins = sum(result.winner == s for s in mine)
            points = sum(result.totals[s] for s in mine)
            out.setdefault(spec, []).append((wins, len(mine), points, len(mine) * result.rounds))
    return out


def test_sim_prints_the_clustered_95_interval_of_flip7_stats(capsys):
    """flip7 sim: each policy's win rate [95% interval] and points per round ± 95% are
    flip7.stats' clustered figures over per-game sums computed here from the engine's games
    (ev fills two seats, so clustering and the seat-as-trial binomial differ)."""
    specs = ["ev", "sum:20", "ev", "bust:0.25"]
    code, out, _ = run(capsys, "sim", "-n", "60", "-p", ",".join(specs), "--seed", "5", "--no-file")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if line.split()[:1] != []}
    for spec, games in game_pairs(specs, 60, 5).items():
        win = RatioSums.of((w, s) for w, s, _, _ in games).estimate(clip=(0.0, 1.0))
        ppr = RatioSums.of((p, r) for _, _, p, r in games).estimate()
        want = f"{win.value:.1%} [{100 * win.lo:.1f}, {100 * win.hi:.1f}]"
        assert want in rows[spec], (spec, want, rows[spec])
        assert f"{ppr.value:.2f} ± {ppr.half_width:.2f}" in rows[spec]
    assert "60 games, 4 players" in out and "clustered by game" in out
    assert "standard error" not in out


def test_simulate_sums_equal_the_per_game_sums():
    """simulate's PolicyStats hold exactly the contract's sums: G, sum y, sum n and the second
    moments of wins/seats and points/rounds over games."""
    specs = ["ev", "ev", "sum:20"]
    summary = simulate(parse_ruleset("3.1"), parse_policies(specs), 40, 11)
    for spec, games in game_pairs(specs, 40, 11).items():
        st = summary.stats[spec]
        assert st.win_sums == RatioSums.of((w, s) for w, s, _, _ in games)
        assert st.points_sums == RatioSums.of((p, r) for _, _, p, r in games)


def test_sim_alone_prints_the_rounds_to_reach_the_target(capsys):
    """--players 1 (the solo challenge): no win rate (always 100%), but the rounds it takes to
    reach the target: mean ± 95%, median, p90, from the games' own round counts."""
    code, out, _ = run(capsys, "sim", "-n", "50", "-p", "ev", "--players", "1", "--no-file")
    assert code == 0
    rounds = sorted(
        Engine(parse_ruleset("3.1"), parse_policies(["ev"]), derive_seed(1, 0, i)).run().rounds
        for i in range(50)
    )
    est = RatioSums.of((r, 1) for r in rounds).estimate()
    line = next(x for x in out.splitlines() if x.startswith("rounds to reach 200:"))
    assert f"mean {est.value:.2f} ± {est.half_width:.2f}" in line
    assert f"median {rounds[24]}," in line and f"p90 {rounds[44]}," in line
    assert f"min {rounds[0]}, max {rounds[-1]}" in line
    assert "win rate" not in out and "solo challenge" in out


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


def test_o_writes_the_output_to_path_instead_of_the_terminal(capsys, tmp_path, monkeypatch):
    """-o PATH: PATH holds what the command would have printed, the terminal gets nothing but
    the line on stderr naming PATH, and no results copy is kept."""
    monkeypatch.chdir(tmp_path)
    argv = ["sim", "-n", "5", "-p", "ev,ev", "--format", "json"]
    code, printed, _ = run(capsys, *argv, "--no-file")
    assert code == 0
    path = tmp_path / "sim.json"
    path.write_text("an older file, replaced\n")
    code, out, err = run(capsys, *argv, "-o", str(path))
    assert code == 0 and out == ""
    assert err.strip() == f"(output saved to {path})"
    saved, shown = json.loads(path.read_text()), json.loads(printed)
    saved.pop("games_per_second"), shown.pop("games_per_second")
    assert saved == shown
    assert not (tmp_path / "results").exists()


def _subparsers(parser, name=""):
    """(command name, parser) for every command and subcommand of the flip7 CLI."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield f"{name} {sub_name}".strip(), sub
                yield from _subparsers(sub, f"{name} {sub_name}".strip())


def test_o_means_the_same_thing_in_every_command():
    """Every command that takes -o gives it one meaning and one help text (the output file),
    --out is no command's other option any more, and play (interactive) takes no -o."""
    from flip7.cli import FORMAT_NOTE, OUTPUT_HELP, build_parser

    with_o = {}
    for name, sub in _subparsers(build_parser()):
        opts = {o: a for a in sub._actions for o in a.option_strings}
        if "-o" in opts:
            with_o[name] = opts["-o"]
            assert opts["-o"].option_strings == ["-o", "--output"], name
            # "in the chosen --format" only where there is a --format to choose
            assert opts["-o"].help == OUTPUT_HELP + (FORMAT_NOTE if "--format" in opts else ""), (
                name
            )
        if "--out" in opts:  # only as the hidden, deprecated spelling of --data
            assert opts["--out"].help == argparse.SUPPRESS and opts["--out"].dest == "data", name
    assert {"sim", "round", "watch", "solve", "advice", "odds", "sql", "compare", "report"} <= set(
        with_o
    )
    assert {"tournament run", "tournament status", "tournament list", "replay"} <= set(with_o)
    assert "play" not in with_o


def test_tournament_run_out_still_works_with_a_deprecation_line(capsys):
    """`tournament run --out DIR` (the lake's old flag) sets --data and says so on stderr."""
    from flip7.cli import build_parser

    args = build_parser().parse_args(["tournament", "run", "demo", "--out", "lake"])
    assert args.data == "lake"
    err = capsys.readouterr().err
    assert "--out is deprecated" in err and "use --data" in err
    assert build_parser().parse_args(["tournament", "run", "demo", "--data", "x"]).data == "x"
    assert capsys.readouterr().err == ""


def test_default_results_file(capsys, tmp_path, monkeypatch):
    """Without -o, output goes to results/<command>-<timestamp>.txt; --no-file skips it."""
    monkeypatch.chdir(tmp_path)
    run(capsys, "rules")
    files = list((tmp_path / "results").glob("rules-*.txt"))
    assert len(files) == 1


def test_results_copy_is_named_for_its_format(capsys, tmp_path, monkeypatch):
    """JSON saved to results/ is a .json file (csv .csv, markdown .md): issue 32, item 12."""
    monkeypatch.chdir(tmp_path)
    run(capsys, "odds", "--format", "json")
    (saved,) = (tmp_path / "results").glob("odds-*")
    assert saved.suffix == ".json" and json.loads(saved.read_text())


def test_progress_reads_games_per_second(monkeypatch):
    """The progress bar's unit is spaced and plural: "628.6 games/s", not "628.55game/s"."""
    import io

    from flip7.cli.games import _progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    update = _progress(10, "game")
    update(10)
    assert " games/s" in err.getvalue() and "game/s" not in err.getvalue().replace(" games/s", "")


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
    assert "Please type h (hit), s (stay) or q (quit)." in proc.stdout
    assert "Bust risk" in proc.stdout and "one more card is worth" in proc.stdout
    assert re.search(r"^(you win|P\d:\S+ wins) with \d+$", proc.stdout, re.M)
    assert proc.stdout.splitlines()[-1].startswith("  flip7 watch --seed 7 ")


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


def test_round_interval_is_clustered_by_deal(capsys):
    """flip7 round: the mean score's ± is flip7.stats' 95% half-width with the deal as the
    cluster (ev fills two seats of every deal), computed here from the engine's rounds."""
    specs = ["ev", "ev", "sum:20"]
    code, out, _ = run(capsys, "round", "-n", "120", "-p", ",".join(specs), "--no-file")
    assert code == 0
    lineup = parse_policies(specs)
    per_deal = []
    for i in range(120):
        seats = rotated(lineup, i)
        engine = Engine(parse_ruleset("3.1"), seats, derive_seed(1, 0, i), capture=False)
        engine.play_round()
        per_deal.append(
            sum(engine.round_scores[0][s] for s, p in enumerate(seats) if p.spec == "ev")
        )
    est = RatioSums.of((y, 2) for y in per_deal).estimate()
    row = next(x for x in out.splitlines() if x.startswith("ev "))
    assert row.split()[1:4] == ["240", f"{est.value:.2f}", f"{est.half_width:.2f}"]
    assert "clustered by deal" in out


def test_o_on_a_command_without_a_results_copy(capsys, tmp_path, monkeypatch):
    """tournament list (prints only, no results copy) writes its output to -o PATH too."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "runs.json"
    argv = ["tournament", "list", "--data", str(tmp_path / "lake"), "--format", "json"]
    code, out, _ = run(capsys, *argv, "-o", str(path))
    assert code == 0 and out == ""
    assert json.loads(path.read_text())["runs"] == []
    assert not (tmp_path / "results").exists()


def test_a_bad_o_path_is_refused_before_any_command_runs(capsys, tmp_path):
    """-o at a directory: a one-line error (exit 2) from sim and from sql alike, nothing run."""
    for argv in (["sim", "-n", "5"], ["sql", "SELECT 1", "--data", str(tmp_path / "none")]):
        code, out, err = run(capsys, *argv, "-o", str(tmp_path))
        assert code == 2 and out == ""
        assert f"-o {tmp_path}: is a directory" in err and len(err.strip().splitlines()) == 1


def test_watch_formats_and_the_paced_transcript_agree(capsys):
    """watch --delay (paced, card by card) prints the transcript the table format prints at
    once; --format json holds one record per transcript event, each with that line's text."""
    argv = ["watch", "-p", "ev,sum:20", "--seed", "6", "--no-file"]
    _, table, _ = run(capsys, *argv)
    _, paced, _ = run(capsys, *argv, "--delay", "0.0001")
    assert paced == table
    _, out, _ = run(capsys, *argv, "--format", "json")
    doc = json.loads(out)
    events = table.splitlines()[1:-1]  # between the head line and the final line
    assert len(doc["events"]) == len(events)
    pairs = zip(events, doc["events"], strict=True)
    assert all(line.strip().startswith(r["text"]) for line, r in pairs)
    assert doc["winner"] == doc["events"][-1]["player"] and doc["lineup"] == ["ev", "sum:20"]


def test_help_texts_agree_across_commands(capsys):
    """No "95%%" shown literally; one metavar for --data; the table formats offered alike
    (sql and compare add parquet); play and sim have a description; play's names q and takes
    --no-file (issue 32, item 11)."""
    import contextlib

    from flip7.cli import build_parser

    for name, sub in _subparsers(build_parser()):
        opts = {o: a for a in sub._actions for o in a.option_strings}
        text = sub.format_help()
        assert "%%" not in text, name
        if "--data" in opts and opts["--data"].help != argparse.SUPPRESS:
            assert opts["--data"].metavar == "DIR|URI", name
        if "--format" in opts:
            choices = tuple(opts["--format"].choices)
            assert choices[:4] == ("table", "csv", "json", "markdown"), name
            assert set(choices) - {"table", "csv", "json", "markdown"} <= {"parquet"}, name
        if name in ("play", "sim"):
            assert sub.description, name
    with contextlib.suppress(SystemExit):
        main(["play", "--help"])
    out = capsys.readouterr().out
    assert "q (or quit" in " ".join(out.split()) and "--no-file" in out


def test_a_misspelt_option_gets_did_you_mean_and_the_subcommands_usage(capsys):
    """`flip7 sim --pleyers 3` names --players and prints sim's usage, not flip7's; so do
    sql and the nested `tournament run` (issue 32, item 10)."""
    import pytest

    cases = [
        (["sim", "--pleyers", "3"], "flip7 sim", "--players"),
        (["sql", "--tabels"], "flip7 sql", "--tables"),
        (["tournament", "run", "demo", "--adress", "auto"], "flip7 tournament run", "--address"),
    ]
    for argv, prog, meant in cases:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2
        assert err.startswith(f"usage: {prog} "), err
        assert f"{prog}: error: unrecognized arguments: " in err
        assert f"did you mean {meant}?" in err, err
