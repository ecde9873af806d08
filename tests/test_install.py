"""The wheel: it carries every module, URDF and scenario, and a non-editable install runs from anywhere.

The wheel is built once per session from a copy of the repository's sources (so a stale
``build/`` in the clone cannot leak into it) with ``pip wheel --no-deps``, then unpacked
with ``pip install --no-deps --target``; the installed copy runs in subprocesses whose
working directory is outside the clone and whose path holds the target directory, not the
clone.  Dependencies come from the running environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bullet_setimpact.montecarlo.scenario import available

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[1]  # the repository these tests belong to
#: What the build needs from the repository (pyproject.toml's package-dir mapping).
SOURCES = ("pyproject.toml", "README.md", "bullet_setimpact", "urdf", "scenarios")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from a clean copy of its sources."""
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(source)]
    subprocess.run(command, check=True, capture_output=True, timeout=600)
    (built,) = out.glob("bullet_setimpact-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment of a subprocess that imports the unpacked wheel, never the clone."""
    target = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)]
    subprocess.run(command, check=True, capture_output=True, timeout=600)
    return {**os.environ, "PYTHONPATH": str(target), "MPLBACKEND": "Agg"}


def _run(code: str, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_wheel_contains_every_module_urdf_and_scenario(wheel: Path) -> None:
    """Every ``.py`` of the package, every file of ``urdf/`` and every script of ``scenarios/``
    is in the wheel (the latter two under ``bullet_setimpact/_data/``)."""
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {path.relative_to(ROOT).as_posix() for path in (ROOT / "bullet_setimpact").rglob("*.py")}
    expected |= {f"bullet_setimpact/_data/urdf/{path.name}" for path in (ROOT / "urdf").iterdir() if path.is_file()}
    expected |= {f"bullet_setimpact/_data/scenarios/{path.name}" for path in (ROOT / "scenarios").glob("*.py")}
    assert len(expected) > 40
    assert expected - names == set()


def test_installed_wheel_finds_its_data_outside_the_clone(installed: dict[str, str], tmp_path: Path) -> None:
    """Imported from the target directory, ``data_path()`` points inside it, every URDF
    loads there and the CLI lists every scenario of the clone."""
    code = (
        "import os, pybullet as p, bullet_setimpact\n"
        "from bullet_setimpact.cli import main\n"
        "print(bullet_setimpact.__file__)\n"
        "print(bullet_setimpact.data_path(), bullet_setimpact.data_path('scenarios'))\n"
        "client = p.connect(p.DIRECT)\n"
        "for name in sorted(os.listdir(bullet_setimpact.data_path())):\n"
        "    p.loadURDF(os.path.join(bullet_setimpact.data_path(), name), useFixedBase=True, physicsClientId=client)\n"
        "main(['list'])\n"
    )
    out = _run(code, installed, tmp_path)
    site = installed["PYTHONPATH"]
    package, data = out.split("\n")[:2]
    assert package.startswith(site) and data == f"{site}/bullet_setimpact/_data/urdf {site}/bullet_setimpact/_data/scenarios"
    assert all(name in out for name in available()), out


def test_installed_wheel_runs_rollouts_on_dask_workers(installed: dict[str, str], tmp_path: Path) -> None:
    """The installed package runs a scenario from outside the clone, and a 2-worker Dask
    LocalCluster (whose workers import the target directory's copy, checked) gives records
    identical to the serial run's."""
    code = (
        "import numpy as np, bullet_setimpact\n"
        "from dask.distributed import Client, LocalCluster\n"
        "from bullet_setimpact.montecarlo.rollouts import monte_carlo\n"
        "params = {'duration': 0.15}\n"
        "serial = monte_carlo('rocking_block', 4, seed=2, executor='serial', params=params)\n"
        "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)\n"
        "with cluster, Client(cluster) as client:\n"
        "    where = client.run(lambda: __import__('bullet_setimpact').__file__)\n"
        "    dask = monte_carlo('rocking_block', 4, seed=2, executor=client.get_executor(), params=params)\n"
        "assert len(where) == 2 and set(where.values()) == {bullet_setimpact.__file__}, where\n"
        "for a, b in zip(serial.records, dask.records, strict=True):\n"
        "    assert [e.time for e in a.events] == [e.time for e in b.events]\n"
        "    assert all(np.array_equal(x.v_plus, y.v_plus) for x, y in zip(a.events, b.events, strict=True))\n"
        "    assert all(np.array_equal(a.final[k], b.final[k]) for k in a.final)\n"
        "print(bullet_setimpact.__file__, sum(len(r.events) for r in serial.records))\n"
    )
    out = _run(code, installed, tmp_path)
    assert out.startswith(installed["PYTHONPATH"]) and int(out.split()[1]) >= 4
