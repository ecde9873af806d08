"""The shipped URDFs reproduce the journal's examples of ``bullet_setimpact.analysis.planar``.

Each planar URDF is loaded at the journal's impact configuration (recomputed here the way
``planar.py`` computes it), and the model extracted by ``bullet_setimpact.bullet`` must give
``planar.<example>().problem``: the same ``M`` and the same contact rows ``Jn``, ``Jt`` at the
known contact points (planar ``(x, y)`` is world ``(x, 0, z)``).  The collision shapes must
put those contact points where the journal has them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from bullet_setimpact import data_path, planar
from bullet_setimpact.bullet import WorldModel

URDF = Path(data_path())
FLAGS = p.URDF_USE_INERTIA_FROM_FILE
UP, WALL_NORMAL = np.array([0.0, 1.0]), np.array([-1.0, 0.0])


def world(planar_vector: np.ndarray) -> np.ndarray:
    """Planar ``(x, y)`` as the world vector ``(x, 0, z)``."""
    return np.array([planar_vector[0], 0.0, planar_vector[1]])


def u(theta: float) -> np.ndarray:
    """Planar segment direction from the downward vertical."""
    return np.array([np.sin(theta), -np.cos(theta)])


@dataclass(frozen=True)
class Contact:
    """Link ``link_a`` of body index ``a`` touches body index ``b`` (None: the static scene)."""

    a: int
    link_a: int
    b: int | None
    link_b: int
    point: np.ndarray  # planar
    normal: np.ndarray  # planar, on B towards A


@dataclass(frozen=True)
class Case:
    urdf: str
    q: tuple[np.ndarray, ...]  # one per loaded body
    contacts: tuple[Contact, ...]
    mass_tolerance: float


def rocking_block() -> Case:
    q = np.array([0.0, 1.0, 0.0])
    return Case("rocking_block_planar.urdf", (q,), tuple(Contact(0, 2, None, -1, np.array([x, 0.0]), UP) for x in (-0.5, 0.5)), 1e-12)


def compass_gait() -> Case:
    phi = np.deg2rad(78.0)
    hip = np.array([-np.sin(phi), np.cos(phi)])
    q = np.array([*hip, -phi, phi])
    feet = (Contact(0, 2, None, -1, hip + u(-phi), UP), Contact(0, 3, None, -1, hip + u(phi), UP))
    return Case("compass_gait_planar.urdf", (q,), feet, 1e-6)  # hip mass and leg inertias of 1e-7


def box_wall() -> Case:
    theta = -np.deg2rad(10.0)
    rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    corners = np.array([rotation @ np.array([sx, sy]) * 0.5 for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
    centre = np.array([-corners[:, 0].max(), -corners[:, 1].min()])
    contacts = (
        Contact(0, 2, None, -1, centre + corners[np.argmin(corners[:, 1])], UP),
        Contact(0, 2, None, -1, centre + corners[np.argmax(corners[:, 0])], WALL_NORMAL),
    )
    return Case("box_wall_planar.urdf", (np.array([*centre, theta]),), contacts, 1e-12)


def ramone() -> Case:
    r = planar.RAMoneParameters()
    pitch, hip = np.deg2rad(16.0), np.deg2rad(70.0)
    alpha_l, alpha_t, beta_l = -hip, hip, np.deg2rad(-2.0)
    leg_height = r.shank_length * np.cos(pitch + alpha_l + beta_l) + r.thigh_length * np.cos(pitch + alpha_l)
    beta_t = -np.arccos((leg_height - r.thigh_length * np.cos(pitch + alpha_t)) / r.shank_length) - pitch - alpha_t
    trunk = np.array([0.0, leg_height + r.hip_offset * np.cos(pitch) + r.foot_radius])
    hip_point = trunk + r.hip_offset * u(pitch)

    def foot(alpha: float, beta: float) -> np.ndarray:
        centre = hip_point + r.thigh_length * u(pitch + alpha) + r.shank_length * u(pitch + alpha + beta)
        return centre - np.array([0.0, r.foot_radius])

    q = np.array([*trunk, pitch, alpha_l, beta_l, alpha_t, beta_t])
    contacts = (Contact(0, 4, None, -1, foot(alpha_l, beta_l), UP), Contact(0, 6, None, -1, foot(alpha_t, beta_t), UP))
    return Case("ramone_planar.urdf", (q,), contacts, 1e-12)


def disk_stack() -> Case:
    centres = np.array([[0.0, 1.0], [2.0, 1.0], [1.0, 1.0 + np.sqrt(3.0)]])

    def between(upper: int, lower: int) -> Contact:
        normal = (centres[upper] - centres[lower]) / 2.0
        return Contact(upper, 2, lower, 2, centres[lower] + normal, normal)

    contacts = (
        Contact(0, 2, None, -1, np.array([0.0, 0.0]), UP),
        Contact(1, 2, None, -1, np.array([2.0, 0.0]), UP),
        between(2, 0),
        between(2, 1),
        between(1, 0),
    )
    return Case("disk_planar.urdf", tuple(np.array([*c, 0.0]) for c in centres), contacts, 1e-12)


CASES = {"rocking_block": rocking_block, "compass_gait": compass_gait, "box_wall": box_wall, "ramone": ramone, "disk_stack": disk_stack}


def load_scene(client: int) -> tuple[int, int]:
    ground = p.loadURDF(str(URDF / "ground_box.urdf"), physicsClientId=client)
    wall = p.loadURDF(str(URDF / "wall_box.urdf"), physicsClientId=client)
    return ground, wall


def load_case(client: int, case: Case) -> list[int]:
    bodies = []
    for q in case.q:
        body = p.loadURDF(str(URDF / case.urdf), useFixedBase=True, flags=FLAGS, physicsClientId=client)
        for joint, value in enumerate(q):
            p.resetJointState(body, joint, value, physicsClientId=client)
        bodies.append(body)
    return bodies


def contact_rows(configuration, bodies: list[int], contact: Contact) -> tuple[np.ndarray, np.ndarray]:
    point, normal = world(contact.point), world(contact.normal)
    tangent = world(np.array([contact.normal[1], -contact.normal[0]]))
    if contact.b is None:
        jacobian = configuration.point_jacobian(bodies[contact.a], contact.link_a, point)
    else:
        jacobian = configuration.relative_jacobian(bodies[contact.a], contact.link_a, bodies[contact.b], contact.link_b, point)
    return normal @ jacobian, tangent @ jacobian


@pytest.mark.parametrize("name", list(CASES))
def test_planar_urdf_reproduces_planar_problem(client, name):
    case, example = CASES[name](), planar.example(name)
    load_scene(client)
    bodies = load_case(client, case)
    model = WorldModel(client)
    assert [b.body for b in model.bodies] == bodies
    assert model.nv == example.problem.dofs
    configuration = model.configuration()
    np.testing.assert_allclose(configuration.mass_matrix(), example.problem.M, rtol=0, atol=case.mass_tolerance)
    rows = [contact_rows(configuration, bodies, contact) for contact in case.contacts]
    np.testing.assert_allclose([row[0] for row in rows], example.problem.Jn, rtol=0, atol=1e-12)
    np.testing.assert_allclose([row[1] for row in rows], example.problem.Jt[:, 0, :], rtol=0, atol=1e-12)


def test_planar_box_corners_jacobian_does_not_depend_on_depth(client):
    """Box-box contact reports the corners at y = +-depth/2; in the plane they are one contact."""
    case = rocking_block()
    (body,) = load_case(client, case)
    configuration = WorldModel(client).configuration()
    corner = world(case.contacts[0].point)
    for depth in (-0.25, 0.25):
        shifted = configuration.point_jacobian(body, 2, corner + np.array([0.0, depth, 0.0]))
        np.testing.assert_allclose(shifted, configuration.point_jacobian(body, 2, corner), rtol=0, atol=1e-15)


def box_corners(client: int, body: int, link: int) -> np.ndarray:
    """World corners of a link's box collision shape, from PyBullet's collision shape data."""
    (shape,) = p.getCollisionShapeData(body, link, physicsClientId=client)
    assert shape[2] == p.GEOM_BOX
    half = np.asarray(shape[3]) / 2.0
    state = p.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=client)
    frame = np.reshape(p.getMatrixFromQuaternion(state[1]), (3, 3))
    local = np.reshape(p.getMatrixFromQuaternion(shape[6]), (3, 3))
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    return np.asarray(state[0]) + (np.asarray(shape[5]) + signs * half @ local.T) @ frame.T


@pytest.mark.parametrize("name", ["rocking_block", "box_wall"])
def test_box_collision_corners_are_the_contact_points(client, name):
    case = CASES[name]()
    (body,) = load_case(client, case)
    corners = box_corners(client, body, 2)
    assert corners[:, 2].min() == pytest.approx(0.0, abs=1e-12)  # resting on the ground z = 0
    for contact in case.contacts:
        distance = np.linalg.norm(corners[:, [0, 2]] - contact.point, axis=1)
        assert np.sum(distance < 1e-12) == 2  # both depth ends of the planar corner
    if name == "box_wall":
        assert corners[:, 0].max() == pytest.approx(0.0, abs=1e-12)  # touching the wall x = 0


@pytest.mark.parametrize("name", ["compass_gait", "ramone", "disk_stack"])
def test_sphere_collision_touches_at_the_contact_points(client, name):
    """Bullet's closest points (sphere-box, sphere-sphere are exact) are the journal's contact points."""
    case = CASES[name]()
    ground, _ = load_scene(client)
    bodies = load_case(client, case)
    for contact in case.contacts:
        other = ground if contact.b is None else bodies[contact.b]
        link_b = -1 if contact.b is None else contact.link_b
        points = p.getClosestPoints(bodies[contact.a], other, 1e-3, contact.link_a, link_b, physicsClientId=client)
        assert len(points) == 1
        _, _, _, _, _, on_a, _on_b, normal_on_b, distance, *_ = points[0]
        assert distance == pytest.approx(0.0, abs=1e-9)
        np.testing.assert_allclose(on_a, world(contact.point), rtol=0, atol=1e-9)
        np.testing.assert_allclose(normal_on_b, world(contact.normal), rtol=0, atol=1e-9)


def test_free_variants_reproduce_planar_problems(client):
    """Rocking slab, sliding box and sphere stack: their x-z motion is the planar model's."""
    # planar (x, y, theta) -> world block (v_x, v_y, v_z, omega_x, omega_y, omega_z)
    embed = np.zeros((6, 3))
    embed[0, 0], embed[2, 1], embed[4, 2] = 1.0, 1.0, -1.0
    variants = (("rocking_slab.urdf", "rocking_block", 1), ("sliding_box.urdf", "box_wall", 1), ("stack_sphere.urdf", "disk_stack", 3))
    for urdf, name, disks in variants:
        case, expected = CASES[name](), planar.example(name).problem
        scene = load_scene(client)
        bodies = []
        for q in case.q:
            half = -q[2] / 2.0  # planar theta is a turn about world -y
            bodies.append(
                p.loadURDF(str(URDF / urdf), [q[0], 0.0, q[1]], [0.0, np.sin(half), 0.0, np.cos(half)], flags=FLAGS, physicsClientId=client)
            )
        configuration = WorldModel(client).configuration()
        S = np.kron(np.eye(disks), embed)
        M = S.T @ configuration.mass_matrix() @ S
        if disks == 3:  # solid spheres: I = 0.4 instead of the planar disks' 0.5
            np.testing.assert_allclose(np.diag(M)[2::3], 0.4, rtol=0, atol=1e-12)
            M[np.arange(2, 9, 3), np.arange(2, 9, 3)] = 0.5
        np.testing.assert_allclose(M, expected.M, rtol=0, atol=1e-12)
        links = [Contact(c.a, -1, c.b, -1, c.point, c.normal) for c in case.contacts]
        rows = np.array([contact_rows(configuration, bodies, contact) for contact in links]) @ S
        np.testing.assert_allclose(rows[:, 0], expected.Jn, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows[:, 1], expected.Jt[:, 0, :], rtol=0, atol=1e-12)
        for body in [*scene, *bodies]:
            p.removeBody(body, physicsClientId=client)


def test_scene_faces_and_friction(client):
    ground, wall = load_scene(client)
    assert WorldModel(client).static_bodies == {ground, wall}
    probe = p.loadURDF(str(URDF / "stack_sphere.urdf"), [-1.25, 0.0, 1.5], physicsClientId=client)
    (above,) = p.getClosestPoints(probe, ground, 1.0, physicsClientId=client)
    assert above[8] == pytest.approx(0.5, abs=1e-12) and above[6][2] == pytest.approx(0.0, abs=1e-12)
    (beside,) = p.getClosestPoints(probe, wall, 1.0, physicsClientId=client)
    assert beside[8] == pytest.approx(0.25, abs=1e-12) and beside[6][0] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(beside[7], [-1.0, 0.0, 0.0], atol=1e-12)
    friction = {name: p.getDynamicsInfo(body, -1, physicsClientId=client)[1] for name, body in (("ground", ground), ("wall", wall))}
    for urdf, link, mu in (
        ("rocking_block_planar.urdf", 2, 1.0),
        ("box_wall_planar.urdf", 2, 1.0),
        ("compass_gait_planar.urdf", 2, 5.0),
        ("ramone_planar.urdf", 4, 1e5),
        ("disk_planar.urdf", 2, 3.0**0.25),
        ("rocking_slab.urdf", -1, 1.0),
        ("sliding_box.urdf", -1, 1.0),
        ("stack_sphere.urdf", -1, 3.0**0.25),
    ):
        body = p.loadURDF(str(URDF / urdf), [0.0, 0.0, 5.0], useFixedBase=link >= 0, flags=FLAGS, physicsClientId=client)
        assert p.getDynamicsInfo(body, link, physicsClientId=client)[1] == pytest.approx(mu, rel=1e-12)
    assert friction == {"ground": 1.0, "wall": 1.0}


@pytest.mark.parametrize("urdf", ["rocking_block_planar.urdf", "box_wall_planar.urdf", "rocking_slab.urdf", "sliding_box.urdf"])
def test_box_urdfs_do_not_need_the_inertia_flag(client, urdf):
    """Bullet's inertia from the box collision shape equals the URDF's (only other URDFs need the flag)."""
    for flags in (FLAGS, 0):
        p.loadURDF(str(URDF / urdf), useFixedBase="planar" in urdf, flags=flags, physicsClientId=client)
    with_flag, without = (WorldModel(client, bodies=[body]).configuration().mass_matrix() for body in (0, 1))
    np.testing.assert_allclose(without, with_flag, rtol=0, atol=1e-15)
