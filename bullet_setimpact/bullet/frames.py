"""Frame maths of the PyBullet adapter: quaternion rotations and link inertial poses.

Every rotation the adapter needs comes from :func:`rotation_matrices` (one formula, so the
same quaternion always gives the same bits), and every link pose from :func:`inertial_frame`:
a link's centre-of-mass (inertial) frame, the frame ``getBasePositionAndOrientation`` and
``getLinkState`` fields 0 and 1 report in double precision.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Sequence

import numpy as np
import pybullet as p


def rotation_matrices(quaternions: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(k, 3, 3)`` of unit quaternions ``(k, 4)`` given as ``(x, y, z, w)``."""
    q = np.asarray(quaternions, dtype=float)
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    out = np.empty((len(q), 3, 3))
    out[:, 0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[:, 0, 1] = 2.0 * (x * y - z * w)
    out[:, 0, 2] = 2.0 * (x * z + y * w)
    out[:, 1, 0] = 2.0 * (x * y + z * w)
    out[:, 1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[:, 1, 2] = 2.0 * (y * z - x * w)
    out[:, 2, 0] = 2.0 * (x * z - y * w)
    out[:, 2, 1] = 2.0 * (y * z + x * w)
    out[:, 2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return out


def rotation_matrix(quaternion: Sequence[float]) -> np.ndarray:
    """Rotation matrix ``(3, 3)`` of one unit quaternion ``(x, y, z, w)``: the formula of
    :func:`rotation_matrices` in the same operation order on Python floats (the same
    IEEE-rounded operations, so the same bits, without numpy's per-array overhead)."""
    return np.array(rotation_rows(quaternion))


def rotation_rows(quaternion: Sequence[float]) -> list[list[float]]:
    """The rows of :func:`rotation_matrix` as lists of Python floats (for per-step checks that
    place a few points without numpy)."""
    x, y, z, w = map(float, quaternion)
    return [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)],
        [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)],
        [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)],
    ]


def inertial_position(client: int, body: int, link: int) -> np.ndarray:
    """World position ``(3,)`` of a link's centre of mass (``link = -1``: the base)."""
    return np.array(inertial_frame(client, body, link)[0])


def inertial_frame(client: int, body: int, link: int) -> tuple[Sequence[float], Sequence[float]]:
    """PyBullet's world position and quaternion ``(x, y, z, w)`` of a link's inertial frame (``-1``: the base).

    Read every step for watched links.  The arguments therefore go by position
    (``getLinkState``'s ``computeLinkVelocity=0, computeForwardKinematics=1``), because
    PyBullet parses keyword arguments measurably slower."""
    if link == -1:
        return p.getBasePositionAndOrientation(body, client)
    return p.getLinkState(body, link, 0, 1, client)[:2]


def link_velocity(client: int, body: int, link: int) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """Centre of mass, linear and angular velocity (world frame) of a link (``-1``: the base),
    as PyBullet's tuples (``getLinkState``'s ``computeLinkVelocity=1, computeForwardKinematics=1``
    by position, as in :func:`inertial_frame`)."""
    if link == -1:
        com = p.getBasePositionAndOrientation(body, client)[0]
        linear, angular = p.getBaseVelocity(body, client)
        return com, linear, angular
    state = p.getLinkState(body, link, 1, 1, client)
    return state[0], state[6], state[7]


def com_offsets(client: int, body: int, num_links: int) -> np.ndarray:
    """Each link's centre of mass as ``calculateJacobian``'s ``localPosition``, ``(num_links, 3)``.

    ``localPosition`` is measured from the link's URDF frame along its inertial axes, so the
    centre of mass is at ``R_inertial^T d`` (``getDynamicsInfo`` fields 3 and 4).
    """
    offsets = np.zeros((num_links, 3))
    for link in range(num_links):
        dynamics = p.getDynamicsInfo(body, link, physicsClientId=client)
        offsets[link] = rotation_matrix(dynamics[4]).T @ np.asarray(dynamics[3])
    return offsets


def tangent_basis(normal: np.ndarray) -> np.ndarray:
    """Two unit tangents ``(t1, t2)`` with ``t1 x t2 = n`` (deterministic), read-only ``(2, 3)``.

    Memoized on the normal's bits: contacts of one face (and a static ground's every contact)
    share a normal, and the same bits always give the same tangents."""
    return _tangent_basis(np.asarray(normal, dtype=float).tobytes())


@functools.lru_cache(maxsize=1024)
def _tangent_basis(bits: bytes) -> np.ndarray:
    # Python floats: cross(np.eye(3)[argmin |n|], n), np.linalg.norm
    # (sqrt of the sequential dot) and the division, without numpy's per-call cost
    normal = _THREE.unpack(bits)
    smallest = min(range(3), key=lambda i: abs(normal[i]))  # np.argmin: the first smallest
    helper = tuple(1.0 if i == smallest else 0.0 for i in range(3))
    t1 = cross(helper, normal)
    length = math.sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2])
    t1 = (t1[0] / length, t1[1] / length, t1[2] / length)
    basis = np.array([t1, cross(normal, t1)])
    basis.setflags(write=False)
    return basis


#: A 3-vector's bits.
_THREE = struct.Struct("3d")


def cross(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """``a x b`` of two 3-vectors on Python floats.

    ``np.cross`` on two 3-vectors costs more in dispatch than the arithmetic itself."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def rotation_angle(start: Sequence[float], end: Sequence[float]) -> float:
    """Angle [rad] of the rotation from quaternion ``start`` to ``end`` (``(x, y, z, w)``, unit),
    in ``[0, pi]``: ``2 atan2(|v|, |w|)`` of ``start^-1 end``, accurate for small angles too
    (unlike ``2 acos``).  A point at distance ``r`` from the axis moves by at most ``r`` times it."""
    x0, y0, z0, w0 = start
    x1, y1, z1, w1 = end
    w = w0 * w1 + x0 * x1 + y0 * y1 + z0 * z1
    x = w0 * x1 - w1 * x0 - (y0 * z1 - z0 * y1)
    y = w0 * y1 - w1 * y0 - (z0 * x1 - x0 * z1)
    z = w0 * z1 - w1 * z0 - (x0 * y1 - y0 * x1)
    return 2.0 * math.atan2(math.sqrt(x * x + y * y + z * z), abs(w))
