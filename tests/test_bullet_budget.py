"""The distance budget (issue 11) skips the contact evaluation of resting steps but never an
impact: a body thrown at the ground next to a resting one, and a resting body whose
neighbour slides into it, are each caught as one event with the expected approach velocity."""

from __future__ import annotations

import math
import os

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact.bullet.drop_worlds import DROP_WORLDS, GROUNDS, load_drop_world
from bullet_setimpact.bullet.simulator import TARGET_FRACTION, ImpactSimulator
from bullet_setimpact.laws import get_law

GRAVITY = 9.81
DT = 1.0 / 240.0
CUBE = next(world for world in DROP_WORLDS if world.name == "cube")
#: The simulator's default contact tolerance [m].
TOLERANCE = 1e-4
#: Localization puts the arriving gap at ``-+TARGET_FRACTION tol`` within half that (:func:`~.events.localize`).
LOCALIZED = 1.5 * TARGET_FRACTION * TOLERANCE


def _setup(client: int, ground: str, gravity: float = GRAVITY, height: float = 0.0) -> int:
    """``gravity``, 240 Hz, and the resting cube (``cube_small``, lowest point ``height`` above the ground at the origin)."""
    p.setGravity(0.0, 0.0, -gravity, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    (resting,) = load_drop_world(client, CUBE, ground, height)
    return resting


def _load(client: int, urdf: str, x: float, lowest: float) -> int:
    """A ``pybullet_data`` body at ``x`` with its lowest point at height ``lowest`` and no damping."""
    body = p.loadURDF(os.path.join(pybullet_data.getDataPath(), urdf), [x, 0.0, 1.0], physicsClientId=client)
    bottom = p.getAABB(body, -1, physicsClientId=client)[0][2]
    p.resetBasePositionAndOrientation(body, [x, 0.0, 1.0 - bottom + lowest], [0.0, 0.0, 0.0, 1.0], physicsClientId=client)
    p.changeDynamics(body, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    return body


@pytest.mark.parametrize("ground", GROUNDS)
@pytest.mark.parametrize("urdf", ["cube_small.urdf", "sphere_small.urdf"])
def test_a_fast_drop_next_to_a_resting_body_is_caught(client: int, ground: str, urdf: str) -> None:
    """A body thrown down at ``v0 = 3 m/s`` from ``h = 0.5 m`` (lowest point) lands 0.3 m from a
    cube resting on the ground, so the budget is active while it falls.  Bullet's symplectic
    Euler steps give ``x(t) = h - v0 t - g t (t + dt) / 2`` at the step times: it lands at
    ``t = (-(v0 + g dt / 2) + sqrt((v0 + g dt / 2)^2 + 2 g h)) / g`` (0.13566 s) with
    ``v = -(v0 + g t)`` (4.331 m/s, close to ``sqrt(v0^2 + 2 g h) = 4.337 m/s``).  The event is
    localized inside the last step, whose velocity grows linearly by ``g dt``, so ``v_minus``
    of the body's centre of mass is that within ``g dt / 2 = 0.02 m/s``, and its time is the
    landing time within ``g dt^2 / v`` (a partial step moves at its own end velocity, not the
    step's: 4e-5 s) plus the localization's gap band over ``v`` (``LOCALIZED / v``, 3.5e-6 s);
    its penetration is within that band (15 um), where a budget that let the body cross the
    ground unseen for a step would leave up to 18 mm (``v dt``).  The landing is the
    thrown body's only event, alone (the cube, placed on the ground at rest, may only have
    its settling impact in the first steps).
    """
    speed, height = 3.0, 0.5
    resting = _setup(client, ground)
    thrown = _load(client, urdf, 0.3, height)
    p.resetBaseVelocity(thrown, [0.0, 0.0, -speed], [0.0, 0.0, 0.0], physicsClientId=client)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, on_failure="raise")
    for _ in range(48):  # 0.2 s
        simulator.step()
    assert simulator.budget_steps > 0, "the budget never skipped an evaluation: the test does not exercise it"
    landings = [event for event in simulator.events if thrown in event.bodies]
    assert len(landings) == 1, [(event.time, event.bodies) for event in simulator.events]
    assert landings[0].bodies == (thrown,), f"the resting cube {resting} took part"
    assert all(event.time < 0.02 for event in simulator.events if event is not landings[0])
    b = speed + GRAVITY * DT / 2.0
    landing = (-b + math.sqrt(b * b + 2.0 * GRAVITY * height)) / GRAVITY
    v_minus, _ = landings[0].velocities(thrown)
    arrival = speed + GRAVITY * landing
    np.testing.assert_allclose(v_minus[:3], [0.0, 0.0, -arrival], atol=GRAVITY * DT / 2.0)
    assert abs(landings[0].time - landing) <= (GRAVITY * DT**2 + LOCALIZED) / arrival
    assert landings[0].max_penetration <= LOCALIZED


@pytest.mark.parametrize("ground", GROUNDS)
def test_a_resting_body_struck_by_its_neighbour_gets_its_impact(client: int, ground: str) -> None:
    """Without gravity, a cube (``cube_small``, 5 cm) rests on the ground (its face 50 um
    above it, within the 100 um contact tolerance) and a ball (``sphere_small``, radius 3 cm)
    floats at rest beside it, 15 mm above the ground, its surface 10 cm from the cube's face
    (its centre at 4.5 cm, within the face).  After 0.1 s (nothing moves: the budget skips every
    step) the ball is set moving at ``u = 0.5 m/s`` towards the cube.  A step moves it by
    ``u dt = 2.1 mm``, so the budget (its slack to the cube, about the gap) lasts several
    steps, is spent and measured anew, ever shorter, as the gap closes.  Nothing acts on the
    ball before it strikes (no gravity, no damping): exactly one event after the throw,
    between the ball and the cube, with the ball's ``v_minus = (u, 0, 0)`` to rounding (1e-9)
    and the cube at rest, when the ball has travelled the 10 cm (at 0.3 s) to within the
    localization's gap band (``LOCALIZED / u = 3e-5 s``), penetrating at most that band."""
    speed = 0.5
    cube = _setup(client, ground, gravity=0.0, height=5e-5)
    ball = _load(client, "sphere_small.urdf", -(0.025 + 0.03 + 0.1), 0.015)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, on_failure="raise")
    for _ in range(24):
        simulator.step()
    assert not simulator.events and simulator.budget_steps > 0
    resting_steps = simulator.budget_steps
    p.resetBaseVelocity(ball, [speed, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    for _ in range(60):  # 0.25 s; the ball strikes after 0.2 s
        simulator.step()
    assert simulator.budget_steps > resting_steps + 10, "the budget did not skip evaluations while the ball approached"
    assert len(simulator.events) == 1, [(event.time, event.bodies) for event in simulator.events]
    event = simulator.events[0]
    assert event.bodies == tuple(sorted((cube, ball)))
    v_ball, _ = event.velocities(ball)
    v_cube, _ = event.velocities(cube)
    np.testing.assert_allclose(v_ball, [speed, 0.0, 0.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-9)
    np.testing.assert_allclose(v_cube, 0.0, rtol=0.0, atol=1e-9)
    assert abs(event.time - (0.1 + 0.1 / speed)) <= LOCALIZED / speed
    assert event.max_penetration <= LOCALIZED
