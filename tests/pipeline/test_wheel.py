"""The wheel stands on its own: built from the sources, installed into a fresh virtualenv
outside the source tree, it runs the quick start (a shipped spec by name, on a local Ray),
then `flip7 report` and `flip7 sql` on the result.

Cheap trick, checked below: the new environment has no pip and no dependencies of its own; a
.pth file appends this environment's site-packages to its path (after its own), so Ray, DuckDB
and the rest are not downloaded again, while flip7 itself comes from the installed wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]
#: What the build reads: the packages pyproject.toml ships (so a new package is never left out
#: of the copy, and a wheel that lacks one fails here), its README and pyproject itself.
SOURCES = (
    "pyproject.toml",
    "README.md",
    *(
        pattern.rstrip("*")
        for pattern in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
            "packages"
        ]["find"]["include"]
    ),
)


def sh(*argv: str | Path, cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{argv}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_wheel_runs_the_quick_start_without_a_checkout(tmp_path: Path) -> None:
    # Build from a copy of the sources, so that the build leaves nothing in the checkout.
    src = tmp_path / "src"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FLIP7_DATA")}
    wheels = tmp_path / "wheels"
    pip = (sys.executable, "-m", "pip")
    sh(
        *pip,
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        wheels,
        src,
        cwd=tmp_path,
        env=env,
    )
    (wheel,) = wheels.glob("flip7-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "pipeline/specs/demo.toml" in names and "warehouse/sql/marts/win_rates.sql" in names

    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path, env=env)
    python = venv / "bin" / "python"
    site = Path(
        sh(
            python,
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            cwd=tmp_path,
            env=env,
        ).strip()
    )
    (site / "shared.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    sh(
        python,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--no-index",
        "-q",
        wheel,
        cwd=tmp_path,
        env=env,
    )

    home = tmp_path / "home"  # no experiments/ here, nor anywhere above
    home.mkdir()
    where = sh(
        python,
        "-c",
        "import flip7, pipeline; print(flip7.__file__, pipeline.__file__)",
        cwd=home,
        env=env,
    )
    assert where.count(str(site)) == 2, where
    flip7 = venv / "bin" / "flip7"
    version = sh(
        python,
        "-c",
        "from importlib.metadata import version; print(version('flip7'))",
        cwd=home,
        env=env,
    )
    assert sh(flip7, "--version", cwd=home, env=env).strip() == f"flip7 {version.strip()}"

    out = sh(
        flip7, "tournament", "run", "demo", "--scale", "0.005", "--data", "lake",
        "--num-cpus", "1", "--engine", "reference", "--no-progress", "--no-file",
        cwd=home, env=env,
    )  # fmt: skip
    assert "tournament demo-x0.005" in out, out
    report = sh(flip7, "report", "demo-x0.005", "--data", "lake", "--no-file", cwd=home, env=env)
    assert "Field size" in report and "Card counting" in report
    games = sh(
        flip7,
        "sql",
        "SELECT count(DISTINCT game) AS n FROM stg_games",
        "--data",
        "lake",
        "--format",
        "csv",
        cwd=home,
        env=env,
    )
    assert games.split() == ["n", str(5 * 200)]
    manifest = (home / "lake" / "runs" / "demo-x0.005" / "manifest.json").read_text()
    assert f'"package_version": "{version.strip()}"' in manifest
