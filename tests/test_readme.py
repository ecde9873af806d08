"""README.md as a test: every fenced ``python`` block and every command line of its ``bash`` blocks
runs as written, each in a fresh temporary directory, against the package under test.

Only sizes shrink (:data:`SMALLER`): a Monte Carlo run uses 2 rollouts, an outcome set
2^16 samples, the same code otherwise.  Commands that install, start servers or run this
suite itself are not run (:data:`NOT_RUN`); the Dask scheduler address
``tcp://SCHEDULER_HOST:8786`` is replaced by a 2-worker ``LocalCluster``'s.  The command lines
are in the slow tier (about 20 s).  Blocks run in subprocesses whose path holds the package
under test (the clone it was imported from, or nothing extra for an installed package) and
whose ``PATH`` starts with this interpreter's ``bin`` (its ``bullet-setimpact`` script).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import bullet_setimpact

pytestmark = pytest.mark.subprocess

PACKAGE_ROOT = Path(bullet_setimpact.__file__).resolve().parents[1]
README = Path(__file__).resolve().parents[1] / "README.md"
SCHEDULER = "tcp://SCHEDULER_HOST:8786"

#: (pattern, replacement): the documented smaller sizes of long runs.
SMALLER = (
    (re.compile(r"--rollouts \d+"), "--rollouts 2"),  # CLI Monte Carlo runs
    (re.compile(r"(monte_carlo\(\"\w+\", )[\d_]+"), r"\g<1>2"),  # monte_carlo(scenario, n, ...)
    (re.compile(r"(outcome-set \w+)"), r"\g<1> --samples 65536"),  # 2^16 of the journal's 2^20 samples
)
#: Commands (by their start) that are not run, and why.
NOT_RUN = {
    "pip install": "the suite runs against the package already installed",
    "python -m pytest": "the test suite itself",
    "dask scheduler": "a LocalCluster stands in for the scheduler",
    "dask worker": "a LocalCluster stands in for the workers",
}


def _blocks(language: str) -> list[tuple[int, str]]:
    """``(line number, code)`` of README's fenced blocks in ``language``."""
    text = README.read_text()
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in re.finditer(rf"^```{language}\n(.*?)^```", text, re.M | re.S)]


def _commands() -> list[tuple[int, str]]:
    """``(line number, command)`` of every command in README's bash blocks that is run
    (comments stripped, ``&&`` chains split, :data:`NOT_RUN` left out)."""
    commands = []
    for start, block in _blocks("bash"):
        for offset, line in enumerate(block.splitlines(), start=1):
            for command in re.sub(r"\s+#.*$", "", line).split("&&"):
                command = command.strip()
                if command and not any(command.startswith(prefix) for prefix in NOT_RUN):
                    commands.append((start + offset, command))
    return commands


def _smaller(code: str, scheduler: str) -> str:
    for pattern, replacement in SMALLER:
        code = pattern.sub(replacement, code)
    return code.replace(SCHEDULER, scheduler)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """Address of a 2-worker Dask LocalCluster, standing in for ``tcp://SCHEDULER_HOST:8786``."""
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    path = [str(PACKAGE_ROOT)] if (PACKAGE_ROOT / "pyproject.toml").is_file() else []  # a clone: put it first
    env = {
        **os.environ,
        "MPLBACKEND": "Agg",
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_readme_has_blocks_to_run() -> None:
    """The README still has a quick start with the hook and the explicit loop, and CLI lines."""
    python = [code for _, code in _blocks("python")]
    assert any("bullet_setimpact.hook(" in code and "ImpactSimulator(" in code and "data_path()" in code for code in python)
    assert any(command.startswith("bullet-setimpact run") for _, command in _commands())


@pytest.mark.parametrize(("line", "code"), _blocks("python"), ids=[f"python-line-{line}" for line, _ in _blocks("python")])
def test_python_block(line: int, code: str, scheduler: str, tmp_path: Path) -> None:
    """The block at ``line`` runs to completion (exit status 0)."""
    done = _run([sys.executable, "-c", _smaller(code, scheduler)], tmp_path)
    assert done.returncode == 0, f"README.md line {line}:\n{done.stderr}"


@pytest.mark.slow
@pytest.mark.parametrize(("line", "command"), _commands(), ids=[f"cli-line-{line}" for line, _ in _commands()])
def test_cli_line(line: int, command: str, scheduler: str, tmp_path: Path) -> None:
    """The command at ``line`` succeeds; what it says it writes (``--out``, ``--plot``) exists."""
    argv = shlex.split(_smaller(command, scheduler))
    done = _run(argv, tmp_path)
    assert done.returncode == 0, f"README.md line {line}: {command}\n{done.stderr}"
    for flag in ("--out", "--plot"):
        if flag in argv:
            assert (tmp_path / argv[argv.index(flag) + 1]).exists(), f"README.md line {line}: {flag} was not written"
