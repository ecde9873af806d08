"""No missed impacts: a body thrown down at the ground is caught as one event
with the free-fall approach velocity, for boxes, spheres and wheels (cylinders), on the box
ground and on a true GEOM_PLANE."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from bullet_setimpact.bullet.events import contact_points
from bullet_setimpact.bullet.simulator import ImpactSimulator
from bullet_setimpact.laws import get_law

from .drop_worlds import DROP_WORLDS, GROUNDS, load_drop_world

GRAVITY = 9.81
DT = 1.0 / 240.0


@pytest.mark.parametrize("ground", GROUNDS)
@pytest.mark.parametrize("name", ["cube", "sphere", "r2d2"])
@pytest.mark.parametrize(("speed", "height"), [(5.0, 0.1), (0.0, 0.05)])
def test_a_drop_is_caught_as_an_event_with_the_free_fall_velocity(client: int, name: str, ground: str, speed: float, height: float) -> None:
    """Thrown down at ``speed`` from ``height`` (lowest point, no damping), the body lands with
    the free-fall velocity of Bullet's symplectic Euler steps: ``x(t) = h - v0 t - g t (t + dt) / 2``
    at the step times, so it lands at ``t = (-(v0 + g dt / 2) + sqrt((v0 + g dt / 2)^2 + 2 g h)) / g``
    with ``v = -(v0 + g t)`` (5.1917 m/s for 5 m/s from 0.1 m; 0.9702 m/s dropped from 5 cm).
    The event is localized inside the last step, whose velocity grows linearly by ``g dt``,
    so ``v_minus`` of the base's centre of mass is that within ``g dt / 2 = 0.02 m/s``.  The
    first event is the landing (nothing else is touched); the cube (flat) and the sphere
    land once.
    """
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    world = next(world for world in DROP_WORLDS if world.name == name)
    (body,) = load_drop_world(client, world, ground, height)
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        p.changeDynamics(body, link, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    p.resetBaseVelocity(body, [0.0, 0.0, -speed], [0.0, 0.0, 0.0], physicsClientId=client)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, on_failure="raise")
    for _ in range(72):  # 0.3 s
        simulator.step()
    assert simulator.events, "the landing was missed"
    b = speed + GRAVITY * DT / 2.0
    landing = (-b + math.sqrt(b * b + 2.0 * GRAVITY * height)) / GRAVITY
    v_minus, _ = simulator.events[0].velocities(body)
    np.testing.assert_allclose(v_minus[:3], [0.0, 0.0, -(speed + GRAVITY * landing)], atol=GRAVITY * DT / 2.0)
    if name != "r2d2":  # the robot may rock onto its other wheels afterwards
        assert len(simulator.events) == 1


@pytest.mark.parametrize("ground", GROUNDS)
def test_contact_points_by_position_are_getContactPoints_of_every_pair(client: int, ground: str) -> None:
    """``contact_points(client)`` passes ``getContactPoints``' defaults ``-1, -1, -2, -2`` (any
    body, any link) by position: the same points as ``getContactPoints(physicsClientId=client)``,
    here the manifold points of a cube resting flat on each ground (some, not all four corners:
    Bullet keeps two on the plane)."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    world = next(world for world in DROP_WORLDS if world.name == "cube")
    load_drop_world(client, world, ground, 0.0)
    for _ in range(24):
        p.stepSimulation(physicsClientId=client)
    points = contact_points(client)
    assert points
    assert points == p.getContactPoints(physicsClientId=client)
