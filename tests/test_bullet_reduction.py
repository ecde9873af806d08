"""Contact-set hygiene: near-duplicates merged, face contacts reduced to their polygon,
zero normal rows dropped."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact.bullet.assembly import contact_problem
from bullet_setimpact.bullet.contacts import Contact, ContactFinder
from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.bullet.model import WorldModel
from bullet_setimpact.bullet.reduction import merge_indices, polygon_indices
from bullet_setimpact.errors import ManifoldCompletionWarning

UP = np.array([0.0, 0.0, 1.0])


def test_polygon_keeps_the_vertices_of_a_face_contact_only() -> None:
    """Four square corners, the square's centre and an edge midpoint, one normal: the centre
    and the midpoint are convex combinations of the corners, so only the corners (in input
    order) remain.  A tilted normal on one point makes it no face contact: all are kept."""
    corners = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]
    points = np.array([[0.5, 0.5, 0.0], *corners, [0.5, 0.0, 0.0]], dtype=float)
    normals = np.tile(UP, (len(points), 1))
    assert polygon_indices(points, normals) == [1, 2, 3, 4]
    normals[0] = [0.0, 0.6, 0.8]
    assert polygon_indices(points, normals) == list(range(6))


def test_merge_drops_points_within_the_distance_of_an_earlier_one() -> None:
    """Points 2e-5 m apart are one point for a 1e-4 m distance, and two for 1e-5 m (the old
    fixed MERGE_DISTANCE, which let such a pair through as a dependent fifth row)."""
    points = np.array([[0.0, 0.0, 0.0], [2e-5, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert merge_indices(points, 1e-4) == [0, 2]
    assert merge_indices(points, 1e-5) == [0, 1, 2]


def test_a_cube_resting_on_a_geom_plane_has_its_four_corners_as_contacts(client: int) -> None:
    """cube_small.urdf (a 5 cm box) settled on plane_implicit.urdf (a GEOM_PLANE): Bullet's
    manifold points sit at or next to the corners, so the contact set is exactly the 4 bottom
    corners (the issue's case had a fifth point 2e-5 m from a corner)."""
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    p.loadURDF("plane_implicit.urdf", physicsClientId=client)
    cube = p.loadURDF("cube_small.urdf", [0.0, 0.0, 0.03], physicsClientId=client)
    for _ in range(240):
        p.stepSimulation(physicsClientId=client)
    finder = ContactFinder(client, [cube], 1e-4)
    with pytest.warns(ManifoldCompletionWarning):
        contacts = finder.contacts()
    assert len(contacts) == 4
    assert len({contact.feature for contact in contacts}) == 4
    assert all(contact.feature[0] == "vertex" for contact in contacts)


def test_a_contact_with_a_zero_normal_row_is_dropped_not_turned_into_nan(client: int) -> None:
    """The planar rocking block moves in x, z and theta only (in the x-z plane), so a contact
    normal along y has a zero normal-Jacobian row: it can neither collide nor separate.  The
    problem keeps the other contact; with that contact alone there is no problem at all."""
    world = load_planar_example(client, "rocking_block")
    block, ground = world.bodies[0], world.ground
    configuration = WorldModel(client).configuration()
    link = p.getNumJoints(block, physicsClientId=client) - 1
    point = np.array(p.getLinkState(block, link, physicsClientId=client)[0])

    def contact(normal: list[float]) -> Contact:
        return Contact(block, link, ground, -1, point, point, np.array(normal, dtype=float), 0.0, 0.5)

    good, zero = contact([0.0, 0.0, 1.0]), contact([0.0, 1.0, 0.0])
    problem, kept = contact_problem([zero, good], configuration)
    assert problem is not None and problem.contacts == 1 and len(kept) == 1 and kept[0] is good
    assert np.all(np.isfinite(problem.Jn)) and np.abs(problem.Jn).max() > 0.0
    assert contact_problem([zero], configuration) == (None, [])


def test_contacts_follow_a_static_body_the_user_moves(client: int) -> None:
    """The finder reuses a link's frame, corners and shape placements while PyBullet reports
    the same pose bits, so a static ground moved with ``resetBasePositionAndOrientation`` must
    be measured at its new pose.  A 0.2 m cube whose bottom face is ``d`` above the top face
    of a static box touches it at its 4 bottom corners with gap ``d`` when ``d <= 1e-4`` (the
    tolerance), and not at all when ``d = 1e-3``; the gaps are differences of box coordinates,
    exact to round-off (1e-12)."""
    ground_shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[1.0, 1.0, 0.5], physicsClientId=client)
    ground = p.createMultiBody(0.0, ground_shape, basePosition=[0.0, 0.0, -0.5], physicsClientId=client)
    cube_shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.1, 0.1, 0.1], physicsClientId=client)
    cube = p.createMultiBody(1.0, cube_shape, basePosition=[0.0, 0.0, 0.1 + 5e-5], physicsClientId=client)
    finder = ContactFinder(client, [cube], 1e-4)
    for top, gap, count in ((0.0, 5e-5, 4), (-1e-3, 1e-3 + 5e-5, 0), (2e-5, 3e-5, 4)):
        p.resetBasePositionAndOrientation(ground, [0.0, 0.0, top - 0.5], [0.0, 0.0, 0.0, 1.0], physicsClientId=client)
        contacts = finder.contacts()
        assert len(contacts) == count, (top, [contact.gap for contact in contacts])
        assert all(abs(contact.gap - gap) < 1e-12 for contact in contacts)
        corner = ("vertex", cube, -1, 0, ground, -1)  # a bottom corner (signs -, -, -)
        assert abs(finder.feature_gaps([corner], 1e-3)[corner] - gap) < 1e-12


def test_link_pairs_against_one_link_get_the_contacts_each_gets_alone(client: int) -> None:
    """Three 10 cm cubes on a static ground made of two 1 m boxes side by side (top face at
    z = 0), evaluated together (their corners measured against the ground in one pass) and pair by
    pair (:meth:`ContactFinder.pair_contacts`), which must agree feature for feature:

    - cube 1 flat at z = 0.05 over the first box: its 4 bottom corners at gap 0 (the ground is
      body A, the first created: each normal, on the cube towards the ground, is -z);
    - cube 2 turned 45 degrees about x at z = 0.05 sqrt(2) over the second box: its lowest edge
      touches, 2 corners at gap 0;
    - cube 3 flat over the seam x = 0, 1e-5 m deep: 2 corners over each box, gap -1e-5, and
      each corner touches the box under it only (the other is 5 cm away sideways).  Bullet's
      closest-point query answers once per ground box for it: the link pair is still evaluated
      once, 4 contacts, not 8.

    A mix-up of which rows of the joint measurement belong to which cube (or to which ground
    box) gives other corners, gaps or points than the pair's own evaluation."""
    ground_shape = p.createCollisionShapeArray(
        [p.GEOM_BOX, p.GEOM_BOX],
        halfExtents=[[0.5, 0.5, 0.5]] * 2,
        collisionFramePositions=[[-0.5, 0, -0.5], [0.5, 0, -0.5]],
        physicsClientId=client,
    )
    ground = p.createMultiBody(0.0, ground_shape, physicsClientId=client)
    cube_shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05] * 3, physicsClientId=client)
    turned = p.getQuaternionFromEuler([np.pi / 4, 0.0, 0.0])
    placements = [([-0.5, 0.0, 0.05], [0, 0, 0, 1]), ([0.5, 0.0, 0.05 * np.sqrt(2.0)], turned), ([0.0, 0.3, 0.05 - 1e-5], [0, 0, 0, 1])]
    cubes = [p.createMultiBody(1.0, cube_shape, -1, position, orientation, physicsClientId=client) for position, orientation in placements]
    finder = ContactFinder(client, cubes, 1e-4)
    p.performCollisionDetection(client)
    together = finder.contacts()
    alone = [contact for cube in cubes for contact in finder.pair_contacts(((ground, -1), (cube, -1)))]
    counts = [sum(cube in (contact.body_a, contact.body_b) for contact in together) for cube in cubes]
    assert counts == [4, 2, 4]
    assert [contact.feature for contact in together] == [contact.feature for contact in alone]
    assert all(contact.feature[0] == "vertex" for contact in together)
    for joint, single in zip(together, alone, strict=True):
        for field in ("position_a", "position_b", "normal"):
            np.testing.assert_allclose(getattr(joint, field), getattr(single, field), rtol=0.0, atol=1e-12)
        assert joint.gap == pytest.approx(single.gap, abs=1e-12)
        np.testing.assert_allclose(joint.normal, -UP, atol=1e-12)
    gaps = {cube: sorted(contact.gap for contact in together if cube in (contact.body_a, contact.body_b)) for cube in cubes}
    np.testing.assert_allclose(gaps[cubes[0]], 0.0, atol=1e-12)
    np.testing.assert_allclose(gaps[cubes[1]], 0.0, atol=1e-12)
    np.testing.assert_allclose(gaps[cubes[2]], -1e-5, atol=1e-12)
