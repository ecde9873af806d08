"""Closed-form distances of boxes with sharp corners and edges, as Bullet's manifold sees them.

``getClosestPoints`` measures boxes rounded by their collision margin; Bullet's box-box
detector and the contact search's corner completion (:mod:`.contacts`) measure them sharp.
These functions give the sharp distances: a point to a box (signed), and two boxes apart.
"""

from __future__ import annotations

import numpy as np

#: Corner signs of a box, ``(8, 3)``: corner ``i`` is ``CORNER_SIGNS[i] * half``.
CORNER_SIGNS = np.array([[sx, sy, sz] for sx in (-1.0, 1.0) for sy in (-1.0, 1.0) for sz in (-1.0, 1.0)])
#: The 12 edges of a box as pairs of corner indices (corners differing in one sign).
EDGES = np.array([(i, j) for i in range(8) for j in range(i + 1, 8) if np.count_nonzero(CORNER_SIGNS[i] != CORNER_SIGNS[j]) == 1])


def box_corners(half: np.ndarray) -> np.ndarray:
    """The 8 corners ``(8, 3)`` of a box of half extents ``half``, in its own frame."""
    return CORNER_SIGNS * half


def box_distance(local: np.ndarray, half: np.ndarray, frame: np.ndarray, with_normals: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Signed distance of points (box frame) to a box and outward unit normals (world frame;
    None when not ``with_normals``)."""
    excess = np.abs(local) - half
    positive = np.maximum(excess, 0.0)
    outside = np.sqrt(np.einsum("ij,ij->i", positive, positive))
    deepest = np.maximum.reduce(excess, axis=1)  # excess.max(axis=1) without its wrapper
    gaps = outside + np.minimum(deepest, 0.0)
    if not with_normals:
        return gaps, None
    normals = np.sign(local) * np.where((outside > 0.0)[:, None], positive, excess == deepest[:, None])
    normals /= np.maximum(np.sqrt(np.einsum("ij,ij->i", normals, normals)), 1e-12)[:, None]
    return gaps, normals @ frame.T


def box_separation(
    centre_a: np.ndarray, rotation_a: np.ndarray, half_a: np.ndarray, centre_b: np.ndarray, rotation_b: np.ndarray, half_b: np.ndarray
) -> float:
    """Distance between two boxes (world centres, rotations whose columns are their axes, half
    extents) when they are apart; 0.0 when they touch or overlap.

    The closest points of two disjoint convex polyhedra are a corner and a face, or two edges:
    so the distance is the least of the corners' distances to the other box and the 12 x 12
    edge-edge distances.  Boxes that overlap have a corner inside the other box, or an edge of
    one crossing the other (slab test), and give 0.0.
    """
    corners_a = box_corners(half_a) @ rotation_a.T + centre_a
    corners_b = box_corners(half_b) @ rotation_b.T + centre_b
    to_b = box_distance((corners_a - centre_b) @ rotation_b, half_b, rotation_b, with_normals=False)[0]
    to_a = box_distance((corners_b - centre_a) @ rotation_a, half_a, rotation_a, with_normals=False)[0]
    nearest_corner = min(float(to_b.min()), float(to_a.min()))
    if nearest_corner <= 0.0:
        return 0.0
    if _edges_cross(corners_a, centre_b, rotation_b, half_b) or _edges_cross(corners_b, centre_a, rotation_a, half_a):
        return 0.0
    return min(nearest_corner, _edge_distance(corners_a, corners_b))


def _edges_cross(corners: np.ndarray, centre: np.ndarray, rotation: np.ndarray, half: np.ndarray) -> bool:
    """Whether an edge of the box with world ``corners`` meets the other box (slab clipping in its frame)."""
    local = (corners - centre) @ rotation
    start, direction = local[EDGES[:, 0]], local[EDGES[:, 1]] - local[EDGES[:, 0]]
    with np.errstate(divide="ignore", invalid="ignore"):
        low = (-half - start) / direction
        high = (half - start) / direction
    entry = np.where(direction != 0.0, np.minimum(low, high), np.where(np.abs(start) <= half, -np.inf, np.inf))
    leave = np.where(direction != 0.0, np.maximum(low, high), np.where(np.abs(start) <= half, np.inf, -np.inf))
    first = np.maximum(entry.max(axis=1), 0.0)
    last = np.minimum(leave.min(axis=1), 1.0)
    return bool((first <= last).any())


def _edge_distance(corners_a: np.ndarray, corners_b: np.ndarray) -> float:
    """The least distance between the 12 edges of each box (closest points of segments,
    Ericson, Real-Time Collision Detection, Sec. 5.1.9), over all 144 pairs at once."""
    p1, q1 = corners_a[EDGES[:, 0]][:, None, :], corners_a[EDGES[:, 1]][:, None, :]
    p2, q2 = corners_b[EDGES[:, 0]][None, :, :], corners_b[EDGES[:, 1]][None, :, :]
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a = np.einsum("...k,...k->...", d1, d1)
    e = np.einsum("...k,...k->...", d2, d2)
    b = np.einsum("...k,...k->...", d1, d2)
    c = np.einsum("...k,...k->...", d1, r)
    f = np.einsum("...k,...k->...", d2, r)
    a, e, b, c, f = np.broadcast_arrays(a, e, b, c, f)
    denominator = a * e - b * b
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(denominator > 1e-12 * a * e, np.clip((b * f - c * e) / denominator, 0.0, 1.0), 0.0)
        t = (b * s + f) / e
        s = np.where(t < 0.0, np.clip(-c / a, 0.0, 1.0), np.where(t > 1.0, np.clip((b - c) / a, 0.0, 1.0), s))
    t = np.clip(t, 0.0, 1.0)
    gap = p1 + s[..., None] * d1 - (p2 + t[..., None] * d2)
    return float(np.sqrt(np.einsum("...k,...k->...", gap, gap).min()))
