"""Restitution under the hook: Bullet's combined restitution (the product of the two links'
``restitution``, as ``btManifoldResult::calculateCombinedRestitution``) reaches the law."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact import (
    AnitescuPotraImpact,
    ImpactSimulator,
    RestitutionIgnoredWarning,
    RouthImpact,
    SamplesDroppedWarning,
    data_path,
    planar,
)
from bullet_setimpact.bullet.examples import load_planar_example

#: Time step of the bounce tests [s] (see the docstring of the apex test for the error bound).
DT = 1e-3
DROP = 0.5  # height of the sphere's lowest point above the ground [m]


def bounce(client: int, e_sphere: float, e_ground: float, law: object) -> tuple[ImpactSimulator, float]:
    """Drop ``sphere_with_restitution.urdf`` (radius 0.5 m, undamped) from ``DROP`` onto the box
    ground for 1.6 s; returns the simulator and the highest point after the first impact."""
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setTimeStep(DT, physicsClientId=client)
    ground = p.loadURDF(os.path.join(data_path(), "ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    ball = p.loadURDF(os.path.join(pybullet_data.getDataPath(), "sphere_with_restitution.urdf"), [0, 0, DROP + 0.5], physicsClientId=client)
    p.changeDynamics(ball, -1, restitution=e_sphere, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    p.changeDynamics(ground, -1, restitution=e_ground, physicsClientId=client)
    sim = ImpactSimulator(law, client=client, seed=0)
    apex = -np.inf
    for _ in range(int(1.6 / DT)):
        sim.step()
        if sim.events:
            apex = max(apex, p.getBasePositionAndOrientation(ball, physicsClientId=client)[0][2] - 0.5)
    return sim, apex


@pytest.mark.parametrize(("e_sphere", "e_ground"), [(0.3, 1.0), (0.5, 1.0), (0.8, 1.0), (1.0, 0.5)])
def test_a_sphere_bounces_to_e_squared_of_its_drop_height(client: int, e_sphere: float, e_ground: float) -> None:
    """Combined restitution ``e = e_sphere e_ground``.  One contact, no slip: Stronge's energetic
    coefficient equals Newton's, so the first impact gives ``v_z+ = -e v_z-`` exactly (checked
    to 1e-9) and the sphere rises to ``e^2 DROP`` in continuous time.

    Bullet's semi-implicit Euler (``v += g dt; z += v dt``) keeps ``v^2 + 2 g z`` up to a loss of
    exactly ``g^2 dt^2`` per step, i.e. ``g dt^2 / 2`` of height per step: over the fall
    (``sqrt(2 DROP / g)`` = 0.32 s = 320 steps at 1 ms) 1.6 mm, scaled by ``e^2`` at the
    apex, plus ``e`` times that on the rise.  For ``e >= 0.3`` the apex is therefore at most
    ``(0.09 + 0.3) 1.6 mm / (0.09 * 0.5 m)`` = 1.4 % low (less for larger ``e``); sampling the
    apex at 1 ms adds at most ``g dt^2 / 8`` (negligible).  The test allows 2 %."""
    e = e_sphere * e_ground
    sim, apex = bounce(client, e_sphere, e_ground, RouthImpact("auto", 50))
    first = sim.events[0]
    assert first.v_plus[2] == pytest.approx(-e * first.v_minus[2], rel=1e-9)
    assert apex == pytest.approx(e * e * DROP, rel=0.02)


def test_an_inelastic_law_warns_once_and_does_not_bounce(client: int) -> None:
    """Anitescu–Potra has no restitution: the sphere stops at its first impact (``v_z+ = 0``, so
    it never rises again by more than Bullet's contact slop), and a
    :class:`RestitutionIgnoredWarning` names the pair once however many impacts follow."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim, apex = bounce(client, 0.5, 1.0, AnitescuPotraImpact())
    ignored = [w for w in caught if issubclass(w.category, RestitutionIgnoredWarning)]
    assert len(ignored) == 1 and "combined restitution 0.5" in str(ignored[0].message)
    assert sim.events[0].v_plus[2] == pytest.approx(0.0, abs=1e-9)
    assert apex < 1e-3


def test_zero_restitution_builds_the_inelastic_problem(client: int) -> None:
    """With every restitution 0 (the default of a URDF without ``<restitution>``) the law gets
    a problem without restitution, so outcomes are those of the inelastic law."""
    sim, _ = bounce(client, 0.0, 1.0, RouthImpact("auto", 50))
    assert not sim.events[0].problem.elastic
    assert sim.events[0].v_plus[2] == pytest.approx(0.0, abs=1e-9)


def test_the_rocking_block_rebounds_with_a_spread_inside_the_restitution_set(client: int) -> None:
    """The planar rocking block (``urdf/rocking_block_planar.urdf``) with ``restitution 0.5`` on
    the block and 1.0 on the ground (combined 0.5) dropped flat from 1 cm: under
    ``RouthImpact("auto", 200)`` each seed's first impact is one member of the restitution
    outcome set of the problem the hook built, with ``e = 0.5`` at both corners.

    Checks: the problem carries ``e = 0.5``; every seed's ``v+`` lies within 2 % of ``|v-|`` of
    ``outcome_set`` of the closed-form problem (``planar.rocking_block`` with ``e = 0.5`` at
    the event's ``v-``; the 2 % covers Bullet's slightly tilted contact geometry and sampling,
    as in ``test_bullet_simulator``'s inelastic twin); the block rebounds (its fastest corner
    separates at least as fast as in the slowest-rebounding member of the set, less the same
    2 %; an inelastic outcome would fail this); and the seeds
    spread: 40 i.i.d. draws all miss the set's lower (upper) quarter of ``theta_dot`` with
    probability ``0.75^40 < 1e-5``, so their range covers the set's interquartile range."""
    outcomes, reference = [], None
    for seed in range(40):
        p.resetSimulation(physicsClientId=client)
        p.setGravity(0, 0, -9.81, physicsClientId=client)
        p.setTimeStep(1e-4, physicsClientId=client)
        world = load_planar_example(client, "rocking_block", configuration=np.array([0.0, 1.01, 0.0]), velocity=np.zeros(3))
        p.changeDynamics(world.bodies[0], 2, restitution=0.5, physicsClientId=client)
        p.changeDynamics(world.ground, -1, restitution=1.0, physicsClientId=client)
        sim = ImpactSimulator(RouthImpact("auto", 200), client, seed=seed)
        while not sim.events:
            sim.step()
        event = sim.events[0]
        np.testing.assert_allclose(event.problem.restitution, 0.5)
        outcomes.append(event.v_plus)
        reference = event if reference is None else reference
    assert reference is not None
    problem = planar.rocking_block().problem.with_restitution(0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplesDroppedWarning)
        samples = RouthImpact("auto", 200).outcome_set(problem, reference.v_minus, 2**14, rng=1)
    scale = np.linalg.norm(reference.v_minus)
    outcomes_array = np.array(outcomes)
    distances = np.min(np.linalg.norm(samples[None] - outcomes_array[:, None], axis=2), axis=1)
    assert distances.max() <= 0.02 * scale, distances
    rebound = problem.normal_velocities(outcomes_array).max(axis=1)
    assert rebound.min() >= problem.normal_velocities(samples).max(axis=1).min() - 0.02 * scale
    low, high = np.quantile(samples[:, 2], [0.25, 0.75])
    assert np.ptp(outcomes_array[:, 2]) >= high - low


def test_the_bouncing_ball_scenario_rebounds_at_its_urdf_restitution(client: int) -> None:
    """``scenarios/bouncing_ball.py``: the ball's restitution 0.8 comes from its URDF's
    ``<contact><restitution value="0.8"/>`` and the ground's 1.0 from ``changeDynamics``; the
    combined ``e = 0.8`` reaches the problem, and one contact with nothing sliding gives
    ``v_z+ = -0.8 v_z-`` (Stronge's coefficient equals Newton's here) at the first impact."""
    from bullet_setimpact.montecarlo.scenario import build

    scenario = build("bouncing_ball", client, {"duration": 0.5})
    sim = ImpactSimulator(scenario.law, client, seed=0)
    while not sim.events:
        sim.step()
    event = sim.events[0]
    np.testing.assert_allclose(event.problem.restitution, 0.8)
    assert event.v_plus[2] == pytest.approx(-0.8 * event.v_minus[2], rel=1e-9)


def test_the_hopping_leg_robot_rebounds_at_its_urdf_restitution(client: int) -> None:
    """``scenarios/hopping_leg.py``: a passive two-joint leg robot whose foot's restitution 0.6 is
    in its URDF (the ground's 1.0 from ``changeDynamics``), dropped standing straight.  Every
    centre of mass and both (horizontal) joint axes lie on the vertical through the foot's contact,
    so the vertical contact impulse has no moment about any of them: ``Jn M^-1 Jn^T`` is that of a
    point mass, ``Jt M^-1 Jn^T = 0`` (no slip, zero friction impulse) and the joints are not
    turned.  One contact with nothing sliding: Stronge's coefficient gives ``v+ = -e v-`` for the
    whole generalized velocity (joint rates stay 0), ``e = 0.6``, and the pre-impact speed is the
    free fall from 0.3 m, ``sqrt(2 g 0.3) = 2.426 m/s``, within one step's ``g dt`` of Bullet's
    semi-implicit Euler."""
    from bullet_setimpact.montecarlo.scenario import build

    scenario = build("hopping_leg", client, {"duration": 0.5})
    sim = ImpactSimulator(scenario.law, client, seed=0)
    while not sim.events:
        sim.step()
    event = sim.events[0]
    np.testing.assert_allclose(event.problem.restitution, 0.6)
    assert event.v_minus[2] == pytest.approx(-np.sqrt(2 * 9.81 * 0.3), abs=9.81 / 240.0)
    np.testing.assert_allclose(event.v_plus, -0.6 * event.v_minus, atol=1e-9 * abs(event.v_minus[2]))


def test_a_monte_carlo_report_shows_the_rebound_ratio() -> None:
    """The bouncing ball's first impact has one contact with combined restitution 0.8 and nothing
    sliding, so ``-vn+/vn- = 0.8`` in every rollout (derived in the test above); the run's
    ``rebound_ratios`` and its report show it."""
    from bullet_setimpact.montecarlo.rollouts import monte_carlo

    results = monte_carlo("bouncing_ball", 2, seed=0, executor="serial", params={"duration": 0.4})
    np.testing.assert_allclose(results.rebound_ratios(), 0.8, rtol=1e-9)
    assert "rebound        -vn+/vn- of the contacts that struck: median 0.800 " in results.report()
