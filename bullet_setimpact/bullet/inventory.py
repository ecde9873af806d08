"""The bodies and joints of a PyBullet world: what they are, read from PyBullet in one place.

The contact finder, the snapshots, the world model and the examples all take their lists
from here: the world's bodies (:func:`world_bodies`), the velocity entries of each joint
type (:data:`JOINT_DOFS`), a body's movable joints (:func:`movable_joints`) and the one safe
way to reset joint states (:func:`reset_joint_states`); and :func:`check_client`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pybullet as p

#: Velocity entries of each supported joint type (fixed joints carry none; planar joints
#: are not supported).
JOINT_DOFS = {p.JOINT_REVOLUTE: 1, p.JOINT_PRISMATIC: 1, p.JOINT_SPHERICAL: 3, p.JOINT_FIXED: 0}
#: Names of the joint and constraint types, for messages.
JOINT_NAMES = {
    p.JOINT_REVOLUTE: "revolute",
    p.JOINT_PRISMATIC: "prismatic",
    p.JOINT_SPHERICAL: "spherical",
    p.JOINT_PLANAR: "planar",
    p.JOINT_FIXED: "fixed",
    p.JOINT_POINT2POINT: "point2point",
    p.JOINT_GEAR: "gear",
}


def client_id(client: Any) -> Any:
    """A client id: ``client`` itself, or a ``pybullet_utils`` ``BulletClient``'s id (its ``_client``)."""
    return client if isinstance(client, (int, np.integer)) else getattr(client, "_client", client)


def check_client(client: Any) -> int:
    """The id of ``client`` (an id or a ``BulletClient``) if it is connected to a physics server, else ``ValueError``."""
    client = client_id(client)
    if isinstance(client, bool) or not isinstance(client, (int, np.integer)):
        raise ValueError(f"client must be a PyBullet client id (int) or a BulletClient, got {client!r}")
    if not p.isConnected(physicsClientId=int(client)):
        raise ValueError(
            f"PyBullet client {client} is not connected (never connected, or disconnected since); "
            "expected the id p.connect() returned, still connected"
        )
    return int(client)


def world_bodies(client: int) -> list[int]:
    """Unique ids of every body of the client, in increasing order."""
    return sorted(p.getBodyUniqueId(i, physicsClientId=client) for i in range(p.getNumBodies(physicsClientId=client)))


def movable_joints(client: int, body: int) -> tuple[int, ...]:
    """Indices of a body's non-fixed joints, in increasing order (the ones with a state)."""
    return tuple(
        joint
        for joint in range(p.getNumJoints(body, physicsClientId=client))
        if p.getJointInfo(body, joint, physicsClientId=client)[2] != p.JOINT_FIXED
    )


def reset_joint_states(
    client: int,
    body: int,
    joints: Sequence[int],
    positions: Sequence[Sequence[float]],
    velocities: Sequence[Sequence[float]],
) -> None:
    """Reset joint positions and velocities (multi-DoF aware).

    ``resetJointStatesMultiDof`` crashes pybullet 3.2.7 (segmentation fault) when one call
    mixes joints of different DoF counts, so single-DoF joints (one velocity entry) go in
    one batched call and multi-DoF (spherical) joints one at a time.
    """
    single = [i for i, velocity in enumerate(velocities) if len(velocity) == 1]
    if single:
        p.resetJointStatesMultiDof(
            body,
            [joints[i] for i in single],
            [positions[i] for i in single],
            [velocities[i] for i in single],
            physicsClientId=client,
        )
    for i, velocity in enumerate(velocities):
        if len(velocity) != 1:
            p.resetJointStateMultiDof(body, joints[i], positions[i], velocity, physicsClientId=client)
