"""Bad input the other test files do not try (``tests/README.md`` lists them all).

Every case checks that the error names the problem (a message fragment), that no traceback
reaches a CLI user (exit code 2, one ``bullet-setimpact: error:`` line), and, where files are
written, that no partial file is left behind.  The URDF cases go through the ``urdf_drop``
scenario, which checks a URDF before PyBullet sees it.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact import (
    LAWS,
    AnitescuPotraImpact,
    ImpactFailure,
    ImpactLaw,
    ImpactProblem,
    PlasticImpact,
    PropagativeImpact,
    RouthImpact,
    SequentialImpact,
    __version__,
    planar,
)
from bullet_setimpact.bullet.examples import URDF_DIR, load_planar_example
from bullet_setimpact.bullet.simulator import ImpactSimulator
from bullet_setimpact.bullet.urdf import check_urdf
from bullet_setimpact.cli import main
from bullet_setimpact.core.branch_sampling import BatchedLCPSolver, LemkeSolver
from bullet_setimpact.errors import LCPSolverError
from bullet_setimpact.laws.base import LawOutcome
from bullet_setimpact.laws.checked import CheckedLaw
from bullet_setimpact.montecarlo import rollouts as rollouts_module
from bullet_setimpact.montecarlo.rollouts import RolloutResults, monte_carlo
from bullet_setimpact.montecarlo.scenario import build, make_law
from bullet_setimpact.viz.render import render

SCENARIO = "rocking_block"
FAST = {"duration": 0.15}  # the drop and the first impact, nothing more
INERTIA = '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>'
BOX = '<geometry><box size="0.2 0.2 0.2"/></geometry>'


def _link(name: str, mass: float | None = 1.0, collision: str = BOX) -> str:
    """A URDF ``<link>`` with an inertial of ``mass`` (none if None) and one collision element."""
    inertial = "" if mass is None else f'<inertial><mass value="{mass}"/>{INERTIA}</inertial>'
    return f'<link name="{name}">{inertial}<collision>{collision}</collision></link>'


def _robot(*parts: str) -> str:
    return '<?xml version="1.0"?>\n<robot name="probe">\n' + "\n".join(parts) + "\n</robot>\n"


def _joint(parent: str, child: str, kind: str = "revolute", limit: str = '<limit lower="-1" upper="1" effort="10" velocity="10"/>') -> str:
    return (
        f'<joint name="{parent}_{child}" type="{kind}"><parent link="{parent}"/><child link="{child}"/><axis xyz="0 1 0"/>{limit}</joint>'
    )


# Each case: the URDF text (None: no file at all) and a fragment the error must contain.
URDF_CASES: dict[str, tuple[str | None, str]] = {
    "missing file": (None, "not found"),
    "truncated XML": ((URDF_DIR / "rocking_slab.urdf").read_text()[:700], "is not well-formed XML"),
    "missing mesh": (
        _robot(_link("body", collision='<geometry><mesh filename="meshes/gone.obj"/></geometry>')),
        "link 'body' references mesh 'meshes/gone.obj', which does not exist",
    ),
    "zero-mass links": (_robot(_link("base", 0.0), _link("arm", 0.0), _joint("base", "arm")), "nothing could move"),
}


def _urdf_file(tmp_path: Path, case: str) -> Path:
    """Write the case's URDF to ``tmp_path`` (or leave it absent) and return its path."""
    text, _ = URDF_CASES[case]
    path = tmp_path / f"{case.replace(' ', '_')}.urdf"
    if text is not None:
        path.write_text(text)
    return path


def _cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI, check it exited 2 with a one-line message and no traceback, return stderr."""
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error
    assert error.startswith("bullet-setimpact: error: ")
    return error


# ------------------------------------------------------------------- URDF drop scenario
@pytest.mark.parametrize("case", sorted(URDF_CASES))
def test_bad_urdf_is_refused_before_pybullet_loads_it(client: int, tmp_path: Path, case: str) -> None:
    """A missing file, truncated XML, a missing mesh and all-massless links each raise a
    ValueError naming the file and the problem, and nothing is loaded: the check runs before
    PyBullet sees the file (not even the ground is in the world afterwards)."""
    path = _urdf_file(tmp_path, case)
    with pytest.raises(ValueError, match="URDF") as error:
        build("urdf_drop", client, {"urdf": str(path)})
    assert URDF_CASES[case][1] in str(error.value)
    assert str(path) in str(error.value)
    assert p.getNumBodies(physicsClientId=client) == 0


@pytest.mark.parametrize(
    ("urdf", "params", "fragment"),
    [
        pytest.param(_robot(_link("solo", None)), {}, "solo: no <inertial> mass", id="no-inertial"),
        pytest.param(
            _robot(_link("base", 5.0), _link("arm", 0.0), _joint("base", "arm")), {"fixed_base": True}, "the base is fixed", id="fixed-base"
        ),
        pytest.param(_robot(_link("base", 0.0)), {}, "the root link's mass 0 makes PyBullet fix the base", id="static-root"),
        pytest.param(
            _robot(_link("base", 0.0), _link("arm", 2.0), _joint("base", "arm")),
            {},
            "its root link 'base' has mass 0, which PyBullet takes as a fixed base: released, it would hang where it is loaded",
            id="static-root-arm",
        ),
        pytest.param(_robot(_link("base", "heavy")), {}, "link 'base' has a mass that is not a number ('heavy')", id="mass-text"),  # type: ignore[arg-type]  # deliberate
        pytest.param(_robot(_link("base", -1.0)), {}, "link 'base' has mass '-1.0'; expected a finite number >= 0", id="negative-mass"),
        pytest.param(
            _robot('<link name="ghost"><inertial><mass value="1"/></inertial></link>'), {}, "has no <collision> geometry", id="no-collision"
        ),
        pytest.param(
            _robot(_link("base", 1.0, '<geometry><mesh filename="base.ply"/></geometry>')),
            {},
            "'base.ply'; PyBullet reads only .obj",
            id="mesh-format",
        ),
        pytest.param(
            '<?xml version="1.0"?><sdf version="1.6"><model name="m"/></sdf>', {}, "has root element <sdf>; expected <robot>", id="not-urdf"
        ),
        pytest.param(
            _robot(_link("a"), _link("b")), {}, "the links must form one tree, but ['a', 'b'] have no parent joint", id="two-roots"
        ),
        pytest.param(_robot(_link("a"), _joint("a", "nowhere")), {}, "joint 'a_nowhere' connects 'a' to 'nowhere'", id="unknown-link"),
        pytest.param(_robot(_link("a"), _link("b"), _joint("a", "b", limit="")), {}, "revolute joint 'a_b' has no <limit>", id="no-limit"),
        pytest.param(
            _robot(_link("a"), _link("b"), _joint("a", "b", kind="hinge")),
            {},
            "joint 'a_b' has type 'hinge'; expected one of",
            id="joint-type",
        ),
    ],
)
def test_other_urdf_defects_are_named(client: int, tmp_path: Path, urdf: str, params: dict[str, Any], fragment: str) -> None:
    """Links without mass (no ``<inertial>``: massless by the URDF convention, though PyBullet
    would invent 1 kg), a fixed base whose only mass is the base, a root of mass 0 (PyBullet
    then fixes the base: with nothing else to move, or as a base released to drop, like
    pybullet_data's kuka arm, whose drop would have no impact), a non-numeric or negative mass, no collision geometry, a non-URDF
    XML file, links that do not form one tree, a revolute joint without ``<limit>`` or of an unknown
    type, and a mesh format PyBullet cannot read."""
    path = tmp_path / "defect.urdf"
    path.write_text(urdf)
    with pytest.raises(ValueError, match="URDF") as error:
        build("urdf_drop", client, {"urdf": str(path), **params})
    assert fragment in str(error.value)
    assert str(path) in str(error.value)
    assert p.getNumBodies(physicsClientId=client) == 0


def test_valid_urdfs_with_meshes_pass_the_checks_and_land_from_height(client: int, tmp_path: Path) -> None:
    """The checks refuse nothing PyBullet loads: a two-link URDF in a ROS-style package
    (``probe_pkg/urdf/``) whose meshes are named relative to it (``../meshes/cube.obj``) and as
    ``package://probe_pkg/meshes/cube.obj`` (found, as Bullet does, under an ancestor of the
    URDF's directory) builds, and its lowest collision point starts exactly ``height`` =
    0.05 m above the ground (the scenario's placement), as do the default (the rocking slab)
    and a pybullet_data name."""
    package = tmp_path / "probe_pkg"
    (package / "meshes").mkdir(parents=True)
    (package / "urdf").mkdir()
    shutil.copy(Path(pybullet_data.getDataPath()) / "cube.obj", package / "meshes" / "cube.obj")
    mesh = '<geometry><mesh filename="{}" scale="0.1 0.1 0.1"/></geometry>'
    path = package / "urdf" / "two_links.urdf"
    path.write_text(
        _robot(
            _link("base", 1.0, mesh.format("../meshes/cube.obj")),
            _link("arm", 0.5, mesh.format("package://probe_pkg/meshes/cube.obj")),
            _joint("base", "arm"),
        )
    )
    for params in ({"urdf": str(path), "height": 0.05}, {"height": 0.05}, {"urdf": "sphere2.urdf", "height": 0.05}):
        p.resetSimulation(physicsClientId=client)
        scenario = build("urdf_drop", client, params)
        points = p.getClosestPoints(scenario.bodies["robot"], scenario.extra["ground"], 1.0, physicsClientId=client)
        assert min(point[8] for point in points) == pytest.approx(0.05, abs=1e-6), params


def test_check_urdf_takes_the_path_as_a_string_or_a_path() -> None:
    """The README calls ``check_urdf(path, fixed_base)`` on a file name: a ``str`` and the same
    file as a ``Path`` give the same summary (pybullet_data's r2d2: robot ``physics``, root
    ``base_link``, 16 links each with a ``<mass>`` in its ``<inertial>``, as the file reads)."""
    name = os.path.join(pybullet_data.getDataPath(), "r2d2.urdf")
    from_string, from_path = check_urdf(name, False), check_urdf(Path(name), False)
    assert from_string == from_path
    assert (from_string.robot, from_string.root, len(from_string.masses)) == ("physics", "base_link", 16)
    assert all(mass is not None for mass in from_string.masses.values())


@pytest.mark.parametrize("case", sorted(URDF_CASES))
def test_cli_run_with_a_bad_urdf_exits_2_naming_the_problem(tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``bullet-setimpact run urdf_drop --param urdf=...``: exit code 2, the file and the
    problem named, no traceback."""
    path = _urdf_file(tmp_path, case)
    error = _cli_error(["run", "urdf_drop", "--rollouts", "1", "--workers", "1", "--param", f"urdf={path}"], capsys)
    assert URDF_CASES[case][1] in error
    assert str(path) in error


def test_cli_bad_urdf_in_a_worker_process_and_in_render(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same refusal crosses a process pool (``--workers 2``: the worker's ValueError
    reaches the CLI as a message, not a traceback) and ``render`` exits 2 without writing."""
    path = _urdf_file(tmp_path, "truncated XML")
    error = _cli_error(["run", "urdf_drop", "--rollouts", "2", "--workers", "2", "--param", f"urdf={path}"], capsys)
    assert "is not well-formed XML" in error and str(path) in error
    out = tmp_path / "drop.gif"
    error = _cli_error(["render", "urdf_drop", "--out", str(out), "--param", f"urdf={path}"], capsys)
    assert "is not well-formed XML" in error
    assert not out.exists() and not list(tmp_path.glob(".*partial*"))


# ---------------------------------------------------------------------------- laws
@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: RouthImpact("fast", 10), r"step must be a positive number \(N s\) or 'auto', got 'fast'"),
        (lambda: RouthImpact("Auto", 10), r"step must be a positive number \(N s\) or 'auto', got 'Auto'"),
        (lambda: RouthImpact(0.1, True), "max_steps must be an integer >= 1, got True"),
        (lambda: RouthImpact(0.1, 10, friction_directions=0), "friction_directions must be an integer >= 1, got 0"),
        (lambda: PlasticImpact("abc"), "pseudo_impulse_dt must be a number >= 0, got 'abc'"),  # type: ignore[arg-type]  # deliberate
        (lambda: PropagativeImpact("high"), r"restitution must be a number in \[0, 1\], got 'high'"),  # type: ignore[arg-type]  # deliberate
        (lambda: PropagativeImpact(max_reflections=0), "max_reflections must be an integer >= 1, got 0"),
    ],
)
def test_law_parameters_of_the_wrong_type_are_named(factory: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


def test_routh_tuning_parameters_are_keyword_only() -> None:
    """``RouthImpact(0.3, 10, 100)`` once set ``friction_directions=100`` silently (the
    docstring and the repr list ``final_steps`` first): a third positional argument is refused."""
    with pytest.raises(TypeError, match="positional"):
        RouthImpact(0.3, 10, 100)  # type: ignore[call-arg]  # deliberate
    law = RouthImpact(0.3, 10, final_steps=100, friction_directions=4)
    assert (law.final_steps, law.friction_directions) == (100, 4)


def _law(name: str) -> Any:
    """Each registered law built as a simulation would use it."""
    return {
        "routh": RouthImpact("auto", 50),
        "anitescu-potra": AnitescuPotraImpact(),
        "sequential": SequentialImpact(),
        "plastic": PlasticImpact(),
        "propagative": PropagativeImpact(0.5, ignore_friction=True),
    }[name]


@pytest.mark.parametrize("name", sorted(LAWS))
@pytest.mark.parametrize(
    ("v_minus", "message"),
    [
        (np.array([np.nan, 0.0, 0.0]), "v_minus must be finite"),
        (np.array([0.0, -np.inf, 0.0]), "v_minus must be finite"),
        (np.zeros((3, 1)), r"v_minus must have shape \(3,\)"),
    ],
)
def test_every_law_refuses_a_non_finite_or_misshapen_velocity(name: str, v_minus: np.ndarray, message: str) -> None:
    """``resolve`` checks ``v_minus`` before the law runs, for every law in ``LAWS``."""
    example = planar.rocking_block()
    with pytest.raises(ValueError, match=message):
        _law(name).resolve(example.problem, v_minus)


def test_outcome_set_and_all_outcomes_arguments_are_named() -> None:
    """``samples`` < 1, a NaN velocity (for both), ``max_nodes`` < 1, and an enumeration that
    needs more linear programs than ``max_nodes`` (the rocking block needs more than one)."""
    example = planar.rocking_block()
    with pytest.raises(ValueError, match="samples must be an integer >= 1, got 0"):
        RouthImpact(0.3, 10).outcome_set(example.problem, example.v_minus, 0)
    with pytest.raises(ValueError, match="v_minus must be finite"):
        RouthImpact(0.3, 10).outcome_set(example.problem, np.array([np.nan, 0.0, 0.0]), 8)
    with pytest.raises(ValueError, match="v_minus must be finite"):
        AnitescuPotraImpact().all_outcomes(example.problem, np.array([0.0, np.inf, 0.0]))
    with pytest.raises(ValueError, match="max_nodes must be an integer >= 1, got 0"):
        AnitescuPotraImpact().all_outcomes(example.problem, example.v_minus, max_nodes=0)
    with pytest.raises(ValueError, match="needs more than max_nodes=1 linear programs"):
        AnitescuPotraImpact().all_outcomes(example.problem, example.v_minus, max_nodes=1)


# ----------------------------------------------------------------------------- LCP
@pytest.mark.parametrize("kind", [BatchedLCPSolver, LemkeSolver])
def test_lcp_batch_solvers_refuse_non_finite_and_non_square_input(kind: type) -> None:
    """A NaN parameter vector, parameter rows of the wrong width or a 1-D ``u``, and a
    non-square ``W`` (reaching Lemke's input check) are named."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="u must be finite"):
        kind(np.eye(2)).solve(np.array([[np.nan, -1.0]]), rng)
    with pytest.raises(ValueError, match=r"u must have shape \(samples, 2\) to match rhs_map, got \(1, 3\)"):
        kind(np.eye(2)).solve(np.array([[1.0, -1.0, 0.0]]), rng)
    with pytest.raises(ValueError, match=r"u must have shape \(samples, 2\) to match rhs_map, got \(2,\)"):
        kind(np.eye(2)).solve(np.array([1.0, -1.0]), rng)
    with pytest.raises(ValueError, match=r"W must have shape \(2, 2\) to match w, got \(2, 3\)"):
        kind(np.ones((2, 3)), rhs_map=np.eye(2)).solve(np.array([[1.0, -1.0]]), rng)


# ----------------------------------------------------------------------- simulator
def test_simulator_event_cap_seed_and_friction_directions_are_checked(client: int) -> None:
    """The event cap, the seed (a string, a negative integer), a friction-direction count
    that no spatial contact could use (odd, or below 4) and error reduction parameters with a
    name PyBullet does not have or a negative value are refused when the simulator is made,
    not at the first impact."""
    load_planar_example(client, SCENARIO)
    with pytest.raises(ValueError, match="max_events_per_step must be an integer >= 1, got 0"):
        ImpactSimulator(AnitescuPotraImpact(), client, max_events_per_step=0)
    with pytest.raises(ValueError, match="seed must be None, an int, a SeedSequence or a numpy Generator, got str"):
        ImpactSimulator(AnitescuPotraImpact(), client, seed="abc")  # type: ignore[arg-type]  # the bad input under test
    with pytest.raises(ValueError, match="seed must be a non-negative integer seed, got -1"):
        ImpactSimulator(AnitescuPotraImpact(), client, seed=-1)
    for directions in (3, 2):
        with pytest.raises(ValueError, match=f"friction_directions must be an even integer >= 4 for spatial contacts, got {directions}"):
            ImpactSimulator(AnitescuPotraImpact(), client, friction_directions=directions)
    with pytest.raises(ValueError, match=r"erp has the key 'contact_erp'; expected some of \['contactERP', 'erp', 'frictionERP'\]"):
        ImpactSimulator(AnitescuPotraImpact(), client, erp={"contact_erp": 0.2})
    with pytest.raises(ValueError, match=r"erp\['contactERP'\] must be a finite number >= 0, got -0.1"):
        ImpactSimulator(AnitescuPotraImpact(), client, erp={"contactERP": -0.1})


# ----------------------------------------------------------------------- scenarios
def test_scenario_names_and_laws_are_checked(client: int) -> None:
    """An unknown scenario (also a path outside ``scenarios/``) and an unknown law, given by
    name or as a non-law object."""
    with pytest.raises(ValueError, match="unknown scenario 'no_such'; expected one of"):
        build("no_such", client)
    with pytest.raises(ValueError, match=r"unknown scenario '\.\./rocking_block'"):
        build("../rocking_block", client)
    scenario = build(SCENARIO, client)
    with pytest.raises(ValueError, match="unknown law 'newton'; expected one of"):
        make_law("newton", scenario)
    with pytest.raises(ValueError, match="unknown law 42"):
        make_law(42, scenario)  # type: ignore[arg-type]  # deliberate bad input


# --------------------------------------------------------------------- Monte Carlo
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seed": -1}, "seed must be a non-negative integer, got -1"),
        ({"duration": 0.0}, "duration must be a positive number of seconds, got 0.0"),
        ({"workers": 0}, "workers must be an integer >= 1, got 0"),
        ({"executor": "threads"}, "executor must be a concurrent.futures.Executor, 'serial' or None, got 'threads'"),
    ],
)
def test_monte_carlo_arguments_are_named(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        monte_carlo(SCENARIO, 1, params=FAST, **kwargs)


def test_results_directory_that_is_a_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "results"
    out.write_text("not a directory")
    with pytest.raises(ValueError, match="exists and is not a directory"):
        monte_carlo(SCENARIO, 1, params=FAST, out=out, executor="serial")
    assert out.read_text() == "not a directory"


def test_results_directory_of_another_version_or_scenario_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A results directory written by another package version (its run.json edited) or for
    another scenario is not resumed: the error names the field and both values, in Python and
    through the CLI; the directory is left as it was."""
    out = tmp_path / "run"
    monte_carlo(SCENARIO, 1, seed=0, params=FAST, out=out, executor="serial")
    with pytest.raises(ValueError, match=r"different run .*scenario: 'rocking_block' there, 'slab_drop' now"):
        monte_carlo("slab_drop", 1, seed=0, out=out, executor="serial")
    manifest = out / "run.json"
    config = json.loads(manifest.read_text())
    config["version"] = "0.0.1"
    manifest.write_text(json.dumps(config))
    before = sorted(path.name for path in out.iterdir())
    with pytest.raises(ValueError, match=f"different run .*version: '0.0.1' there, '{__version__}' now"):
        monte_carlo(SCENARIO, 1, seed=0, params=FAST, out=out, executor="serial")
    argv = ["run", SCENARIO, "--rollouts", "1", "--workers", "1", "--param", "duration=0.15", "--out", str(out)]
    assert "version: '0.0.1' there" in _cli_error(argv, capsys)
    assert sorted(path.name for path in out.iterdir()) == before
    assert json.loads(manifest.read_text())["version"] == "0.0.1"


def _fill_the_disk(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the atomic writer's ``np.savez`` write a few bytes and then fail as a full disk does;
    returns the list of bytes written per attempt."""
    written: list[int] = []

    def savez(stream: Any, *args: Any, **kwargs: Any) -> None:
        written.append(stream.write(b"PK\x03\x04 half an archive"))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(rollouts_module.np, "savez", savez)
    return written


def _partial_files(directory: Path) -> list[Path]:
    return [path for path in directory.rglob("*") if "partial" in path.name]


def test_full_disk_names_the_problem_and_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the disk full while a rollout is written, ``monte_carlo`` raises the OSError
    ("No space left on device"), the half-written temporary file is removed and no rollout
    file appears; the CLI reports it in one line with exit code 2.  Once space is back, the
    same call resumes and gives the undisturbed run's result."""
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        written = _fill_the_disk(patch)
        with pytest.raises(OSError, match="No space left on device") as error:
            monte_carlo(SCENARIO, 2, seed=3, params=FAST, out=out, executor="serial")
        assert error.value.errno == errno.ENOSPC
        assert written and written[0] > 0  # something was written before the disk filled
        assert _partial_files(tmp_path) == []
        assert not list(out.glob("rollout_*.npz"))
        argv = ["run", SCENARIO, "--rollouts", "2", "--seed", "3", "--workers", "1", "--param", "duration=0.15", "--out", str(out)]
        assert "No space left on device" in _cli_error(argv, capsys)
        assert _partial_files(tmp_path) == []
        with pytest.raises(OSError, match="No space left on device"):
            monte_carlo(SCENARIO, 2, seed=3, params=FAST, executor="serial").save(tmp_path / "all.npz")
        assert not (tmp_path / "all.npz").exists() and _partial_files(tmp_path) == []
    resumed = monte_carlo(SCENARIO, 2, seed=3, params=FAST, out=out, executor="serial")
    undisturbed = monte_carlo(SCENARIO, 2, seed=3, params=FAST, executor="serial")
    for left, right in zip(resumed.records, undisturbed.records, strict=True):
        assert [event.v_plus.tolist() for event in left.events] == [event.v_plus.tolist() for event in right.events]
    assert len(list(out.glob("rollout_*.npz"))) == 2


def test_loading_results_that_do_not_exist_or_are_not_results_names_the_file(tmp_path: Path) -> None:
    """A missing file, a file of garbage bytes, an ``.npz`` of other arrays and a directory (a
    run's ``out``): each error names the path (the last says how a run directory is read)."""
    missing = tmp_path / "nothere.npz"
    with pytest.raises(FileNotFoundError, match=r"nothere\.npz"):
        RolloutResults.load(missing)
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip archive")
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, weights=np.zeros(3))
    for path in (garbage, foreign):
        with pytest.raises(ValueError, match=rf"{path.name} is not a RolloutResults file written by save\(\)"):
            RolloutResults.load(path)
    with pytest.raises(ValueError, match=r"is a directory, not a file written by save\(\); a results directory of monte_carlo\(out=...\)"):
        RolloutResults.load(tmp_path)  # a run's out directory: the message says how it is read back


# ------------------------------------------------------------------------------ CLI
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", SCENARIO, "--rollouts", "-1"], "expected a positive integer, got -1"),
        (["run", SCENARIO, "--law", "newton"], "invalid choice: 'newton'"),
        (["run", SCENARIO, "--duration", "nan"], "expected a positive number, got 'nan'"),
        (["outcome-set", "rocking_block", "--samples", "0"], "expected a positive integer, got 0"),
        (["outcome-set", "rocking_block", "--sampler", "halton"], "invalid choice: 'halton'"),
        (["outcome-set", "rocking_block", "--restitution", "1.5"], "expected a number in [0, 1], got '1.5'"),
        (["render", SCENARIO, "--out", "x.gif", "--frames", "0"], "expected a positive integer, got 0"),
        (["render", SCENARIO], "the following arguments are required: --out"),
        (["list", "rocking_block", "extra"], "unrecognized arguments: extra"),
        (["fly"], "invalid choice: 'fly'"),
    ],
)
def test_cli_argument_errors_exit_2_with_usage_and_no_traceback(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """argparse refuses these before anything runs: exit code 2, the usage line and the reason."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert message in error and "usage: bullet-setimpact" in error
    assert "Traceback" not in error


def test_render_refuses_zero_frames_before_simulating(tmp_path: Path) -> None:
    out = tmp_path / "drop.gif"
    with pytest.raises(ValueError, match="frames must be an integer >= 1, got 0"):
        render(SCENARIO, out, frames=0)
    assert not out.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["outcome-set", "rocking_block", "--samples", "64", "--plot", "{blocked}/x.png"],
        ["outcome-set", "rocking_block", "--samples", "64", "--out", "{blocked}/x.npz"],
        ["run", SCENARIO, "--rollouts", "1", "--workers", "1", "--plot", "{blocked}/x.png"],
        ["run", SCENARIO, "--rollouts", "1", "--workers", "1", "--out", "{blocked}/results"],
        ["render", SCENARIO, "--out", "{blocked}/drop.gif"],
    ],
)
def test_cli_outputs_that_cannot_be_written_are_refused_before_any_work(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """An output under a path whose folder is a file cannot be written: every command must say so
    at once (exit 2, one line naming the option, the path and the file in the way), before it
    samples, rolls out or renders anything (nothing on stdout, no file made)."""
    blocked = tmp_path / "afile"
    blocked.write_text("in the way")
    argv = [part.format(blocked=blocked) for part in command]
    option = next(part for part in argv if part in ("--plot", "--out") and argv[argv.index(part) + 1].startswith(str(blocked)))
    path = argv[argv.index(option) + 1]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == f"bullet-setimpact: error: {option} {path!r}: {str(blocked)!r} is a file, not a folder\n"
    assert captured.out == ""
    assert sorted(tmp_path.iterdir()) == [blocked]


def test_cli_output_folder_that_refuses_files_and_a_folder_given_as_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder the probe file cannot be opened in (here ``tempfile.TemporaryFile`` raising EACCES:
    the tests may run as root, whom permissions do not stop) is refused naming the folder and the
    reason; an ``--out`` naming an existing folder where a file is expected is refused too."""
    error = _cli_error(["outcome-set", "rocking_block", "--samples", "64", "--out", str(tmp_path)], capsys)
    assert error == f"bullet-setimpact: error: --out {str(tmp_path)!r} is a folder, expected a file name\n"

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("bullet_setimpact.cli.tempfile.TemporaryFile", refuse)
    plot = tmp_path / "new" / "x.png"
    error = _cli_error(["outcome-set", "rocking_block", "--samples", "64", "--plot", str(plot)], capsys)
    assert error == f"bullet-setimpact: error: --plot {str(plot)!r}: cannot write in {str(tmp_path)!r} (Permission denied)\n"
    assert not (tmp_path / "new").exists()


def test_cli_names_the_folders_it_will_create_for_an_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Missing folders of an output are created when it is written, and said at the start on stderr."""
    plot = tmp_path / "figures" / "today" / "x.png"
    assert main(["outcome-set", "rocking_block", "--samples", "64", "--plot", str(plot)]) == 0
    assert capsys.readouterr().err.startswith(f"bullet-setimpact: --plot will create the folder {plot.parent}\n")
    assert plot.is_file()


@pytest.mark.parametrize("command", ["run", "outcome-set", "render"])
def test_cli_unknown_option_shows_the_usage_of_its_subcommand(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An option no subcommand knows is refused with that subcommand's usage (argparse alone shows
    the top-level one), naming the option."""
    with pytest.raises(SystemExit) as exit_info:
        main([command, "rocking_block", "--out", "x.gif", "--frobnicate"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert f"usage: bullet-setimpact {command} " in error
    assert error.endswith(f"bullet-setimpact {command}: error: unrecognized arguments: --frobnicate\n")


def test_cli_render_refuses_a_bad_suffix_before_checking_its_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``render --out <missing folder>/x.jpg`` is refused for its suffix alone: no word of a folder to create, none created."""
    out = tmp_path / "missing" / "x.jpg"
    error = _cli_error(["render", SCENARIO, "--out", str(out)], capsys)
    assert error == f"bullet-setimpact: error: --out must end in .gif or .png, got {str(out)!r}\n"
    assert not out.parent.exists()


class _Unsolvable(ImpactLaw):
    """A law whose every LCP fails, as HiGHS stopping at its time limit does."""

    name = "unsolvable"

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        raise LCPSolverError("the mixed-integer LCP solve (HiGHS) stopped without an answer")


def test_a_fallback_that_raises_is_an_impact_failure_naming_both_laws() -> None:
    """``on_failure="fallback"`` promises an ``ImpactFailure`` when the fallback fails too; a
    fallback that raises (rather than returning a rejected outcome) keeps that promise, with
    both reasons and the fallback's exception as the cause."""
    example = planar.rocking_block()
    checked = CheckedLaw(_Unsolvable(), _Unsolvable())
    with pytest.raises(
        ImpactFailure, match=r"unsolvable failed \(LCPSolverError: .*\) and so did the unsolvable fallback \(LCPSolverError"
    ) as info:
        checked.check(example.problem, example.v_minus, rng=0)
    assert isinstance(info.value.__cause__, LCPSolverError)


@pytest.mark.parametrize(("directions", "fragment"), [(5, "even integer >= 4 for spatial contacts, got 5"), (2, "got 2")])
def test_routh_friction_directions_are_checked_when_given(directions: int, fragment: str) -> None:
    """A count spatial contacts cannot use fails at construction, not at the first 3-D impact."""
    with pytest.raises(ValueError, match=fragment):
        RouthImpact("auto", 50, friction_directions=directions)


@pytest.mark.parametrize(
    ("bodies", "fragment"), [(5, r"bodies must be an iterable of body ids \(e.g. \[robot\]\), got 5"), (["a"], "got \\['a'\\]")]
)
def test_simulator_bodies_must_be_body_ids(client: int, bodies: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        ImpactSimulator("routh", client=client, bodies=bodies)


def test_cli_step_takes_auto(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--step auto`` is RouthImpact's own default, accepted like a number."""
    main(["run", "rocking_block", "--rollouts", "1", "--workers", "1", "--step", "auto", "--out", str(tmp_path / "run")])
    assert "RouthImpact(step='auto', max_steps=50" in capsys.readouterr().out
