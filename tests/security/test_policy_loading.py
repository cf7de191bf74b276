"""No code runs because of data: policy import paths are type-checked before anything is called,
and nothing read from a lake (replay, watch, the dashboard) imports a module by itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flip7.cli import main
from flip7.policies import PolicySpecError, parse_policy
from pipeline.plan import make_plan
from pipeline.spec import parse_spec
from tests.pipeline.helpers import run_inline
from tests.security.helpers import one_line, spec_text, tree, write_spec

pytestmark = pytest.mark.usefixtures("no_ray")

SIDE = "tests.security.sideeffect"


def test_os_system_in_a_spec_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec seat `os:system:touch MARK` used to run the shell command while checking the
    spec; it is refused (os.system is no Policy subclass) before any call, in one line."""
    mark = tmp_path / "pwned"
    spec = write_spec(tmp_path / "s.toml", seats=(f"os:system:touch {mark}", "ev"))
    before = tree(tmp_path)
    code = main(["tournament", "run", str(spec), "--data", str(tmp_path / "lake")])
    assert code == 2
    one_line(capsys.readouterr().err, "lineups[0].seats[0]", "os.system", "not a flip7 Policy")
    assert not mark.exists()
    assert tree(tmp_path) == before


def test_os_system_on_the_command_line_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flip7 sim -p os:system:...` is refused the same way."""
    mark = tmp_path / "pwned"
    code = main(["sim", "-n", "2", "--no-file", "-p", f"os:system:touch {mark},ev"])
    assert code == 2
    one_line(capsys.readouterr().err, "seat 0", "os.system", "not a flip7 Policy")
    assert not mark.exists()


def test_a_factory_function_is_refused_without_being_called() -> None:
    """An import path must name a Policy subclass; a function is not called to find out."""
    with pytest.raises(PolicySpecError, match="is a function, not a flip7 Policy subclass"):
        parse_policy("tests.security.policies:not_a_class")
    with pytest.raises(PolicySpecError, match="errno.EROFS is not a flip7 Policy subclass"):
        parse_policy("errno:EROFS")  # a built-in module: no source to check, so not loaded


def _marking_package(root: Path, mark: Path) -> None:
    """`marks` (a module) and `markpkg.sub` (a package and its module): each appends its name
    to `mark` when imported; `marks.Good` and `markpkg.sub.Good` are Policy subclasses."""
    body = (
        "from flip7.policies import Policy\n"
        "open({mark!r}, 'a').write({name!r} + '\\n')\n"
        "class Good(Policy):\n"
        "    def hit(self, obs):\n"
        "        return obs.nsum[obs.seat] < 15\n"
    )
    (root / "marks.py").write_text(body.format(mark=str(mark), name="marks"))
    (root / "markpkg").mkdir()
    (root / "markpkg" / "__init__.py").write_text(f"open({str(mark)!r}, 'a').write('pkg\\n')\n")
    (root / "markpkg" / "sub.py").write_text(body.format(mark=str(mark), name="sub"))


@pytest.mark.parametrize(
    "spec", ["marks:Nothing", "markpkg.sub:Nothing", "markpkg:Good", "markpkg.sub:Policy"]
)
def test_a_module_without_the_class_is_never_imported(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`module:Class` where the module's source defines no top-level class Class (`this:Nothing`
    used to print the Zen of Python while checking a spec) is refused by reading the source:
    neither the module nor the packages above it run a line."""
    mark = tmp_path / "imported"
    _marking_package(tmp_path, mark)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("marks", "markpkg", "markpkg.sub"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(PolicySpecError, match="not a flip7 Policy subclass") as err:
        parse_policy(spec)
    assert "name the module whose source defines your Policy subclass" in str(err.value)
    assert not mark.exists()
    assert not {"marks", "markpkg", "markpkg.sub"} & set(sys.modules)


def test_a_module_that_defines_the_class_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user-policy feature stands: a module (or a package's module) whose source defines the
    class is imported, as any user policy is."""
    mark = tmp_path / "imported"
    _marking_package(tmp_path, mark)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("marks", "markpkg", "markpkg.sub"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert repr(parse_policy("markpkg.sub:Good")) == "markpkg.sub:Good"
    assert repr(parse_policy("marks:Good")) == "marks:Good"
    assert mark.read_text().split() == ["pkg", "sub", "marks"]


def test_a_module_naming_spec_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec seating `this:Nothing` is refused in one line, and the module `this` (which prints
    the Zen of Python on import) never runs."""
    spec = write_spec(tmp_path / "s.toml", seats=("this:Nothing", "ev"))
    code = subprocess.run(
        [sys.executable, "-m", "flip7", "tournament", "run", str(spec), "--data", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert code.returncode == 2
    assert "Zen" not in code.stdout + code.stderr
    one_line(code.stderr, "lineups[0].seats[0]", "this.Nothing", "not a flip7 Policy subclass")


@pytest.fixture
def lake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real run `u` whose seat 0 is a user policy from a module that marks its imports; the
    module is then forgotten, and the mark file armed."""
    root = tmp_path / "lake"
    spec = parse_spec(spec_text(name="u", seats=(f"{SIDE}:Quiet", "ev"), games=4, shard_size=4))
    run_inline(make_plan(spec), str(root))
    monkeypatch.delitem(sys.modules, SIDE)
    monkeypatch.setenv("FLIP7_TEST_IMPORT_MARK", str(tmp_path / "imported"))
    return root


def test_replay_imports_a_user_policy_only_when_allowed(
    lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flip7 replay` of a game seating a user policy is refused, naming the seat and the flag,
    without importing the module; with --allow-policy MODULE:NAME it replays and matches."""
    mark = tmp_path / "imported"
    assert main(["replay", "u", "0", "--data", str(lake)]) == 2
    one_line(capsys.readouterr().err, "seat 0", f"'{SIDE}:Quiet'", f"--allow-policy {SIDE}:Quiet")
    assert SIDE not in sys.modules and not mark.exists()
    code = main(["replay", "u", "0", "--data", str(lake), "--allow-policy", f"{SIDE}:Quiet"])
    assert code == 0
    assert "replay matches the log" in capsys.readouterr().out
    assert mark.exists()


def test_replay_of_a_tampered_lake_runs_nothing(
    lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A games file whose policy column says `os:system:touch MARK` (a lake from someone else)
    used to run the command on `flip7 replay`; it is refused, even when the user allows
    os:system, since os.system is no Policy."""
    mark = tmp_path / "pwned"
    path = next((lake / "games" / "run=u").rglob("*.parquet"))
    games = pq.read_table(path)
    bad = [f"os:system:touch {mark}"] * games.num_rows
    i = games.schema.get_field_index("policy")
    games = games.set_column(i, "policy", pa.array(bad).dictionary_encode())
    pq.write_table(games, path)
    assert main(["replay", "u", "0", "--data", str(lake)]) == 2
    one_line(capsys.readouterr().err, "seat 0", "not a built-in policy")
    assert main(["replay", "u", "0", "--data", str(lake), "--allow-policy", "os:system"]) == 2
    one_line(capsys.readouterr().err, "os.system", "not a flip7 Policy")
    assert not mark.exists()
    manifest = json.loads((lake / "runs" / "u" / "manifest.json").read_text())
    assert manifest["cells"][0]["lineup"][0] == f"{SIDE}:Quiet"


def test_watch_shows_a_logged_game_without_importing(
    lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flip7 watch --run` prints the logged events: it never builds the seats' policies."""
    assert main(["watch", "--run", "u", "--game", "1", "--data", str(lake), "--no-file"]) == 0
    assert f"{SIDE}:Quiet" in capsys.readouterr().out
    assert SIDE not in sys.modules and not (tmp_path / "imported").exists()


def test_the_dashboard_cannot_build_a_policy() -> None:
    """The dashboard's replay (and every module it reads data through) imports neither the
    rules core nor the pipeline, so a policy name in the lake is only ever text to it."""
    code = (
        "import sys, dashboard.replay, dashboard.data, dashboard.charts, dashboard.tables; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('flip7', 'pipeline')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_replay_of_a_lake_seating_a_person_asks_nobody(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A games file whose seat plays `human` (which needs a person at the terminal) is refused by
    `flip7 replay` in one line, as a spec seating it is, instead of prompting on stdin."""
    path = next((lake / "games" / "run=u").rglob("*.parquet"))
    games = pq.read_table(path)
    i = games.schema.get_field_index("policy")
    games = games.set_column(i, "policy", pa.array(["human"] * games.num_rows).dictionary_encode())
    pq.write_table(games, path)
    assert main(["replay", "u", "0", "--data", str(lake)]) == 2
    one_line(capsys.readouterr().err, "seat 0", "'human'", "person at the terminal")


def _readme_policy() -> str:
    """The README's custom-policy example (the code block that starts `# mine.py`), as written."""
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("```python\n# mine.py", 1)[1].split("```", 1)[0]
    return "# mine.py" + block


def test_the_readme_policy_loads_from_its_folder(tmp_path: Path) -> None:
    """`flip7 sim -p mine:Cautious,ev,sum:20` run from the folder holding mine.py works as the
    README writes it, without PYTHONPATH=. (issue 32, item 14). `python -P` starts as the
    `flip7` script does: the current directory is not on its path."""
    import os

    (tmp_path / "mine.py").write_text(_readme_policy(), encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1"}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [str(Path(__file__).parents[2]), env.get("PYTHONPATH", "")] if p and p != "."
    )
    argv = ["-m", "flip7", "sim", "-p", "mine:Cautious,ev,sum:20", "-n", "30", "--no-file"]
    done = subprocess.run(
        [sys.executable, "-P", *argv], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "mine:Cautious" in done.stdout


def test_a_file_in_the_current_directory_never_shadows_an_installed_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The current directory is searched last: a `json.py` there defining `Good` is not what
    `json:Good` names (the standard library's json, which defines no such class, is), so it is
    refused without running the file."""
    mark = tmp_path / "ran"
    (tmp_path / "json.py").write_text(
        f"open({str(mark)!r}, 'w').close()\n"
        "from flip7.policies import Policy\n\n\nclass Good(Policy):\n"
        "    def hit(self, obs):\n        return False\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    with pytest.raises(PolicySpecError, match="json"):
        parse_policy("json:Good")
    assert not mark.exists()
