"""ImpactSimulator in live PyBullet worlds: extraction, events, outcomes, resting contact."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pybullet as p
import pybullet_data
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from bullet_setimpact import AnitescuPotraImpact, ImpactProblem, LCPError, RouthImpact, SamplesDroppedWarning
from bullet_setimpact.bullet.assembly import contact_problem
from bullet_setimpact.bullet.contacts import ContactFinder
from bullet_setimpact.bullet.events import localize
from bullet_setimpact.bullet.examples import load_planar_example, urdf_path
from bullet_setimpact.bullet.model import WorldModel
from bullet_setimpact.bullet.simulator import ImpactFailure, ImpactSimulator, _Step
from bullet_setimpact.errors import EventCapWarning
from bullet_setimpact.laws.base import ImpactLaw, LawOutcome

GRAVITY = 9.81


@pytest.fixture
def client() -> Iterator[int]:
    cid = p.connect(p.DIRECT)
    p.setGravity(0, 0, -GRAVITY, physicsClientId=cid)
    yield cid
    p.disconnect(cid)


def _max_penetration(cid: int, finder: ContactFinder) -> float:
    return max((-contact.gap for contact in finder.closest(0.01)), default=0.0)


# --------------------------------------------------------------------------- extraction
@pytest.mark.parametrize("name", ["rocking_block", "compass_gait", "box_wall", "ramone", "disk_stack"])
def test_extracted_problems_equal_the_closed_form_models(client: int, name: str) -> None:
    """At the journal's impact configuration, the problem built from the planar URDFs has the
    closed-form ``M`` (1e-6; the compass gait's documented 1e-7 hip mass) and, contact by
    contact (up to order and the tangent's sign), the closed-form ``Jn`` and ``Jt``.

    The tolerance is 1e-3 m here: at the exact configuration Bullet's 1 mm edge rounding puts
    the tilted box's corners 1.58e-4 m above the floor and the wall.  Friction is Bullet's
    combined one, so RAMone's mu = 1e5 arrives clamped at 10.
    """
    world = load_planar_example(client, name)
    finder = ContactFinder(client, list(world.bodies), 1e-3)
    problem, _ = contact_problem(finder.contacts(), WorldModel(client).configuration())
    reference = world.example.problem
    np.testing.assert_allclose(problem.M, reference.M, atol=1e-6)
    assert problem.contacts == reference.contacts
    unmatched = list(range(reference.contacts))
    for i in range(problem.contacts):
        j = min(unmatched, key=lambda j: np.abs(problem.Jn[i] - reference.Jn[j]).max())
        unmatched.remove(j)
        np.testing.assert_allclose(problem.Jn[i], reference.Jn[j], atol=1e-6)
        sign = np.sign(problem.Jt[i, 0] @ reference.Jt[j, 0])
        np.testing.assert_allclose(problem.Jt[i, 0], sign * reference.Jt[j, 0], atol=1e-6)
        assert problem.mu[i] == pytest.approx(min(reference.mu[j], 10.0))
    np.testing.assert_allclose(WorldModel(client).velocity(), world.example.v_minus, atol=1e-12)


# --------------------------------------------------------------------------- rocking block
def _drop_block(cid: int, law: ImpactLaw, seed: int, height: float = 0.01, dt: float = 1e-4, steps: int = 600) -> ImpactSimulator:
    """The planar rocking block released at rest ``height`` above the floor."""
    p.resetSimulation(physicsClientId=cid)
    p.setGravity(0, 0, -GRAVITY, physicsClientId=cid)
    p.setTimeStep(dt, physicsClientId=cid)
    example = load_planar_example(cid, "rocking_block", configuration=np.array([0.0, 1.0 + height, 0.0]), velocity=np.zeros(3))
    sim = ImpactSimulator(law, cid, seed=seed)
    for _ in range(steps):
        sim.step()
        if sim.events:
            break
    assert example.bodies
    return sim


def test_rocking_block_drop_is_one_event_at_free_fall_speed(client: int) -> None:
    """Dropped from 1 cm, the block lands flat at ``sqrt(2 g h) = 0.4429`` m/s (Bullet's
    semi-implicit Euler with dt = 1e-4 s overshoots by about ``v dt / 2``: a 3e-4 m/s error).
    The event's gaps are within the tolerance, and PyBullet reports exactly the written ``v+``."""
    sim = _drop_block(client, RouthImpact(0.3, 10), seed=0)
    (event,) = sim.events
    np.testing.assert_allclose(event.v_minus, [0.0, -np.sqrt(2 * GRAVITY * 0.01), 0.0], atol=1e-3)
    assert all(-1e-4 <= contact.gap <= 1e-4 for contact in event.contacts)
    assert event.problem.contacts == 2
    np.testing.assert_allclose(event.v_written, event.v_plus, atol=1e-6)
    assert event.energy_after <= event.energy_before


def test_rocking_block_outcomes_fill_the_outcome_set(client: int) -> None:
    """Over 200 seeds the hooked outcomes lie in the core ``outcome_set`` of the same problem
    (within 2% of |v-|) and spread over it: some seed lifts a corner at >= 60% of the
    sequential speed ``0.21 v0`` (journal Fig. 9; about 5% of Algorithm-1 samples do, so all
    200 seeds miss it with probability 0.95^200 < 1e-4)."""
    outcomes, reference = [], None
    for seed in range(200):
        (event,) = _drop_block(client, RouthImpact(0.3, 10), seed=seed).events
        outcomes.append(event.v_plus)
        if reference is None:
            reference = event
    assert reference is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplesDroppedWarning)
        samples = RouthImpact(0.3, 10).outcome_set(reference.problem, reference.v_minus, 2**14, rng=1)
    scale = np.linalg.norm(reference.v_minus)
    for outcome in outcomes:
        assert np.min(np.linalg.norm(samples - outcome, axis=1)) <= 0.02 * scale
    lifted = reference.problem.normal_velocities(np.array(outcomes)).max()
    assert lifted >= 0.6 * 0.21 * scale
    assert len({tuple(np.round(outcome, 9)) for outcome in outcomes}) > 10


def test_anitescu_potra_block_comes_to_rest_and_stays(client: int) -> None:
    """The simultaneous law stops the block (journal Fig. 1); afterwards Bullet's resting
    contact must hold it: no velocity above 1e-3 m/s during the next second."""
    sim = _drop_block(client, AnitescuPotraImpact(), seed=0)
    np.testing.assert_allclose(sim.events[0].v_plus, 0.0, atol=1e-12)
    model = WorldModel(client)
    worst = 0.0
    for _ in range(10000):  # 1 s at dt = 1e-4
        sim.step()
        worst = max(worst, np.abs(model.velocity()).max())
    assert worst <= 1e-3
    assert len(sim.events) == 1


def test_resting_contacts_get_no_spurious_separating_velocity(client: int) -> None:
    """After an event, a corner the law left at rest (vn = 0) must not be pushed away by
    Bullet's resting-contact solver faster than 5e-3 m/s during the next 10 steps (or until
    the next event, which may legitimately lift it: the rocking block's pivot switches).
    Measured from PyBullet's own link velocity at that corner (dt = 1/240 s)."""
    worst = 0.0
    for seed in range(8):
        sim = _drop_block(client, RouthImpact(0.3, 10), seed=seed, dt=1 / 240, steps=30)
        event = sim.events[0]
        normal = event.problem.normal_velocities(event.v_plus)
        resting = [c.position_b for c, vn in zip(event.contacts, normal, strict=True) if abs(vn) < 1e-9]
        block = event.bodies[0]
        for _ in range(10):
            if sim.step():
                break
            for corner in resting:
                state = p.getLinkState(block, 2, computeLinkVelocity=1, computeForwardKinematics=1, physicsClientId=client)
                velocity = np.array(state[6]) + np.cross(state[7], corner - np.array(state[0]))
                worst = max(worst, velocity[2])
    assert worst <= 5e-3


@pytest.mark.parametrize("contact_erp", [None, 0.2])
def test_partial_steps_correct_a_penetration_at_a_whole_steps_speed(client: int, contact_erp: float | None) -> None:
    """Bullet corrects a contact ``d`` deep with the velocity ``ERP d / dt`` of its time step
    (``btMultiBodyConstraintSolver``: ``positionalError = -penetration erp / timeStep``).

    A cube settled on the ground, then pressed 0.5 mm deeper and stopped, leaves one whole
    1/240 s step moving up at ``v_whole`` (about ``ERP d / dt``: 0.08 x 0.5 mm x 240 = 0.01
    m/s with PyBullet's default ``contactERP``).  The simulator's partial steps (localizing an
    impact) scale ERP by ``tau / dt``, so a 10 us step from the same state leaves the cube at
    the same ``v_whole``, not at ``dt / tau`` = 417 times it, and the whole step after it runs
    with ERP restored.  With a world's own ``contactERP`` (0.2, passed as ``erp=``) the same
    holds at its ``v_whole``.  Bounds: 10 % (the same solver target, to its 50 iterations);
    ``v_whole`` within a factor 2 of ``ERP d / dt``."""
    depth, dt = 5e-4, 1.0 / 240.0
    erp = {} if contact_erp is None else {"contactERP": contact_erp}
    p.setPhysicsEngineParameter(fixedTimeStep=dt, physicsClientId=client, **erp)
    p.loadURDF(urdf_path("ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    cube = p.loadURDF(str(Path(pybullet_data.getDataPath()) / "cube_small.urdf"), [0, 0, 0.03], physicsClientId=client)
    for _ in range(480):
        p.stepSimulation(physicsClientId=client)
    position, orientation = p.getBasePositionAndOrientation(cube, physicsClientId=client)
    pressed = [position[0], position[1], position[2] - depth]
    sim = ImpactSimulator(RouthImpact("auto", 50), client, erp=erp)
    sim._dt = sim._current_step = dt
    speeds = []
    step = _Step(0.0, dt, [])
    for tau in (dt, 1e-5, dt):
        p.resetBasePositionAndOrientation(cube, pressed, orientation, physicsClientId=client)
        p.resetBaseVelocity(cube, [0, 0, 0], [0, 0, 0], physicsClientId=client)
        sim._bullet_step(step, tau)
        speeds.append(p.getBaseVelocity(cube, physicsClientId=client)[0][2])
    whole, partial, after = speeds
    expected = (contact_erp or 0.08) * depth / dt
    assert expected / 2 <= whole <= 2 * expected
    assert abs(partial - whole) <= 0.1 * whole
    assert abs(after - whole) <= 0.1 * whole


# --------------------------------------------------------------------------- same seed
@pytest.mark.parametrize(("name", "law"), [("compass_gait", RouthImpact(0.25, 5)), ("box_wall", RouthImpact(2.0, 5))])
def test_hooked_outcome_equals_the_core_law(client: int, name: str, law: RouthImpact) -> None:
    """Started at the journal's impact state, the first step resolves the impact at once; its
    outcome equals the core law's ``resolve`` on the extracted problem with the same seed."""
    load_planar_example(client, name)
    sim = ImpactSimulator(law, client, seed=42)
    events = sim.step()
    assert len(events) == 1
    event = events[0]
    expected = law.resolve(event.problem, event.v_minus, rng=np.random.default_rng(42))
    np.testing.assert_allclose(event.v_plus, expected.v_plus, atol=1e-8)
    assert event.time == 0.0


# --------------------------------------------------------------------------- 3D
def test_a_one_joint_arm_lands_and_stops(client: int) -> None:
    """A fixed-base arm of one revolute joint (axis y, 10 cm above ``plane.urdf``; its link a
    0.4 x 0.04 x 0.04 m box centred on the joint, 1 kg with its centre of mass 0.2 m out) falls
    free from horizontal until the corners of its +x end touch the ground.  Its one velocity
    ``qdot`` is the whole state: every contact's tangent Jacobian has rank one (a planar
    problem, whose SVD has a single singular value), and the inelastic impact ends the
    contact's approach, ``Jn qdot+ = 0`` with ``Jn != 0``: ``qdot+ = 0``, from ``qdot- > 0``."""
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    p.loadURDF(f"{pybullet_data.getDataPath()}/plane.urdf", physicsClientId=client)
    base = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.02] * 3, physicsClientId=client)
    link = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.2, 0.02, 0.02], physicsClientId=client)
    arm = p.createMultiBody(
        0.0,
        base,
        basePosition=[1.0, 0.0, 0.1],
        linkMasses=[1.0],
        linkCollisionShapeIndices=[link],
        linkVisualShapeIndices=[-1],
        linkPositions=[[0.0, 0.0, 0.0]],
        linkOrientations=[[0.0, 0.0, 0.0, 1.0]],
        linkInertialFramePositions=[[0.2, 0.0, 0.0]],
        linkInertialFrameOrientations=[[0.0, 0.0, 0.0, 1.0]],
        linkParentIndices=[0],
        linkJointTypes=[p.JOINT_REVOLUTE],
        linkJointAxis=[[0.0, 1.0, 0.0]],
        physicsClientId=client,
    )
    p.setJointMotorControl2(arm, 0, p.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
    simulator = ImpactSimulator(RouthImpact("auto", 50), client, seed=0, on_failure="raise")
    for _ in range(60):
        simulator.step()
    assert simulator.events
    event = simulator.events[0]
    assert not event.problem.spatial and event.v_minus.shape == (1,) and event.v_minus[0] > 1.0
    np.testing.assert_allclose(event.v_plus, [0.0], atol=1e-9)


def test_free_slab_lands_flat_on_four_corners(client: int) -> None:
    """The free 3D slab dropped flat onto box ground: four corner contacts at the event,
    outcomes that vary with the seed, and no event ever adds kinetic energy."""
    outcomes = []
    for seed in range(6):
        p.resetSimulation(physicsClientId=client)
        p.setGravity(0, 0, -GRAVITY, physicsClientId=client)
        p.loadURDF(urdf_path("ground_box.urdf"), useFixedBase=True, physicsClientId=client)
        slab = p.loadURDF(urdf_path("rocking_slab.urdf"), [0, 0, 1.01], physicsClientId=client)
        sim = ImpactSimulator(RouthImpact("auto", 20), client, seed=seed)
        for _ in range(60):
            sim.step()
        first = sim.events[0]
        assert first.problem.contacts == 4
        assert all(event.energy_after <= event.energy_before * (1 + 1e-9) for event in sim.events)
        outcomes.append(first.v_plus)
        assert slab in first.bodies
    assert len({tuple(np.round(outcome, 6)) for outcome in outcomes}) >= 3


@pytest.mark.parametrize(("urdf", "position"), [("r2d2.urdf", [0, 0, 0.6]), ("a1/a1.urdf", [0, 0, 0.5])])
def test_floating_base_robot_drop(client: int, urdf: str, position: list[float]) -> None:
    """r2d2 and the a1 quadruped (motors off, so it collapses) dropped onto box ground for 2 s
    under the set-valued law: no exception, every event dissipates, PyBullet reports exactly
    the velocity written back, and Bullet's resting contacts never let a link sink 5 mm, at
    the events as after them (measured: about 1.3 mm at most, a collapsing a1's mesh thigh).
    An event's contact set holds those resting contacts too (Bullet's penetration, 1.2 mm at
    one of the a1's events): where the arriving contact lands is tested with the
    localization band in ``test_bullet_budget.py`` and ``test_bullet_arrivals.py``."""
    p.loadURDF(urdf_path("ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    robot = p.loadURDF(urdf, position, physicsClientId=client)
    joints = [
        j
        for j in range(p.getNumJoints(robot, physicsClientId=client))
        if p.getJointInfo(robot, j, physicsClientId=client)[2] != p.JOINT_FIXED
    ]
    p.setJointMotorControlArray(robot, joints, p.VELOCITY_CONTROL, forces=[0.0] * len(joints), physicsClientId=client)
    sim = ImpactSimulator(RouthImpact("auto", 50), client, seed=0)
    finder = ContactFinder(client, [robot], 1e-4)
    worst_penetration = 0.0
    for _ in range(480):
        sim.step()
        worst_penetration = max(worst_penetration, _max_penetration(client, finder))
    assert sim.events
    for event in sim.events:
        assert event.energy_after <= event.energy_before * (1 + 1e-9) + 1e-12
        np.testing.assert_allclose(event.v_written, event.v_plus, atol=1e-6)
        assert event.max_penetration <= 5e-3
    assert worst_penetration <= 5e-3


def test_a_body_without_collision_shapes_is_not_searched(client: int) -> None:
    """panda-gym's targets are ghosts: bodies without any collision shape, which can never touch
    anything (a body's links cannot gain shapes).  The contact search leaves out their body
    pairs, and keeps every other pair with a tracked body."""
    ground = p.loadURDF(str(Path(pybullet_data.getDataPath()) / "plane.urdf"), physicsClientId=client)
    cube = p.loadURDF(str(Path(pybullet_data.getDataPath()) / "cube_small.urdf"), [0, 0, 0.1], physicsClientId=client)
    sphere = p.createVisualShape(p.GEOM_SPHERE, radius=0.02, physicsClientId=client)
    ghost = p.createMultiBody(0.0, -1, sphere, [0, 0, 0.5], physicsClientId=client)
    other = p.loadURDF(str(Path(pybullet_data.getDataPath()) / "cube_small.urdf"), [0.3, 0, 0.1], physicsClientId=client)
    finder = ContactFinder(client, [cube, other], 1e-4)
    assert finder.pairs == [(ground, cube), (ground, other), (cube, other)]
    assert ghost not in {body for pair in finder.pairs for body in pair}


# --------------------------------------------------------------------------- failures
class _FailingLaw(ImpactLaw):
    """A law whose LCP always fails (injected fault)."""

    name = "failing"

    def _resolve(self, problem, v_minus, rng):  # type: ignore[no-untyped-def]  # test double
        raise LCPError("injected failure")


class _ThreadCountingLaw(AnitescuPotraImpact):
    """Anitescu-Potra, recording the BLAS thread counts threadpoolctl reports while it resolves."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[set[int]] = []

    def _resolve(self, problem, v_minus, rng):  # type: ignore[no-untyped-def]  # test double
        self.seen.append({library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"})
        return super()._resolve(problem, v_minus, rng)


def test_an_event_runs_on_one_blas_thread_and_restores_the_setting(client: int) -> None:
    """With BLAS set to two threads, the rocking block's impact is resolved on one (an event's
    products are small; threaded BLAS waits for busy cores, see ``threads.py``), and the two
    threads are back once the step returns."""
    load_planar_example(client, "rocking_block")
    law = _ThreadCountingLaw()
    sim = ImpactSimulator(law, client)
    with threadpool_limits(limits=2, user_api="blas"):
        events = sim.step()
        after = {library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"}
    assert events
    assert law.seen and all(counts == {1} for counts in law.seen)
    assert after == {2}


def test_law_failure_raises_and_writes_nothing(client: int) -> None:
    """A failing law raises ImpactFailure with the reason; the pre-impact velocity stays."""
    load_planar_example(client, "rocking_block")
    sim = ImpactSimulator(_FailingLaw(), client)
    before = WorldModel(client).velocity()
    with pytest.raises(ImpactFailure, match="injected failure"):
        sim.step()
    np.testing.assert_array_equal(WorldModel(client).velocity(), before)


def test_law_failure_falls_back_to_anitescu_potra(client: int) -> None:
    """With on_failure="fallback" the checked Anitescu-Potra outcome (rest) is applied."""
    load_planar_example(client, "rocking_block")
    sim = ImpactSimulator(_FailingLaw(), client, on_failure="fallback")
    (event,) = sim.step()
    assert event.law == "anitescu-potra"
    assert "injected failure" in event.failure
    np.testing.assert_allclose(event.v_plus, 0.0, atol=1e-12)


def test_event_cap_is_reported(client: int) -> None:
    """Two blocks landing within one step with max_events_per_step=1: the second impact is
    left to Bullet and an EventCapWarning says so."""
    p.setTimeStep(1 / 60, physicsClientId=client)
    p.loadURDF(urdf_path("ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    for x, height in ((0.0, 1.0005), (3.0, 1.001)):
        body = p.loadURDF(urdf_path("rocking_slab.urdf"), [x, 0, height], physicsClientId=client)
        p.resetBaseVelocity(body, [0, 0, -0.5], physicsClientId=client)
    sim = ImpactSimulator(AnitescuPotraImpact(), client, max_events_per_step=1)
    with pytest.warns(EventCapWarning, match="more than 1 impact events"):
        sim.step()
    assert sim.capped_steps == 1


def test_user_time_step_and_gravity_are_honoured(client: int) -> None:
    """The simulator reads the time step at every step, and the impact speed follows gravity:
    with g = 4.905 (half) the block lands at ``sqrt(2 g h)`` = 0.3132 m/s."""
    world = load_planar_example(client, "rocking_block", configuration=np.array([0.0, 1.01, 0.0]), velocity=np.zeros(3))
    p.setGravity(0, 0, -GRAVITY / 2, physicsClientId=client)
    p.setTimeStep(1e-4, physicsClientId=client)
    sim = ImpactSimulator(AnitescuPotraImpact(), client)
    for _ in range(1000):
        sim.step()
        if sim.events:
            break
    assert sim.time == pytest.approx(1e-4 * round(sim.time / 1e-4))
    np.testing.assert_allclose(sim.events[0].v_minus[1], -np.sqrt(GRAVITY * 0.01), atol=1e-3)
    assert world.bodies[0] in sim.events[0].bodies


# --------------------------------------------------------------------------- bad input
def test_bad_input_is_named(client: int) -> None:
    load_planar_example(client, "rocking_block")
    with pytest.raises(ValueError, match="law must have a resolve"):
        ImpactSimulator(object(), client)
    with pytest.raises(ValueError, match=r"got the class RouthImpact; create one, e.g. RouthImpact\(...\)"):
        ImpactSimulator(RouthImpact, client)  # before: accepted, a TypeError at the first impact
    with pytest.raises(ValueError, match="contact_tolerance must be a positive number"):
        ImpactSimulator(AnitescuPotraImpact(), client, contact_tolerance=-1e-4)
    with pytest.raises(ValueError, match="impact_velocity_threshold must be a positive number"):
        ImpactSimulator(AnitescuPotraImpact(), client, impact_velocity_threshold=0.0)
    with pytest.raises(ValueError, match="body 99 is not"):
        ImpactSimulator(AnitescuPotraImpact(), client, bodies=[99])
    with pytest.raises(ValueError, match="on_failure must be"):
        ImpactSimulator(AnitescuPotraImpact(), client, on_failure="ignore")
    with pytest.raises(ValueError, match="not connected"):
        ImpactSimulator(AnitescuPotraImpact(), client + 100)


def test_unsupported_joint_is_named(client: int, tmp_path: Path) -> None:
    """A planar joint is not supported: the error names the body and the joint."""
    inertial = '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
    urdf = tmp_path / "planar_joint.urdf"
    urdf.write_text(
        f"""<robot name="flat"><link name="base">{inertial}</link><link name="puck">{inertial}</link>
        <joint name="slide" type="planar"><parent link="base"/><child link="puck"/><axis xyz="0 0 1"/></joint></robot>"""
    )
    p.loadURDF(str(urdf), physicsClientId=client)
    with pytest.raises(ValueError, match=r"planar joint .*slide"):
        ImpactSimulator(AnitescuPotraImpact(), client)


def test_world_changes_and_bad_velocities_are_named(client: int) -> None:
    """NaN velocities set by the user and a disconnected client each stop the simulator with
    an error that says what happened; a body removed mid-run is followed (the next step models
    the world without it)."""
    world = load_planar_example(client, "rocking_block", configuration=np.array([0.0, 1.0, 0.0]), velocity=np.zeros(3))
    sim = ImpactSimulator(AnitescuPotraImpact(), client)
    sim.step()
    p.resetJointState(world.bodies[0], 1, 1.0, float("nan"), physicsClientId=client)
    with pytest.raises(ValueError, match="NaN or inf positions or velocities"):
        sim.step()
    p.resetJointState(world.bodies[0], 1, 1.0, 0.0, physicsClientId=client)
    p.removeBody(world.ground, physicsClientId=client)
    sim.step()
    assert world.ground not in sim.world.body_ids and world.bodies[0] in sim.world.body_ids
    other = p.connect(p.DIRECT)
    load_planar_example(other, "rocking_block")
    orphan = ImpactSimulator(AnitescuPotraImpact(), other)
    p.disconnect(other)
    with pytest.raises(ValueError, match="not connected"):
        orphan.step()


def test_localize_finds_the_crossing_without_re_simulating_the_ends() -> None:
    """``localize`` on a gap closing at 0.5 m/s, ``g(t) = 1e-3 - 0.5 t``, over a 4 ms step
    with target -1e-5 m: the root is ``t = (1e-3 + 1e-5) / 0.5 = 2.02e-3`` s, found to
    ``xtol = accuracy / (2 speed) = 1e-5 / 1 = 1e-5`` s.  ``gap_after`` is never called at 0
    or at the step's end (the caller passes those gaps: 1e-3 and -1e-3 m), and a gap still
    above the target at the end puts the event there without any simulation."""
    calls: list[float] = []

    def gap_after(tau: float) -> float:
        calls.append(tau)
        return 1e-3 - 0.5 * tau

    tau = localize(gap_after, 4e-3, -1e-5, 1e-3, -1e-3, 1e-5)
    assert tau == pytest.approx(2.02e-3, abs=1e-5)
    assert calls and 0.0 not in calls and 4e-3 not in calls
    calls.clear()
    assert localize(gap_after, 4e-3, -1e-5, 2e-3, 1e-4, 1e-5) == 4e-3
    assert not calls


def test_localize_stops_once_the_gap_lands_in_its_band() -> None:
    """A gap falling under gravity, ``g(t) = 1e-3 - 0.5 t - (9.81 / 2) t^2``, over a 4 ms step
    with target -1e-5 m and accuracy 1e-5 m (band ``accuracy / 2 = 5e-6`` m): the crossing is
    the root of ``4.905 t^2 + 0.5 t - 1.01e-3``, ``t* = (-0.5 + sqrt(0.25 + 4 * 4.905 *
    1.01e-3)) / 9.81 = 1.98148e-3`` s.  The secant step from the two known ends lands at
    ``4e-3 * 1.01e-3 / (1.01e-3 + 1.06848e-3) = 1.9437e-3`` s, 1.96e-5 m above the target
    (the curvature's ``g dt^2 / 8``-sized miss), outside the band; the next step lands inside
    it, and the search stops there: two simulations, the last one at the returned time (so
    the world is already there), its gap within the band, and the time within ``band /
    |g'(t*)| = 5e-6 / 0.519 = 9.6e-6`` s of ``t*``."""
    calls: list[float] = []

    def gap(tau: float) -> float:
        return 1e-3 - 0.5 * tau - 4.905 * tau * tau

    def gap_after(tau: float) -> float:
        calls.append(tau)
        return gap(tau)

    tau = localize(gap_after, 4e-3, -1e-5, gap(0.0), gap(4e-3), 1e-5)
    assert len(calls) == 2
    assert calls[-1] == tau
    assert abs(gap(tau) + 1e-5) <= 5e-6
    assert tau == pytest.approx((-0.5 + np.sqrt(0.25 + 4 * 4.905 * 1.01e-3)) / 9.81, abs=9.7e-6)


def test_localize_takes_the_first_time_within_the_tolerance_when_the_gap_is_held_out() -> None:
    """A gap closing at 0.5 m/s that a re-simulation holds at the surface, ``g(t) = max(1e-3 -
    0.5 t, 0)``, while the step that found it ended 1 mm deep (Bullet's speculative contact
    on a point its detection added since): the target just inside (-1e-5 m) is never reached,
    and the root find closes on the step's end (4 ms).  With the tolerance 1e-4 m, the event
    is the first time the gap is within it, ``(1e-3 - 1e-4) / 0.5 = 1.8e-3`` s, bisected to
    ``xtol = band / speed = 5e-6 / 0.5 = 1e-5`` s (the mean speed over the step,
    ``(1e-3 + 1e-3) / 4e-3``)."""

    def gap_after(tau: float) -> float:
        return max(1e-3 - 0.5 * tau, 0.0)

    assert localize(gap_after, 4e-3, -1e-5, 1e-3, -1e-3, 1e-5) == pytest.approx(4e-3, abs=1e-5)
    tau = localize(gap_after, 4e-3, -1e-5, 1e-3, -1e-3, 1e-5, within=1e-4)
    assert 1.8e-3 <= tau <= 1.8e-3 + 1e-5 and gap_after(tau) <= 1e-4


def test_a_bullet_client_is_accepted_like_its_id() -> None:
    """``ImpactSimulator`` takes a ``pybullet_utils`` ``BulletClient`` as ``hook`` does: the
    simulator works on that client's id."""
    from pybullet_utils.bullet_client import BulletClient

    bullet = BulletClient(connection_mode=p.DIRECT)
    try:
        load_planar_example(bullet._client, "rocking_block")
        assert ImpactSimulator(AnitescuPotraImpact(), bullet).client == bullet._client
    finally:
        bullet.disconnect()


class _PoseRecorder(ImpactLaw):
    """Routh's law that also records a body's pose at each event (the world is at the event's
    configuration while the law runs)."""

    name = "routh, recording a pose"

    def __init__(self, client: int, body: int) -> None:
        self.law, self.client, self.body, self.poses = RouthImpact(step="auto", max_steps=50), client, body, []

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        self.poses.append(p.getBasePositionAndOrientation(self.body, physicsClientId=self.client))
        return self.law._resolve(problem, v_minus, rng)


def test_contacts_at_an_event_lie_on_the_geometry_of_that_instant(client: int) -> None:
    """A cube (half extent 0.05 m) thrown tumbling at 3 m/s onto pybullet_data's plane.  Bullet
    detects collisions before it integrates, so the manifold a step leaves behind holds points
    one step's displacement (``|v| dt``, several mm here) from where the cube is; the event's
    contacts are read after collision detection at the event's configuration.  Each contact's
    point on the cube therefore lies on the cube's surface at that instant: in the cube's frame
    ``max_i(|x_i| - 0.05) = 0`` to round-off (1e-7 m; a stale point is millimetres off)."""
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    p.loadURDF("plane.urdf", physicsClientId=client)
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05] * 3, physicsClientId=client)
    cube = p.createMultiBody(1.0, shape, basePosition=[0, 0, 0.2], physicsClientId=client)
    p.resetBasePositionAndOrientation(cube, [0, 0, 0.2], p.getQuaternionFromEuler([0.3, 0.2, 0.0]), physicsClientId=client)
    p.resetBaseVelocity(cube, [3.0, 0.0, -1.0], [0.0, 0.0, 0.0], physicsClientId=client)
    law = _PoseRecorder(client, cube)
    simulator = ImpactSimulator(law, client, seed=0)
    for _ in range(120):
        simulator.step()
    assert len(simulator.events) >= 4
    for event, (position, orientation) in zip(simulator.events, law.poses, strict=True):
        rotation = np.array(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
        for contact in event.contacts:
            point = contact.position_a if contact.body_a == cube else contact.position_b
            local = rotation.T @ (point - np.array(position))
            assert abs(np.max(np.abs(local) - 0.05)) <= 1e-7, (event.time, contact.feature, local)


def test_collision_detection_between_steps_changes_no_later_step() -> None:
    """The PyBullet fact :meth:`ImpactSimulator._resolve` relies on: ``performCollisionDetection``
    between two steps refreshes the manifold and changes nothing Bullet computes next.  A cube
    thrown tumbling onto the plane, 120 steps, with and without it after every step: the same
    state, bit for bit."""

    def throw(detect: bool) -> list:
        cid = p.connect(p.DIRECT)
        try:
            p.setGravity(0, 0, -GRAVITY, physicsClientId=cid)
            p.loadURDF(str(Path(pybullet_data.getDataPath()) / "plane.urdf"), physicsClientId=cid)
            shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05] * 3, physicsClientId=cid)
            tilted = p.getQuaternionFromEuler([0.3, 0.2, 0.0])
            cube = p.createMultiBody(1.0, shape, basePosition=[0, 0, 0.2], baseOrientation=tilted, physicsClientId=cid)
            p.resetBaseVelocity(cube, [3.0, 0.0, -1.0], [0.0, 0.0, 0.0], physicsClientId=cid)
            states = []
            for _ in range(120):
                p.stepSimulation(physicsClientId=cid)
                if detect:
                    p.performCollisionDetection(physicsClientId=cid)
                states.append(p.getBasePositionAndOrientation(cube, physicsClientId=cid) + p.getBaseVelocity(cube, physicsClientId=cid))
            return states
        finally:
            p.disconnect(cid)

    assert throw(detect=True) == throw(detect=False)
