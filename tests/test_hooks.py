"""``hook``/``install``/``uninstall``: ``pybullet.stepSimulation`` itself resolves impacts with a law.

The first test runs user code that never mentions the package (tests/unmodified_code.py)
in a fresh interpreter, so that its module-level ``p.stepSimulation()`` without a client id
steps client 0.  The others hook clients of this process.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pybullet as p
import pybullet_data
import pytest

import bullet_setimpact
from bullet_setimpact import AnitescuPotraImpact, ImpactSimulator, JointAxisWarning, RouthImpact, data_path, hook, install, uninstall
from bullet_setimpact.bullet import simulator
from bullet_setimpact.hooks import ORIGINAL_STEP, hooked_clients

TESTS = Path(__file__).resolve().parent

#: Runs tests/unmodified_code.py on client 0 (the pybullet module) and a BulletClient, both
#: hooked with their own law and seed, then the explicit loop on fresh clients; asserts.
DRIVER = """
import numpy as np
import pybullet
from pybullet_utils.bullet_client import BulletClient

import bullet_setimpact
from bullet_setimpact import AnitescuPotraImpact, ImpactSimulator, RouthImpact
import unmodified_code as user

STEPS = 480  # 2 s at 240 Hz: the fall (0.3 s) and the landing's impacts
original = pybullet.stepSimulation
assert pybullet.connect(pybullet.DIRECT) == 0
other = BulletClient(pybullet.DIRECT)
laws = {0: (RouthImpact("auto", 50), 7, 0.15), other._client: (AnitescuPotraImpact(), 3, 0.25)}
bodies = {0: user.make_world(pybullet, 0.15), other._client: user.make_world(other, 0.25)}
with (
    bullet_setimpact.hook(laws[0][0], client=0, seed=7) as routh,
    bullet_setimpact.hook(laws[other._client][0], client=other, seed=3) as anitescu,  # a BulletClient
):
    from pybullet import stepSimulation  # after installation: the wrapper that routes the hooked clients
    assert stepSimulation is pybullet.stepSimulation is not original
    user.run(pybullet, STEPS)
    user.run(other, STEPS)
assert pybullet.stepSimulation is original, pybullet.stepSimulation
assert "stepSimulation" not in vars(BulletClient)
# the hooks' simulators are closed: no simulator follows the world, every function is PyBullet's
from bullet_setimpact.bullet import following
assert all(getattr(pybullet, name) is following.ORIGINALS[name] for name in following.WRAPPED)
assert not any(name in vars(BulletClient) for name in following.WRAPPED)
hooked = {0: (routh, user.state(pybullet, bodies[0])), other._client: (anitescu, user.state(other, bodies[other._client]))}

for cid, (law, seed, tilt) in laws.items():
    sim, final = hooked[cid]
    assert len(sim.events) >= 2, len(sim.events)
    # v_plus is the law's: the same law, fed the recorded problems in order with a generator
    # seeded as the simulator's, gives every event's v_plus again
    rng = np.random.default_rng(seed)
    for event in sim.events:
        assert event.law == law.name and not event.failure
        np.testing.assert_array_equal(law.resolve(event.problem, event.v_minus, rng=rng).v_plus, event.v_plus)
    # the explicit loop on a fresh client: identical events and final state
    fresh = BulletClient(pybullet.DIRECT)
    body = user.make_world(fresh, tilt)
    explicit = ImpactSimulator(law, client=fresh._client, seed=seed)
    for _ in range(STEPS):
        explicit.step()
    assert [e.time for e in explicit.events] == [e.time for e in sim.events]
    for a, b in zip(explicit.events, sim.events, strict=True):
        np.testing.assert_array_equal(a.v_plus, b.v_plus)
    assert user.state(fresh, body) == final
    # plain Bullet, unhooked, ends elsewhere: the hook changed the physics
    plain = BulletClient(pybullet.DIRECT)
    body = user.make_world(plain, tilt)
    user.run(plain, STEPS)
    assert user.state(plain, body) != final
    print(cid, law.name, len(sim.events))
"""


@pytest.mark.subprocess
def test_unmodified_code_inside_hook_equals_explicit_loop() -> None:
    """Module-level ``p.stepSimulation()`` (client 0) and ``BulletClient.stepSimulation()``,
    hooked side by side with a Routh and an Anitescu-Potra law: events recorded, each
    ``v_plus`` the law's own output, events and final state identical to the explicit
    ``ImpactSimulator`` loop, different from plain Bullet, and ``pybullet.stepSimulation``
    is the original again afterwards."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(Path(bullet_setimpact.__file__).parents[1])])}
    done = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert any(line.startswith("0 routh ") for line in lines) and any(" anitescu-potra " in line for line in lines), done.stdout


def _drop(client: int, tilt: float = 0.2) -> int:
    """The shipped box ground and the free 1 m cube (sliding_box.urdf), tilted, its centre 1.2 m up; returns the cube."""
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    p.loadURDF(f"{data_path()}/ground_box.urdf", useFixedBase=True, physicsClientId=client)
    orientation = p.getQuaternionFromEuler([tilt, tilt, 0.0])
    return p.loadURDF(f"{data_path()}/sliding_box.urdf", [0.0, 0.0, 1.2], orientation, physicsClientId=client)


@pytest.fixture
def clients() -> list[int]:
    """Three fresh clients with the same world, disconnected afterwards (if still connected)."""
    ids = [p.connect(p.DIRECT) for _ in range(3)]
    for cid in ids:
        _drop(cid)
    yield ids
    for cid in ids:
        if p.isConnected(physicsClientId=cid):
            p.disconnect(physicsClientId=cid)


def _pose(client: int) -> tuple:
    return p.getBasePositionAndOrientation(1, physicsClientId=client) + p.getBaseVelocity(1, physicsClientId=client)


def test_only_the_hooked_client_is_intercepted(clients: list[int]) -> None:
    """Inside the hook, another client steps exactly as plain Bullet (compared with a third,
    stepped after the hook), while the hooked one records events."""
    hooked, passed, plain = clients
    with hook(RouthImpact("auto", 50), client=hooked, seed=0) as sim:
        for _ in range(240):
            p.stepSimulation(physicsClientId=hooked)
            p.stepSimulation(physicsClientId=passed)
    for _ in range(240):
        p.stepSimulation(physicsClientId=plain)
    assert sim.events and _pose(passed) == _pose(plain) and _pose(hooked) != _pose(plain)


@pytest.mark.parametrize("simulator_alive", [False, True])
def test_simulator_steps_never_enter_the_hook(clients: list[int], simulator_alive: bool) -> None:
    """A counting wrapper installed as ``pybullet.stepSimulation`` before the hook sees only
    the unhooked client's calls (the simulator steps Bullet directly), and is exactly what
    ``pybullet.stepSimulation`` is again after the hook; also when a simulator of another
    client lived before the wrapper was installed (PyBullet's functions were then already
    wrapped, and the hook must still reach its client's steps)."""
    calls: list[int] = []

    def counting(physicsClientId: int = 0) -> object:
        calls.append(physicsClientId)
        return ORIGINAL_STEP(physicsClientId=physicsClientId)

    alive = ImpactSimulator(RouthImpact("auto", 50), client=clients[2], seed=0) if simulator_alive else None
    p.stepSimulation = counting
    try:
        with hook(RouthImpact("auto", 50), client=clients[0], seed=0) as sim:
            for _ in range(120):
                p.stepSimulation(physicsClientId=clients[0])
            p.stepSimulation(physicsClientId=clients[1])
        assert p.stepSimulation is counting
    finally:
        p.stepSimulation = ORIGINAL_STEP
        if alive is not None:
            alive.close()
    assert sim.events and calls == [clients[1]]
    assert simulator.bullet_step_simulation is ORIGINAL_STEP


def test_exception_restores_and_double_hook_is_an_error(clients: list[int]) -> None:
    """Hooking a hooked client again is a RuntimeError naming it; an exception leaving the
    block restores ``pybullet.stepSimulation`` and unhooks every client."""
    original = p.stepSimulation

    def nested() -> None:
        with hook(AnitescuPotraImpact(), client=clients[0]):
            with pytest.raises(RuntimeError, match=f"client {clients[0]} is already hooked"):
                install(AnitescuPotraImpact(), client=clients[0])
            with hook(AnitescuPotraImpact(), client=clients[1]):
                assert hooked_clients() == sorted(clients[:2])
                raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        nested()
    assert p.stepSimulation is original and hooked_clients() == []
    with pytest.raises(ValueError, match=f"client {clients[0]} is not hooked"):
        uninstall(clients[0])


def test_disconnect_inside_the_hook(clients: list[int]) -> None:
    """A client disconnected inside the block steps as plain PyBullet does (``pybullet.error``),
    and leaving the block still restores everything."""
    original = p.stepSimulation
    with hook(RouthImpact("auto", 50), client=clients[0], seed=0):
        p.stepSimulation(physicsClientId=clients[0])
        p.disconnect(physicsClientId=clients[0])
        with pytest.raises(p.error, match="Not connected"):
            p.stepSimulation(physicsClientId=clients[0])
    assert p.stepSimulation is original and hooked_clients() == []


def test_install_uninstall_equal_the_explicit_loop(clients: list[int]) -> None:
    """``install``/``uninstall`` (no ``with``) give the explicit loop's events on a twin world."""
    sim = install(RouthImpact("auto", 50), client=clients[0], seed=5)
    try:
        for _ in range(240):
            p.stepSimulation(physicsClientId=clients[0])
    finally:
        assert uninstall(clients[0]) is sim
    explicit = ImpactSimulator(RouthImpact("auto", 50), client=clients[1], seed=5)
    for _ in range(240):
        explicit.step()
    assert len(sim.events) >= 1 and [e.time for e in sim.events] == [e.time for e in explicit.events]
    assert all(np.array_equal(a.v_plus, b.v_plus) for a, b in zip(sim.events, explicit.events, strict=True))
    assert _pose(clients[0]) == _pose(clients[1])


@pytest.mark.subprocess
def test_gym_example_runs(tmp_path: Path) -> None:
    """examples/gym_rocking_block.py runs its unmodified environment plainly and hooked
    (3 seeds) and writes its figure."""
    script = TESTS.parent / "examples" / "gym_rocking_block.py"
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(Path(bullet_setimpact.__file__).parents[1])}
    command = [sys.executable, str(script), "--seeds", "3", "--steps", "30", "--out", str(tmp_path / "fig.png")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "plain Bullet" in done.stdout and (tmp_path / "fig.png").stat().st_size > 0


def test_hook_of_every_client_follows_new_clients() -> None:
    """``hook(law, seed=...)`` without a client: two clients connected inside the block (one by
    ``p.connect``, one a ``BulletClient``), each with the same world, are hooked as they
    connect; each has its own seed stream, so their sampled outcomes differ, and ``h.events``
    merges both in time order naming each client.  A second run reproduces every event.
    Disconnecting one inside the block unhooks it and keeps its events; the block ends cleanly."""
    from pybullet_utils.bullet_client import BulletClient

    runs = []
    for _ in range(2):
        with hook("routh", seed=11) as h:
            first = p.connect(p.DIRECT)
            second = BulletClient(p.DIRECT)
            ids = {first, second._client}
            _drop(first)
            _drop(second._client)
            assert set(h.simulators) >= {first, second._client}
            for _ in range(240):
                p.stepSimulation(physicsClientId=first)
                second.stepSimulation()
            p.disconnect(physicsClientId=first)
            assert first not in h.simulators and second._client in h.simulators
            second.disconnect()
        runs.append(h.events)
        assert {event.client for event in h.events} == ids and not h.simulators
    events = runs[0]
    assert [e.time for e in events] == sorted(e.time for e in events)
    by_client: dict[int, list] = {}
    for event in events:
        by_client.setdefault(event.client, []).append(event)
    assert len(by_client) == 2
    a, b = by_client.values()
    assert [e.v_plus.tobytes() for e in a] != [e.v_plus.tobytes() for e in b]  # own seed streams
    assert [(e.time, e.client, e.v_plus.tobytes()) for e in runs[0]] == [(e.time, e.client, e.v_plus.tobytes()) for e in runs[1]]


def test_hook_messages(clients: list[int]) -> None:
    """A misspelled option names the hook and lists the valid ones; a law given by name is
    accepted; an error raised while stepping a hooked client names the hook and the client."""
    misspelled = r"bullet_setimpact.hook\(\) got an unknown option 'contact_tol'; did you mean 'contact_tolerance'"
    with pytest.raises(TypeError, match=misspelled), hook("routh", client=clients[0], contact_tol=1e-4):
        pass
    with pytest.raises(ValueError, match="unknown law 'ruth'") as unknown, hook("ruth", client=clients[0]):
        pass
    assert any(
        f"bullet_setimpact's hook built the ImpactSimulator of PyBullet client {clients[0]}" in note for note in unknown.value.__notes__
    )
    with hook("routh", client=clients[0], seed=0) as sim:
        assert sim.law.name == "routh"
        p.resetBaseVelocity(1, [float("nan"), 0.0, 0.0], physicsClientId=clients[0])
        with pytest.raises(ValueError, match="NaN or inf") as raised:
            p.stepSimulation(physicsClientId=clients[0])
    assert any(f"bullet_setimpact.hook on PyBullet client {clients[0]}" in note for note in raised.value.__notes__)


def test_a_hooked_simulator_closed_inside_the_block(clients: list[int]) -> None:
    """``ImpactSimulator.close`` is public: a hooked simulator closed inside the block follows the
    world again at its next step and keeps receiving the hooked client's steps (called with the
    client id by position here), with the events of a twin world hooked without the close and
    its resting steps still skipped.  After the block every PyBullet function is the original,
    and a later hook's unhooked client steps as plain Bullet (the same pose as a third client
    stepped plain)."""
    gc.collect()  # the simulators earlier tests left are finalized now, not inside this test
    original = p.stepSimulation
    with hook(RouthImpact("auto", 50), client=clients[0], seed=0) as closed:
        for index in range(240):
            if index == 10:
                closed.close()
            p.stepSimulation(clients[0])
    with hook(RouthImpact("auto", 50), client=clients[1], seed=0) as kept:
        for _ in range(240):
            p.stepSimulation(clients[1])
    assert p.stepSimulation is original and hooked_clients() == []
    assert closed.events and [e.time for e in closed.events] == [e.time for e in kept.events]
    assert all(np.array_equal(a.v_plus, b.v_plus) for a, b in zip(closed.events, kept.events, strict=True))
    assert closed.budget_steps == kept.budget_steps > 0
    other = p.connect(p.DIRECT)
    try:
        _drop(other)
        with hook(RouthImpact("auto", 50), client=clients[0], seed=0):
            for _ in range(120):
                p.stepSimulation(physicsClientId=other)
                ORIGINAL_STEP(physicsClientId=clients[2])
        assert _pose(other) == _pose(clients[2])
    finally:
        p.disconnect(physicsClientId=other)


def test_a_warning_in_a_hooked_step_names_the_users_line(clients: list[int]) -> None:
    """pybullet_data's MJCF ant loaded inside a hook block: the next hooked ``stepSimulation``
    models the world anew and warns of the ant's skewed joint axes (:class:`JointAxisWarning`).
    The warning names this file, the line that stepped, not a frame of the hook or of the
    simulator in between, however many there are (:func:`bullet_setimpact.errors.warn`)."""
    client = clients[0]
    with hook(RouthImpact("auto", 50), client=client):
        p.loadMJCF(str(Path(pybullet_data.getDataPath()) / "mjcf" / "ant.xml"), physicsClientId=client)
        with pytest.warns(JointAxisWarning) as caught:
            p.stepSimulation(physicsClientId=client)
    assert {warning.filename for warning in caught if issubclass(warning.category, JointAxisWarning)} == {__file__}


def test_a_warning_on_entering_a_hook_names_the_with_line(clients: list[int]) -> None:
    """The ant loaded before ``with hook(..., client=...)``: the simulator made on entering the
    block warns of its axes.  The warning names this file's ``with`` line, past ``contextlib``'s
    ``__enter__`` that runs the hook's generator."""
    client = clients[0]
    p.loadMJCF(str(Path(pybullet_data.getDataPath()) / "mjcf" / "ant.xml"), physicsClientId=client)
    with pytest.warns(JointAxisWarning) as caught, hook(RouthImpact("auto", 50), client=client):
        pass
    assert {warning.filename for warning in caught if issubclass(warning.category, JointAxisWarning)} == {__file__}
