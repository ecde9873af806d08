"""The journal's planar examples as live PyBullet worlds (the URDFs in ``urdf/``).

Each planar URDF is a fixed base with prismatic-x, prismatic-z and revolute-(-y) joints
whose coordinates equal :mod:`bullet_setimpact.analysis.planar`'s ``q`` exactly (see each file's
header), so the extracted ``M`` and contact Jacobians equal the closed-form models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet as p

from ..analysis import planar
from ..data import data_path
from .inventory import movable_joints

#: The project's URDF directory (:func:`bullet_setimpact.data_path`).
URDF_DIR = Path(data_path("urdf"))

#: URDF file(s) of each planar example, one per body, and the coordinates each body takes.
PLANAR_URDFS: dict[str, tuple[tuple[str, slice], ...]] = {
    "rocking_block": (("rocking_block_planar.urdf", slice(0, 3)),),
    "compass_gait": (("compass_gait_planar.urdf", slice(0, 4)),),
    "box_wall": (("box_wall_planar.urdf", slice(0, 3)),),
    "ramone": (("ramone_planar.urdf", slice(0, 7)),),
    "disk_stack": tuple(("disk_planar.urdf", slice(3 * i, 3 * i + 3)) for i in range(3)),
}


def urdf_path(name: str) -> str:
    """Absolute path of a URDF shipped in ``urdf/``; ``ValueError`` if it does not exist."""
    path = URDF_DIR / name
    if not path.is_file():
        raise ValueError(f"URDF {name!r} not found in {URDF_DIR}; expected one of {sorted(f.name for f in URDF_DIR.glob('*.urdf'))}")
    return str(path)


def load_static(client: int, name: str = "ground_box.urdf") -> int:
    """Load a static body shipped in ``urdf/`` (default: the box ground, top face z = 0)."""
    return p.loadURDF(urdf_path(name), useFixedBase=True, physicsClientId=client)


def load_free_body(client: int, name: str, position: Sequence[float], orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0)) -> int:
    """Load a free single-body URDF shipped in ``urdf/`` at ``position``/``orientation``, with
    the file's inertia and no damping (the journal's models are undamped)."""
    body = p.loadURDF(urdf_path(name), list(position), list(orientation), flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
    p.changeDynamics(body, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    return body


@dataclass(frozen=True)
class ExampleWorld:
    """A planar example loaded into a PyBullet client.

    Attributes
    ----------
    example : planar.Example
        The closed-form model it reproduces.
    bodies : tuple of int
        The example's bodies, in the order of ``example.coordinates``.
    ground : int
        The static box ground (top face z = 0).
    wall : int or None
        The static wall of the box-and-wall example (face x = 0).
    """

    example: planar.Example
    bodies: tuple[int, ...]
    ground: int
    wall: int | None


def load_planar_example(
    client: int, name: str, configuration: np.ndarray | None = None, velocity: np.ndarray | None = None
) -> ExampleWorld:
    """Load a journal example's planar URDF(s), box ground (and wall) into ``client``.

    The joints are set to ``configuration`` and ``velocity`` (default: the journal's impact
    configuration and pre-impact velocity), PyBullet's default joint motors are switched
    off and damping is zeroed (the journal's models are undamped).  Frictions follow the
    URDFs (Bullet multiplies the two lateral frictions and clamps the product at 10).
    """
    example = planar.example(name)
    q = example.configuration if configuration is None else np.asarray(configuration, dtype=float)
    v = example.v_minus if velocity is None else np.asarray(velocity, dtype=float)
    if q.shape != example.configuration.shape or v.shape != example.v_minus.shape:
        raise ValueError(f"configuration and velocity must have shape {example.configuration.shape} for {name!r}")
    flags = p.URDF_USE_INERTIA_FROM_FILE
    ground = load_static(client)
    wall = load_static(client, "wall_box.urdf") if name == "box_wall" else None
    if name == "disk_stack":  # disk-disk pairs get sqrt(3) from 3^(1/4) each; so must the ground
        p.changeDynamics(ground, -1, lateralFriction=3**0.25, physicsClientId=client)
    bodies = []
    for filename, block in PLANAR_URDFS[name]:
        body = p.loadURDF(urdf_path(filename), useFixedBase=True, flags=flags, physicsClientId=client)
        joints = list(range(p.getNumJoints(body, physicsClientId=client)))
        movable = list(movable_joints(client, body))
        p.setJointMotorControlArray(body, movable, p.VELOCITY_CONTROL, forces=[0.0] * len(movable), physicsClientId=client)
        for link in [-1, *joints]:
            p.changeDynamics(body, link, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
        for joint, value, rate in zip(movable, q[block], v[block], strict=True):
            p.resetJointState(body, joint, float(value), float(rate), physicsClientId=client)
        bodies.append(body)
    return ExampleWorld(example, tuple(bodies), ground, wall)


#: Size [m] of a ``pybullet_data/jenga/jenga.urdf`` block (its collision box).
JENGA_BLOCK = (0.15, 0.05, 0.03)


def load_jenga_stack(client: int, layers: int = 3, drop: float = 0.1, spacing: float = 1e-3) -> list[int]:
    """A jenga stack of ``layers`` crossed layers of 3 ``pybullet_data`` blocks, each layer
    resting on the one below, blocks of a layer ``spacing`` apart side by side, its bottom
    face ``drop`` above ``z = 0`` (load the ground separately)."""
    import pybullet_data

    _, width, height = JENGA_BLOCK
    path = str(Path(pybullet_data.getDataPath()) / "jenga" / "jenga.urdf")
    bodies = []
    for layer in range(layers):
        z = drop + height * (layer + 0.5)
        yaw = 0.0 if layer % 2 == 0 else np.pi / 2
        orientation = p.getQuaternionFromEuler([0.0, 0.0, yaw])
        for k in (-1, 0, 1):
            offset = k * (width + spacing)
            position = [0.0, offset, z] if layer % 2 == 0 else [offset, 0.0, z]
            bodies.append(p.loadURDF(path, position, orientation, physicsClientId=client))
    return bodies
