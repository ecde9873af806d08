"""Joint motors through the steps the simulator splits at an impact (:mod:`bullet_setimpact.bullet.motors`).

The worlds: a ball dropped at 1 m/s onto a box ground 0.5 mm below it, so that the first step
is split at its impact (localization, then the rest of the step), and beside it a fixed-base
arm, one link turning about the vertical axis (gravity exerts no torque on it), whose motor is
what is measured.  Its joint-space inertia ``I`` is ``calculateMassMatrix``'s: a link of 2 kg
with its centre of mass 0.3 m from the axis and no collision shape, from which PyBullet would
compute its own inertia (it has none), so ``I = 2 * 0.3**2 = 0.18`` kg m^2 (checked).  Its
velocity damping (PyBullet's 0.04 for a multibody) is off: it brakes in proportion to the
velocity, which the numbers below leave out.

Bullet's motor is one constraint row a step of ``h``: reach
``V = kp (q* - q) / h + qdot + kd (qdot* - qdot)`` with an impulse of at most ``force * h``
(``btMultiBodyJointMotor::createConstraintRows``).  Each expected number below follows from it
with the arm alone on its row: saturated, the impulse is the cap, ``d qdot = force dt / I``;
unsaturated, the row is met, ``qdot = V``.  Plain Bullet's whole step is checked against the
same numbers, so the premises are Bullet's, not the package's.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator

import numpy as np
import pybullet as p
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bullet_setimpact import ImpactSimulator, UnknownMotorWarning
from bullet_setimpact.bullet import following
from bullet_setimpact.bullet.following import MotorCall
from bullet_setimpact.bullet.motors import DEFAULT_FORCE, LOAD_MOTOR_IMPULSE, Motor, commanded, load_motor_force

from .drop_worlds import assert_unfollowed

DT = 1.0 / 240.0
#: The arm's joint-space inertia (module docstring).
INERTIA = 2.0 * 0.3**2


def _arm_world(client: int, height: float = 0.1005) -> int:
    """The ball about to strike the ground (its centre ``height`` above it), and the arm (module
    docstring); returns the arm."""
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    ground = p.createCollisionShape(p.GEOM_BOX, halfExtents=[5, 5, 0.5], physicsClientId=client)
    p.createMultiBody(0, ground, basePosition=[0, 0, -0.5], physicsClientId=client)
    ball = p.createMultiBody(
        1.0, p.createCollisionShape(p.GEOM_SPHERE, radius=0.1, physicsClientId=client), basePosition=[0, 0, height], physicsClientId=client
    )
    p.resetBaseVelocity(ball, [0, 0, -1.0], physicsClientId=client)
    arm = p.createMultiBody(
        0,
        -1,
        basePosition=[3, 0, 1],
        linkMasses=[2.0],
        linkCollisionShapeIndices=[-1],
        linkVisualShapeIndices=[-1],
        linkPositions=[[0, 0, 0]],
        linkOrientations=[[0, 0, 0, 1]],
        linkInertialFramePositions=[[0.3, 0, 0]],
        linkInertialFrameOrientations=[[0, 0, 0, 1]],
        linkParentIndices=[0],
        linkJointTypes=[p.JOINT_REVOLUTE],
        linkJointAxis=[[0, 0, 1]],
        physicsClientId=client,
    )
    p.changeDynamics(arm, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    return arm


def _joint(client: int, arm: int) -> tuple[float, float]:
    q, qdot = p.getJointState(arm, 0, physicsClientId=client)[:2]
    return q, qdot


def _split_step(simulator: ImpactSimulator) -> None:
    """A step of the simulator which the ball's impact splits (checked)."""
    start = simulator.time
    events = simulator.step()
    assert len(events) == 1 and start < events[0].time < start + DT


@pytest.fixture
def world() -> Iterator[tuple[int, ImpactSimulator, int]]:
    """A client with the simulator made first (so the arm's load is followed), then the world."""
    client = p.connect(p.DIRECT)
    simulator = ImpactSimulator("routh", client, seed=0)
    try:
        arm = _arm_world(client)
        assert np.array(p.calculateMassMatrix(arm, [0.0], physicsClientId=client))[0, 0] == pytest.approx(INERTIA, rel=1e-12)
        yield client, simulator, arm
    finally:
        simulator.close()
        p.disconnect(client)


def _plain(command: dict, **parameters: float) -> tuple[float, float]:
    """The arm's joint after one plain Bullet step under ``command`` (the premise's check), in a
    world with the engine ``parameters`` given."""
    client = p.connect(p.DIRECT)
    try:
        arm = _arm_world(client)
        p.setPhysicsEngineParameter(physicsClientId=client, **parameters)
        if command:
            p.setJointMotorControl2(arm, 0, physicsClientId=client, **command)
        p.stepSimulation(physicsClientId=client)
        return _joint(client, arm)
    finally:
        p.disconnect(client)


SATURATED = {"controlMode": p.POSITION_CONTROL, "targetPosition": 1.0, "force": 0.5}


def test_a_saturated_position_motor_applies_its_limit_once_over_a_split_step(world: tuple[int, ImpactSimulator, int]) -> None:
    """Target 1 rad from rest: ``V = 0.1 * 1 / dt = 24`` rad/s needs ``24 I = 4.3`` N s, the cap is
    ``0.5 dt = 0.002`` N s, so the motor is saturated and ``d qdot = 0.5 dt / I`` over the step,
    split or not.  (Each part keeping the whole step's cap would double it.)  The next whole
    step runs the user's motor again: the same increment once more."""
    client, simulator, arm = world
    expected = SATURATED["force"] * DT / INERTIA
    assert _plain(SATURATED)[1] == pytest.approx(expected, rel=1e-9)
    p.setJointMotorControl2(arm, 0, physicsClientId=client, **SATURATED)
    _split_step(simulator)
    assert _joint(client, arm)[1] == pytest.approx(expected, rel=1e-9)
    simulator.step()
    assert _joint(client, arm)[1] == pytest.approx(2 * expected, rel=1e-9)


@pytest.mark.parametrize("force", [0.5, 1e4])
def test_motors_in_substeps_act_as_in_bullets_substeps_over_a_split_step(force: float, world: tuple[int, ImpactSimulator, int]) -> None:
    """The world stepped at ``4 dt`` in 4 substeps: Bullet runs each substep's motor row at
    ``h = dt`` with the cap ``force * 4 dt`` the command fixed, target 1 rad from rest, ``kp = 0.1``,
    ``kd = 1``.  Saturated (force 0.5: ``V = 0.1 / dt = 24`` rad/s needs 4.3 N s, the cap is
    0.0083 N s), each substep adds ``0.5 * 4 dt / I``: 16 times a single step's increment over
    the step.  Unsaturated (force 1e4), each substep meets ``V = 0.1 (1 - q) / h`` (``qdot`` cancels
    with ``kd = 1``) and moves ``q`` by ``h V``, so ``1 - q`` shrinks by 0.9 a substep:
    ``q = 1 - 0.9^4`` and ``qdot = 0.1 * 0.9^3 / dt`` after the step.  Plain Bullet's step gives
    both; so does the simulator's, whose first substep the ball's impact (0.5 mm above the
    ground at 1 m/s) splits: the substep's motor is held through its parts with its cap."""
    client, simulator, arm = world
    command = {**SATURATED, "force": force}
    substeps = {"fixedTimeStep": 4 * DT, "numSubSteps": 4}
    if force == 0.5:
        expected_q, expected_qdot = None, 16 * force * DT / INERTIA
    else:
        expected_q, expected_qdot = 1.0 - 0.9**4, 0.1 * 0.9**3 / DT
    results = [_plain(command, **substeps)]
    p.setPhysicsEngineParameter(physicsClientId=client, **substeps)
    p.setJointMotorControl2(arm, 0, physicsClientId=client, **command)
    start = simulator.time
    (event,) = simulator.step()
    assert start < event.time < start + DT  # in the first substep
    results.append(_joint(client, arm))
    for q, qdot in results:
        assert qdot == pytest.approx(expected_qdot, rel=1e-9)
        if expected_q is not None:
            assert q == pytest.approx(expected_q, rel=1e-9)
    assert p.getPhysicsEngineParameters(physicsClientId=client)["numSubSteps"] == 4
    assert p.getPhysicsEngineParameters(physicsClientId=client)["fixedTimeStep"] == 4 * DT


def test_the_same_time_step_set_again_keeps_the_motor_known(world: tuple[int, ImpactSimulator, int]) -> None:
    """``setTimeStep`` with the time step the world already has leaves Bullet's cap as it was
    (``force * dt``), so the motor stays known and held: ``d qdot = 0.5 dt / I`` over the split
    step, as in :func:`test_a_saturated_position_motor_applies_its_limit_once_over_a_split_step`."""
    client, simulator, arm = world
    p.setJointMotorControl2(arm, 0, physicsClientId=client, **SATURATED)
    p.setTimeStep(DT, physicsClientId=client)
    _split_step(simulator)
    assert _joint(client, arm)[1] == pytest.approx(SATURATED["force"] * DT / INERTIA, rel=1e-9)


def test_an_unsaturated_position_motor_reaches_the_whole_steps_velocity(world: tuple[int, ImpactSimulator, int]) -> None:
    """Force 1e4 (cap 42 N s, ``24 I = 4.3`` N s needed): the row is met, ``qdot = V = kp (q* - q0) / dt + qdot0 + kd (0 - qdot0)
    = 0.1 * 1 / dt = 24`` rad/s after the split step (held in every part; recomputed with a
    part's ``h`` it would overshoot).  The next whole step: ``V`` from the state the split step
    left, with the user's gains."""
    client, simulator, arm = world
    command = {"controlMode": p.POSITION_CONTROL, "targetPosition": 1.0, "force": 1e4}
    assert _plain(command)[1] == pytest.approx(0.1 / DT, rel=1e-9)
    p.setJointMotorControl2(arm, 0, physicsClientId=client, **command)
    _split_step(simulator)
    q1, qdot1 = _joint(client, arm)
    assert qdot1 == pytest.approx(0.1 / DT, rel=1e-9)
    simulator.step()
    assert _joint(client, arm)[1] == pytest.approx(0.1 * (1.0 - q1) / DT + qdot1 + 1.0 * (0.0 - qdot1), rel=1e-9)


def test_velocity_control_through_the_array_command_reaches_its_target(world: tuple[int, ImpactSimulator, int]) -> None:
    """``setJointMotorControlArray`` in ``VELOCITY_CONTROL``, target 3 rad/s, gain 1, force 1e4:
    ``V = qdot + 1 (3 - qdot) = 3`` rad/s, met (``3 I = 0.54`` N s, under the cap)."""
    client, simulator, arm = world
    p.setJointMotorControlArray(
        arm, [0], p.VELOCITY_CONTROL, targetVelocities=np.array([3.0]), forces=np.array([1e4]), physicsClientId=client
    )
    _split_step(simulator)
    assert _joint(client, arm)[1] == pytest.approx(3.0, rel=1e-9)


def test_the_load_time_motor_brakes_one_newton_second_per_split_step(world: tuple[int, ImpactSimulator, int]) -> None:
    """Never commanded, the arm's joint keeps the motor Bullet gives it at load: target 0 rad/s
    with an impulse of 1 N s a step.  Spinning at 20 rad/s (``20 I = 3.6`` N s to stop), it is
    saturated (and still is at the next step): ``d qdot = -1 / I`` over the split step and again over the next."""
    client, simulator, arm = world
    p.resetJointState(arm, 0, 0.0, 20.0, physicsClientId=client)
    _split_step(simulator)
    assert _joint(client, arm)[1] == pytest.approx(20.0 - LOAD_MOTOR_IMPULSE / INERTIA, rel=1e-9)
    simulator.step()
    assert _joint(client, arm)[1] == pytest.approx(20.0 - 2 * LOAD_MOTOR_IMPULSE / INERTIA, rel=1e-9)


def test_a_maximum_velocity_clamps_the_held_target_and_outlasts_the_split_step(world: tuple[int, ImpactSimulator, int]) -> None:
    """``maxVelocity=2`` clamps ``V`` (24 rad/s unclamped) to 2 rad/s.  A later position command
    without one keeps it, as Bullet does; the hold's velocity motor would clear it, so it is set
    again after the split step: the next whole step is clamped too."""
    client, simulator, arm = world
    command = {"controlMode": p.POSITION_CONTROL, "targetPosition": 1.0, "force": 1e4}
    p.setJointMotorControl2(arm, 0, maxVelocity=2.0, physicsClientId=client, **command)
    p.setJointMotorControl2(arm, 0, physicsClientId=client, **command)
    _split_step(simulator)
    assert _joint(client, arm)[1] == pytest.approx(2.0, rel=1e-9)
    simulator.step()
    assert _joint(client, arm)[1] == pytest.approx(2.0, rel=1e-9)


def _spy_motor_commands(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The ``(command, body)`` of every motor command the simulator issues from now on."""
    issued: list[tuple[str, int]] = []
    for name in ("setJointMotorControl2", "setJointMotorControlArray"):
        original = following.ORIGINALS[name]

        def spy(*args: object, name: str = name, original: object = original, **kwargs: object) -> object:
            issued.append((name, int(args[0])))  # type: ignore[call-overload]
            return original(*args, **kwargs)  # type: ignore[operator]

        monkeypatch.setitem(following.ORIGINALS, name, spy)
    return issued


@pytest.mark.parametrize("case", ["loaded before", "another time step"])
def test_motors_not_known_are_left_as_bullet_runs_them(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No motor command is issued for the arm through its split step when its motor is not
    known: loaded before any simulator followed the client and never commanded since (a
    torque-controlled robot's code disables the load-time motor); or a command given at another
    time step (its cap was fixed at that step: ``force * dt`` then, not now).  A motor commanded
    afterwards at the current time step is held, and issued again after the step."""
    assert_unfollowed()
    client = p.connect(p.DIRECT)
    try:
        if case == "loaded before":
            arm = _arm_world(client)
            simulator = ImpactSimulator("routh", client, seed=0)
        else:
            simulator = ImpactSimulator("routh", client, seed=0)
            arm = _arm_world(client)
            p.setJointMotorControl2(arm, 0, physicsClientId=client, **SATURATED)
            p.setPhysicsEngineParameter(fixedTimeStep=DT / 2, physicsClientId=client)
        issued = _spy_motor_commands(monkeypatch)
        _split_step(simulator)
        assert not issued
        p.setJointMotorControl2(arm, 0, physicsClientId=client, **SATURATED)
        p.resetBasePositionAndOrientation(1, [0, 0, 0.1005], [0, 0, 0, 1], physicsClientId=client)
        p.resetBaseVelocity(1, [0, 0, -1.0], physicsClientId=client)
        _split_step(simulator)
        assert ("setJointMotorControlArray", arm) in issued and ("setJointMotorControl2", arm) in issued
        simulator.close()
    finally:
        p.disconnect(client)


@pytest.mark.parametrize(("case", "warns"), [("load-time motor", True), ("switched off", False), ("substeps", False)])
def test_an_active_motor_left_alone_is_reported_once(case: str, warns: bool) -> None:
    """The arm loaded before the simulator, its joint spinning at 20 rad/s, the ball 6 mm above
    the ground (it strikes in the second step).  In the first step the load-time motor brakes
    the joint, so the split second step finds an active motor it does not know: an
    :class:`UnknownMotorWarning` naming the joint, once.  Switched off before the simulator
    (``VELOCITY_CONTROL``, ``force=0``, as torque control needs), the motor applies no torque:
    no warning.  Commanded while the simulator lives, in a world stepped in 4 substeps, it is
    known and held: no warning.  It names this file's line, though it is raised in a
    localization's re-simulation, under SciPy's root find."""
    assert_unfollowed()
    client = p.connect(p.DIRECT)
    try:
        arm = _arm_world(client, height=0.1 + 1.5 * DT)
        if case == "switched off":
            p.setJointMotorControl2(arm, 0, p.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
        simulator = ImpactSimulator("routh", client, seed=0)
        if case == "substeps":
            p.setPhysicsEngineParameter(numSubSteps=4, physicsClientId=client)
            p.setJointMotorControl2(arm, 0, physicsClientId=client, **SATURATED)
        p.resetJointState(arm, 0, 0.0, 20.0, physicsClientId=client)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert not simulator.step()
            _split_step(simulator)
            p.resetBasePositionAndOrientation(1, [0, 0, 0.1 + 1.5 * DT], [0, 0, 0, 1], physicsClientId=client)
            p.resetBaseVelocity(1, [0, 0, -1.0], physicsClientId=client)
            simulator.step()
            _split_step(simulator)
        reported = [warning for warning in caught if issubclass(warning.category, UnknownMotorWarning)]
        reports = [str(warning.message) for warning in reported]
        assert len(reports) == (1 if warns else 0)
        assert all(warning.filename == __file__ for warning in reported)  # raised under SciPy's root find: the caller's line
        if warns:
            name = p.getJointInfo(arm, 0, physicsClientId=client)[1].decode()
            assert reports[0].startswith(f"body {arm} ") and f"joints {name} " in reports[0]
        simulator.close()
    finally:
        p.disconnect(client)


def test_motors_switched_off_on_a_body_with_a_spherical_joint_are_not_reported() -> None:
    """A body with a spherical joint is read with ``getJointStatesMultiDof``, whose applied
    torques are tuples.  The arm loaded before the simulator with a spherical joint above its
    revolute one, both motors switched off (the spherical one by a zero-force multi-DoF
    command), the revolute joint spinning: neither applies a torque, so the split step reports
    nothing (a tuple of zeros is not an active motor)."""
    assert_unfollowed()
    client = p.connect(p.DIRECT)
    try:
        p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
        _arm_world(client, height=0.1 + 1.5 * DT)
        arm = p.createMultiBody(
            0,
            -1,
            basePosition=[-3, 0, 1],
            linkMasses=[1.0, 2.0],
            linkCollisionShapeIndices=[-1, -1],
            linkVisualShapeIndices=[-1, -1],
            linkPositions=[[0, 0, 0], [0, 0, -0.2]],
            linkOrientations=[[0, 0, 0, 1]] * 2,
            linkInertialFramePositions=[[0, 0, -0.1], [0.3, 0, 0]],
            linkInertialFrameOrientations=[[0, 0, 0, 1]] * 2,
            linkParentIndices=[0, 1],
            linkJointTypes=[p.JOINT_SPHERICAL, p.JOINT_REVOLUTE],
            linkJointAxis=[[0, 0, 1]] * 2,
            physicsClientId=client,
        )
        p.setJointMotorControlMultiDof(
            arm, 0, p.POSITION_CONTROL, targetPosition=[0, 0, 0, 1], positionGain=0, velocityGain=1, force=[0, 0, 0], physicsClientId=client
        )
        p.setJointMotorControl2(arm, 1, p.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
        simulator = ImpactSimulator("routh", client, seed=0)
        p.resetJointState(arm, 1, 0.0, 20.0, physicsClientId=client)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert not simulator.step()
            _split_step(simulator)
        assert not [warning for warning in caught if issubclass(warning.category, UnknownMotorWarning)]
        simulator.close()
    finally:
        p.disconnect(client)


def test_a_maximum_velocity_set_before_the_simulator_outlasts_split_steps() -> None:
    """``maxVelocity=2`` set before any simulator existed, then position commands every step
    without one (Bullet keeps the clamp): ``V = 0.1 * 1 / dt = 24`` rad/s is clamped to 2 rad/s
    in the split step and after it (the hold's command leaves the clamp as it was)."""
    assert_unfollowed()
    client = p.connect(p.DIRECT)
    try:
        arm = _arm_world(client)
        command = {"controlMode": p.POSITION_CONTROL, "targetPosition": 1.0, "force": 1e4}
        p.setJointMotorControl2(arm, 0, maxVelocity=2.0, physicsClientId=client, **command)
        simulator = ImpactSimulator("routh", client, seed=0)
        p.setJointMotorControl2(arm, 0, physicsClientId=client, **command)
        _split_step(simulator)
        assert _joint(client, arm)[1] == pytest.approx(2.0, rel=1e-9)
        p.setJointMotorControl2(arm, 0, physicsClientId=client, **command)
        simulator.step()
        assert _joint(client, arm)[1] == pytest.approx(2.0, rel=1e-9)
        simulator.close()
    finally:
        p.disconnect(client)


def test_a_buffer_refilled_after_a_command_does_not_move_its_target(world: tuple[int, ImpactSimulator, int]) -> None:
    """``targetPositions`` passed as a NumPy buffer that the caller refills after the command:
    Bullet's motor keeps the target it was given (1 rad), and so does the hold: ``qdot = 0.1 * 1
    / dt = 24`` rad/s after the split step."""
    client, simulator, arm = world
    buffer = np.array([1.0])
    p.setJointMotorControlArray(arm, [0], p.POSITION_CONTROL, targetPositions=buffer, forces=[1e4], physicsClientId=client)
    buffer[0] = -1.0
    _split_step(simulator)
    assert _joint(client, arm)[1] == pytest.approx(0.1 / DT, rel=1e-9)


def test_commands_are_read_as_pybullet_reads_them() -> None:
    """Positional and keyword arguments, PyBullet's older ``bodyIndex``, sequences as arrays, and
    ``pybullet.c``'s defaults (force 1e5, position gain 0.1, velocity gain 1, targets 0); the
    multi-DoF commands and the PD modes leave their joints' motors unknown."""
    single = MotorCall("setJointMotorControl2", (3, 1, p.POSITION_CONTROL, 0.5), {"force": 7.0}, (1,), 1, 0)
    assert commanded(single) == {1: Motor(0.5, 0.0, 0.1, 1.0, 7.0)}
    older = MotorCall(
        "setJointMotorControl2", (), {"bodyIndex": 3, "jointIndex": 2, "controlMode": p.VELOCITY_CONTROL, "targetVelocity": 2.0}, (2,), 2, 0
    )
    assert commanded(older) == {2: Motor(None, 2.0, 0.0, 1.0, DEFAULT_FORCE)}
    array = MotorCall(
        "setJointMotorControlArray",
        (3, [0, 4], p.POSITION_CONTROL),
        {"targetPositions": np.array([0.1, 0.2]), "positionGains": (0.3, 0.4), "velocityGains": [0.5, 0.6]},
        (0, 4),
        3,
        0,
    )
    assert commanded(array) == {0: Motor(0.1, 0.0, 0.3, 0.5, DEFAULT_FORCE), 4: Motor(0.2, 0.0, 0.4, 0.6, DEFAULT_FORCE)}
    assert commanded(MotorCall("setJointMotorControlMultiDof", (3, 1, p.POSITION_CONTROL), {}, (1,), 4, 0)) == {1: None}
    assert commanded(MotorCall("setJointMotorControl2", (3, 1, p.PD_CONTROL), {}, (1,), 5, 0)) == {1: None}


def test_the_target_is_bullets_row() -> None:
    """``V = kp (q* - q) / dt + qdot + kd (qdot* - qdot)``, ``q*`` clamped to ordered limits (not
    to unordered ones: a continuous joint): worked by hand.  (Bullet itself clamps ``V`` to the
    motor's maximum velocity, which the hold leaves as it was.)  The hold's force: the load-time
    motor's 1 N s a step of 0.01 s, 100 N whatever the substeps; a commanded one's, its force
    in a single substep, 4 times it in one of 4 (the cap ``force * 4 h`` spread over ``h``)."""
    motor = Motor(2.0, 1.0, 0.1, 0.5, 10.0)
    assert motor.target(0.0, 4.0, 0.01, (-1.0, 1.0)) == pytest.approx(0.1 * 1.0 / 0.01 + 4.0 + 0.5 * (1.0 - 4.0))
    assert motor.target(0.0, 4.0, 0.01, (0.0, -1.0)) == pytest.approx(0.1 * 2.0 / 0.01 + 4.0 + 0.5 * (1.0 - 4.0))
    assert Motor(None, 1.0, 0.0, 0.25, None).target(5.0, 4.0, 0.01, (-1.0, 1.0)) == pytest.approx(4.0 + 0.25 * (1.0 - 4.0))
    load_time = Motor(None, 0.0, 0.0, 1.0, None)
    assert load_time.hold_force(0.01, 1) == load_time.hold_force(0.01, 4) == pytest.approx(100.0)
    assert (motor.hold_force(0.01, 1), motor.hold_force(0.01, 4)) == (10.0, 40.0)


@given(st.floats(min_value=1e-5, max_value=0.1))
def test_the_load_time_motor_is_restored_to_its_impulse(dt: float) -> None:
    """The restored load-time motor's cap, ``force * dt`` in double precision as Bullet computes
    it, is 1 N s to the last bit or the nearest double to it."""
    assert abs(load_motor_force(dt) * dt - LOAD_MOTOR_IMPULSE) <= 2 * math.ulp(1.0)


def test_the_record_keeps_each_joints_last_command_as_issued() -> None:
    """A client's record while followed: the bodies loaded, the last command per command name and
    joints with its arguments as they were when issued (a buffer refilled afterwards does not
    change it), the time step at the command, and nothing of a body once removed."""
    following.follow()
    client = p.connect(p.DIRECT)
    try:
        arm = _arm_world(client)
        record = following.world(client)
        assert arm in record.loaded
        p.setJointMotorControl2(arm, 0, p.POSITION_CONTROL, targetPosition=0.2, physicsClientId=client)
        p.setJointMotorControl2(arm, 0, p.POSITION_CONTROL, targetPosition=0.4, physicsClientId=client)
        assert [call.kwargs["targetPosition"] for call in record.motor_calls[arm].values()] == [0.4]
        buffer = np.array([1.0])
        p.setJointMotorControlArray(arm, [0], p.VELOCITY_CONTROL, targetVelocities=buffer, physicsClientId=client)
        buffer[0] = 5.0
        array = record.motor_calls[arm]["setJointMotorControlArray", (0,)]
        assert array.kwargs["targetVelocities"] == (1.0,) and array.time_step == record.time_step == DT
        p.setPhysicsEngineParameter(fixedTimeStep=DT / 2, physicsClientId=client)
        assert record.time_step == DT / 2
        p.removeBody(arm, physicsClientId=client)
        assert arm not in record.motor_calls and arm not in record.loaded
    finally:
        p.disconnect(client)
        following.unfollow()


def test_a_command_given_by_position_is_read_in_pybullets_order(world: tuple[int, ImpactSimulator, int]) -> None:
    """Every argument of ``setJointMotorControl2`` by position (target 1 rad and 1 rad/s, force
    1e4, gains 0.2 and 0.5): ``V = 0.2 * 1 / dt + 0 + 0.5 (1 - 0) = 48.5`` rad/s, met (8.7 N s, under
    the cap), after a plain step and after the split one, whose hold read the arguments."""
    client, simulator, arm = world
    arguments = (p.POSITION_CONTROL, 1.0, 1.0, 1e4, 0.2, 0.5)
    expected = 0.2 * 1.0 / DT + 0.5 * 1.0
    plain = p.connect(p.DIRECT)
    try:
        plain_arm = _arm_world(plain)
        p.setJointMotorControl2(plain_arm, 0, *arguments, physicsClientId=plain)
        p.stepSimulation(physicsClientId=plain)
        assert _joint(plain, plain_arm)[1] == pytest.approx(expected, rel=1e-9)
    finally:
        p.disconnect(plain)
    p.setJointMotorControl2(arm, 0, *arguments, physicsClientId=client)
    _split_step(simulator)
    assert _joint(client, arm)[1] == pytest.approx(expected, rel=1e-9)
