"""Bullet's explicit joint damping (``bullet_setimpact.bullet.damping``): the growth factor the
check predicts, against closed forms, against the general eigenvalues of the amplification
matrix, and against Bullet's own step; the simulator's warning."""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pybullet as p
import pybullet_data
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bullet_setimpact import RouthImpact, UnstableDampingWarning
from bullet_setimpact.bullet.damping import damping_growth, unstable_damping
from bullet_setimpact.bullet.model import WorldModel
from bullet_setimpact.bullet.simulator import ImpactSimulator

DT = 1.0 / 240.0
#: The kuka's URDF damping on every joint [N m s] and the pose of the checks (every joint 0.4 rad, clear of its limits).
KUKA_DAMPING = 0.5
KUKA_POSE = 0.4


def test_one_damped_joint_grows_by_one_minus_dt_c_over_inertia() -> None:
    """One joint of inertia ``I`` and damping ``c``: the explicit step ``v <- v - dt (c / I) v``
    scales ``v`` by ``1 - dt c / I``, so ``lambda = c / I`` and the largest stable step is
    ``2 I / c``.  With the kuka's last link (``I = 6e-4`` kg m^2, ``c = 0.5`` N m s) at 240 Hz:
    ``dt c / I = 0.5 / (240 * 6e-4) = 3.47222...``, growth ``2.47222...``, stable below 2.4 ms."""
    growth, largest, mode = damping_growth(np.array([[6e-4]]), np.array([0.5]), DT)
    assert largest == pytest.approx(0.5 / 6e-4, rel=1e-12)
    assert growth == pytest.approx(0.5 / (240 * 6e-4) - 1.0, rel=1e-12)
    assert 2.0 / largest == pytest.approx(2.4e-3, rel=1e-12)
    assert mode.shape == (1,)


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(1, 6),
    time_step=st.floats(1e-4, 1e-1),
)
def test_growth_is_the_spectral_radius_of_the_amplification_matrix_when_unstable(seed: int, size: int, time_step: float) -> None:
    """For an SPD ``M`` and a diagonal ``C >= 0`` (some zeros: a floating base's entries), the
    general (non-symmetric) eigenvalues of ``A = I - dt M^-1 C`` are ``1 - dt lambda`` for the
    generalized ones: the growth exceeds 1 exactly when ``A``'s spectral radius does, and then
    equals it (the fastest mode is the one with ``lambda_max``)."""
    rng = np.random.default_rng(seed)
    factor = rng.normal(size=(size, size))
    mass = factor @ factor.T + 0.1 * np.eye(size)
    damping = rng.uniform(0.0, 2.0, size) * (rng.random(size) < 0.8)
    growth, largest, mode = damping_growth(mass, damping, time_step)
    radius = float(np.abs(np.linalg.eigvals(np.eye(size) - time_step * np.linalg.solve(mass, np.diag(damping)))).max())
    if growth > 1.0 + 1e-9:
        assert radius > 1.0
    if radius > 1.0 + 1e-9:
        assert growth == pytest.approx(radius, rel=1e-8)
    np.testing.assert_allclose(np.diag(damping) @ mode, largest * mass @ mode, atol=1e-8 * (1.0 + largest) * np.abs(mass).max())


def _kuka(client: int, free_base: bool = False) -> int:
    """pybullet_data's kuka iiwa (fixed base, or its free-base model 1 m up), every joint at
    :data:`KUKA_POSE`, its motors off and no link damping (Bullet's ``linearDamping``/``angularDamping``,
    another term): only the URDF's joint damping acts."""
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    urdf = os.path.join("kuka_iiwa", "model_free_base.urdf" if free_base else "model.urdf")
    arm = p.loadURDF(urdf, [0.0, 0.0, 1.0 if free_base else 0.0], useFixedBase=not free_base, physicsClientId=client)
    joints = range(p.getNumJoints(arm, physicsClientId=client))
    p.setJointMotorControlArray(arm, joints, p.VELOCITY_CONTROL, forces=[0.0] * len(joints), physicsClientId=client)
    for link in range(-1, len(joints)):
        p.changeDynamics(arm, link, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    for joint in joints:
        p.resetJointState(arm, joint, KUKA_POSE, physicsClientId=client)
    return arm


@pytest.mark.parametrize(("substeps", "free_base"), [(0, False), (4, False), (0, True)])
def test_bullet_scales_the_fastest_mode_by_the_predicted_factor(client: int, substeps: int, free_base: bool) -> None:
    """Bullet's own step, against the prediction from ``M(q)`` and the URDF's damping: with no
    gravity, no motor and no contact, semi-implicit Euler gives ``v1 = v0 - dt M^-1 (C v0 + h(q, v0))``
    with ``h`` the Coriolis terms, quadratic in ``v0``; for ``v0`` along the fastest mode ``x``
    (largest entry 1e-3 rad/s) that is ``(1 - dt lambda_max) v0`` to a relative ``O(|v0|)``, 1e-6
    here (measured: 2e-9).  The kuka's factor is about -2.6, so the check is not of a stable case.
    With ``numSubSteps = 4`` one ``stepSimulation`` still scales the mode by the whole step's
    factor (measured: the torque ``-c qdot`` is computed once per call), which is why the check
    of a plain world uses ``fixedTimeStep`` whatever ``numSubSteps`` is (the simulator steps
    Bullet one substep at a time: its check uses the substep).  The free-base model's velocity also has
    the base's 6 undamped entries, which the mode carries too (the joints' reaction on the base)."""
    arm = _kuka(client, free_base)
    p.setGravity(0.0, 0.0, 0.0, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, numSubSteps=substeps, physicsClientId=client)
    joints = range(p.getNumJoints(arm, physicsClientId=client))
    model = WorldModel(client)
    mass = model.configuration().mass_matrix()
    joint_damping = [p.getJointInfo(arm, joint, physicsClientId=client)[6] for joint in joints]
    np.testing.assert_array_equal(joint_damping, KUKA_DAMPING)
    damping = np.concatenate([np.zeros(6 if free_base else 0), joint_damping])
    growth, largest, mode = damping_growth(mass, damping, DT)
    (found,) = unstable_damping(model)  # the joints' entries follow the base's 6 on the free base
    assert found.joint == "lbr_iiwa_joint_7" and found.growth == pytest.approx(growth, rel=1e-12)
    v0 = 1e-3 * mode / np.abs(mode).max()
    model.set_velocity(v0)
    p.stepSimulation(physicsClientId=client)
    v1 = model.velocity()
    assert 1.0 - DT * largest < -2.0
    np.testing.assert_allclose(v1, (1.0 - DT * largest) * v0, rtol=0.0, atol=1e-6 * np.abs(v1).max())
    assert growth == pytest.approx(abs(v1).max() / abs(v0).max(), rel=1e-6)


def test_the_simulator_warns_of_unstable_damping_at_its_time_step(client: int) -> None:
    """At 240 Hz the kuka's damping is unstable (factor about -2.6, the test above), led by its last
    joint; at 1 kHz ``dt lambda_max`` is 240 / 1000 of its 240 Hz value ``3.58``, 0.86 < 2: stable,
    no warning, at construction or in a step; set back to 240 Hz after construction, the next step
    warns, once.  The warning names the body, the joint, and both remedies, and points at the
    caller's line.  In 4 substeps of 240 Hz the simulator steps Bullet at 960 Hz, each step after
    the damping torque (``dt lambda_max`` 3.58 / 4 = 0.90 < 2): no warning, where plain Bullet's
    one torque per ``stepSimulation`` keeps the 240 Hz factor."""
    _kuka(client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    expected = r"'lbr_iiwa'.*'lbr_iiwa_joint_7'.*grows 2\.\d+x per step.*damping by 0\.\d+ or less.*jointDamping.*numSubSteps"
    with pytest.warns(UnstableDampingWarning, match=expected) as caught:
        ImpactSimulator(RouthImpact("auto", 50), client=client)
    assert len(caught) == 1 and caught[0].filename == __file__
    (found,) = unstable_damping(WorldModel(client))
    assert found.joint == "lbr_iiwa_joint_7" and found.damping == KUKA_DAMPING
    assert DT * 2.0 / found.stable_time_step == pytest.approx(1.0 + found.growth, rel=1e-12)
    assert 1e-3 < found.stable_time_step < DT
    p.setPhysicsEngineParameter(fixedTimeStep=1e-3, physicsClientId=client)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnstableDampingWarning)
        simulator = ImpactSimulator(RouthImpact("auto", 50), client=client)
        simulator.step()
    assert unstable_damping(WorldModel(client)) == []
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)  # changed after construction
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        simulator.step()
        simulator.step()  # the same time step again: not checked again
    (warned,) = [entry for entry in recorded if issubclass(entry.category, UnstableDampingWarning)]
    assert re.search(expected, str(warned.message)) and warned.filename == __file__
    p.setPhysicsEngineParameter(numSubSteps=4, physicsClientId=client)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnstableDampingWarning)
        simulator.step()
    assert unstable_damping(WorldModel(client), DT / 4) == [] and unstable_damping(WorldModel(client)) != []


def test_the_warnings_remedies_are_stable(client: int) -> None:
    """The damping scale and the time step the warning prints are rounded down (strictly below
    the limits ``2 / (dt lambda_max)`` and ``2 / lambda_max``), so following either is stable:
    with every joint's damping scaled by the printed factor, Bullet's step scales the fastest mode
    by ``1 - s dt lambda_max``, of magnitude below 1 (measured on Bullet, as in the test above);
    at the printed time step the check finds nothing.  Half the scale, ``dt lambda = 1``, stops
    that mode in one step: its factor is 0."""
    arm = _kuka(client)
    p.setGravity(0.0, 0.0, 0.0, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    joints = range(p.getNumJoints(arm, physicsClientId=client))
    (found,) = unstable_damping(WorldModel(client))
    message = found.message()
    scale = float(re.search(r"damping by (\S+) or less", message)[1])
    fastest = float(re.search(r"\((\S+) stops that mode", message)[1])
    step = float(re.search(r"or step (\S+) s or less", message)[1])
    assert scale < found.stable_scale and step < found.stable_time_step
    mass = WorldModel(client).configuration().mass_matrix()
    _, largest, mode = damping_growth(mass, np.full(len(joints), KUKA_DAMPING), DT)
    for factor, expected in ((scale, 1.0 - scale * DT * largest), (fastest, 1.0 - fastest * DT * largest)):
        v0 = 1e-3 * mode / np.abs(mode).max()
        for joint in joints:
            p.changeDynamics(arm, joint, jointDamping=factor * KUKA_DAMPING, physicsClientId=client)
            p.resetJointState(arm, joint, KUKA_POSE, v0[joint], physicsClientId=client)
        p.stepSimulation(physicsClientId=client)
        v1 = np.array([p.getJointState(arm, joint, physicsClientId=client)[1] for joint in joints])
        np.testing.assert_allclose(v1, expected * v0, rtol=0.0, atol=1e-6 * np.abs(v0).max())
        assert abs(expected) < 1.0
    assert abs(1.0 - fastest * DT * largest) < 0.01
    p.setPhysicsEngineParameter(fixedTimeStep=step, physicsClientId=client)
    assert unstable_damping(WorldModel(client)) == []


def test_undamped_bodies_are_not_checked(client: int) -> None:
    """A world without joint damping (pybullet_data's panda and a free cube) has nothing to report."""
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    p.loadURDF(os.path.join("franka_panda", "panda.urdf"), useFixedBase=True, physicsClientId=client)
    p.loadURDF("cube_small.urdf", [1.0, 0.0, 0.5], physicsClientId=client)
    assert unstable_damping(WorldModel(client)) == []
