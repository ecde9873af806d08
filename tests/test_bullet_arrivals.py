"""No missed impacts: a body thrown down at the ground is caught as one event
with the free-fall approach velocity, for boxes, spheres and wheels (cylinders), on the box
ground and on a true GEOM_PLANE."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact import JointAxisWarning
from bullet_setimpact.bullet import contacts as contacts_module
from bullet_setimpact.bullet import simulator as simulator_module
from bullet_setimpact.bullet.events import LinkVelocities, arrivals, contact_points, normal_velocity
from bullet_setimpact.bullet.examples import urdf_path
from bullet_setimpact.bullet.simulator import ImpactSimulator
from bullet_setimpact.laws import get_law

from .drop_worlds import DROP_WORLDS, GROUNDS, load_drop_world
from .pattern_envs import minitaur_world

GRAVITY = 9.81
DT = 1.0 / 240.0


@pytest.mark.filterwarnings("ignore::bullet_setimpact.errors.UnknownMotorWarning")  # r2d2's load-time motors: loaded before
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


def test_a_skewed_joints_link_arrives_at_the_models_velocity(client: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """pybullet_data's MJCF ant settled on box ground (plain Bullet steps, motors off), then set
    moving: its base down at 0.12 m/s, every joint still but ``ankle_1`` (axis ``(-1, 1, 0)``,
    length sqrt(2)), at the rate that lifts the foot's contact point at 0.10 m/s along the
    contact normal by the model (``0.10 / (n . J_p[:, ankle_1])``).  The model's separating
    velocity of that contact is -0.12 + 0.10 = -0.02 m/s: approaching.  Bullet reports the
    ankle's share along the axis as given, sqrt(2) times the model's: -0.12 + 0.1414 = +0.0214
    m/s, separating.  Taken as a newcomer, the contact arrives when the arrival test reads the
    model's velocities for the ant, and not on Bullet's; the simulator's steps hand it the
    ant's model."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.loadURDF(urdf_path("ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    ant = p.loadMJCF(str(Path(pybullet_data.getDataPath()) / "mjcf" / "ant.xml"), physicsClientId=client)[-1]
    joints = list(range(p.getNumJoints(ant, physicsClientId=client)))
    p.setJointMotorControlArray(ant, joints, p.VELOCITY_CONTROL, forces=[0.0] * len(joints), physicsClientId=client)
    for _ in range(240):
        p.stepSimulation(physicsClientId=client)
    ankle = [p.getJointInfo(ant, joint, physicsClientId=client)[1] for joint in joints].index(b"ankle_1")
    with pytest.warns(JointAxisWarning):
        simulator = ImpactSimulator(get_law("routh"), client)
    foot = next(c for c in simulator.finder.contacts() if ant in (c.body_a, c.body_b) and c.side(ant)[0] in (ankle, ankle + 1))
    link, point, _ = foot.side(ant)
    model = simulator._skewed[ant]
    column = model.block(ant).start + 6 + model.body(ant).joints.index(ankle)
    outward = foot.normal if foot.body_a == ant else -foot.normal  # the ant's side separates along it
    lift = outward @ model.configuration().point_jacobian(ant, link, point)[:, column]
    for joint in joints:
        p.resetJointState(ant, joint, p.getJointState(ant, joint, physicsClientId=client)[0], 0.0, physicsClientId=client)
    p.resetJointState(ant, ankle, p.getJointState(ant, ankle, physicsClientId=client)[0], 0.10 / lift, physicsClientId=client)
    p.resetBaseVelocity(ant, [0.0, 0.0, -0.12], [0.0, 0.0, 0.0], physicsClientId=client)
    assert normal_velocity(foot, LinkVelocities(client, simulator._skewed)) == pytest.approx(-0.02, abs=1e-9)
    assert normal_velocity(foot, LinkVelocities(client)) == pytest.approx(-0.12 + 0.10 * math.sqrt(2.0), abs=1e-6)
    threshold = simulator.impact_velocity_threshold
    assert arrivals(client, [foot], set(), threshold, simulator._skewed)[0] == [foot]
    assert arrivals(client, [foot], set(), threshold)[0] == []
    handed = []
    monkeypatch.setattr(simulator_module, "arrivals", lambda *args: handed.append(args[4]) or arrivals(*args))
    simulator.step()
    assert handed and all(ant in models for models in handed)


def test_every_event_resolves_a_contact_that_arrived() -> None:
    """pybullet_envs' Minitaur standing on the ground, its motors holding the standing pose.
    Each foot is the bottom face (1 cm square) of two lower-leg boxes pressed into the ground:
    some corners penetrate by tenths of a millimetre, and Bullet's speculative contacts bear
    load on a corner hovering above it, out of the contact tolerance (0.1 mm), at the end of
    the step as at its start.  Bullet's soft contacts and soft knee loops let touching corners
    sink between impacts.  An impact needs an arrival: a contact that was not touching when the
    step's detection began and approaches faster than the threshold in the velocity the law
    resolves (the knee loops' constraint velocity taken out).  So every event contains such a
    contact, and every arrival is localized with a feature within the tolerance (an impact's
    contacts are those within it).  A hovering corner held out of contact against the step's
    forces has not arrived.  Counting it as an arrival, or an arrival that separates, resolved
    as impacts only the touching corners Bullet had left sinking: 91 arrivals of 1 s found no
    feature in contact, and the robot had 124 events instead of 41.  A corner approaching on
    its own that Bullet stopped short of the tolerance has arrived, and is localized before
    Bullet's push, within the tolerance.  The robot stands for 1 s; the check is not vacuous:
    arrivals with a point Bullet pushed, and events, do occur."""
    client, robot = minitaur_world(DT)
    simulator = ImpactSimulator(get_law("routh"), client._client, seed=0)
    touching_before: list[set] = []
    arrivals_seen: list[tuple[bool, float]] = []  # pushed, gap where localized
    original_detect, original_localize, original_resolve = simulator._detect, simulator._localize, simulator._resolve

    def detect(step: simulator_module._Step) -> simulator_module._Arrival | None:
        touching_before.append(set(simulator._touching or ()))
        return original_detect(step)

    def localize(step: simulator_module._Step, arrival: simulator_module._Arrival) -> float:
        tau = original_localize(step, arrival)
        arrivals_seen.append((arrival.pushed, min(simulator.finder.feature_gaps(arrival.features, simulator_module.LOOKAHEAD).values())))
        return tau

    def resolve(time: float, *touching: object) -> list:
        events = original_resolve(time, *touching)
        if time > 0.0:  # the first step resolves the state the robot was loaded in
            for event in events:
                normal = event.problem.normal_velocities(event.problem.constrained_velocity(event.v_minus))
                arrived = [
                    speed < -simulator.impact_velocity_threshold
                    for contact, speed in zip(event.contacts, normal, strict=True)
                    if contact.feature not in touching_before[-1]
                ]
                assert any(arrived), f"an event at t = {time} without an arrival"
        return events

    simulator._detect, simulator._localize, simulator._resolve = detect, localize, resolve
    try:
        for _ in range(240):
            robot.ApplyAction(robot.ConvertFromLegModel(np.zeros(8)))
            simulator.step()
        tolerance = simulator.contact_tolerance
        assert all(gap <= tolerance for _, gap in arrivals_seen)
        assert any(pushed for pushed, _ in arrivals_seen) and len(simulator.events) > 1
    finally:
        simulator.close()
        client.disconnect()


def test_an_arrival_is_localized_past_a_feature_already_in_contact(client: int) -> None:
    """An arrival may hold a feature already at the localization's target when the step began:
    pybullet_envs' Minitaur had a self-contact Bullet pushed at a gap of about 0 arrive with
    both feet falling at 1.9 m/s from 0.6-1.5 mm above the ground.  Such a feature cannot be
    localized; the others must be.  Here a cube resting on the ground lends a corner to the
    arrival of a sphere dropped from 5 cm, as a point Bullet pushed (its target is just outside
    contact, 1e-5 m, where the resting corner already is): the sphere's landing is still
    localized inside its step and resolved with the free-fall velocity,
    ``v = sqrt(2 g h)`` (0.990 m/s) within ``g dt`` (Bullet's symplectic steps).  Taking the
    arrival at the step's start instead found nothing approaching there, and Bullet landed the
    sphere itself."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    sphere = load_drop_world(client, next(world for world in DROP_WORLDS if world.name == "sphere"), "box", 0.05)[0]
    cube = p.loadURDF(str(Path(pybullet_data.getDataPath()) / "cube_small.urdf"), [1.0, 0.0, 0.025], physicsClientId=client)
    for _ in range(24):  # the cube settles on the ground
        p.stepSimulation(physicsClientId=client)
    p.resetBasePositionAndOrientation(
        sphere, [0.0, 0.0, 0.05 + 0.5 * _sphere_diameter(client, sphere)], [0, 0, 0, 1], physicsClientId=client
    )
    p.resetBaseVelocity(sphere, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0)
    resting = next(c.feature for c in simulator.finder.contacts() if cube in (c.body_a, c.body_b) and c.feature[0] == "vertex")
    original = simulator._detect

    def detect(step: simulator_module._Step) -> simulator_module._Arrival | None:
        arrival = original(step)  # the sphere's, the one body that can arrive
        if arrival is None:
            return None
        gaps = {**arrival.end_gaps, resting: simulator.finder.feature_gaps([resting], simulator_module.LOOKAHEAD)[resting]}
        return simulator_module._Arrival([resting, *arrival.features], True, gaps, arrival.touching, arrival.touched)

    simulator._detect = detect
    try:
        for _ in range(48):
            simulator.step()
        landings = [event for event in simulator.events if sphere in event.bodies]
        assert landings, "the sphere's landing was left to Bullet"
        v_minus, _ = landings[0].velocities(sphere)
        assert v_minus[2] == pytest.approx(-math.sqrt(2.0 * GRAVITY * 0.05), abs=GRAVITY * DT)
    finally:
        simulator.close()


def _sphere_diameter(client: int, body: int) -> float:
    low, high = p.getAABB(body, -1, physicsClientId=client)
    return high[2] - low[2]


def _capsule(client: int, tilt: float) -> int:
    """A 1 kg capsule (radius 0.04 m, 0.3 m between its end centres) lying along x, turned
    ``tilt`` about y (its +x end higher), its low end 2 cm above the box ground."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    p.loadURDF(urdf_path("ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    shape = p.createCollisionShape(p.GEOM_CAPSULE, radius=0.04, height=0.3, physicsClientId=client)
    centre = [0.0, 0.0, 0.15 * math.sin(tilt) + 0.04 + 0.02]
    return p.createMultiBody(1.0, shape, -1, centre, p.getQuaternionFromEuler([0.0, math.pi / 2 - tilt, 0.0]), physicsClientId=client)


def _thrown_capsule(tilt: float, velocity: list[float], spin: float, steps: int, lowered: float = 0.0) -> list[ImpactSimulator]:
    """The capsule of :func:`_capsule` lowered by ``lowered``, thrown at ``velocity`` turning at
    ``spin`` about y, and stepped ``steps`` times on both paths, with the resting-contact
    certificates and without: the two closed simulators, in that order."""
    simulators = []
    for resting_budget in (True, False):
        client = p.connect(p.DIRECT)
        try:
            body = _capsule(client, tilt)
            centre, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
            p.resetBasePositionAndOrientation(body, [*centre[:2], centre[2] - lowered], orientation, physicsClientId=client)
            p.resetBaseVelocity(body, velocity, [0.0, spin, 0.0], physicsClientId=client)
            simulator = ImpactSimulator(get_law("routh"), client, seed=0, resting_budget=resting_budget)
            for _ in range(steps):
                simulator.step()
            simulator.close()
        finally:
            p.disconnect(client)
        simulators.append(simulator)
    return simulators


def test_a_capsules_second_end_landing_is_an_impact() -> None:
    """Heel, then toe: a capsule tilted 0.3 rad, thrown down at 1.2 m/s, lands on its low end
    (one contact: Bullet's point of the pair), pivots, and its other end, 0.3 sin 0.3 = 8.9 cm
    higher, swings down onto the ground.  Bullet's points of a link pair share one feature, so
    that second end was never an arrival: Bullet stopped it, 2 mm deep.  It is an impact:
    resolved in a second event whose contacts are both ends (0.3 m apart), the new one
    approaching faster than 1 m/s (a rod pivoting from rest about its low end brings the other
    end down at ``sqrt(3 g h) = 1.6`` m/s; the first impact leaves it turning already), and
    leaving neither end approaching (Routh's inelastic impact).  The resting-contact
    certificates, which skip steps in between, find the same events bit for bit."""
    runs = []
    for resting_budget, simulator in zip((True, False), _thrown_capsule(0.3, [0.0, 0.0, -1.2], 0.0, 30), strict=True):
        assert len(simulator.events) == 2, [event.time for event in simulator.events]
        heel, toe = simulator.events
        assert len(heel.contacts) == 1
        assert len(toe.contacts) == 2 and heel.time < toe.time
        (body,) = toe.bodies
        ends = [contact.position_a if contact.body_a == body else contact.position_b for contact in toe.contacts]
        assert np.linalg.norm(ends[0] - ends[1]) == pytest.approx(0.3, abs=0.01)
        speeds = toe.problem.normal_velocities(toe.v_minus)
        assert max(-speeds) > 1.0 and min(-speeds) < simulator.impact_velocity_threshold  # the heel rests, the toe strikes
        assert (toe.problem.normal_velocities(toe.v_plus) >= -1e-9).all()
        assert (simulator.budget_steps > 0) == resting_budget
        runs.append([(event.time, event.v_minus.tolist(), event.v_plus.tolist()) for event in simulator.events])
    assert runs[0] == runs[1]


@pytest.mark.parametrize(("tilt", "spin", "speed"), [(0.3, 0.0, 3.0), (0.57, 20.0, 4.0)])
def test_an_impact_bullet_stops_before_contact_is_resolved_by_the_law(tilt: float, spin: float, speed: float) -> None:
    """A capsule tilted ``tilt`` about y, its low end 1 mm above the ground, thrown down at
    ``speed`` and turning at ``spin`` about y (its low end rising).  Its low end's lowest point,
    ``r = (-0.15 cos(tilt), 0, -0.15 sin(tilt) - 0.04)`` from the centre, has free-flight gap and
    normal velocity (the tilt turning to ``tilt - spin t``)::

        gap(t) = 1 mm - speed t - g t^2 / 2 + 0.15 (sin(tilt) - sin(tilt - spin t))
        v_n(t) = -speed - g t + 0.15 spin cos(tilt - spin t)

    so it strikes within the first step (1/240 s): at 0.33 ms at -3.003 m/s, and at 0.68 ms at
    -1.46 m/s.  Bullet's manifold holds the point at the step's start, 1 mm out, and its
    speculative contact stops it before contact: within the tolerance (the first world: resolved
    at the step's end, the impact would be at -0.22 m/s, Bullet having taken 2.8 m/s off the
    approach) or beyond it (the second: no event at all, Bullet taking the impact).  The impact
    is the law's: one event in the first step, where the
    free-flight gap is within the tolerance, at ``v_n`` of that time, leaving the end not
    approaching (Routh's inelastic impact).  Both paths find it bit for bit."""
    runs = []
    for simulator in _thrown_capsule(tilt, [0.0, 0.0, -speed], spin, 1, lowered=0.019):
        assert len(simulator.events) == 1
        (event,) = simulator.events
        t = event.time
        gap = 1e-3 - speed * t - GRAVITY * t**2 / 2 + 0.15 * (math.sin(tilt) - math.sin(tilt - spin * t))
        assert abs(gap) <= simulator.contact_tolerance
        assert event.problem.normal_velocities(event.v_minus).min() == pytest.approx(
            -speed - GRAVITY * t + 0.15 * spin * math.cos(tilt - spin * t), abs=1e-3
        )
        assert (event.problem.normal_velocities(event.v_plus) >= -1e-9).all()
        runs.append((t, event.v_minus.tolist(), event.v_plus.tolist()))
    assert runs[0] == runs[1]


def test_a_toe_the_re_simulations_hold_out_is_resolved_where_it_strikes() -> None:
    """Heel, then toe, with a toe 0.3 sin 0.08 = 24 mm up: the capsule of the heel-and-toe test
    tilted 0.08 rad, thrown down at 3 m/s.  The heel strikes at 3 + g t = 3.06 m/s (within the
    ``g dt / 2`` of Bullet's steps and its default damping, as in the drop test above); angular
    momentum about it is kept through its impact, ``m v (0.15 cos 0.08) = (I_yy + m d^2) omega``
    with PyBullet's capsule inertia ``I_yy = 0.012567`` and ``d`` the heel's lowest point from the
    centre (0.1495, 0.052 m): ``omega = 12.16`` rad/s, so the toe, 0.3 cos 0.08 from the heel,
    comes down at 3.64 m/s, a little faster after the swing under gravity.  The step that finds
    it takes it 13.7 mm deep; Bullet's collision detection then puts its point in the manifold,
    and every re-simulation from the step's start holds it at the surface, never at the
    root find's target just inside.  A root find closing on the step's end would find Bullet
    had taken the approach down to 0.49 m/s.  The toe is resolved where it strikes: its gap within
    the tolerance, approaching at 3.64 m/s to within -2 % / +5 %, on both paths alike."""
    runs = []
    for simulator in _thrown_capsule(0.08, [0.0, 0.0, -3.0], 0.0, 8):
        assert len(simulator.events) == 2
        heel, toe = simulator.events
        assert heel.problem.normal_velocities(heel.v_minus).min() == pytest.approx(-(3.0 + GRAVITY * heel.time), abs=GRAVITY * DT / 2)
        assert max(abs(contact.gap) for contact in toe.contacts) <= simulator.contact_tolerance
        assert -toe.problem.normal_velocities(toe.v_minus).min() == pytest.approx(3.64 * 1.015, rel=0.035)
        runs.append([(event.time, event.v_minus.tolist(), event.v_plus.tolist()) for event in simulator.events])
    assert runs[0] == runs[1]


def test_a_capsule_rolling_on_its_side_has_no_impact() -> None:
    """A capsule lying flat on the ground, settled for 1 s, then rolled about its axis at 0.3 m/s
    (``omega = v / r``): its line contact moves on with it, and Bullet's points wander along
    it, but nothing arrives: no event while it rolls 1 s (0.3 m), on either path."""
    for resting_budget in (True, False):
        client = p.connect(p.DIRECT)
        try:
            body = _capsule(client, 0.0)
            p.resetBasePositionAndOrientation(
                body, [0.0, 0.0, 0.04], p.getQuaternionFromEuler([0.0, math.pi / 2, 0.0]), physicsClientId=client
            )
            p.changeDynamics(body, -1, linearDamping=0.0, angularDamping=0.0, rollingFriction=0.0, physicsClientId=client)
            simulator = ImpactSimulator(get_law("routh"), client, seed=0, resting_budget=resting_budget)
            for _ in range(240):
                simulator.step()
            settled = len(simulator.events)
            p.resetBaseVelocity(body, [0.0, 0.3, 0.0], [-0.3 / 0.04, 0.0, 0.0], physicsClientId=client)
            for _ in range(240):
                simulator.step()
            assert p.getBasePositionAndOrientation(body, physicsClientId=client)[0][1] > 0.25  # it rolled on
            assert simulator.events[settled:] == []
            simulator.close()
        finally:
            p.disconnect(client)


def test_a_point_is_gained_beside_touching_points_only() -> None:
    """The rule that tells a pair's new point apart (:func:`~bullet_setimpact.bullet.contacts._gained`),
    on points of one link: one near a touched point (within 1 cm) and one 0.3 m away is a gained
    point, the far one; all far (the pair rolled or slid on) or all near (the same contact) is none."""
    before = np.array([[0.0, 0.0, 0.0]])
    near, far = np.array([0.004, 0.0, 0.0]), np.array([0.3, 0.0, 0.0])
    assert contacts_module._gained([near, far], before, 0.01) == [False, True]
    assert contacts_module._gained([far, far + 0.01], before, 0.01) == [False, False]
    assert contacts_module._gained([near, near], before, 0.01) == [False, False]


def test_only_a_sphere_on_a_convex_primitive_touches_at_one_point(client: int) -> None:
    """Two convex shapes touch at one point at most, and a sphere touches any convex shape at one
    point; so a single sphere against a single box, sphere, capsule or cylinder can gain no
    point beside its contact, and the certificates need not read Bullet's manifold for it.  A
    capsule on a box (its two ends), a sphere against a mesh (not known convex) or against a
    link of two shapes (one point on each) can."""

    def body(shape: int, x: float) -> int:
        return p.createMultiBody(1.0, shape, -1, [x, 0.0, 1.0], physicsClientId=client)

    sphere = body(p.createCollisionShape(p.GEOM_SPHERE, radius=0.05, physicsClientId=client), 0.0)
    box = body(p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05] * 3, physicsClientId=client), 1.0)
    capsule = body(p.createCollisionShape(p.GEOM_CAPSULE, radius=0.05, height=0.2, physicsClientId=client), 2.0)
    cylinder = body(p.createCollisionShape(p.GEOM_CYLINDER, radius=0.05, height=0.2, physicsClientId=client), 3.0)
    mesh = body(
        p.createCollisionShape(p.GEOM_MESH, fileName=str(Path(pybullet_data.getDataPath()) / "duck_vhacd.obj"), physicsClientId=client), 4.0
    )
    two = p.createCollisionShapeArray(
        [p.GEOM_BOX, p.GEOM_BOX],
        halfExtents=[[0.05] * 3, [0.05] * 3],
        collisionFramePositions=[[0, 0, 0], [0.2, 0, 0]],
        physicsClientId=client,
    )
    compound = body(two, 5.0)
    finder = contacts_module.ContactFinder(client, [sphere, box, capsule, cylinder, mesh, compound], 1e-4)
    one = [(sphere, box), (sphere, sphere), (sphere, capsule), (sphere, cylinder)]
    more = [(capsule, box), (sphere, mesh), (sphere, compound), (box, box)]
    assert all(finder.single_point(((a, -1), (b, -1))) for a, b in one)
    assert not any(finder.single_point(((a, -1), (b, -1))) for a, b in more)


def test_two_static_links_touching_keep_the_resting_budget(client: int) -> None:
    """An arm's fixed base resting on a table: two links that never move, touching through
    Bullet's points (a capsule base lying on the box ground), and a cube resting beside them.
    Bullet keeps no manifold between two static links, and they can gain no point: the pair is
    not followed for gained points (read, its empty manifold dropped the budget at every step;
    PandaPush skipped none of its resting steps).  The budget skips all but the first steps of
    a resting second."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DT, physicsClientId=client)
    p.loadURDF(urdf_path("ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    base = p.createCollisionShape(p.GEOM_CAPSULE, radius=0.04, height=0.3, physicsClientId=client)
    link = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.02, 0.02, 0.1], physicsClientId=client)
    p.createMultiBody(
        0.0,
        base,
        -1,
        [1.0, 0.0, 0.04 - 5e-5],
        p.getQuaternionFromEuler([0.0, math.pi / 2, 0.0]),
        linkMasses=[1.0],
        linkCollisionShapeIndices=[link],
        linkVisualShapeIndices=[-1],
        linkPositions=[[-0.5, 0.0, 0.0]],
        linkOrientations=[[0, 0, 0, 1]],
        linkInertialFramePositions=[[0, 0, 0]],
        linkInertialFrameOrientations=[[0, 0, 0, 1]],
        linkParentIndices=[0],
        linkJointTypes=[p.JOINT_REVOLUTE],
        linkJointAxis=[[0, 0, 1]],
        physicsClientId=client,
    )
    p.loadURDF(str(Path(pybullet_data.getDataPath()) / "cube_small.urdf"), [0.0, 0.0, 0.025], physicsClientId=client)
    simulator = ImpactSimulator(get_law("routh"), client, seed=0)
    for _ in range(240):
        simulator.step()
    assert simulator.budget_steps >= 216, simulator.budget_steps
    simulator.close()
