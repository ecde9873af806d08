"""The simulator follows what the user's code does to the world after hooking
(:mod:`bullet_setimpact.bullet.following`): dynamics changed, bodies loaded, removed and reset,
commands that last one Bullet step, the user's contact ERP, MJCF bodies.

Each expected value is derived in the test's docstring; "plain" is the same world stepped by
PyBullet alone.
"""

from __future__ import annotations

import os

import numpy as np
import pybullet as p
import pybullet_data
import pytest

import bullet_setimpact
from bullet_setimpact import ImpactSimulator, RouthImpact
from bullet_setimpact.bullet import following
from bullet_setimpact.bullet import simulator as simulator_module
from bullet_setimpact.bullet.following import shape_data_unsafe

DATA = pybullet_data.getDataPath()
DT = 1.0 / 240.0


def _ground(client: int) -> int:
    """A static 10 m box whose top face is z = 0."""
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[5.0, 5.0, 0.5], physicsClientId=client)
    return p.createMultiBody(0.0, shape, basePosition=[0.0, 0.0, -0.5], physicsClientId=client)


def _sphere(client: int, radius: float, mass: float, position: list[float]) -> int:
    shape = p.createCollisionShape(p.GEOM_SPHERE, radius=radius, physicsClientId=client)
    return p.createMultiBody(mass, shape, basePosition=position, physicsClientId=client)


def _free(client: int, body: int) -> None:
    """No damping: the analytic velocities hold exactly between events."""
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        p.changeDynamics(body, link, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)


def test_friction_set_to_zero_after_hooking(client: int) -> None:
    """A sphere (r = 0.1 m, 1 kg) strikes the ground at 2 m/s tangential and 1 m/s normal.
    With the bodies' friction as built (0.5 each, combined 0.25) the plastic impact's normal
    impulse of 1 N s comes with a friction impulse of 0.25 N s (sticking would need
    ``2 / (1 + 5/2) = 0.57``): the sphere would leave at about 1.75 m/s.  Friction set to zero
    on both bodies *after* the simulator read the world leaves only the normal impulse: the
    sphere keeps 2 m/s and does not spin."""
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    ground = _ground(client)
    sphere = _sphere(client, 0.1, 1.0, [0.0, 0.0, 0.11])
    _free(client, sphere)
    sim = ImpactSimulator("routh", client=client, seed=0)
    sim.step()  # the simulator has read the world, its friction included
    for body in (ground, sphere):
        p.changeDynamics(body, -1, lateralFriction=0.0, physicsClientId=client)
    p.resetBasePositionAndOrientation(sphere, [0.0, 0.0, 0.102], [0.0, 0.0, 0.0, 1.0], physicsClientId=client)
    p.resetBaseVelocity(sphere, [2.0, 0.0, -1.0], [0.0, 0.0, 0.0], physicsClientId=client)
    while not sim.events:
        sim.step()
    v_minus, v_plus = sim.events[-1].velocities(sphere)
    assert v_minus[0] == pytest.approx(2.0, abs=1e-9)
    assert v_plus[0] == pytest.approx(2.0, abs=1e-9) and np.abs(v_plus[3:]).max() < 1e-9
    assert all(contact.mu == 0.0 for contact in sim.events[-1].contacts)


def test_mass_changed_after_hooking(client: int) -> None:
    """Two frictionless balls (r = 0.1 m) in zero gravity; A, set to 3 kg by ``changeDynamics``
    after the simulator was built (it was 1 kg), hits B (1 kg) at 1 m/s head on.  A plastic
    impact (restitution 0) leaves them a common velocity, and momentum ``3 x 1 = (3 + 1) v``
    gives ``v = 0.75`` m/s; with the stale 1 kg it would be 0.5."""
    a = _sphere(client, 0.1, 1.0, [0.0, 0.0, 1.0])
    b = _sphere(client, 0.1, 1.0, [0.2002, 0.0, 1.0])
    for body in (a, b):
        _free(client, body)
        p.changeDynamics(body, -1, lateralFriction=0.0, physicsClientId=client)
    sim = ImpactSimulator(RouthImpact("auto", 50), client=client, seed=0)
    sim.step()
    p.changeDynamics(a, -1, mass=3.0, physicsClientId=client)
    p.resetBaseVelocity(a, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    while not sim.events:
        sim.step()
    event = sim.events[-1]
    (_, v_a), (_, v_b) = event.velocities(a), event.velocities(b)
    assert v_a[0] == pytest.approx(0.75, abs=1e-6) and v_b[0] == pytest.approx(0.75, abs=1e-6)
    assert 3.0 * v_a[0] + 1.0 * v_b[0] == pytest.approx(3.0, abs=1e-9)


def _bouncer(client: int) -> int:
    """A sphere bouncing on the ground (restitution 0.9): an impact event every few steps
    elsewhere in the world."""
    ball = _sphere(client, 0.05, 0.2, [1.0, 1.0, 0.3])
    p.changeDynamics(ball, -1, restitution=0.9, physicsClientId=client)
    p.changeDynamics(0, -1, restitution=1.0, physicsClientId=client)
    return ball


def test_external_force_holds_through_events_elsewhere(client: int) -> None:
    """A 1 kg ball in the air held by ``applyExternalForce`` of ``m g`` upward, issued before
    every step as users do, while another ball bounces: Bullet's semi-implicit step gives it
    ``v += dt (F/m - g) = 0``, so it stays exactly where it is in plain Bullet.  Hooked, every
    part of a step the simulator splits for the bouncer's impacts must carry the force too:
    the ball stays within 1e-4 m (without it, it loses ``g dt`` in each event step)."""
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    _ground(client)
    held = _sphere(client, 0.1, 1.0, [0.0, 0.0, 1.0])
    _free(client, held)
    bouncer = _bouncer(client)
    with bullet_setimpact.hook("routh", client=client, seed=0) as sim:
        for _ in range(480):
            p.applyExternalForce(held, -1, [0.0, 0.0, 9.81], [0.0, 0.0, 1.0], p.WORLD_FRAME, physicsClientId=client)
            p.stepSimulation(physicsClientId=client)
    assert len([e for e in sim.events if bouncer in e.bodies]) >= 5
    height = p.getBasePositionAndOrientation(held, physicsClientId=client)[0][2]
    assert abs(height - 1.0) < 1e-4


def _wheel_world(client: int) -> tuple[int, int]:
    """A fixed-base axle with one wheel (cylinder, r = 0.2 m, 2 kg) on a revolute joint, high
    above the ground, and a bouncing ball; returns ``(wheel body, bouncer)``."""
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    _ground(client)
    wheel_shape = p.createCollisionShape(p.GEOM_CYLINDER, radius=0.2, height=0.05, physicsClientId=client)
    body = p.createMultiBody(
        0.0,
        -1,
        basePosition=[-1.0, 0.0, 2.0],
        linkMasses=[2.0],
        linkCollisionShapeIndices=[wheel_shape],
        linkVisualShapeIndices=[-1],
        linkPositions=[[0.0, 0.0, 0.0]],
        linkOrientations=[[0.0, 0.0, 0.0, 1.0]],
        linkInertialFramePositions=[[0.0, 0.0, 0.0]],
        linkInertialFrameOrientations=[[0.0, 0.0, 0.0, 1.0]],
        linkParentIndices=[0],
        linkJointTypes=[p.JOINT_REVOLUTE],
        linkJointAxis=[[0.0, 0.0, 1.0]],
        physicsClientId=client,
    )
    _free(client, body)
    p.setJointMotorControl2(body, 0, p.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
    return body, _bouncer(client)


def _spin(client: int, wheel: int, steps: int) -> float:
    for _ in range(steps):
        p.setJointMotorControl2(wheel, 0, p.TORQUE_CONTROL, force=0.5, physicsClientId=client)
        p.stepSimulation(physicsClientId=client)
    return float(p.getJointState(wheel, 0, physicsClientId=client)[1])


def test_torque_holds_through_events_elsewhere() -> None:
    """A wheel under a constant ``TORQUE_CONTROL`` torque of 0.5 N m, issued before every step,
    spins up as ``w = tau t / I`` (I = m r^2 / 2 = 0.04 kg m^2: 12.5 rad/s^2).  Hooked, with a
    ball bouncing elsewhere (events that split steps), its speed after 2 s equals plain
    Bullet's to 0.1 %: every part of a split step carries the torque."""
    plain, hooked = p.connect(p.DIRECT), p.connect(p.DIRECT)
    try:
        wheel, _ = _wheel_world(plain)
        speed_plain = _spin(plain, wheel, 480)
        wheel, bouncer = _wheel_world(hooked)
        with bullet_setimpact.hook("routh", client=hooked, seed=0) as sim:
            speed_hooked = _spin(hooked, wheel, 480)
    finally:
        p.disconnect(plain)
        p.disconnect(hooked)
    assert speed_plain == pytest.approx(12.5 * 2.0, rel=1e-2)
    assert len([e for e in sim.events if bouncer in e.bodies]) >= 5
    assert speed_hooked == pytest.approx(speed_plain, rel=1e-3)


def _stand(client: int, steps: int) -> float:
    """pybullet_data's laikago dropped from 2 cm, its joints held at its standing pose by a PD
    law in ``TORQUE_CONTROL`` (the user's controller, torques issued before every step);
    returns its base height after ``steps`` steps."""
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    p.loadURDF(os.path.join(DATA, "plane.urdf"), physicsClientId=client)
    robot = p.loadURDF(os.path.join(DATA, "laikago/laikago_toes.urdf"), [0.0, 0.0, 0.5], [0.5, 0.5, 0.5, 0.5], physicsClientId=client)
    joints = [
        j
        for j in range(p.getNumJoints(robot, physicsClientId=client))
        if p.getJointInfo(robot, j, physicsClientId=client)[2] == p.JOINT_REVOLUTE
    ]
    target = np.array([0.0, 0.6, -1.2] * 4)[: len(joints)]
    for joint, angle in zip(joints, target, strict=True):
        p.resetJointState(robot, joint, angle, physicsClientId=client)
    p.setJointMotorControlArray(robot, joints, p.VELOCITY_CONTROL, forces=[0.0] * len(joints), physicsClientId=client)
    for _ in range(steps):
        states = p.getJointStates(robot, joints, physicsClientId=client)
        q, qd = np.array([s[0] for s in states]), np.array([s[1] for s in states])
        torques = np.clip(200.0 * (target - q) - 5.0 * qd, -40.0, 40.0)
        p.setJointMotorControlArray(robot, joints, p.TORQUE_CONTROL, forces=torques.tolist(), physicsClientId=client)
        p.stepSimulation(physicsClientId=client)
    return float(p.getBasePositionAndOrientation(robot, physicsClientId=client)[0][2])


def test_torque_controlled_quadruped_stands_as_in_plain_bullet() -> None:
    """The laikago under its PD torque controller stands after 2 s at plain Bullet's base
    height within 1 cm when hooked: its feet's impacts split steps, and every part carries the
    controller's torques (without them the legs fold in event steps and it sinks)."""
    plain, hooked = p.connect(p.DIRECT), p.connect(p.DIRECT)
    try:
        height_plain = _stand(plain, 480)
        with bullet_setimpact.hook("routh", client=hooked, seed=0) as sim:
            height_hooked = _stand(hooked, 480)
    finally:
        p.disconnect(plain)
        p.disconnect(hooked)
    assert sim.events and height_plain > 0.3
    assert abs(height_hooked - height_plain) < 0.01


def _deepest(client: int) -> float:
    """The deepest penetration [m] among Bullet's contact points now (0 without any)."""
    return max([0.0] + [-point[8] for point in p.getContactPoints(physicsClientId=client)])


def _drop(client: int, kind: str, steps: int, stepper: object, x: float = 0.0) -> tuple[int, float]:
    """Load a ``kind`` ("box", "capsule" or "sphere") 0.1 m above the ground at ``x`` and step;
    returns the body and the deepest penetration seen after any step."""
    if kind == "box":
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.1, 0.1, 0.1], physicsClientId=client)
    elif kind == "capsule":
        shape = p.createCollisionShape(p.GEOM_CAPSULE, radius=0.1, height=0.2, physicsClientId=client)
    else:
        shape = p.createCollisionShape(p.GEOM_SPHERE, radius=0.1, physicsClientId=client)
    half_height = {"box": 0.1, "capsule": 0.2, "sphere": 0.1}[kind]
    body = p.createMultiBody(1.0, shape, basePosition=[x, 0.0, half_height + 0.1], physicsClientId=client)
    deepest = 0.0
    for _ in range(steps):
        stepper()  # type: ignore[operator]
        deepest = max(deepest, _deepest(client))
    return body, deepest


@pytest.mark.parametrize("change", ["load", "remove", "reset"])
def test_world_changed_after_hooking(change: str) -> None:
    """A hook on an empty client; a box is loaded and dropped (events on the box); then a
    capsule is added 1 m away ("load"), or the box is removed and the capsule loaded in its
    place ("remove"), or ``resetSimulation`` builds a new world with a sphere ("reset").  The
    new body's landing is an event on it and the ground only, and the deepest penetration
    over the run is within plain Bullet's own (the same worlds, unhooked) plus 1 mm."""
    plain, hooked = p.connect(p.DIRECT), p.connect(p.DIRECT)
    try:
        depths = {}
        for client in (plain, hooked):
            context = bullet_setimpact.hook("routh", client=client, seed=0) if client == hooked else None
            sim = context.__enter__() if context is not None else None
            try:

                def step(client: int = client) -> None:
                    p.stepSimulation(physicsClientId=client)

                p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
                _ground(client)
                box, deep_first = _drop(client, "box", 120, step)
                if sim is not None:
                    assert any(box in e.bodies for e in sim.events)
                    first = len(sim.events)
                if change == "remove":
                    p.removeBody(box, physicsClientId=client)
                if change == "reset":
                    p.resetSimulation(physicsClientId=client)
                    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
                    _ground(client)
                new, deep_second = _drop(client, "sphere" if change == "reset" else "capsule", 120, step, 1.0 if change == "load" else 0.0)
                if sim is not None:
                    later = sim.events[first:]
                    assert later and all(new in e.bodies for e in later)
                    assert all({c.body_a, c.body_b} == {new, 0} for e in later for c in e.contacts)
            finally:
                if context is not None:
                    context.__exit__(None, None, None)
            depths[client] = max(deep_first, deep_second)
    finally:
        p.disconnect(plain)
        p.disconnect(hooked)
    assert depths[hooked] <= depths[plain] + 1e-3


def test_user_contact_erp_stays_in_force(client: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A world that sets its own contact ERP (``setDefaultContactERP(0.9)``, as pybullet_envs'
    locomotion worlds do) after hooking: every whole step the simulator restores after a split
    step sets contactERP 0.9 again, never PyBullet's default 0.08 (partial steps scale it by
    ``tau / dt``, at most 0.9)."""
    written: list[dict] = []
    original = simulator_module.set_engine_parameters

    def spy(**kwargs: float) -> None:
        written.append(kwargs)
        original(**kwargs)

    monkeypatch.setattr(simulator_module, "set_engine_parameters", spy)
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    with bullet_setimpact.hook("routh", client=client, seed=0) as sim:
        _ground(client)
        p.setDefaultContactERP(0.9, physicsClientId=client)
        _sphere(client, 0.1, 1.0, [0.0, 0.0, 0.3])
        for _ in range(240):
            p.stepSimulation(physicsClientId=client)
    whole = [kwargs for kwargs in written if kwargs["fixedTimeStep"] == DT]
    assert sim.events and whole
    assert all(kwargs["contactERP"] == 0.9 for kwargs in whole)
    assert all(kwargs["contactERP"] <= 0.9 for kwargs in written)


def test_reset_simulation_restores_pybullets_erp(client: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``resetSimulation`` builds a new dynamics world with PyBullet's default parameters
    (``contactERP`` 0.08): the contact ERP a world set before it is not written back after."""
    written: list[dict] = []
    original = simulator_module.set_engine_parameters
    monkeypatch.setattr(simulator_module, "set_engine_parameters", lambda **kwargs: (written.append(kwargs), original(**kwargs)))
    with bullet_setimpact.hook("routh", client=client, seed=0) as sim:
        p.setDefaultContactERP(0.9, physicsClientId=client)
        p.resetSimulation(physicsClientId=client)
        p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
        _ground(client)
        _sphere(client, 0.1, 1.0, [0.0, 0.0, 0.3])
        for _ in range(240):
            p.stepSimulation(physicsClientId=client)
    whole = [kwargs for kwargs in written if kwargs["fixedTimeStep"] == DT]
    assert sim.events and whole and all(kwargs["contactERP"] == 0.08 for kwargs in whole)


@pytest.mark.parametrize("model", ["humanoid_symmetric.xml", "ant.xml", "hopper.xml"])
def test_mjcf_bodies_land_without_a_crash(model: str) -> None:
    """pybullet_data's MJCF humanoid, ant and hopper (``getCollisionShapeData`` crashes the
    process on their links) load inside a hook of every client, fall 0.3 m onto a plane with
    their motors off and land: events on the model, none gaining energy."""
    with bullet_setimpact.hook("routh", seed=0) as h:
        client = p.connect(p.DIRECT)
        try:
            p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
            p.loadURDF(os.path.join(DATA, "plane.urdf"), physicsClientId=client)
            body = p.loadMJCF(os.path.join(DATA, "mjcf", model), physicsClientId=client)[-1]
            joints = list(range(p.getNumJoints(body, physicsClientId=client)))
            p.setJointMotorControlArray(body, joints, p.VELOCITY_CONTROL, forces=[0.0] * len(joints), physicsClientId=client)
            if model == "hopper.xml":  # its base is the world; the torso rides on a vertical slide
                p.resetJointState(body, 1, 0.3, physicsClientId=client)
            else:
                position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
                p.resetBasePositionAndOrientation(body, [position[0], position[1], position[2] + 0.3], orientation, physicsClientId=client)
            for _ in range(360):
                p.stepSimulation(physicsClientId=client)
        finally:
            p.disconnect(client)
    events = [e for e in h.events if body in e.bodies and e.client == client]
    assert events
    assert all(e.energy_after <= e.energy_before * (1 + 1e-9) + 1e-12 for e in events)


def test_mjcf_body_loaded_before_any_simulator_is_probed(client: int) -> None:
    """A body loaded by ``loadMJCF`` while no simulator lived (its loader unseen: the record's
    knowledge is cleared, as it would be) is found unsafe by the forked probe, which dies in its
    place, and a URDF body safe; the simulator then builds and steps."""
    ground = p.loadURDF(os.path.join(DATA, "plane.urdf"), physicsClientId=client)
    body = p.loadMJCF(os.path.join(DATA, "mjcf", "hopper.xml"), physicsClientId=client)[-1]
    record = following.world(client)
    record.mjcf.clear()
    record.safe.clear()
    assert shape_data_unsafe(client, [ground, body]) == {body}
    assert record.mjcf == {body} and record.safe == {ground}
    sim = ImpactSimulator("routh", client=client, seed=0)
    for _ in range(10):
        sim.step()
    assert sim.finder.opaque == {body}


def test_step_commands_are_kept_for_simulated_clients_only(client: int) -> None:
    """While a simulator of one client lives, the external force applied in another client
    (no simulator) is not kept: nothing would issue it again or take it, and the list would
    only grow.  The simulated client's command is kept until its next step takes it."""
    other = p.connect(p.DIRECT)
    try:
        ball = _sphere(client, 0.1, 1.0, [0.0, 0.0, 1.0])
        lone = _sphere(other, 0.1, 1.0, [0.0, 0.0, 1.0])
        sim = ImpactSimulator("routh", client=client, seed=0)
        p.applyExternalForce(lone, -1, [0.0, 0.0, 1.0], [0.0, 0.0, 1.0], p.WORLD_FRAME, physicsClientId=other)
        p.applyExternalForce(ball, -1, [0.0, 0.0, 1.0], [0.0, 0.0, 1.0], p.WORLD_FRAME, physicsClientId=client)
        assert following.world(other).commands == [] and len(following.world(client).commands) == 1
        sim.step()
        assert following.world(client).commands == []
    finally:
        p.disconnect(other)


def test_time_step_gravity_constraints_and_restored_states_are_followed(client: int) -> None:
    """Each call that changes the world moves the client's version, and the simulator models the
    world anew at its next step: after ``setTimeStep(1/480)`` a step advances 1/480 s (not the
    1/240 s it was built with); ``setGravity`` and ``restoreState`` are seen the same way.
    ``createConstraint``, ``changeConstraint`` and ``removeConstraint`` move the constraints'
    version alone (the simulator reads the constraints again), and the sphere pinned by the
    constraint while the other falls still lands as an event."""
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    _ground(client)
    sim = ImpactSimulator("routh", client=client, seed=0)
    record = following.world(client)
    pinned = _sphere(client, 0.05, 1.0, [1.0, 0.0, 1.0])
    falling = _sphere(client, 0.05, 1.0, [0.0, 0.0, 0.3])
    saved = p.saveState(physicsClientId=client)
    calls = [
        lambda: p.setTimeStep(1.0 / 480.0, physicsClientId=client),
        lambda: p.setGravity(0.0, 0.0, -9.0, physicsClientId=client),
    ]
    for call in calls:
        before = record.version
        call()
        assert record.version != before
    before, constraints_before = record.version, record.constraints_version
    constraint = p.createConstraint(pinned, -1, -1, -1, p.JOINT_POINT2POINT, [0, 0, 0], [0, 0, 0], [1.0, 0.0, 1.0], physicsClientId=client)
    assert record.constraints_version != constraints_before and record.version == before  # the constraints alone changed
    constraints_before = record.constraints_version
    p.changeConstraint(constraint, maxForce=500.0, physicsClientId=client)
    assert record.constraints_version != constraints_before and record.version == before
    sim.step()
    assert sim.time == pytest.approx(1.0 / 480.0, abs=1e-15)
    for _ in range(480):
        sim.step()
    assert any(falling in e.bodies for e in sim.events)
    assert abs(p.getBasePositionAndOrientation(pinned, physicsClientId=client)[0][2] - 1.0) < 1e-2
    before = record.version
    p.removeConstraint(constraint, physicsClientId=client)
    p.restoreState(saved, physicsClientId=client)
    assert record.version != before
    landed = len(sim.events)
    for _ in range(480):
        sim.step()
    assert any(falling in e.bodies for e in sim.events[landed:])  # restored in the air, it lands again


def test_state_changes_move_the_state_version_of_their_client_alone(client: int) -> None:
    """Each ``reset*`` state function and each Bullet step the client's simulator did not take
    moves the client's state version, whether the client id is passed by keyword or by
    position, and a base pose reset records the body's version; the same calls on another
    client leave it, and so do the simulator's own steps of a body in free flight (it writes
    nothing back).  A world change moves it too."""
    other = p.connect(p.DIRECT)
    try:
        ball = _sphere(client, 0.1, 1.0, [0.0, 0.0, 1.0])
        lone = _sphere(other, 0.1, 1.0, [0.0, 0.0, 1.0])
        sim = ImpactSimulator("routh", client=client, seed=0)
        record = following.world(client)

        def calls(cid: int, body: int, by_position: bool) -> list:
            extra, keyword = ((cid,), {}) if by_position else ((), {"physicsClientId": cid})
            return [
                lambda: p.stepSimulation(*extra, **keyword),
                lambda: p.resetBasePositionAndOrientation(body, [0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0], *extra, **keyword),
                lambda: p.resetBaseVelocity(body, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], *extra, **keyword),
            ]

        for by_position in (False, True):
            start = record.state_version
            for call in calls(client, ball, by_position):
                before = record.state_version
                call()
                assert record.state_version != before
            assert start < record.posed[ball] < record.state_version  # the pose reset, the second call
            before = record.state_version
            for call in calls(other, lone, by_position):
                call()
            assert record.state_version == before
        before = record.state_version
        sim.step()
        assert record.state_version == before  # free flight: the simulator moved nothing itself
        p.changeDynamics(ball, -1, mass=2.0, physicsClientId=client)
        assert record.state_version != before
    finally:
        p.disconnect(other)


def test_joint_resets_move_the_state_version(client: int) -> None:
    """The three joint reset functions move the state version (by keyword and by position)."""
    robot = p.loadURDF(os.path.join(DATA, "r2d2.urdf"), [0.0, 0.0, 1.0], physicsClientId=client)
    simulator = ImpactSimulator("routh", client=client, seed=0)  # follows the client while it lives
    record = following.world(client)
    for call in (
        lambda: p.resetJointState(robot, 2, 0.1, 0.0, physicsClientId=client),
        lambda: p.resetJointState(robot, 2, 0.1, 0.0, client),
        lambda: p.resetJointStateMultiDof(robot, 2, [0.1], [0.0], physicsClientId=client),
        lambda: p.resetJointStateMultiDof(robot, 2, [0.1], [0.0], client),
        lambda: p.resetJointStatesMultiDof(robot, [2], [[0.1]], [[0.0]], physicsClientId=client),
        lambda: p.resetJointStatesMultiDof(robot, [2], [[0.1]], [[0.0]], client),
    ):
        before = record.state_version
        call()
        assert record.state_version != before
    simulator.close()


def test_a_step_after_the_users_own_bullet_step_starts_where_the_world_is(client: int) -> None:
    """No gravity; a sphere (radius 5 cm) moves at ``u = 1 m/s`` towards a static wall, its
    surface ``9.5 u dt`` from the wall's face.  The simulator takes 8 steps (``1.5 u dt`` left),
    then the user's code steps Bullet itself once (``p.stepSimulation`` on a client the
    simulator is stepped on directly, not hooked; ``0.5 u dt`` left).  The simulator's next step
    must start from the world as it is, not as its last step left it: the sphere reaches the
    wall ``0.5 dt`` into it, at simulated time ``8.5 dt`` (the user's step is not the
    simulator's), to within the localization's band ``1.5 TARGET_FRACTION tolerance / u``,
    with ``v_minus = (u, 0, 0)``.  Started from the stale state, the sphere would be ``u dt``
    farther away and no event would be found in the step."""
    speed, radius = 1.0, 0.05
    p.setGravity(0.0, 0.0, 0.0, physicsClientId=client)
    wall = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.5, 0.5, 0.5], physicsClientId=client)
    p.createMultiBody(0.0, wall, basePosition=[0.5, 0.0, 0.0], physicsClientId=client)  # its face at x = 0
    ball = _sphere(client, radius, 1.0, [-(radius + 9.5 * speed * DT), 0.0, 0.0])
    _free(client, ball)
    p.resetBaseVelocity(ball, [speed, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    sim = ImpactSimulator("routh", client=client, seed=0)
    for _ in range(8):
        sim.step()
    assert not sim.events
    p.stepSimulation(physicsClientId=client)
    sim.step()
    assert len(sim.events) == 1
    event = sim.events[0]
    np.testing.assert_allclose(event.velocities(ball)[0], [speed, 0.0, 0.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-9)
    assert abs(event.time - 8.5 * DT) <= 1.5 * simulator_module.TARGET_FRACTION * sim.contact_tolerance / speed


def test_a_simulator_dropped_without_close_stops_following_at_once() -> None:
    """A simulator follows its client until :meth:`ImpactSimulator.close` or its end; dropped
    without ``close()``, its end must come with its last reference, not whenever the garbage
    collector next runs: while it follows, the bodies the user's code loads are seen (their
    motors known, :mod:`bullet_setimpact.bullet.motors`), so a world built next would move
    otherwise than the same world built in a fresh process.  No reference cycle may hold it:
    with the collector off, a simulator that resolved impacts (localized by SciPy's root find,
    whose function wrapper refers to itself), rebuilt its models after a load, held motors
    through split steps and honoured a user constraint stops following when ``del`` drops it."""
    import gc

    enabled = gc.isenabled()
    gc.collect()
    before = following._followers
    gc.disable()
    client = p.connect(p.DIRECT)
    try:
        p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
        _ground(client)
        simulator = ImpactSimulator(RouthImpact("auto", 50), client, seed=0)
        robot = p.loadURDF(os.path.join(DATA, "a1/a1.urdf"), [0.0, 0.0, 0.45], physicsClientId=client)
        pendulum = _sphere(client, 0.05, 1.0, [1.0, 0.0, 0.3])
        p.createConstraint(pendulum, -1, -1, -1, p.JOINT_POINT2POINT, [0, 0, 0], [0.0, 0.0, 0.2], [1.0, 0.0, 0.5], physicsClientId=client)
        for _ in range(120):
            p.setJointMotorControl2(robot, 2, p.POSITION_CONTROL, targetPosition=0.5, force=5.0, physicsClientId=client)
            simulator.step()
        assert simulator.events and following._followers == before + 1
        del simulator
        assert following._followers == before
    finally:
        if enabled:
            gc.enable()
        p.disconnect(client)
