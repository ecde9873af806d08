"""The comparison laws plugged into ImpactSimulator unchanged."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest

from bullet_setimpact import PlasticImpact, PropagativeImpact
from bullet_setimpact.bullet.examples import load_planar_example, urdf_path
from bullet_setimpact.bullet.model import WorldModel
from bullet_setimpact.bullet.simulator import ImpactSimulator


def _cradle(client: int) -> list[int]:
    """Newton's cradle: three unit spheres (R = 1 m, 1 kg) touching in a row along x, no
    gravity, no friction; the first moves at 1 m/s into the others."""
    p.setGravity(0, 0, 0, physicsClientId=client)
    balls = [p.loadURDF(urdf_path("stack_sphere.urdf"), [2.0 * i, 0, 5], physicsClientId=client) for i in range(3)]
    for ball in balls:
        p.changeDynamics(ball, -1, lateralFriction=0.0, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    p.resetBaseVelocity(balls[0], [1.0, 0, 0], physicsClientId=client)
    return balls


def _x_velocities(client: int, balls: list[int]) -> np.ndarray:
    return np.array([p.getBaseVelocity(ball, physicsClientId=client)[0][0] for ball in balls])


def test_elastic_cradle_passes_the_velocity_on_and_conserves_energy(client: int) -> None:
    """Seghete-Murphey Example 1: equal balls, elastic, ``[v, 0, 0] -> [0, 0, v]``; kinetic energy
    (here the total energy: no gravity) is conserved across the event to 1e-9 relative."""
    balls = _cradle(client)
    sim = ImpactSimulator(PropagativeImpact(restitution=1.0), client)
    for _ in range(24):
        sim.step()
    assert sim.events
    for event in sim.events:
        assert event.energy_after == pytest.approx(event.energy_before, rel=1e-9)
    np.testing.assert_allclose(_x_velocities(client, balls), [0.0, 0.0, 1.0], atol=1e-9)


@pytest.mark.parametrize("law", [PropagativeImpact(restitution=0.0), PlasticImpact()])
def test_plastic_cradle_moves_together(client: int, law) -> None:  # type: ignore[no-untyped-def]  # parametrized law
    """Plastic: momentum 1 shared by three unit masses that end together, ``v/3`` each
    (Seghete-Murphey eq. 11; Johnson et al.'s reset with both contacts kept)."""
    balls = _cradle(client)
    sim = ImpactSimulator(law, client)
    for _ in range(24):
        sim.step()
    np.testing.assert_allclose(_x_velocities(client, balls), [1 / 3] * 3, atol=1e-9)


def test_rocking_block_under_the_new_laws(client: int) -> None:
    """The journal's rocking block dropped flat: Johnson et al.'s plastic reset keeps both
    sticking corners (rest, as their CP_IV selects both when both strike), and the elastic
    frictionless propagative law bounces it with its energy conserved at every event."""
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    world = load_planar_example(client, "rocking_block", configuration=np.array([0.0, 1.01, 0.0]), velocity=np.zeros(3))
    sim = ImpactSimulator(PlasticImpact(), client)
    for _ in range(30):
        sim.step()
    assert sim.events[0].result.info["mode"] == (0, 1)
    np.testing.assert_allclose(sim.events[0].v_plus, 0.0, atol=1e-12)
    p.resetJointState(world.bodies[0], 1, 1.01, 0.0, physicsClientId=client)
    elastic = ImpactSimulator(PropagativeImpact(restitution=1.0, ignore_friction=True), client)
    for _ in range(120):
        elastic.step()
    assert elastic.events
    for event in elastic.events:
        assert event.energy_after == pytest.approx(event.energy_before, rel=1e-9)


def test_pseudo_impulse_gets_gravity_from_the_simulator(client: int) -> None:
    """With ``pseudo_impulse_dt > 0`` the simulator hands the law the generalized gravity force:
    for the planar block ``f = (0, -m g, 0)`` (the centre of mass is the joint origin)."""
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    load_planar_example(client, "rocking_block", configuration=np.array([0.0, 1.002, 0.0]), velocity=np.zeros(3))
    np.testing.assert_allclose(WorldModel(client).configuration().external_force(), [0.0, -9.81, 0.0], atol=1e-9)
    sim = ImpactSimulator(PlasticImpact(pseudo_impulse_dt=0.03), client)
    for _ in range(12):
        sim.step()
    assert sim.events and "piv_modes" in sim.events[0].result.info


def test_events_carry_diagnostics_when_asked(client: int) -> None:
    """``diagnostics=True``: each event holds the normal coupling matrix and the
    order-independence verdict.  The cradle's two contacts have ``c = -1/2`` (equal masses
    in a line: ``G = [[2, -1], [-1, 2]]``), Seghete-Murphey Theorem 3."""
    _cradle(client)
    sim = ImpactSimulator(PropagativeImpact(restitution=1.0), client, diagnostics=True)
    sim.step()
    event = sim.events[0]
    np.testing.assert_allclose(np.abs(event.diagnostics["normal_coupling"][0, 1]), 0.5, atol=1e-12)
    assert "order_independent" in event.diagnostics
