"""Bilateral constraints through an impact: ``ImpactProblem(constraints=G)`` and the user's
``createConstraint`` constraints in live worlds (:mod:`bullet_setimpact.bullet.constraints`)."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterator

import numpy as np
import pybullet as p
import pybullet_data
import pytest

import bullet_setimpact
from bullet_setimpact import AnitescuPotraImpact, ImpactProblem, RouthImpact
from bullet_setimpact.bullet.constraints import constraint_rows, read_constraints
from bullet_setimpact.bullet.model import WorldModel
from bullet_setimpact.bullet.simulator import ImpactSimulator
from bullet_setimpact.errors import ConstraintIgnoredWarning, LawContractError
from bullet_setimpact.laws.base import ImpactLaw, LawOutcome
from bullet_setimpact.testing import check_law, check_outcome, random_impact

from .pattern_envs import minitaur_command, minitaur_world

GRAVITY = 9.81


# --------------------------------------------------------------------------- the problem
def _welded_point_masses(mu: float) -> ImpactProblem:
    """Point masses m1 = 1 and m2 = 3 (coordinates ``[v1, v2]``), welded (``v1 = v2``), mass 1
    touching the ground (normal z, tangents x and y)."""
    M = np.diag([1.0] * 3 + [3.0] * 3)
    Jn = np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]])
    Jt = np.array([[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]]])
    return ImpactProblem(M, Jn, Jt, mu, constraints=np.hstack([np.eye(3), -np.eye(3)]))


@pytest.mark.parametrize("law", [RouthImpact(step="auto", max_steps=50), AnitescuPotraImpact()], ids=["routh", "anitescu-potra"])
def test_welded_masses_land_as_one_body(law: ImpactLaw) -> None:
    """The weld makes the pair one particle of mass 4 landing at ``v = (2, 0, -1)``.  A plastic
    impact stops its normal velocity: ``Lambda_n = 4 * 1 = 4``.  Friction ``mu = 0.5`` can take
    at most ``mu Lambda_n = 2`` of its tangential momentum ``4 * 2 = 8``, so it slides, and
    with one contact the friction opposes the slip throughout: ``v_x+ = 2 - 2 / 4 = 1.5``,
    for both masses.  (Unconstrained, mass 1 alone would stop: ``Lambda_n = 1``.)"""
    problem = _welded_point_masses(mu=0.5)
    result = law.resolve(problem, np.array([2.0, 0.0, -1.0, 2.0, 0.0, -1.0]), rng=0)
    np.testing.assert_allclose(result.v_plus, [1.5, 0.0, 0.0, 1.5, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(result.normal_impulse, [4.0], rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(result.friction_impulse), 2.0, rtol=1e-9)


def test_constrained_velocity_is_the_mass_weighted_projection() -> None:
    """``constrained_velocity`` applies the constraint impulse that makes ``G v = 0``: for the
    weld, the momentum-conserving common velocity ``(1 * v1 + 3 * v2) / 4``.  With
    ``v1 = (4, 0, 0)`` and ``v2 = 0`` that is ``(1, 0, 0)`` for both."""
    v = _welded_point_masses(mu=0.0).constrained_velocity(np.array([4.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
    np.testing.assert_allclose(v, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_constrained_problem_is_the_reduced_one(seed: int) -> None:
    """In the coordinates ``nu`` of ``v = N nu`` (any basis of the null space of ``G``: here a
    random non-orthogonal one), the impact is the unconstrained problem ``(N^T M N, Jn N,
    Jt N)``.  Its Delassus matrix is the constrained problem's (the same impulse-to-velocity
    map), and a law's outcome of the constrained problem, mapped to ``nu``, obeys the
    reduced problem's contract (Newton's law with ``N^T M N``, the cone, no energy gain)."""
    problem, v_minus = random_impact(seed, dofs=7, contacts=3, spatial=True, constrained=True)
    assert problem.constraints is not None and problem.free_basis is not None
    basis = problem.free_basis @ np.random.default_rng(seed).normal(size=(problem.free_basis.shape[1],) * 2)
    np.testing.assert_allclose(problem.constraints @ basis, 0.0, atol=1e-9)
    reduced = ImpactProblem(basis.T @ problem.M @ basis, problem.Jn @ basis, np.einsum("idv,vr->idr", problem.Jt, basis), problem.mu)
    np.testing.assert_allclose(reduced.delassus, problem.delassus, rtol=1e-8, atol=1e-8 * np.abs(problem.delassus).max())
    result = RouthImpact(step="auto", max_steps=50).resolve(problem, v_minus, rng=seed)
    to_reduced = np.linalg.pinv(basis)
    mapped = dataclasses.replace(result, v_plus=to_reduced @ result.v_plus, path=result.path @ to_reduced.T)
    check_outcome(reduced, mapped.path[0], mapped)


class _UnconstrainedPlastic(ImpactLaw):
    """A frictionless plastic impact at the deepest-approaching contact that solves with ``M``
    itself (``np.linalg.solve``), not :meth:`ImpactProblem.solve_mass`: blind to constraints."""

    name = "unconstrained plastic"

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        row = int(problem.normal_velocities(v_minus).argmin())
        push = np.linalg.solve(problem.M, problem.Jn[row])
        impulse = max(0.0, -float(problem.Jn[row] @ v_minus) / float(problem.Jn[row] @ push))
        normal = np.zeros(problem.contacts)
        normal[row] = impulse
        path = np.array([v_minus, v_minus + impulse * push])
        return LawOutcome(path, normal, np.zeros((problem.contacts, problem.Jt.shape[1])), terminated=True)


def test_check_law_catches_a_law_blind_to_constraints() -> None:
    """``check_law``'s constrained cases (one in three) catch a law that uses ``M^-1`` instead
    of the constrained inverse: its velocity change breaks ``G dv = 0``."""
    with pytest.raises(LawContractError, match="constrained velocity"):
        check_law(_UnconstrainedPlastic(), cases=12)


def test_constraints_that_fix_everything_or_misfit_are_refused() -> None:
    """``G`` of full column rank leaves no velocity; a ``G`` with the wrong width is a shape error."""
    M, Jn, Jt = np.eye(2), np.array([[1.0, 0.0]]), np.zeros((1, 1, 2))
    with pytest.raises(ValueError, match="fix every one of the 2 velocities"):
        ImpactProblem(M, Jn, Jt, 0.0, constraints=np.eye(2))
    with pytest.raises(ValueError, match=r"constraints must have shape \(r, 2\)"):
        ImpactProblem(M, Jn, Jt, 0.0, constraints=np.ones((1, 3)))


# --------------------------------------------------------------------------- live worlds
@pytest.fixture
def client() -> Iterator[int]:
    cid = p.connect(p.DIRECT)
    p.setGravity(0, 0, -GRAVITY, physicsClientId=cid)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
    p.loadURDF("plane.urdf", physicsClientId=cid)
    yield cid
    p.disconnect(cid)


def _sphere(cid: int, radius: float, mass: float, position: list[float]) -> int:
    shape = p.createCollisionShape(p.GEOM_SPHERE, radius=radius, physicsClientId=cid)
    return p.createMultiBody(mass, shape, basePosition=position, physicsClientId=cid)


def _box(cid: int, position: list[float]) -> int:
    """A 1 kg cube of half extent 0.05 m."""
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05] * 3, physicsClientId=cid)
    return p.createMultiBody(1.0, shape, basePosition=position, physicsClientId=cid)


def _first_landing(cid: int) -> list:
    simulator = ImpactSimulator(RouthImpact(step="auto", max_steps=50), cid, seed=0)
    while not simulator.events:
        simulator.step()
        assert simulator.time < 1.0, "nothing landed"
    return simulator.events


@pytest.mark.parametrize("kind", [p.JOINT_FIXED, p.JOINT_POINT2POINT], ids=["fixed", "point2point"])
def test_a_body_joined_above_the_lander_stops_with_it(client: int, kind: int) -> None:
    """A snowman: sphere B (0.5 kg) joined 0.2 m above sphere A (1 kg, r = 0.1 m), falling
    together from rest.  A's single contact lies on the vertical through the pair's centre of
    mass, so the plastic impact's impulse is vertical through it: no rotation, and every point
    of the pair stops, B included (``v+ = 0`` for both bodies: one event, both bodies in it).
    Ignoring the constraint would stop A alone and leave B falling at ~2 m/s."""
    lower = _sphere(client, 0.1, 1.0, [0.0, 0.0, 0.3])
    upper = _sphere(client, 0.05, 0.5, [0.0, 0.0, 0.5])
    p.createConstraint(lower, -1, upper, -1, kind, [0, 0, 0], [0, 0, 0.2], [0, 0, 0], physicsClientId=client)
    (event,) = _first_landing(client)
    assert event.bodies == (lower, upper)
    assert event.v_minus[2] < -1.5 and event.v_minus[8] < -1.5
    np.testing.assert_allclose(event.v_plus, 0.0, atol=1e-6)
    np.testing.assert_allclose(event.problem.constraints @ event.v_plus, 0.0, atol=1e-9)


def test_two_landers_joined_are_one_impact(client: int) -> None:
    """Two equal spheres side by side, joined by a point2point constraint at their midpoint,
    land in the same step: the constraint makes their contacts one impact (one event, both
    bodies).  Both contacts are below their centres of mass with no tangential motion, so
    both stop: ``v+ = 0``."""
    left = _sphere(client, 0.1, 1.0, [-0.15, 0.0, 0.3])
    right = _sphere(client, 0.1, 1.0, [0.15, 0.0, 0.3])
    p.createConstraint(left, -1, right, -1, p.JOINT_POINT2POINT, [0, 0, 0], [0.15, 0, 0], [-0.15, 0, 0], physicsClientId=client)
    (event,) = _first_landing(client)
    assert event.bodies == (left, right)
    assert len(event.contacts) == 2
    np.testing.assert_allclose(event.v_plus, 0.0, atol=1e-6)


def test_a_constraint_to_the_world_is_read_with_a_world_pivot(client: int) -> None:
    """A child body of -1 is the world: the constraint's rows are the parent pivot's point
    Jacobian alone (a sphere pinned at its centre: ``G`` picks its linear velocity)."""
    ball = _sphere(client, 0.1, 1.0, [0.0, 0.0, 1.0])
    p.createConstraint(ball, -1, -1, -1, p.JOINT_POINT2POINT, [0, 0, 0], [0, 0, 0], [0, 0, 1.0], physicsClientId=client)
    (constraint,), ignored = read_constraints(client)
    assert constraint.child is None and constraint.bodies == (ball,) and not ignored
    configuration = WorldModel(client).restrict([ball]).configuration()
    np.testing.assert_allclose(constraint_rows([constraint], configuration), np.hstack([np.eye(3), np.zeros((3, 3))]), atol=1e-12)


def test_a_gear_constraint_is_reported_as_not_modelled(client: int) -> None:
    """Impacts model point2point and fixed constraints; a gear (the racecar's wheels) is named
    in a :class:`ConstraintIgnoredWarning`, once."""
    car = p.loadURDF("racecar/racecar.urdf", [0, 0, 0.2], physicsClientId=client)
    gear = p.createConstraint(car, 9, car, 11, p.JOINT_GEAR, [0, 1, 0], [0, 0, 0], [0, 0, 0], physicsClientId=client)
    with pytest.warns(ConstraintIgnoredWarning, match=f"constraint {gear} \\(gear, bodies {car} and {car}\\)"):
        simulator = ImpactSimulator("routh", client, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstraintIgnoredWarning)
        p.changeDynamics(car, -1, mass=2.0, physicsClientId=client)  # the world is modelled anew
        simulator.step()


def test_pybullet_envs_minitaur_trots_with_its_knee_loops_closed_through_impacts() -> None:
    """pybullet_envs' Minitaur closes each leg's loop with a point2point constraint at the toe
    (4 constraints, 12 rows).  Trotting 1.5 s under the hook, every event carries them
    (``problem.constraints``), keeps them (``G v+ = 0`` to round-off; Bullet leaves
    ``|G v-|`` at several cm/s between its steps) and gains no energy; the robot stays up."""
    client, robot = minitaur_world(1.0 / 240.0)
    with bullet_setimpact.hook("routh", client=client, seed=0) as simulator:
        for index in range(360):
            minitaur_command(robot, index / 240.0)
            client.stepSimulation()
    assert len(simulator.events) > 20
    for event in simulator.events:
        assert event.problem.constraints is not None and event.problem.constraints.shape[0] == 12
        scale = 1.0 + np.abs(event.v_minus).max()
        assert np.abs(event.problem.constraints @ event.v_plus).max() <= 1e-9 * scale
        assert event.energy_after <= event.energy_before * (1.0 + 1e-12)
    assert client.getBasePositionAndOrientation(robot.quadruped)[0][2] > 0.1
    client.disconnect()


def test_a_body_welded_to_the_world_is_held_still_without_an_error(client: int) -> None:
    """A box welded to the world (fixed constraint, child -1) resting on the plane cannot move:
    its impact has no free velocity and is skipped.  A ball dropped onto it meets an immovable
    box: a plastic impact on one contact below the ball's centre stops the ball (``v+ = 0``)
    and leaves the box still (its rows: ``G v+ = 0`` means its 6 velocities are 0)."""
    box = _box(client, [0.0, 0.0, 0.05])
    p.createConstraint(box, -1, -1, -1, p.JOINT_FIXED, [0, 0, 0], [0, 0, 0], [0, 0, 0.05], physicsClientId=client)
    ball = _sphere(client, 0.02, 0.1, [0.0, 0.0, 0.3])
    (event,) = _first_landing(client)
    assert event.bodies == (box, ball)
    np.testing.assert_allclose(event.v_plus, 0.0, atol=1e-6)


def test_a_driven_target_is_left_to_bullet_and_changes_no_world_model(client: int) -> None:
    """``changeConstraint`` moving a constraint's child pivot drives a target (a mocap): the pivots'
    relative velocity is the target's, so impacts do not hold it to zero and a
    :class:`ConstraintIgnoredWarning` says so.  Changing a constraint touches the constraints
    alone: the world is not modelled anew, and the resting-contact certificates keep skipping
    steps while a target's force is changed every step."""
    box = _box(client, [0.0, 0.0, 0.05])
    grip = p.createConstraint(box, -1, -1, -1, p.JOINT_POINT2POINT, [0, 0, 0], [0, 0, 0], [0, 0, 0.05], physicsClientId=client)
    simulator = ImpactSimulator("routh", client, seed=0)
    for _ in range(60):
        simulator.step()
    world, skipped = simulator.world, simulator.budget_steps
    for _ in range(60):
        p.changeConstraint(grip, maxForce=50.0, physicsClientId=client)
        simulator.step()
    assert simulator.world is world and simulator.budget_steps > skipped + 50
    assert [c.uid for c in simulator._constraints] == [grip]
    p.changeConstraint(grip, [0.01, 0, 0.05], maxForce=50.0, physicsClientId=client)
    with pytest.warns(ConstraintIgnoredWarning, match=f"constraint {grip} \\(point2point, its target moved by changeConstraint"):
        simulator.step()
    assert simulator._constraints == []


def test_an_event_separates_the_constraints_energy_from_the_laws(client: int) -> None:
    """Two spheres joined by a point2point constraint land with their pivots moving apart (set by
    hand: the upper one 1 m/s faster downwards).  ``event.energy_before`` is the kinetic energy
    of ``v_minus``; ``result.energy_before`` that of the velocity the law resolved, after the
    constraint's impulse: equal masses joined end to end share their momentum, so that is
    ``0.5 * 2 * ((v1 + v2) / 2)^2`` along z (the lateral parts are zero)."""
    lower = _sphere(client, 0.1, 1.0, [0.0, 0.0, 0.1004])
    upper = _sphere(client, 0.1, 1.0, [0.0, 0.0, 0.3004])
    p.createConstraint(lower, -1, upper, -1, p.JOINT_POINT2POINT, [0, 0, 0], [0, 0, 0.1], [0, 0, -0.1], physicsClientId=client)
    p.resetBaseVelocity(lower, [0, 0, -1.0], [0, 0, 0], physicsClientId=client)
    p.resetBaseVelocity(upper, [0, 0, -2.0], [0, 0, 0], physicsClientId=client)
    simulator = ImpactSimulator(RouthImpact(step="auto", max_steps=50), client, seed=0)
    simulator.step()
    event = simulator.events[0]
    v1, v2 = event.v_minus[2], event.v_minus[8]
    assert event.energy_before == pytest.approx(0.5 * (v1**2 + v2**2), rel=1e-12)
    assert event.result.energy_before == pytest.approx(0.5 * 2.0 * ((v1 + v2) / 2.0) ** 2, rel=1e-9)
