"""The resting-contact certificates skip the contact evaluation of resting steps but never an
impact: a body thrown at the ground next to a resting one, and a resting body whose
neighbour slides into it, are each caught as one event with the expected approach velocity;
and a world stepped with them gives exactly the events of the reference path
(``resting_budget=False``), which evaluates every step."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact.bullet import simulator as simulator_module
from bullet_setimpact.bullet.contacts import ContactFinder
from bullet_setimpact.bullet.events import BulletPoints
from bullet_setimpact.bullet.resting.budget import DistanceBudget
from bullet_setimpact.bullet.resting.corner_watch import CornerWatch
from bullet_setimpact.bullet.simulator import TARGET_FRACTION, ImpactSimulator
from bullet_setimpact.laws import get_law

from .drop_worlds import DROP_WORLDS, GROUNDS, assert_unfollowed, load_drop_world, load_ground
from .pattern_envs import a1_world, minitaur_command, minitaur_world, trot

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


#: Half extents [m] of every box link of :func:`_random_chain`, and its joint types.
CHAIN_HALF = [0.05, 0.1, 0.2]
CHAIN_JOINTS = [p.JOINT_REVOLUTE, p.JOINT_PRISMATIC, p.JOINT_SPHERICAL, p.JOINT_REVOLUTE, p.JOINT_FIXED]
#: The 8 corners of a chain link's box, in its collision shape's frame.
CHAIN_CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * CHAIN_HALF


def _random_chain(client: int) -> tuple[int, list[int]]:
    """A floating chain of 6 boxes (``CHAIN_HALF``), each 0.45 m above its parent, joined by
    revolute, prismatic, spherical, revolute and fixed joints; its movable joints."""
    from bullet_setimpact.bullet.inventory import movable_joints

    box = p.createCollisionShape(p.GEOM_BOX, halfExtents=CHAIN_HALF, physicsClientId=client)
    body = p.createMultiBody(
        1.0, box, -1, [0, 0, 1], [0, 0, 0, 1],
        linkMasses=[0.5] * 5, linkCollisionShapeIndices=[box] * 5, linkVisualShapeIndices=[-1] * 5,
        linkPositions=[[0, 0, 0.45]] * 5, linkOrientations=[[0, 0, 0, 1]] * 5,
        linkInertialFramePositions=[[0.02, 0.01, 0.1]] * 5, linkInertialFrameOrientations=[[0, 0, 0, 1]] * 5,
        linkParentIndices=[0, 1, 2, 3, 4], linkJointTypes=CHAIN_JOINTS,
        linkJointAxis=[[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 0], [1, 0, 0]], physicsClientId=client,
    )  # fmt: skip
    return body, movable_joints(client, body)


def _randomize_chain(client: int, body: int, joints: list[int], rng: np.random.Generator) -> None:
    """A random pose and velocity of the chain, and random joint positions and rates."""
    orientation = rng.normal(size=4)
    p.resetBasePositionAndOrientation(body, rng.normal(size=3), orientation / np.linalg.norm(orientation), physicsClientId=client)
    p.resetBaseVelocity(body, rng.normal(size=3), rng.normal(size=3), physicsClientId=client)
    for joint in joints:
        dofs = 3 if CHAIN_JOINTS[joint] == p.JOINT_SPHERICAL else 1
        position = list(p.getQuaternionFromEuler(rng.normal(size=3))) if dofs == 3 else [rng.normal()]
        p.resetJointStateMultiDof(body, joint, position, list(rng.normal(size=dofs) * 3), physicsClientId=client)


def _chain_corners(client: int, body: int, link: int) -> tuple[np.ndarray, np.ndarray]:
    """The world corners of a chain link's box and its centre of mass, from ``getLinkState``."""
    from bullet_setimpact.bullet.frames import rotation_matrix

    if link == -1:
        com, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    else:
        com, orientation = p.getLinkState(body, link, computeForwardKinematics=1, physicsClientId=client)[:2]
    shape = p.getCollisionShapeData(body, link, physicsClientId=client)[0]  # its pose in the inertial frame
    points = np.array(com) + (np.array(shape[5]) + CHAIN_CORNERS @ rotation_matrix(shape[6]).T) @ rotation_matrix(orientation).T
    return points, np.array(com)


def _straight_chain(client: int, body: int, joints: list[int], turned: float) -> None:
    """The chain straight up at rest, joint 0 turned by ``turned`` [rad] and turning at 2 rad/s."""
    p.resetBasePositionAndOrientation(body, [0, 0, 1], [0, 0, 0, 1], physicsClientId=client)
    p.resetBaseVelocity(body, [0, 0, 0], [0, 0, 0], physicsClientId=client)
    for joint in joints:
        straight = [0.0, 0.0, 0.0, 1.0] if CHAIN_JOINTS[joint] == p.JOINT_SPHERICAL else [turned if joint == 0 else 0.0]
        p.resetJointStateMultiDof(body, joint, straight, [2.0] if joint == 0 else [0.0] * (len(straight) - 1 or 1), physicsClientId=client)


def test_motion_bound_speeds_hold_at_every_box_corner_of_a_random_chain(client: int) -> None:
    """The budget's speed bound (``MotionBound.speeds``, from base and joint velocities only) is
    at least the speed of every material point: checked at the 8 corners of every box link of a
    floating chain with revolute, prismatic and spherical joints at random velocities.  A
    corner's velocity is its link's centre-of-mass velocity plus ``w x (x - c)`` with both read
    from ``getLinkState(computeLinkVelocity=1)``, independently of the bound's joint-path sum."""
    from bullet_setimpact.bullet.resting.budget import MotionBound
    from bullet_setimpact.bullet.state import Snapshot

    body, joints = _random_chain(client)
    rng = np.random.default_rng(3)
    for _ in range(20):
        _randomize_chain(client, body, joints, rng)
        bound = MotionBound(client, {body: joints}).speeds(Snapshot.take(client, {body: joints}))[body]
        for link in range(-1, 5):
            if link == -1:
                linear, angular = p.getBaseVelocity(body, physicsClientId=client)
            else:
                linear, angular = p.getLinkState(body, link, computeLinkVelocity=1, computeForwardKinematics=1, physicsClientId=client)[6:8]
            points, com = _chain_corners(client, body, link)
            speeds = np.linalg.norm(np.array(linear) + np.cross(angular, points - com), axis=1)
            assert speeds.max() <= bound[link + 1] * (1 + 1e-9), (link, speeds.max(), bound[link + 1])
    # and it is nearly tight: the chain straight up, only joint 0 turning at 2 rad/s.  Link 4's
    # frame is 4 x 0.45 m above joint 0 and its box reaches 0.2 m further along z, so its farthest
    # corner is sqrt(0.05^2 + 0.1^2 + 2.0^2) = 2.0031 m from the axis point and moves at 4.0062 m/s;
    # the bound sums the reaches 4 x 0.45 + |(0.05, 0.1, 0.2)| = 2.0291 m, times 2 rad/s = 4.0583 m/s.
    _straight_chain(client, body, joints, 0.0)
    bound = MotionBound(client, {body: joints}).speeds(Snapshot.take(client, {body: joints}))[body]
    assert bound[5] == pytest.approx(2.0 * (4 * 0.45 + np.linalg.norm(CHAIN_HALF)), rel=1e-6)


def test_motion_bound_displacements_hold_at_every_box_corner_of_a_random_chain(client: int) -> None:
    """The budget's displacement bound (``MotionBound.displacements``, from the base's and the
    joints' own displacements only) is at least the displacement of every material point between
    two configurations: the 8 corners of every box link of the chain, read with ``getLinkState``
    in two random configurations, 20 pairs of them (large ones: every joint and the base's
    orientation drawn anew, the base's position 1.7 m away on average; and small ones, every
    coordinate moved by 1e-3 of that).  Tight where one joint turns: the chain straight up,
    joint 0 (axis x) turned by 0.3 rad; link 4's farthest corners, sqrt(0.1^2 + 2.0^2) =
    2.0025 m from the axis, move by the chord 2 x 2.0025 sin(0.15) = 0.5985 m, and the bound
    is 0.3 x 2.0291 = 0.6087 m (the reaches, above).  The chain's prismatic joint lengthens the
    distances below it: a bound without that fails the random pairs."""
    from bullet_setimpact.bullet.resting.budget import MotionBound
    from bullet_setimpact.bullet.state import Snapshot

    body, joints = _random_chain(client)
    bound = MotionBound(client, {body: joints})
    rng = np.random.default_rng(5)
    for scale in (1.0, 1e-3):
        for _ in range(20):
            _randomize_chain(client, body, joints, rng)
            start = Snapshot.take(client, {body: joints})
            before = {link: _chain_corners(client, body, link)[0] for link in range(-1, 5)}
            if scale == 1.0:
                _randomize_chain(client, body, joints, rng)
            else:  # a small move of every coordinate
                state = start.bodies[0]
                position = np.array(state.pose[0]) + scale * rng.normal(size=3)
                orientation = np.array(state.pose[1]) + scale * rng.normal(size=4)
                p.resetBasePositionAndOrientation(body, position, orientation / np.linalg.norm(orientation), physicsClientId=client)
                for joint, value in zip(joints, state.joint_positions, strict=True):
                    nudged = np.array(value) + scale * rng.normal(size=len(value))
                    p.resetJointStateMultiDof(
                        body, joint, list(nudged / np.linalg.norm(nudged) if len(value) == 4 else nudged), physicsClientId=client
                    )
            moved = bound.displacements(start, Snapshot.take(client, {body: joints}))[body]
            for link in range(-1, 5):
                displacement = np.linalg.norm(_chain_corners(client, body, link)[0] - before[link], axis=1).max()
                assert displacement <= moved[link + 1] * (1 + 1e-9) + 1e-15, (scale, link, displacement, moved[link + 1])
    _straight_chain(client, body, joints, 0.0)
    start = Snapshot.take(client, {body: joints})
    before = _chain_corners(client, body, 4)[0]
    _straight_chain(client, body, joints, 0.3)
    moved = bound.displacements(start, Snapshot.take(client, {body: joints}))[body]
    assert moved[5] == pytest.approx(0.3 * (4 * 0.45 + np.linalg.norm(CHAIN_HALF)), rel=1e-6)
    reach = float(np.linalg.norm(_chain_corners(client, body, 4)[0] - before, axis=1).max())
    assert reach == pytest.approx(2 * np.sqrt(0.1**2 + 2.0**2) * np.sin(0.15), rel=1e-6)


def test_a_body_moved_by_the_user_under_a_budget_is_measured_again(client: int) -> None:
    """The setting of the test above on the box ground: the ball (radius 3 cm) moves at
    ``u = 0.5 m/s`` towards the resting cube, its surface 10 cm from the cube's face, and the
    budget skips steps while it approaches.  After 0.1 s (5 cm travelled, 5 cm left) the user
    moves the ball to 1 mm from the cube's face (``resetBasePositionAndOrientation``, which
    zeroes the velocity, then ``resetBaseVelocity`` back to ``(u, 0, 0)``: the velocities are
    those the simulator last saw, only a position changed).  A budget measured before the move would still allow about the
    5 cm and let Bullet stop the ball on its own within the step (``u dt = 2.1 mm``); the
    simulator must see that the world is not the one it left (it follows the user's
    ``reset*`` calls, :mod:`~bullet_setimpact.bullet.following`) and
    measure again: one event, at ``1 mm / u = 2 ms`` after the move to within the
    localization's band (``LOCALIZED / u``), with the ball's ``v_minus = (u, 0, 0)`` to
    rounding and the penetration within the band."""
    speed = 0.5
    _setup(client, "box", gravity=0.0, height=5e-5)
    ball = _load(client, "sphere_small.urdf", -(0.025 + 0.03 + 0.1), 0.015)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, on_failure="raise")
    p.resetBaseVelocity(ball, [speed, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    for _ in range(24):
        simulator.step()
    assert not simulator.events and simulator.budget_steps > 10, "the budget did not skip the approach"
    position, orientation = p.getBasePositionAndOrientation(ball, physicsClientId=client)
    moved_at = simulator.time
    p.resetBasePositionAndOrientation(ball, [-(0.025 + 0.03 + 0.001), position[1], position[2]], orientation, physicsClientId=client)
    p.resetBaseVelocity(ball, [speed, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    for _ in range(3):
        simulator.step()
    assert len(simulator.events) == 1, [(event.time, event.bodies) for event in simulator.events]
    event = simulator.events[0]
    v_ball, _ = event.velocities(ball)
    np.testing.assert_allclose(v_ball, [speed, 0.0, 0.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-9)
    assert abs(event.time - (moved_at + 0.001 / speed)) <= LOCALIZED / speed
    assert event.max_penetration <= LOCALIZED


@pytest.mark.parametrize("ground", GROUNDS)
@pytest.mark.parametrize("urdf", ["cube_small.urdf", "sphere_small.urdf"])
def test_a_lone_body_falling_through_the_lookahead_is_budgeted_and_caught(client: int, ground: str, urdf: str) -> None:
    """A body released at rest with its lowest point ``h = 5 cm`` above the ground, alone (nothing
    touches anything), is within the simulator's 10 cm lookahead for its whole fall: the budget
    of the distance left skips closest-point queries on the way down.  Bullet's symplectic Euler
    steps give ``x(t) = h - g t (t + dt) / 2`` at the step times, so it lands at
    ``t = (-g dt / 2 + sqrt((g dt / 2)^2 + 2 g h)) / g`` (0.0989 s) with ``v = g t`` (0.970 m/s);
    as in the thrown-body test above, ``v_minus`` is that within ``g dt / 2``, the time within
    ``(g dt^2 + LOCALIZED) / v`` and the penetration within ``LOCALIZED``.  A budget that let the
    body cross the surface unseen would leave up to ``v dt = 4 mm``."""
    height = 0.05
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    load_ground(client, ground)
    body = _load(client, urdf, 0.0, height)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, on_failure="raise")
    while not simulator.events and simulator.time < 0.2:
        simulator.step()
    assert simulator.budget_steps > 0, "no closest-point query was skipped on the way down"
    for _ in range(12):
        simulator.step()
    assert len(simulator.events) == 1, [(event.time, event.bodies) for event in simulator.events]
    event = simulator.events[0]
    b = GRAVITY * DT / 2.0
    landing = (-b + math.sqrt(b * b + 2.0 * GRAVITY * height)) / GRAVITY
    arrival = GRAVITY * landing
    v_minus, _ = event.velocities(body)
    np.testing.assert_allclose(v_minus[:3], [0.0, 0.0, -arrival], atol=GRAVITY * DT / 2.0)
    assert abs(event.time - landing) <= (GRAVITY * DT**2 + LOCALIZED) / arrival
    assert event.max_penetration <= LOCALIZED


def _hovering_duck(client: int, ground: str) -> int:
    """Without gravity, ``duck_vhacd`` (one convex mesh) with its closest distance to ``ground`` 1 mm."""
    p.setGravity(0.0, 0.0, 0.0, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    load_ground(client, ground)
    duck = _load(client, "duck_vhacd.urdf", 0.0, 0.0)
    # its AABB holds Bullet's collision margins: lower the mesh to a closest distance of 1 mm
    closest = min(point[8] for point in p.getClosestPoints(0, duck, 0.1, physicsClientId=client))
    position, orientation = p.getBasePositionAndOrientation(duck, physicsClientId=client)
    p.resetBasePositionAndOrientation(duck, np.add(position, [0.0, 0.0, 1e-3 - closest]), orientation, physicsClientId=client)
    assert min(point[8] for point in p.getClosestPoints(0, duck, 0.1, physicsClientId=client)) == pytest.approx(1e-3, abs=1e-6)
    return duck


@pytest.mark.parametrize("ground", GROUNDS)
def test_a_mesh_hovering_inside_the_seed_band_is_budgeted_and_its_arrival_caught(client: int, ground: str) -> None:
    """Without gravity, the duck (``duck_vhacd``, one convex mesh) hovers with its lowest point
    ``h = 1 mm`` above the ground: inside the 2 mm seed band, out of contact (tolerance 0.1 mm).
    A mesh against a static ground goes through the same Bullet algorithm for its manifold and
    for ``getClosestPoints``, so the budget may hold while the gap stays above the tolerance:
    at rest every one of 48 steps is skipped (a budget that kept such pairs out of the whole band,
    as for box pairs, skips none).  Then the duck moves down at ``v = 5 cm/s`` (no damping, no
    force: constant velocity); it crosses the 0.9 mm of slack in about 18 ms and must arrive as
    one event with ``v_minus = -v`` along z (exactly, nothing else acts) and a penetration
    within the localization's band (``LOCALIZED``)."""
    speed = 0.05
    duck = _hovering_duck(client, ground)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, on_failure="raise")
    simulator.step()  # the first step measures the world
    for _ in range(48):
        simulator.step()
    assert simulator.budget_steps >= 48
    assert not simulator.events
    p.resetBaseVelocity(duck, [0.0, 0.0, -speed], [0.0, 0.0, 0.0], physicsClientId=client)
    for _ in range(24):
        simulator.step()
    assert len(simulator.events) == 1, [(event.time, event.bodies) for event in simulator.events]
    event = simulator.events[0]
    v_minus, _ = event.velocities(duck)
    np.testing.assert_allclose(v_minus, [0.0, 0.0, -speed, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-9)
    assert event.max_penetration <= LOCALIZED


@pytest.mark.parametrize("ground", GROUNDS)
def test_a_mesh_leaving_and_entering_the_seed_band_gets_the_reference_paths_bullet_calls(ground: str) -> None:
    """The full evaluation runs Bullet's collision detection whenever a link pair is within the
    seed band (tolerance + 2 mm), and that detection changes what Bullet's later steps compute,
    so a step the certificates skip must run it exactly then, also with nothing touching
    (``DistanceBudget.in_seed_band``).  The hovering duck (1 mm above the ground, no gravity)
    rests 24 steps inside the band; rises at 5 cm/s for 24 steps (5 mm: out of the band after
    about 1.1 mm, in its sixth step); hovers 24 steps; comes down at 5 cm/s for 48 steps (6 mm in
    some 29 steps: in again, then it lands).  With the certificates and without (the reference
    path, which evaluates every step): the same single event bit for bit and the same Bullet
    calls in the same order (:func:`_bullet_calls`); the certificates skipped a third of the
    steps or more, so the comparison is not vacuous."""

    def hover_rise_and_land(client: int) -> Callable[[ImpactSimulator], None]:
        duck = _hovering_duck(client, ground)

        def drive(simulator: ImpactSimulator) -> None:
            for velocity, steps in ((0.0, 24), (0.05, 24), (0.0, 24), (-0.05, 48)):
                p.resetBaseVelocity(duck, [0.0, 0.0, velocity], [0.0, 0.0, 0.0], physicsClientId=client)
                for _ in range(steps):
                    simulator.step()

        return drive

    certified, reference, skipped = _with_and_without_certificates(hover_rise_and_land, on_failure="raise")
    assert len(certified) == 1
    assert certified == reference
    assert skipped >= 40


@pytest.mark.slow
@pytest.mark.parametrize("ground", GROUNDS)
@pytest.mark.parametrize(
    "name",
    [
        "minitaur",
        # the kuka world lowers its damping, which PyBullet cannot report (DropWorld)
        pytest.param("kuka", marks=pytest.mark.filterwarnings("ignore::bullet_setimpact.errors.UnstableDampingWarning")),
        "duck",
        "a1",
        "humanoid",
    ],
)
def test_every_step_the_budget_skips_finds_no_new_contact(client: int, ground: str, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget's promise, checked directly: at every step it skips, the full contact
    evaluation (``ContactFinder.contacts``) finds no contact feature outside the touching set
    (a new one could be an arrival the skip would miss), and every touching closest-point
    contact still in contact (one that left unseen would come back as resting contact).
    Worlds whose mesh links rest inside the seed band (the minitaur's motors, the kuka's links
    on the table, the duck), whose feet are closest-point contacts (the a1's spheres, checked
    from Bullet's manifold) or box corners measured again as they slide (the humanoid, lying
    on the ground), dropped from 2 cm and run for 1 s; the check must have been made on most
    steps."""
    held = _check_every_skip(monkeypatch)
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    load_drop_world(client, next(world for world in DROP_WORLDS if world.name == name), ground, 0.02)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, on_failure="raise")
    for _ in range(240):
        simulator.step()
    assert len(held) >= 120


def _check_every_skip(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make every step the budget skips check that the full contact evaluation (after Bullet's
    collision detection at the configuration, as :meth:`ImpactSimulator._detect` runs it) finds
    no contact feature outside the touching set and no touching closest-point contact gone;
    returns the list that gains an entry per checked step.  A checked run makes PyBullet queries
    the others do not, so it is not compared bit for bit with another."""
    held: list[int] = []
    original = ImpactSimulator._within_budget

    def checked(self: ImpactSimulator, step: object, touching: set, points: BulletPoints) -> bool:
        skipped = original(self, step, touching, points)
        if skipped:
            p.performCollisionDetection(self.client)  # as the full evaluation reads the manifold
            found = {contact.feature for contact in self.finder.contacts()}
            assert not found - set(touching), f"t = {self.time:.4f} s: the budget skipped a step with new contacts {found - set(touching)}"
            lost = {feature for feature in touching if feature[0] == "pair"} - found
            assert not lost, f"t = {self.time:.4f} s: the budget skipped a step where {lost} left contact"
            held.append(1)
        return skipped

    monkeypatch.setattr(ImpactSimulator, "_within_budget", checked)
    return held


def _count_watch_answers(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Count :meth:`CornerWatch.holds`'s answers (True, False, None) from now on."""
    answers: dict = {True: 0, False: 0, None: 0}
    original = CornerWatch.holds

    def counted(self: CornerWatch, spent: float, manifold: Sequence[tuple]) -> bool | None:
        verdict = original(self, spent, manifold)
        answers[verdict] += 1
        return verdict

    monkeypatch.setattr(CornerWatch, "holds", counted)
    return answers


@pytest.mark.slow
@pytest.mark.parametrize("ground", GROUNDS)
def test_creeping_box_feet_are_watched_and_every_skipped_step_holds(client: int, ground: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The humanoid dropped from 2 cm falls over within 2 s and lies on the ground; its box feet
    keep creeping a few mm/s, each touching by one corner with 0.1 mm of slack, which the chain
    speed bound spends within a step (the budget used to skip none of these steps).  From 2 s to
    4 s the budget must skip at least 80 % of the steps (the feet are checked every step by a
    corner watch instead of an account), the watch must have answered True on as many, and every
    skipped step's full evaluation must find no new contact."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    load_drop_world(client, next(world for world in DROP_WORLDS if world.name == "humanoid"), ground, 0.02)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, on_failure="raise")
    for _ in range(480):
        simulator.step()
    held = _check_every_skip(monkeypatch)
    answers = _count_watch_answers(monkeypatch)
    for _ in range(480):
        simulator.step()
    assert len(held) >= 384, f"the budget skipped {len(held)} of 480 steps"
    assert answers[True] >= 384, answers


@pytest.mark.slow
@pytest.mark.parametrize("ground", GROUNDS)
def test_a_resting_jenga_stack_is_budgeted_and_every_skipped_step_holds(client: int, ground: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The jenga stack (three crossed layers of three blocks, ``drop_worlds``) dropped 2 cm,
    under the Anitescu-Potra law (fast on its 84 contacts).  The blocks of a layer lie about
    1 mm apart: inside the seed band of ``getClosestPoints``' rounded boxes, where the budget
    used to give up (it skipped no step of the resting stack); measured sharp
    (``ContactFinder.box_gap``) they have 0.9 mm of slack.  From 1 s to 2 s the budget must skip
    at least 90 % of the steps, and every skipped step's full evaluation must find no new contact."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    load_drop_world(client, next(world for world in DROP_WORLDS if world.name == "jenga"), ground, 0.02)
    simulator = ImpactSimulator(get_law("anitescu-potra"), client, seed=0, on_failure="raise")
    for _ in range(240):
        simulator.step()
    held = _check_every_skip(monkeypatch)
    for _ in range(240):
        simulator.step()
    assert len(held) >= 216, f"the budget skipped {len(held)} of 240 steps"


def test_a_cube_creeping_flat_is_budgeted_and_every_skipped_step_holds(client: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cube (``cube_small``) resting flat on the box ground, made frictionless and set creeping
    at 2 cm/s: the speed bound charges ``2 dt v`` = 0.17 mm a step against its corners' 0.1 mm of
    slack, so its account is spent every step; the pair (four corners: evaluated in full, not
    watched) is then evaluated alone every step.  Over 1 s the budget must skip at least 90 % of
    the steps (it used to skip none), every skipped step's full evaluation must find no new
    contact, no impact may be reported, and the cube keeps its speed.  (On ``GEOM_PLANE``
    Bullet's one-point-per-step manifold does not let a frictionless cube slide steadily.)"""
    cube, simulator = _resting(client, "box", "cube_small.urdf")
    p.changeDynamics(cube, -1, lateralFriction=0.0, physicsClientId=client)
    p.resetBaseVelocity(cube, [0.02, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    simulator.step()  # the velocity change: measured again
    held = _check_every_skip(monkeypatch)
    start = simulator.budget_steps
    for _ in range(240):
        simulator.step()
    assert simulator.budget_steps - start >= 216 and len(held) >= 216, simulator.budget_steps - start
    assert not simulator.events
    assert p.getBaseVelocity(cube, physicsClientId=client)[0][0] == pytest.approx(0.02, abs=1e-6)


def test_a_creeping_cube_that_stops_gets_its_account_back(client: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cube of the test above creeps for 0.25 s (its pair evaluated alone every step), then
    gets its friction back (``mu = 1`` stops 2 cm/s within a step).  At rest its slack outlasts
    any number of steps, so the pair must get an account again: over the next 0.5 s the pair is
    evaluated alone at most in the first few steps, and the budget skips at least 90 % of the steps."""
    cube, simulator = _resting(client, "box", "cube_small.urdf")
    p.changeDynamics(cube, -1, lateralFriction=0.0, physicsClientId=client)
    p.resetBaseVelocity(cube, [0.02, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    evaluations: list[int] = []
    original = ContactFinder.corner_pair_features

    def counted(self: ContactFinder, pair: tuple) -> set:
        evaluations.append(1)
        return original(self, pair)

    monkeypatch.setattr(ContactFinder, "corner_pair_features", counted)
    for _ in range(60):
        simulator.step()
    assert len(evaluations) >= 50, "the creeping cube's pair was not evaluated every step"
    p.changeDynamics(cube, -1, lateralFriction=1.0, physicsClientId=client)
    for _ in range(4):
        simulator.step()
    evaluations.clear()
    start = simulator.budget_steps
    for _ in range(120):
        simulator.step()
    assert abs(p.getBaseVelocity(cube, physicsClientId=client)[0][0]) < 1e-4  # stopped (from 2 cm/s)
    assert len(evaluations) <= 4, f"the resting cube's pair was still evaluated {len(evaluations)} times"
    assert simulator.budget_steps - start >= 108
    assert not simulator.events


def _resting(client: int, ground: str, urdf: str) -> tuple[int, ImpactSimulator]:
    """``urdf`` (``_load``) placed on ``ground`` and stepped 0.5 s by a simulator; its budget
    must have skipped most of those steps."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    load_ground(client, ground)
    body = _load(client, urdf, 0.0, 0.0)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, on_failure="raise")
    for _ in range(120):
        simulator.step()
    assert simulator.budget_steps > 60, "the budget did not skip the resting steps"
    return body, simulator


def _pushed_up(simulator: ImpactSimulator, body: int, weights: float, offset: float, steps: int) -> None:
    """``steps`` steps with an upward force of ``weights`` times the body's weight applied
    ``offset`` along x from its centre of mass."""
    client = simulator.client
    mass = p.getDynamicsInfo(body, -1, physicsClientId=client)[0]
    for _ in range(steps):
        x, y, z = p.getBasePositionAndOrientation(body, physicsClientId=client)[0]
        p.applyExternalForce(body, -1, [0.0, 0.0, weights * mass * GRAVITY], [x + offset, y, z], p.WORLD_FRAME, physicsClientId=client)
        simulator.step()


@pytest.mark.parametrize("ground", GROUNDS)
def test_a_resting_ball_lifted_off_and_falling_back_is_caught(client: int, ground: str) -> None:
    """A ball (``sphere_small``, no damping) resting on the ground is a closest-point contact,
    which the budget checks every step from Bullet's manifold (``watched_hold``), not by an
    account.  Pushed up by ``F = 2 m g`` for ``n = 6`` steps (net acceleration ``g``), it leaves
    the ground at ``v_n = n g dt`` (0.245 m/s) from ``z_n = g dt^2 n (n + 1) / 2`` (Bullet's
    symplectic Euler steps, 3.6 mm), rises to ``z_n + v_n^2 / (2 g)`` (6.6 mm) and falls back,
    arriving at ``sqrt(2 g apex)`` (0.36 m/s) within ``g dt`` (the discrete flight's height
    differs from the continuous one by ``O(g dt^2)``).  Nothing else makes the budget measure the
    pair again in that 7 mm flight (the body's lookahead account has some 10 cm): a budget
    that kept the pair as touching after it left contact would take the return for resting
    contact and miss the impact.  So: no event at rest or while lifting, then exactly one,
    with that ``v_minus``."""
    ball, simulator = _resting(client, ground, "sphere_small.urdf")
    resting_events = len(simulator.events)
    lift = 6
    _pushed_up(simulator, ball, 2.0, 0.0, lift)
    assert len(simulator.events) == resting_events
    for _ in range(60):
        simulator.step()
    assert len(simulator.events) == resting_events + 1, [(event.time, event.bodies) for event in simulator.events]
    v_lift = lift * GRAVITY * DT
    apex = GRAVITY * DT**2 * lift * (lift + 1) / 2.0 + v_lift**2 / (2.0 * GRAVITY)
    v_minus, _ = simulator.events[-1].velocities(ball)
    np.testing.assert_allclose(v_minus[2], -math.sqrt(2.0 * GRAVITY * apex), atol=GRAVITY * DT)


@pytest.mark.parametrize("ground", GROUNDS)
def test_a_resting_cube_tipped_onto_an_edge_and_falling_back_is_caught(client: int, ground: str) -> None:
    """A cube (``cube_small``, 5 cm, no damping) resting flat touches through its four bottom
    corners, a pair the budget measures again in closed form when its account is spent
    (``_touch_again``), and keeps only while the same corners touch.  Pushed up at one edge by
    ``1.5 m g`` for 6 steps, it tips onto the opposite edge (two corners leave the ground, some
    5 degrees by then) and falls back: the lifted corners strike the ground again, rotating at
    several rad/s, so their approach is far above the impact threshold and the return must be an
    impact event whose contact set holds all four corners.  A budget that kept the lifted corners
    as touching would take their return for resting contact: no event while lifting, then at
    least one (it rocks), the first with 4 contacts approaching at more than 0.1 m/s."""
    cube, simulator = _resting(client, ground, "cube_small.urdf")
    assert not simulator.events
    _pushed_up(simulator, cube, 1.5, 0.025, 6)
    assert not simulator.events
    for _ in range(60):
        simulator.step()
    assert simulator.events, "the tipped cube fell back onto its corners without an impact event"
    first = simulator.events[0]
    assert len(first.contacts) == 4
    assert first.problem.normal_velocities(first.v_minus).min() < -0.1


@contextlib.contextmanager
def _bullet_calls() -> Iterator[list[tuple[str, float]]]:
    """Records, in order, the simulator's calls that change Bullet's state beyond the positions
    and velocities a snapshot restores: its steps (with their length) and its collision
    detections, which update the contact manifolds Bullet carries into its next steps."""
    calls: list[tuple[str, float]] = []
    step, detect = simulator_module.bullet_step_simulation, p.performCollisionDetection

    def recorded_step(client: int) -> None:
        calls.append(("step", p.getPhysicsEngineParameters(physicsClientId=client)["fixedTimeStep"]))
        step(client)

    def recorded_detect(*args: object, **kwargs: object) -> None:
        calls.append(("detect", 0.0))
        detect(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(simulator_module, "bullet_step_simulation", recorded_step)
        patch.setattr(p, "performCollisionDetection", recorded_detect)
        yield calls


def _with_and_without_certificates(build: Callable[[int], Callable[[ImpactSimulator], None]], **options: object) -> tuple[list, list, int]:
    """A world run twice, with the certificates and without (the reference path), each in a
    client of its own: ``build(client)`` loads it and returns how to drive a simulator
    (``ImpactSimulator`` options ``options``) through it.  Returns the events (time, v-, v+ as
    bytes) of both runs and the steps the certificates skipped, after checking that both runs
    made the same Bullet calls (:func:`_bullet_calls`) and the reference skipped none.  Both
    worlds are loaded unseen (:func:`.drop_worlds.assert_unfollowed`; the first run's simulator is
    closed before the second world loads), so the simulators know the same motors."""
    runs = []
    for resting_budget in (True, False):
        assert_unfollowed()
        client = p.connect(p.DIRECT)
        try:
            drive = build(client)
            simulator = ImpactSimulator(get_law("routh"), client, seed=0, resting_budget=resting_budget, **options)
            try:
                with _bullet_calls() as calls:
                    drive(simulator)
            finally:
                simulator.close()
            events = [(event.time, event.v_minus.tobytes(), event.v_plus.tobytes()) for event in simulator.events]
            runs.append((events, simulator.budget_steps, calls))
        finally:
            p.disconnect(client)
    (certified, skipped, certified_calls), (reference, none, reference_calls) = runs
    assert none == 0  # the reference path skips nothing
    assert certified_calls == reference_calls
    return certified, reference, skipped


def _events_with_and_without_certificates(name: str, seconds: float) -> tuple[list, list, int]:
    """:func:`_with_and_without_certificates` of drop world ``name`` (2 cm drop, 240 Hz) stepped for ``seconds``."""

    def drop(client: int) -> Callable[[ImpactSimulator], None]:
        p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
        p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
        load_drop_world(client, next(world for world in DROP_WORLDS if world.name == name), "box", 0.02)

        def drive(simulator: ImpactSimulator) -> None:
            for _ in range(round(seconds / DT)):
                simulator.step()

        return drive

    return _with_and_without_certificates(drop)


QUICK_WORLDS = ("a1", "humanoid", "cube")


@pytest.mark.filterwarnings("ignore::bullet_setimpact.errors.UnstableDampingWarning")
@pytest.mark.filterwarnings("ignore::bullet_setimpact.errors.UnknownMotorWarning")  # loaded unseen on purpose
@pytest.mark.parametrize(
    "name", [*QUICK_WORLDS, *(pytest.param(world.name, marks=pytest.mark.slow) for world in DROP_WORLDS if world.name not in QUICK_WORLDS)]
)
def test_the_certificates_change_no_event(name: str) -> None:
    """A certificate only lets a step skip the contact evaluation when that evaluation would find
    the contact set it found (no arrival, no contact lost), and skipping it leaves Bullet's
    steps as they were: the skipping path makes the reference path's steps and collision
    detections in the same order (the reference evaluates every step), so the world's
    trajectory, and every event, is the same bit for bit.  Each drop world falls 2 cm, lands and
    rests for 2 s (1.5 s for the jenga stack); the certificates must have skipped a quarter of
    the steps (the humanoid falls over for most of its first second),
    so the comparison is not vacuous."""
    seconds = 1.5 if name == "jenga" else 2.0
    certified, reference, skipped = _events_with_and_without_certificates(name, seconds)
    assert certified == reference
    assert certified  # every world lands
    assert skipped >= 0.25 * seconds / DT


def _walk(walker: str, resting_budget: bool, seconds: float) -> tuple[list, int, list]:
    """The events (time, v-, v+ as bytes) of ``walker`` trotting for ``seconds`` at 240 Hz
    (:mod:`.pattern_envs`), the steps the certificates skipped and the simulator's Bullet calls
    (:func:`_bullet_calls`).  The world is loaded unseen (:func:`.drop_worlds.assert_unfollowed`)
    and the simulator closed after, so every run knows the same motors."""
    assert_unfollowed()
    if walker == "a1":
        client, joints, targets = a1_world(DT)
        command = trot(client, joints, targets, 33.5)
    else:
        client, robot = minitaur_world(DT)

        def command(t: float) -> None:
            minitaur_command(robot, t)

    try:
        simulator = ImpactSimulator(get_law("routh"), client._client, seed=0, resting_budget=resting_budget)
        try:
            with _bullet_calls() as calls:
                for index in range(round(seconds / DT)):
                    command(index * DT)
                    simulator.step()
        finally:
            simulator.close()
        events = [(event.time, event.v_minus.tobytes(), event.v_plus.tobytes()) for event in simulator.events]
        return events, simulator.budget_steps, calls
    finally:
        client.disconnect()


@pytest.mark.parametrize("walker", ["a1", "minitaur"])
def test_the_certificates_change_no_event_while_robots_walk(walker: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A walking robot's swinging legs spend their accounts out of contact every step or two,
    so its body pair with the ground is swept instead (:class:`SweptPairsClear`: the full
    evaluation's own seed query, every step).  The a1 and the minitaur trot for 1 s: the events
    are the reference path's bit for bit, with the same Bullet calls in the same order (a step
    skipped with a foot on the ground runs Bullet's collision detection, as the full evaluation
    does); in a run of its own, at every step the certificates
    skip, the full evaluation finds no new contact and none lost.  The certificates skipped 20 steps or
    more (the a1 some 200; the minitaur, which strikes some 57 times a second, about 30 while its gait
    ramps up), with a body pair swept on most of them, so neither check is vacuous."""
    swept: list[int] = []
    original = DistanceBudget.swept_clear

    def counted(self: DistanceBudget) -> bool:
        clear = original(self)
        swept.append(bool(self._swept) and clear)
        return clear

    monkeypatch.setattr(DistanceBudget, "swept_clear", counted)
    certified, skipped, certified_calls = _walk(walker, True, 1.0)
    assert skipped >= 20
    assert sum(swept) >= 0.5 * skipped
    held = _check_every_skip(monkeypatch)
    _, checked, _ = _walk(walker, True, 1.0)
    assert checked == len(held) >= 20
    monkeypatch.undo()
    reference, none, reference_calls = _walk(walker, False, 1.0)
    assert none == 0
    assert certified_calls == reference_calls
    assert certified == reference
    assert len(certified) >= 8  # the feet strike


def test_a_fixed_base_set_moving_under_a_budget_voids_its_still_links(client: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed base's links that no joint moves are at rest with it (``MotionBound.still``), so an
    account against them has a static side and keeps its headroom while the arm's joints move.
    But Bullet moves a fixed base whose velocity the user sets: the budget must then check its
    accounts one by one, or the base would reach the cube unseen.  A fixed-base arm (a 10 cm box
    base, one revolute link above it), its base 5 cm from a resting ``cube_small`` on the box
    ground, is set moving towards it at 0.5 m/s after 0.2 s: its base is a still link before,
    and no budget keeps it still after; at every step the certificates skip, the full
    evaluation finds no new contact; and the base reaches the cube.  (Impacts treat fixed
    bases as at rest, so that contact is Bullet's, not an event.)"""
    held = _check_every_skip(monkeypatch)
    cube = _setup(client, "box")
    half = p.getAABB(cube, -1, physicsClientId=client)[1][0]
    base = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05] * 3, physicsClientId=client)
    link = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.02, 0.02, 0.05], physicsClientId=client)
    arm = p.createMultiBody(
        0.0, base, -1, [-(half + 0.05 + 0.05), 0.0, 0.06], [0, 0, 0, 1],
        linkMasses=[0.5], linkCollisionShapeIndices=[link], linkVisualShapeIndices=[-1],
        linkPositions=[[0, 0, 0.12]], linkOrientations=[[0, 0, 0, 1]], linkInertialFramePositions=[[0, 0, 0]],
        linkInertialFrameOrientations=[[0, 0, 0, 1]], linkParentIndices=[0], linkJointTypes=[p.JOINT_REVOLUTE],
        linkJointAxis=[[0, 0, 1]], physicsClientId=client,
    )  # fmt: skip
    simulator = ImpactSimulator(get_law("routh"), client, seed=0)
    assert simulator._resting is not None and simulator._resting.motion_bound.still == {(arm, -1)}
    for _ in range(48):
        simulator.step()
    assert len(held) >= 24
    ledger = simulator._resting.ledger
    assert ledger is not None and ledger._still  # the base's accounts have a static side
    p.resetBaseVelocity(arm, [0.5, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    for _ in range(36):  # 0.15 s, 7.5 cm
        simulator.step()
        assert simulator._resting.ledger is None or not simulator._resting.ledger._still  # ... no longer
    assert p.getClosestPoints(arm, cube, 0.0, -1, -1, physicsClientId=client)  # it reached the cube


def test_resting_budget_takes_only_a_bool(client: int) -> None:
    with pytest.raises(ValueError, match="resting_budget must be True or False, got 'no'"):
        ImpactSimulator(get_law("routh"), client, resting_budget="no")


def test_moving_a_static_body_drops_the_budget(client: int) -> None:
    """A cube (``cube_small``, 5 cm) resting on the ground, and a static wall (a 10 cm box) whose
    face is 5 cm from the cube's side: the certificates open within a few steps and skip the
    steps while nothing moves.  The accounts charge only the moving links, so when the user's
    code moves the wall to 2 cm from the cube (``resetBasePositionAndOrientation``, a state
    change the simulator follows), no account is spent, yet the pair is 3 cm closer than it was
    measured: the next step must be evaluated in full."""
    cube = _setup(client, "box")
    low, high = p.getAABB(cube, -1, physicsClientId=client)
    wall = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05, 0.05, 0.05], physicsClientId=client)
    centre = [high[0] + 0.05 + 0.05, 0.5 * (low[1] + high[1]), 0.05]
    body = p.createMultiBody(0.0, wall, basePosition=centre, physicsClientId=client)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0)
    for _ in range(24):
        simulator.step()
    skipped = simulator.budget_steps
    simulator.step()
    assert simulator.budget_steps == skipped + 1  # at rest, the budget skips the step
    p.resetBasePositionAndOrientation(body, [centre[0] - 0.03, centre[1], centre[2]], [0.0, 0.0, 0.0, 1.0], physicsClientId=client)
    simulator.step()
    assert simulator.budget_steps == skipped + 1  # the step was evaluated in full


def test_a_velocity_written_back_every_step_keeps_the_budget(client: int) -> None:
    """A cube resting on the ground; before each of 10 steps the user's code writes the cube's
    own velocity back (``resetBaseVelocity``, as a controller setting a body's velocity every
    step would).  The call is followed, the state read again has the positions the last step
    left, and no static body moved: the certificates stay, and all 10 steps are skipped."""
    cube = _setup(client, "box")
    simulator = ImpactSimulator(get_law("routh"), client, seed=0)
    for _ in range(24):
        simulator.step()
    skipped = simulator.budget_steps
    for _ in range(10):
        p.resetBaseVelocity(cube, *p.getBaseVelocity(cube, physicsClientId=client), physicsClientId=client)
        simulator.step()
    assert simulator.budget_steps == skipped + 10


@pytest.mark.parametrize("resting_budget", [True, False])
def test_a_state_bullet_makes_non_finite_is_reported_at_the_next_step(client: int, resting_budget: bool) -> None:
    """A cube resting on the ground (the certificates skip its steps), then an external force of
    1e308 N for one step: Bullet's step leaves it with inf or NaN velocities and positions, and
    no call of the user's code moved it.  With and without the certificates, that step ends
    and the next one stops with the error naming the body, before stepping on from the state."""
    cube = _setup(client, "box")
    simulator = ImpactSimulator(get_law("routh"), client, seed=0, resting_budget=resting_budget)
    for _ in range(24):
        simulator.step()
    assert (simulator.budget_steps > 0) == resting_budget
    p.applyExternalForce(cube, -1, [0.0, 0.0, 1e308], [0.0, 0.0, 0.0], p.WORLD_FRAME, physicsClientId=client)
    p.applyExternalForce(cube, -1, [0.0, 0.0, 1e308], [0.0, 0.0, 0.0], p.WORLD_FRAME, physicsClientId=client)
    simulator.step()
    assert not all(math.isfinite(x) for x in p.getBaseVelocity(cube, physicsClientId=client)[0])
    with pytest.raises(ValueError, match=rf"bodies \[{cube}\] have NaN or inf positions or velocities"):
        simulator.step()
