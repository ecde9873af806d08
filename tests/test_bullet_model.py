"""Model extraction from PyBullet: velocity layout, M(q), world-frame point Jacobians.

Every expected value comes from PyBullet's own link states (``getLinkState`` with
``computeLinkVelocity``, ``getBaseVelocity``, ``getDynamicsInfo``), from finite differences
of positions, or from the raw PyBullet calls whose conventions the model relies on.
"""

from __future__ import annotations

import timeit
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact import ImpactSimulator, JointAxisWarning, RouthImpact
from bullet_setimpact.bullet import WorldModel
from bullet_setimpact.bullet.state import Snapshot

# A floating base and two links whose inertial frames are offset AND rotated, with a
# non-diagonal inertia (Bullet diagonalizes it and turns the inertial frame accordingly).
ROTATED_URDF = """<?xml version="1.0"?>
<robot name="rotated">
  <link name="base">
    <inertial><origin xyz="0.1 -0.2 0.05" rpy="0.3 -0.4 0.7"/><mass value="2.0"/>
      <inertia ixx="0.3" ixy="0.05" ixz="-0.02" iyy="0.2" iyz="0.01" izz="0.25"/></inertial>
    <collision><geometry><box size="0.4 0.3 0.2"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial><origin xyz="0.0 0.1 0.3" rpy="-0.5 0.2 1.1"/><mass value="0.7"/>
      <inertia ixx="0.02" ixy="0.001" ixz="0.001" iyy="0.03" iyz="-0.002" izz="0.025"/></inertial>
  </link>
  <link name="slider">
    <inertial><origin xyz="0.05 0.0 -0.1" rpy="0.9 0.1 -0.3"/><mass value="0.4"/>
      <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.006"/></inertial>
  </link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0.2 0.1 0.0" rpy="0.1 0.2 0.3"/><axis xyz="0.6 0 0.8"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="slide" type="prismatic"><parent link="arm"/><child link="slider"/>
    <origin xyz="0.0 0.0 0.5" rpy="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="10"/></joint>
</robot>
"""

# Spherical joints with turned joint origins and child inertial frames that are offset AND
# rotated (so the parent, child-URDF and child-inertial frames all differ), plus a revolute,
# a prismatic and a fixed joint below them.
SPHERICAL_URDF = """<?xml version="1.0"?>
<robot name="spherical_chain">
  <link name="base">
    <inertial><origin xyz="0.1 -0.2 0.05" rpy="0.3 -0.4 0.7"/><mass value="2.0"/>
      <inertia ixx="0.3" ixy="0.05" ixz="-0.02" iyy="0.2" iyz="0.01" izz="0.25"/></inertial>
    <collision><geometry><box size="0.4 0.3 0.2"/></geometry></collision>
  </link>
  <link name="upper">
    <inertial><origin xyz="0.0 0.1 0.3" rpy="-0.5 0.2 1.1"/><mass value="0.7"/>
      <inertia ixx="0.02" ixy="0.001" ixz="0.001" iyy="0.03" iyz="-0.002" izz="0.025"/></inertial>
  </link>
  <link name="fore">
    <inertial><origin xyz="0.05 0.0 -0.1" rpy="0.9 0.1 -0.3"/><mass value="0.4"/>
      <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.006"/></inertial>
  </link>
  <link name="hand">
    <inertial><origin xyz="0.02 0.03 0.1" rpy="0.2 0.7 -0.3"/><mass value="0.3"/>
      <inertia ixx="0.003" ixy="0.0002" ixz="0" iyy="0.002" iyz="0" izz="0.0025"/></inertial>
  </link>
  <link name="thumb">
    <inertial><origin xyz="0.01 0.0 0.02" rpy="0.5 0 0.1"/><mass value="0.1"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.0012" iyz="0" izz="0.0014"/></inertial>
  </link>
  <link name="finger">
    <inertial><origin xyz="0.0 0.02 0.03" rpy="0.1 -0.6 0.4"/><mass value="0.05"/>
      <inertia ixx="0.0005" ixy="0" ixz="0" iyy="0.0006" iyz="0" izz="0.0007"/></inertial>
  </link>
  <joint name="shoulder" type="spherical"><parent link="base"/><child link="upper"/>
    <origin xyz="0.2 0.1 0.0" rpy="0.1 0.2 0.3"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.0 0.0 0.5" rpy="0.4 0 0"/><axis xyz="0.6 0 0.8"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="wrist" type="spherical"><parent link="fore"/><child link="hand"/>
    <origin xyz="0.1 0.0 0.3" rpy="-0.3 0.5 0.2"/></joint>
  <joint name="weld" type="fixed"><parent link="hand"/><child link="thumb"/>
    <origin xyz="0.05 0.02 0.1" rpy="0.3 0.1 -0.2"/></joint>
  <joint name="slide" type="prismatic"><parent link="hand"/><child link="finger"/>
    <origin xyz="0.0 0.05 0.2" rpy="0.2 0.3 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="10"/></joint>
</robot>
"""

PLANAR_JOINT_URDF = """<?xml version="1.0"?>
<robot name="planar_joint">
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="puck"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="glide" type="planar"><parent link="base"/><child link="puck"/><axis xyz="0 0 1"/></joint>
</robot>
"""

#: URDFs written to a temporary directory (:func:`urdf_dir`) under these names.
INLINE_URDFS = {"rotated": ROTATED_URDF, "spherical": SPHERICAL_URDF}

#: name -> (file, loadURDF keyword arguments); the :data:`INLINE_URDFS` are written to a
#: temporary directory, ``welded`` is built with createMultiBody.
BODIES = {
    "free box": ("cube.urdf", {}),
    "free box, maximal coordinates": ("cube.urdf", {"useMaximalCoordinates": True}),
    "r2d2 (floating base)": ("r2d2.urdf", {}),
    "kuka_iiwa (fixed base)": ("kuka_iiwa/model.urdf", {"useFixedBase": True}),
    "a1 (quadruped)": ("a1/a1.urdf", {}),
    "rotated inertial frames": ("rotated", {"flags": p.URDF_USE_INERTIA_FROM_FILE}),
    "free base with a welded link (fixed joint only)": ("welded", {}),
    "humanoid (spherical joints)": ("humanoid/humanoid.urdf", {}),
    "humanoid, inertia from file": ("humanoid/humanoid.urdf", {"flags": p.URDF_USE_INERTIA_FROM_FILE}),
    "spherical chain (rotated frames)": ("spherical", {"flags": p.URDF_USE_INERTIA_FROM_FILE}),
    "spherical chain, fixed base": ("spherical", {"flags": p.URDF_USE_INERTIA_FROM_FILE, "useFixedBase": True}),
}
SPHERICAL_BODIES = [name for name in BODIES if "spherical" in name or "humanoid" in name]


@pytest.fixture
def client() -> Iterator[int]:
    cid = p.connect(p.DIRECT)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
    yield cid
    p.disconnect(cid)


@pytest.fixture
def urdf_dir(tmp_path) -> str:
    """A directory holding the :data:`INLINE_URDFS` as ``<name>.urdf``."""
    for name, text in INLINE_URDFS.items():
        (tmp_path / f"{name}.urdf").write_text(text)
    return str(tmp_path)


def load(client: int, name: str, urdf_dir: str, rng: np.random.Generator) -> int:
    """Load ``BODIES[name]`` at a random pose; a fixed base gets a random orientation too."""
    file, kwargs = BODIES[name]
    orientation = rng.normal(size=4)
    pose = {"basePosition": rng.normal(size=3).tolist(), "baseOrientation": (orientation / np.linalg.norm(orientation)).tolist()}
    if file == "welded":
        box = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.2, 0.1, 0.1], physicsClientId=client)
        link = {"linkMasses": [0.5], "linkCollisionShapeIndices": [box], "linkVisualShapeIndices": [-1], "linkParentIndices": [0]}
        link |= {"linkPositions": [[0.3, 0.2, 0.5]], "linkOrientations": [[0.0, 0.0, 0.0, 1.0]], "linkJointAxis": [[0.0, 0.0, 1.0]]}
        link |= {"linkInertialFramePositions": [[0.1, 0.0, 0.0]], "linkInertialFrameOrientations": [[0.0, 0.3826834, 0.0, 0.9238795]]}
        return p.createMultiBody(1.0, box, linkJointTypes=[p.JOINT_FIXED], physicsClientId=client, **pose, **link)
    path = str(Path(urdf_dir) / f"{file}.urdf") if file in INLINE_URDFS else file
    return p.loadURDF(path, physicsClientId=client, **pose, **kwargs)


def rotation(quaternion) -> np.ndarray:
    return np.reshape(p.getMatrixFromQuaternion(quaternion), (3, 3))


def random_quaternion(rng: np.random.Generator) -> list[float]:
    """A uniformly random unit quaternion ``(x, y, z, w)``."""
    quaternion = rng.normal(size=4)
    return (quaternion / np.linalg.norm(quaternion)).tolist()


def is_spherical(client: int, body: int, joint: int) -> bool:
    return p.getJointInfo(body, joint, physicsClientId=client)[2] == p.JOINT_SPHERICAL


def randomize(client: int, model: WorldModel, rng: np.random.Generator) -> None:
    """Random joint positions, base poses and velocities through PyBullet's own setters.

    Spherical joints get a random quaternion and a random rate vector.
    """
    for body in model.bodies:
        if body.floating:
            p.resetBasePositionAndOrientation(body.body, rng.normal(size=3).tolist(), random_quaternion(rng), physicsClientId=client)
            p.resetBaseVelocity(body.body, rng.normal(size=3).tolist(), rng.normal(size=3).tolist(), physicsClientId=client)
        for joint in body.joints:
            if is_spherical(client, body.body, joint):
                p.resetJointStateMultiDof(body.body, joint, random_quaternion(rng), rng.normal(size=3).tolist(), physicsClientId=client)
            else:
                p.resetJointState(body.body, joint, rng.uniform(-1.0, 1.0), rng.normal(), physicsClientId=client)


def link_motion(client: int, body: int, link: int, fixed_base: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre of mass, its velocity, angular velocity, inertial-frame rotation, as PyBullet reports them."""
    if link == -1:
        position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
        linear, angular = p.getBaseVelocity(body, physicsClientId=client)
        if fixed_base:  # a fixed base never moves (we never set its velocity)
            linear = angular = (0.0, 0.0, 0.0)
    else:
        state = p.getLinkState(body, link, computeLinkVelocity=True, computeForwardKinematics=True, physicsClientId=client)
        position, orientation, linear, angular = state[0], state[1], state[6], state[7]
    return np.asarray(position), np.asarray(linear), np.asarray(angular), rotation(orientation)


def kinetic_energy(client: int, body: int, fixed_base: bool) -> float:
    """Sum over links of 0.5 m |v_com|^2 + 0.5 w^T R diag(I) R^T w (inertia diagonal in the inertial frame)."""
    energy = 0.0
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        mass, _, inertia = p.getDynamicsInfo(body, link, physicsClientId=client)[:3]
        _, linear, angular, frame = link_motion(client, body, link, fixed_base)
        energy += 0.5 * mass * linear @ linear + 0.5 * angular @ frame @ np.diag(inertia) @ frame.T @ angular
    return energy


# ---------------------------------------------------------------- the two identities


@pytest.fixture(params=list(BODIES))
def loaded(request, client, urdf_dir) -> tuple[int, WorldModel, bool, np.random.Generator]:
    """One of :data:`BODIES` at a random pose: body id, its model, fixed base or not, the generator."""
    rng = np.random.default_rng(0)
    body = load(client, request.param, urdf_dir, rng)
    model = WorldModel(client)
    return body, model, not model.body(body).floating, rng


def test_kinetic_energy_equals_sum_over_links(client, loaded):
    body, model, fixed_base, rng = loaded
    for _ in range(3):
        randomize(client, model, rng)
        v = model.velocity()
        M = model.configuration().mass_matrix()
        expected = kinetic_energy(client, body, fixed_base)
        assert expected > 0.1
        assert 0.5 * v @ M @ v == pytest.approx(expected, rel=1e-9)
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0.0


def test_point_jacobian_gives_pybullet_point_velocities(client, loaded):
    body, model, fixed_base, rng = loaded
    randomize(client, model, rng)
    v = model.velocity()
    configuration = model.configuration()
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        com, linear, angular, _ = link_motion(client, body, link, fixed_base)
        points = com + rng.normal(scale=0.5, size=(4, 3))
        expected = linear + np.cross(angular, points - com)
        stacked = configuration.point_jacobian(body, link, points)
        assert stacked.shape == (4, 3, model.nv)
        np.testing.assert_allclose(stacked @ v, expected, rtol=0, atol=1e-9)
        np.testing.assert_allclose(configuration.point_jacobian(body, link, points[0]) @ v, expected[0], rtol=0, atol=1e-9)


def material_point_positions(client: int, body: int, points: np.ndarray, link: int) -> np.ndarray:
    """World positions of material points given in ``link``'s inertial frame."""
    if link == -1:
        position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    else:
        position, orientation = p.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=client)[:2]
    return np.asarray(position) + points @ rotation(orientation).T


def turn(orientation, omega: np.ndarray, dt: float, local: bool = False) -> list[float]:
    """``orientation`` (x, y, z, w) turned by the angular velocity ``omega`` for ``dt``.

    ``omega`` is in the world frame (``exp(omega dt) * orientation``), or, with ``local``, in
    the turned frame itself (``orientation * exp(omega dt)``).  In double precision:
    PyBullet's getQuaternionFromAxisAngle and multiplyTransforms round to single precision.
    """
    angle = float(np.linalg.norm(omega)) * dt
    axis = omega / np.linalg.norm(omega)
    a, b = np.array([*(np.sin(angle / 2) * axis), np.cos(angle / 2)]), np.asarray(orientation)
    if local:
        a, b = b, a
    vector = a[3] * b[:3] + b[3] * a[:3] + np.cross(a[:3], b[:3])
    return [*vector, a[3] * b[3] - a[:3] @ b[:3]]


def read_positions(client: int, model: WorldModel) -> dict:
    """Base pose and joint positions (quaternions for spherical joints) of every dynamic body."""
    return {
        b.body: (
            p.getBasePositionAndOrientation(b.body, physicsClientId=client),
            [state[0] for state in p.getJointStatesMultiDof(b.body, b.joints, physicsClientId=client)] if b.joints else [],
        )
        for b in model.bodies
    }


def displace(client: int, model: WorldModel, start: dict, v: np.ndarray, dt: float) -> None:
    """Set every body to ``start`` advanced by ``dt * v`` (exact rotations for the base and spherical joints).

    A spherical joint's rates are taken as the child's angular velocity relative to its
    parent in the child's frame: its quaternion turns by ``exp(omega dt)`` on the right.
    """
    for body in model.bodies:
        block = v[model.block(body.body)]
        if body.floating:
            position, orientation = start[body.body][0]
            turned = turn(orientation, block[3:6], dt)
            p.resetBasePositionAndOrientation(body.body, (np.asarray(position) + dt * block[:3]).tolist(), turned, physicsClientId=client)
        rates = block[6 * body.floating :]
        for joint, position in zip(body.joints, start[body.body][1], strict=True):
            if len(position) == 4:
                p.resetJointStateMultiDof(body.body, joint, turn(position, rates[:3], dt, local=True), physicsClientId=client)
                rates = rates[3:]
            else:
                p.resetJointState(body.body, joint, position[0] + dt * rates[0], physicsClientId=client)
                rates = rates[1:]


@pytest.mark.parametrize(
    "name",
    [
        "r2d2 (floating base)",
        "kuka_iiwa (fixed base)",
        "rotated inertial frames",
        "humanoid (spherical joints)",
        "spherical chain (rotated frames)",
        "spherical chain, fixed base",
    ],
)
def test_point_jacobian_matches_finite_differences(client, urdf_dir, name):
    """J v is the time derivative of material point positions (independent of PyBullet's velocities).

    For spherical joints this also pins the rate convention independently of
    ``getJointStateMultiDof``: the quaternion is advanced by ``exp(omega dt)`` on the right.
    """
    rng = np.random.default_rng(2)
    body = load(client, name, urdf_dir, rng)
    model = WorldModel(client)
    randomize(client, model, rng)
    v = rng.normal(size=model.nv)
    start = read_positions(client, model)
    configuration = model.configuration()
    dt = 1e-6
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        local = rng.normal(scale=0.5, size=(3, 3))
        points = material_point_positions(client, body, local, link)
        displace(client, model, start, v, dt)
        ahead = material_point_positions(client, body, local, link)
        displace(client, model, start, v, -dt)
        behind = material_point_positions(client, body, local, link)
        displace(client, model, start, v, 0.0)
        np.testing.assert_allclose(configuration.point_jacobian(body, link, points) @ v, (ahead - behind) / (2 * dt), rtol=0, atol=1e-6)


def test_relative_jacobian_is_velocity_difference(client):
    rng = np.random.default_rng(3)
    box = p.loadURDF("cube.urdf", physicsClientId=client)
    robot = p.loadURDF("r2d2.urdf", physicsClientId=client)
    model = WorldModel(client)
    randomize(client, model, rng)
    v = model.velocity()
    configuration = model.configuration()
    points = rng.normal(size=(2, 3))
    relative = configuration.relative_jacobian(box, -1, robot, 3, points) @ v
    difference = configuration.point_jacobian(box, -1, points) @ v - configuration.point_jacobian(robot, 3, points) @ v
    np.testing.assert_allclose(relative, difference, rtol=0, atol=1e-12)
    com, linear, angular, _ = link_motion(client, robot, 3, False)
    box_com, box_linear, box_angular, _ = link_motion(client, box, -1, False)
    expected = box_linear + np.cross(box_angular, points - box_com) - linear - np.cross(angular, points - com)
    np.testing.assert_allclose(relative, expected, rtol=0, atol=1e-9)


# ------------------------------------------------- the PyBullet conventions themselves


def test_pybullet_floating_base_velocity_is_base_frame_angular_then_linear(client):
    """calculateMassMatrix's floating-base layout is [R^T omega, R^T v_com, qdot] (NOTES.md)."""
    rng = np.random.default_rng(4)
    body = load(client, "r2d2 (floating base)", "", rng)
    model = WorldModel(client)
    randomize(client, model, rng)
    joints = model.body(body).joints
    q = [s[0] for s in p.getJointStates(body, joints, physicsClientId=client)]
    qdot = [s[1] for s in p.getJointStates(body, joints, physicsClientId=client)]
    M = np.asarray(p.calculateMassMatrix(body, q, physicsClientId=client))
    frame = rotation(p.getBasePositionAndOrientation(body, physicsClientId=client)[1])
    linear, angular = map(np.asarray, p.getBaseVelocity(body, physicsClientId=client))
    energy = kinetic_energy(client, body, False)
    base_frame = np.concatenate([frame.T @ angular, frame.T @ linear, qdot])
    world_frame = np.concatenate([angular, linear, qdot])
    assert 0.5 * base_frame @ M @ base_frame == pytest.approx(energy, rel=1e-9)
    assert 0.5 * world_frame @ M @ world_frame != pytest.approx(energy, rel=1e-3)


def test_pybullet_local_position_is_joint_origin_along_inertial_axes(client, urdf_dir):
    """calculateJacobian's localPosition: origin at the URDF joint frame, axes of the INERTIAL frame.

    NOTES.md says "relative to the link's URDF frame"; that holds for the origin only.
    """
    rng = np.random.default_rng(5)
    body = load(client, "rotated inertial frames", urdf_dir, rng)
    model = WorldModel(client)
    randomize(client, model, rng)
    q = [s[0] for s in p.getJointStates(body, [0, 1], physicsClientId=client)]
    frame = rotation(p.getBasePositionAndOrientation(body, physicsClientId=client)[1])
    v = model.velocity()
    bullet_v = np.concatenate([frame.T @ v[3:6], frame.T @ v[:3], v[6:]])
    for link in (0, 1):
        offset, inertial = p.getDynamicsInfo(body, link, physicsClientId=client)[3:5]
        assert abs(inertial[3]) < 0.99  # the inertial frame really is turned
        _, com_velocity, _, _ = link_motion(client, body, link, False)

        def velocity(local, link=link):  # type: ignore[no-untyped-def]  # test helper bound to this link
            jacobian = np.asarray(p.calculateJacobian(body, link, list(local), q, [0.0, 0.0], [0.0, 0.0], physicsClientId=client)[0])
            return frame @ jacobian @ bullet_v

        np.testing.assert_allclose(velocity(rotation(inertial).T @ np.asarray(offset)), com_velocity, rtol=0, atol=1e-12)
        assert np.abs(velocity(offset) - com_velocity).max() > 1e-3


def test_pybullet_refuses_jointless_and_spherical_jacobians(client):
    cube = p.loadURDF("cube.urdf", physicsClientId=client)
    with pytest.raises(p.error, match="numDof"):
        p.calculateJacobian(cube, -1, [0, 0, 0], [], [], [], physicsClientId=client)
    neck = p.loadURDF("spherical_joint_limit.urdf", physicsClientId=client)
    with pytest.raises(p.error, match="Spher"):
        p.calculateJacobian(neck, 0, [0, 0, 0], [0.0] * 3, [0.0] * 3, [0.0] * 3, physicsClientId=client)


def test_pybullet_turns_a_skewed_joint_about_its_unit_axis_but_reports_its_rate_along_the_axis(client):
    """pybullet_data's MJCF ant: ``ankle_1``'s axis is ``(-1, 1, 0)`` (``getJointInfo``), of length
    sqrt(2).  Set from 0 to 0.5 rad (``resetJointState``), the ankle's link turns by 0.5 rad, the
    angle between its two orientations, ``arccos((trace(R0^T R1) - 1) / 2)``: Bullet turns the
    joint about the unit axis (about the axis as given, it would be 0.5 sqrt(2) = 0.707 rad).  At
    ``qdot = 1`` rad/s, the base and every other joint at rest, ``getLinkState`` reports the link's
    angular velocity as the axis itself, ``(-1, 1, 0)``: sqrt(2) rad/s, not the 1 rad/s it turns
    at.  The model's angular Jacobian gives the unit axis, ``(-1, 1, 0) / sqrt(2)``, and the
    simulator warns of the joint (each ankle, length 1.414)."""
    ant = p.loadMJCF(str(Path(pybullet_data.getDataPath()) / "mjcf" / "ant.xml"), physicsClientId=client)[-1]
    ankle = next(
        j for j in range(p.getNumJoints(ant, physicsClientId=client)) if p.getJointInfo(ant, j, physicsClientId=client)[1] == b"ankle_1"
    )
    axis = np.array(p.getJointInfo(ant, ankle, physicsClientId=client)[13])
    np.testing.assert_array_equal(axis, [-1.0, 1.0, 0.0])
    turned = []
    for angle in (0.0, 0.5):
        p.resetJointState(ant, ankle, angle, 0.0, physicsClientId=client)
        turned.append(np.array(p.getMatrixFromQuaternion(p.getLinkState(ant, ankle, 0, 1, physicsClientId=client)[1])).reshape(3, 3))
    assert np.arccos((np.trace(turned[0].T @ turned[1]) - 1.0) / 2.0) == pytest.approx(0.5, abs=1e-6)
    p.resetJointState(ant, ankle, 0.0, 1.0, physicsClientId=client)
    np.testing.assert_allclose(p.getLinkState(ant, ankle, 1, 1, physicsClientId=client)[7], axis, atol=1e-12)
    model = WorldModel(client)
    spin = model.configuration().angular_jacobian(ant, ankle) @ model.velocity()
    np.testing.assert_allclose(spin, axis / np.sqrt(2.0), atol=1e-12)
    with pytest.warns(JointAxisWarning, match=r"ankle_1 \(1\.414\), ankle_2 \(1\.414\), ankle_3 \(1\.414\), ankle_4 \(1\.414\)"):
        ImpactSimulator(RouthImpact("auto", 50), client)


def test_unit_joint_axes_are_not_warned_of(client):
    """The a1's and r2d2's URDF axes are unit vectors: no :class:`JointAxisWarning`."""
    p.loadURDF("a1/a1.urdf", [0, 0, 0.5], physicsClientId=client)
    p.loadURDF("r2d2.urdf", [1, 0, 0.5], physicsClientId=client)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JointAxisWarning)
        ImpactSimulator(RouthImpact("auto", 50), client)


# ------------------------------------------------------------- layout and velocity I/O


def test_layout_and_static_bodies(client):
    plane = p.loadURDF("plane.urdf", physicsClientId=client)
    welded = p.loadURDF("cube.urdf", useFixedBase=True, physicsClientId=client)
    robot = p.loadURDF("r2d2.urdf", physicsClientId=client)
    arm = p.loadURDF("kuka_iiwa/model.urdf", useFixedBase=True, physicsClientId=client)
    box = p.loadURDF("cube.urdf", physicsClientId=client)
    model = WorldModel(client)
    assert model.static_bodies == {plane, welded}
    assert [b.body for b in model.bodies] == [robot, arm, box]
    assert model.nv == (6 + 8) + 7 + 6
    assert model.block(robot) == slice(0, 14) and model.block(arm) == slice(14, 21) and model.block(box) == slice(21, 27)
    assert model.block(plane) == slice(0, 0)
    entries = ("v_x", "v_y", "v_z", "omega_x", "omega_y", "omega_z", "right_front_wheel_joint")
    assert model.coordinates[:7] == tuple(f"physics[{robot}].{entry}" for entry in entries)
    configuration = model.configuration()
    assert not configuration.point_jacobian(plane, -1, [0.0, 0.0, 0.0]).any()
    assert not configuration.point_jacobian(arm, -1, [0.0, 0.0, 0.0]).any()
    ordered = WorldModel(client, bodies=[box, plane, robot])
    assert [b.body for b in ordered.bodies] == [box, robot] and ordered.static_bodies == {plane}


def test_restrict_gives_the_diagonal_block(client):
    rng = np.random.default_rng(6)
    robot = p.loadURDF("r2d2.urdf", physicsClientId=client)
    box = p.loadURDF("cube.urdf", physicsClientId=client)
    plane = p.loadURDF("plane.urdf", physicsClientId=client)
    model = WorldModel(client)
    randomize(client, model, rng)
    sub = model.restrict([box])
    assert sub.nv == 6 and sub.static_bodies == {plane}
    block = model.block(box)
    np.testing.assert_array_equal(sub.configuration().mass_matrix(), model.configuration().mass_matrix()[block, block])
    np.testing.assert_array_equal(sub.velocity(), model.velocity()[model.block(box)])
    with pytest.raises(ValueError, match="body 99"):
        model.restrict([99])
    with pytest.raises(ValueError, match=f"body {robot}"):
        sub.configuration().point_jacobian(robot, -1, [0.0, 0.0, 0.0])


def test_velocity_reads_pybullet_and_writes_back_without_moving(client):
    rng = np.random.default_rng(7)
    robot = p.loadURDF("r2d2.urdf", physicsClientId=client)
    arm = p.loadURDF("kuka_iiwa/model.urdf", useFixedBase=True, physicsClientId=client)
    p.loadURDF("cube.urdf", useMaximalCoordinates=True, physicsClientId=client)
    model = WorldModel(client)
    randomize(client, model, rng)
    v = model.velocity()
    linear, angular = p.getBaseVelocity(robot, physicsClientId=client)
    np.testing.assert_array_equal(v[:6], [*linear, *angular])
    np.testing.assert_array_equal(v[6:14], [s[1] for s in p.getJointStates(robot, model.body(robot).joints, physicsClientId=client)])
    np.testing.assert_array_equal(v[model.block(arm)], [s[1] for s in p.getJointStates(arm, range(7), physicsClientId=client)])

    def positions():
        bases = [p.getBasePositionAndOrientation(b.body, physicsClientId=client) for b in model.bodies]
        joints = [p.getJointState(b.body, j, physicsClientId=client)[0] for b in model.bodies for j in b.joints]
        links = [p.getLinkState(robot, link, computeForwardKinematics=True, physicsClientId=client)[:2] for link in range(15)]
        return bases, joints, links

    before = positions()
    new = rng.normal(size=model.nv)
    model.set_velocity(new)
    assert positions() == before
    np.testing.assert_array_equal(model.velocity(), new)
    assert p.getBaseVelocity(arm, physicsClientId=client) == ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))  # fixed base untouched
    with pytest.raises(ValueError, match=r"shape \(27,\)"):
        model.set_velocity(np.zeros(5))
    with pytest.raises(ValueError, match="finite"):
        model.set_velocity(np.full(model.nv, np.nan))


# ----------------------------------------------------------------------- bad input


def test_unknown_body_is_rejected(client):
    box = p.loadURDF("cube.urdf", physicsClientId=client)
    with pytest.raises(ValueError, match=r"body 7 is not a body id of client .*expected one of \[0\]"):
        WorldModel(client, bodies=[box, 7])
    with pytest.raises(ValueError, match="listed twice"):
        WorldModel(client, bodies=[box, box])
    configuration = WorldModel(client).configuration()
    with pytest.raises(ValueError, match="body 3 is not part of this model"):
        configuration.point_jacobian(3, -1, [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="link 2 does not exist"):
        configuration.point_jacobian(box, 2, [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="points must be finite"):
        configuration.point_jacobian(box, -1, [0.0, 0.0])


def test_disconnected_client_is_rejected():
    cid = p.connect(p.DIRECT)
    p.loadURDF(str(Path(pybullet_data.getDataPath()) / "cube.urdf"), physicsClientId=cid)
    model = WorldModel(cid)
    p.disconnect(cid)
    with pytest.raises(ValueError, match=f"client {cid} is not connected"):
        WorldModel(cid)
    with pytest.raises(ValueError, match=f"client {cid} is not connected"):
        model.velocity()
    with pytest.raises(ValueError, match="client must be a PyBullet client id"):
        WorldModel("0")


def test_planar_joints_are_rejected_naming_body_and_joint(client, tmp_path):
    path = tmp_path / "planar_joint.urdf"
    path.write_text(PLANAR_JOINT_URDF)
    glide = p.loadURDF(str(path), physicsClientId=client)
    with pytest.raises(ValueError, match=f"body {glide} \\('planar_joint'\\) has a planar joint 0 \\('glide'\\)"):
        WorldModel(client)
    p.loadURDF("spherical_joint_limit.urdf", physicsClientId=client)  # spherical joints are fine
    with pytest.raises(ValueError, match="planar joint 0 \\('glide'\\)"):
        WorldModel(client)


# ------------------------------------------------------------------ spherical joints

HUMANOID_SPHERICAL = ("chest", "neck", "right_shoulder", "left_shoulder", "right_hip", "right_ankle", "left_hip", "left_ankle")
HUMANOID_REVOLUTE = ("right_elbow", "left_elbow", "right_knee", "left_knee")


def fragile_quaternions(client: int, body: int) -> list[int]:
    """Spherical joints whose quaternion changes when written back as read
    (probed between saveState and restoreState, which restores it bitwise)."""
    spherical = [joint for joint in range(p.getNumJoints(body, physicsClientId=client)) if is_spherical(client, body, joint)]
    saved = p.saveState(physicsClientId=client)
    fragile = []
    for joint in spherical:
        quaternion, omega = p.getJointStateMultiDof(body, joint, physicsClientId=client)[:2]
        p.resetJointStateMultiDof(body, joint, quaternion, omega, physicsClientId=client)
        if p.getJointStateMultiDof(body, joint, physicsClientId=client)[0] != quaternion:
            fragile.append(joint)
    p.restoreState(saved, physicsClientId=client)
    p.removeState(saved, physicsClientId=client)
    return fragile


def drifted_humanoid(client: int, rng: np.random.Generator, fragile: bool = True) -> tuple[int, WorldModel]:
    """A humanoid thrown in the air and simulated until Bullet's integrator has left a joint
    quaternion with a norm of 1 +- 1 ulp, one that ``resetJointStateMultiDof`` would change."""
    body = p.loadURDF("humanoid/humanoid.urdf", [0.0, 0.0, 5.0], flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
    model = WorldModel(client, [body])
    randomize(client, model, rng)
    p.setGravity(0.0, 0.0, -9.8, physicsClientId=client)
    for _ in range(100):
        for _ in range(10):
            p.stepSimulation(physicsClientId=client)
        if not fragile or fragile_quaternions(client, body):
            return body, model
    raise AssertionError("no joint quaternion drifted off unit norm in 1000 steps")


def test_humanoid_layout(client):
    plane = p.loadURDF("plane.urdf", physicsClientId=client)
    robot = p.loadURDF("r2d2.urdf", physicsClientId=client)
    humanoid = p.loadURDF("humanoid/humanoid.urdf", physicsClientId=client)
    model = WorldModel(client)
    body = model.body(humanoid)
    assert model.static_bodies == {plane}
    assert body.floating and body.spherical and not model.body(robot).spherical
    assert body.nv == 6 + 8 * 3 + 4 and model.block(humanoid) == slice(14, 48)
    names = [p.getJointInfo(humanoid, joint, physicsClientId=client)[1].decode() for joint in body.joints]
    assert sorted(names) == sorted(HUMANOID_SPHERICAL + HUMANOID_REVOLUTE)
    assert list(body.joints) == sorted(body.joints)  # increasing joint index
    assert body.joint_dofs == tuple(3 if name in HUMANOID_SPHERICAL else 1 for name in names)
    expected = [f"dumpUrdf[{humanoid}].{entry}" for entry in ("v_x", "v_y", "v_z", "omega_x", "omega_y", "omega_z")]
    for name in names:
        entries = [f"{name}.omega_{axis}" for axis in "xyz"] if name in HUMANOID_SPHERICAL else [name]
        expected += [f"dumpUrdf[{humanoid}].{entry}" for entry in entries]
    assert model.coordinates[14:] == tuple(expected)
    assert expected[6:9] == [f"dumpUrdf[{humanoid}].chest.omega_{axis}" for axis in "xyz"]
    assert len(set(model.coordinates)) == model.nv


def test_spherical_velocity_reads_pybullet_and_writes_back_without_moving(client):
    rng = np.random.default_rng(8)
    humanoid, _ = drifted_humanoid(client, rng)
    robot = p.loadURDF("r2d2.urdf", physicsClientId=client)
    neck = p.loadURDF("spherical_joint_limit.urdf", useFixedBase=True, physicsClientId=client)  # spherical only
    box = p.loadURDF("cube.urdf", physicsClientId=client)
    model = WorldModel(client)
    randomize(client, model.restrict([robot, neck, box]), rng)
    assert [b.body for b in model.bodies] == [humanoid, robot, neck, box] and model.nv == 34 + 14 + 3 + 6

    assert fragile_quaternions(client, humanoid)  # the state the bitwise check is about

    v = model.velocity()
    linear, angular = p.getBaseVelocity(humanoid, physicsClientId=client)
    states = p.getJointStatesMultiDof(humanoid, model.body(humanoid).joints, physicsClientId=client)
    np.testing.assert_array_equal(v[:34], [*linear, *angular, *(rate for state in states for rate in state[1])])
    np.testing.assert_array_equal(v[48:51], p.getJointStateMultiDof(neck, 0, physicsClientId=client)[1])

    def positions():
        bases = [p.getBasePositionAndOrientation(b.body, physicsClientId=client) for b in model.bodies]
        joints = [s[0] for b in model.bodies if b.joints for s in p.getJointStatesMultiDof(b.body, b.joints, physicsClientId=client)]
        links = [
            p.getLinkState(b.body, link, computeForwardKinematics=True, physicsClientId=client)[:6]
            for b in model.bodies
            for link in range(b.num_links)
        ]
        return bases, joints, links

    before = positions()
    for _ in range(3):
        new = rng.normal(size=model.nv)
        model.set_velocity(new)
        assert positions() == before
        np.testing.assert_array_equal(model.velocity(), new)
    states = p.getJointStatesMultiDof(humanoid, model.body(humanoid).joints, physicsClientId=client)
    np.testing.assert_array_equal([rate for state in states for rate in state[1]], new[6:34])


def test_velocity_of_a_snapshot_is_the_velocity_when_it_was_taken(client):
    """``velocity(snapshot)`` lays out the velocities a Snapshot read (single-DoF rows, spherical
    rows, free and fixed bases) as ``velocity()`` read them then, bit for bit, whatever the
    bodies move at since; a snapshot without one of the model's bodies is refused by name."""
    rng = np.random.default_rng(9)
    humanoid, _ = drifted_humanoid(client, rng)
    robot = p.loadURDF("r2d2.urdf", physicsClientId=client)
    arm = p.loadURDF("kuka_iiwa/model.urdf", useFixedBase=True, physicsClientId=client)
    box = p.loadURDF("cube.urdf", physicsClientId=client)
    model = WorldModel(client)
    randomize(client, model.restrict([robot, arm, box]), rng)
    bodies = {body.body: body.joints for body in model.bodies}
    snapshot = Snapshot.take(client, bodies, {body.body for body in model.bodies if not body.spherical})
    then = model.velocity()
    model.set_velocity(rng.normal(size=model.nv))
    np.testing.assert_array_equal(model.velocity(snapshot), then)
    partial = Snapshot.take(client, {humanoid: bodies[humanoid], robot: bodies[robot]})
    with pytest.raises(ValueError, match=f"body {arm} with joints"):
        model.velocity(partial)


def test_spherical_extraction_is_fast(client):
    """The per-event model extraction of a humanoid (velocity, M, a few contact Jacobians)."""
    rng = np.random.default_rng(9)
    humanoid, model = drifted_humanoid(client, rng, fragile=False)
    feet = np.zeros((4, 3))

    def extract():
        model.velocity()
        configuration = model.configuration()
        configuration.mass_matrix()
        configuration.point_jacobian(humanoid, 11, feet)
        configuration.point_jacobian(humanoid, 14, feet)

    seconds = min(timeit.repeat(extract, number=20, repeat=5)) / 20
    assert seconds < 5e-3  # measured about 0.2 ms


# ------------------------------------------ the PyBullet spherical conventions themselves


def test_pybullet_spherical_rate_is_relative_omega_in_child_inertial_frame(client, urdf_dir):
    """getJointStateMultiDof's 3 rates: child angular velocity relative to the parent, in the
    child's INERTIAL frame (not the parent's, not the child's URDF frame)."""
    rng = np.random.default_rng(10)
    body = load(client, "spherical chain, fixed base", urdf_dir, rng)
    model = WorldModel(client)
    randomize(client, model, rng)
    model.set_velocity(np.zeros(model.nv))
    for joint in (0, 2):  # shoulder (parent: base), wrist (parent: fore)
        parent = p.getJointInfo(body, joint, physicsClientId=client)[16]
        omega = rng.normal(size=3)
        p.resetJointStateMultiDof(body, joint, [0.0], omega.tolist(), physicsClientId=client)
        state = p.getLinkState(body, joint, computeLinkVelocity=True, computeForwardKinematics=True, physicsClientId=client)
        _, _, parent_angular, parent_frame = link_motion(client, body, parent, fixed_base=True)
        relative = np.asarray(state[7]) - parent_angular
        np.testing.assert_allclose(relative, rotation(state[1]) @ omega, rtol=0, atol=1e-12)
        assert np.abs(relative - parent_frame @ omega).max() > 0.1
        assert np.abs(relative - rotation(state[5]) @ omega).max() > 0.1
        np.testing.assert_array_equal(p.getJointStateMultiDof(body, joint, physicsClientId=client)[1], omega)
        p.resetJointStateMultiDof(body, joint, [0.0], [0.0, 0.0, 0.0], physicsClientId=client)


def test_pybullet_mass_matrix_is_wrong_for_spherical_joints(client):
    """calculateMassMatrix takes spherical positions without complaint but its M misses the energy."""
    rng = np.random.default_rng(11)
    body = p.loadURDF("humanoid/humanoid.urdf", flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
    model = WorldModel(client)
    randomize(client, model, rng)
    states = p.getJointStatesMultiDof(body, model.body(body).joints, physicsClientId=client)
    frame = rotation(p.getBasePositionAndOrientation(body, physicsClientId=client)[1])
    linear, angular = map(np.asarray, p.getBaseVelocity(body, physicsClientId=client))
    bullet_v = np.concatenate([frame.T @ angular, frame.T @ linear, [rate for state in states for rate in state[1]]])
    energy = kinetic_energy(client, body, False)
    flattened = [x for state in states for x in state[0]]  # 8 quaternions and 4 angles
    rotation_vectors = []
    for state in states:
        if len(state[0]) == 4:
            axis, angle = p.getAxisAngleFromQuaternion(state[0], physicsClientId=client)
            rotation_vectors += list(angle * np.asarray(axis))
        else:
            rotation_vectors += list(state[0])
    for positions in (flattened, rotation_vectors):
        M = np.asarray(p.calculateMassMatrix(body, positions, physicsClientId=client))
        assert M.shape == (34, 34)
        assert abs(0.5 * bullet_v @ M @ bullet_v / energy - 1.0) > 0.01
    M = model.configuration().mass_matrix()  # ours is right
    v = model.velocity()
    assert 0.5 * v @ M @ v == pytest.approx(energy, rel=1e-9)


def test_pybullet_spherical_reset_renormalizes_and_ignores_a_wrong_length_position(client):
    rng = np.random.default_rng(12)
    body, model = drifted_humanoid(client, rng)
    joints = [joint for joint in model.body(body).joints if is_spherical(client, body, joint)]
    for joint in joints:
        quaternion, omega = p.getJointStateMultiDof(body, joint, physicsClientId=client)[:2]
        new = rng.normal(size=3).tolist()
        p.resetJointStateMultiDof(body, joint, [], new, physicsClientId=client)  # empty: nothing happens
        assert p.getJointStateMultiDof(body, joint, physicsClientId=client)[:2] == (quaternion, omega)
        p.resetJointStateMultiDof(body, joint, [0.0], new, physicsClientId=client)  # wrong length: rates only
        assert p.getJointStateMultiDof(body, joint, physicsClientId=client)[:2] == (quaternion, tuple(new))
    changed = []
    for joint in joints:  # writing back the quaternion just read renormalizes it
        quaternion, omega = p.getJointStateMultiDof(body, joint, physicsClientId=client)[:2]
        p.resetJointStateMultiDof(body, joint, quaternion, omega, physicsClientId=client)
        after = p.getJointStateMultiDof(body, joint, physicsClientId=client)[0]
        np.testing.assert_allclose(after, quaternion, rtol=0, atol=1e-15)
        changed.append(after != quaternion)
    assert any(changed)


def test_one_quaternion_rotation_is_the_batched_formula_bit_for_bit() -> None:
    """``rotation_matrix`` (Python floats) and ``rotation_matrices`` (numpy) evaluate the same
    expressions in the same order, each operation IEEE-rounded, so the same quaternion gives the
    same bits either way (the adapter relies on one rotation per quaternion); and the result is a
    rotation: ``R R^T = I`` to rounding, ``det R = 1``."""
    from bullet_setimpact.bullet.frames import rotation_matrices, rotation_matrix

    quaternions = np.random.default_rng(7).normal(size=(2000, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1)[:, None]
    batched = rotation_matrices(quaternions)
    for quaternion, expected in zip(quaternions, batched, strict=True):
        assert np.array_equal(rotation_matrix(tuple(quaternion)), expected)
    assert np.allclose(batched @ batched.transpose(0, 2, 1), np.eye(3), atol=1e-14)
    assert np.allclose(np.linalg.det(batched), 1.0, atol=1e-14)
