"""One body of a PyBullet world as the model sees it: joints, velocity entries, kinematic tree.

:func:`inspect_body` reads a body once (``getJointInfo``, ``getDynamicsInfo``) into a
:class:`BodyModel`, the static per-body part of :class:`~bullet_setimpact.bullet.model.WorldModel`
that :class:`~bullet_setimpact.bullet.configuration.Configuration` also reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pybullet as p

from .frames import com_offsets
from .inventory import JOINT_DOFS, JOINT_NAMES
from .kinematics import Tree

_BASE_COORDINATES = ("v_x", "v_y", "v_z", "omega_x", "omega_y", "omega_z")
_SPHERICAL_COORDINATES = ("omega_x", "omega_y", "omega_z")
#: A joint axis whose length differs from 1 by more than this is reported (:attr:`BodyModel.skewed_axes`);
#: an MJCF file's single-precision unit axes are within 1e-7 of it.
AXIS_TOLERANCE = 1e-6


@dataclass(frozen=True)
class BodyModel:
    """What the model needs to know about one body, read once from PyBullet.

    Attributes
    ----------
    body : int
        PyBullet body unique id.
    name : str
        Body name (``getBodyInfo``).
    floating : bool
        True when the base has 6 DoFs (a free rigid body or a floating-base robot).
    joints : tuple of int
        Movable (revolute, prismatic or spherical) joint indices, in increasing order.
    joint_names : tuple of str
        One name per joint of :attr:`joints`.
    num_links : int
        Number of links besides the base (``getNumJoints``).
    jointless : bool
        True for a single rigid body (no links); its ``M`` comes from mass and inertia.
    com_offsets : ndarray, shape (num_links, 3)
        Each link's centre of mass as ``calculateJacobian``'s ``localPosition``.
    joint_dofs : tuple of int
        Velocity entries of each joint of :attr:`joints`: 1 (revolute, prismatic) or 3
        (spherical).  Empty means one per joint.
    tree : kinematics.Tree or None
        Kinematic structure, set for bodies with spherical joints (their ``M`` and Jacobians
        come from :mod:`~bullet_setimpact.bullet.kinematics`, not from PyBullet).
    axis_lengths : tuple of float
        Length of each revolute or prismatic joint's axis of :attr:`joints`, as ``getJointInfo``
        reports it (1 for a spherical joint); see :attr:`skewed_axes`.
    joint_limits : tuple of (float, float)
        ``getJointInfo``'s lower and upper limit of each joint of :attr:`joints` (a lower above the
        upper: no limit).
    """

    body: int
    name: str
    floating: bool
    joints: tuple[int, ...]
    joint_names: tuple[str, ...]
    num_links: int
    jointless: bool
    com_offsets: np.ndarray = field(repr=False)
    joint_dofs: tuple[int, ...] = ()
    tree: Tree | None = field(default=None, repr=False)
    axis_lengths: tuple[float, ...] = ()
    joint_limits: tuple[tuple[float, float], ...] = ()

    @property
    def skewed_axes(self) -> list[tuple[str, float]]:
        """``(joint name, axis length)`` of each joint whose axis is not a unit vector (to
        :data:`AXIS_TOLERANCE`).  Bullet turns such a joint about the unit axis, but its multibody
        takes the joint's velocity along the axis as given: the link velocities ``getLinkState``
        reports scale the joint's rate by the length, while ``calculateJacobian`` and
        ``calculateMassMatrix``, and so the impact model, use the unit axis
        (``tests/test_bullet_model.py``).  MJCF files allow such axes (pybullet_data's
        ``ant.xml``: ``-1 1 0``)."""
        return [
            (name, length) for name, length in zip(self.joint_names, self.axis_lengths, strict=True) if abs(length - 1.0) > AXIS_TOLERANCE
        ]

    @property
    def spherical(self) -> bool:
        """True when the body has a spherical joint (3 velocity entries)."""
        return any(dofs == 3 for dofs in self.joint_dofs)

    @property
    def nv(self) -> int:
        """Number of generalized velocities of this body (0 for a static body)."""
        return 6 * self.floating + (sum(self.joint_dofs) if self.joint_dofs else len(self.joints))

    @property
    def static(self) -> bool:
        """True when the body has no DoF (it never moves under contact forces)."""
        return self.nv == 0

    @property
    def coordinates(self) -> tuple[str, ...]:
        """Names of the body's velocity entries, ``"<body name>[<id>].<entry>"``.

        E.g. ``"physics[1].omega_x"`` (base), ``"physics[1].right_front_wheel_joint"``
        (revolute or prismatic joint), ``"dumpUrdf[2].chest.omega_x"`` (spherical joint).
        """
        names = list(_BASE_COORDINATES if self.floating else ())
        for name, dofs in zip(self.joint_names, self.joint_dofs or (1,) * len(self.joints), strict=True):
            names += [f"{name}.{entry}" for entry in _SPHERICAL_COORDINATES] if dofs == 3 else [name]
        return tuple(f"{self.name}[{self.body}].{name}" for name in names)


def inspect_body(client: int, body: int) -> BodyModel:
    """Read a body's joint structure and classify it.

    A body is static when its base mass is 0 (fixed base; ``useFixedBase=True`` also
    reports mass 0) and it has no movable joint.

    Raises
    ------
    ValueError
        If a joint is neither revolute, prismatic, spherical nor fixed (a planar joint),
        naming the body and the joint.
    """
    name = p.getBodyInfo(body, physicsClientId=client)[1].decode()
    num_links = p.getNumJoints(body, physicsClientId=client)
    joints, joint_names, joint_dofs, axis_lengths, joint_limits, infos = [], [], [], [], [], []
    for link in range(num_links):
        info = p.getJointInfo(body, link, physicsClientId=client)
        infos.append(info)
        joint_type, joint_name = info[2], info[1].decode()
        if JOINT_DOFS.get(joint_type):
            joints.append(link)
            joint_names.append(joint_name)
            joint_dofs.append(JOINT_DOFS[joint_type])
            axis_lengths.append(1.0 if joint_type == p.JOINT_SPHERICAL else float(np.linalg.norm(info[13])))
            joint_limits.append((float(info[8]), float(info[9])))
        elif joint_type != p.JOINT_FIXED:
            kind = JOINT_NAMES.get(joint_type, f"type-{joint_type}")
            raise ValueError(
                f"body {body} ({name!r}) has a {kind} joint {link} ({joint_name!r}); "
                "expected only revolute, prismatic, spherical or fixed joints"
            )
    floating = p.getDynamicsInfo(body, -1, physicsClientId=client)[0] > 0.0
    return BodyModel(
        body=body,
        name=name,
        floating=floating,
        joints=tuple(joints),
        joint_names=tuple(joint_names),
        num_links=num_links,
        jointless=num_links == 0,
        com_offsets=com_offsets(client, body, num_links),
        joint_dofs=tuple(joint_dofs),
        tree=Tree.from_joint_info(infos, floating) if 3 in joint_dofs else None,
        axis_lengths=tuple(axis_lengths),
        joint_limits=tuple(joint_limits),
    )
