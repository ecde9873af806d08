"""Contact-set reduction that leaves the impact unchanged: near-duplicate points merged,
a face-face contact reduced to its contact polygon's vertices.

Both work on one link pair's points.  For rigid links a point's Jacobian is affine in the
point (``J(p) = J_com - [p - com]_x J_omega``), so an impulse at a convex combination of
points, with one normal and one friction coefficient, equals the same combination of
impulses at those points, each inside its own friction cone (journal eq. 12-13): the points
strictly inside the contact polygon, or on its edges, add rows that the polygon's vertices
already span, and only make the LCPs larger and degenerate.
"""

from __future__ import annotations

import math

import numpy as np

from .frames import tangent_basis

#: Normals closer than this (in norm of the difference) count as one face's normal.
PARALLEL = 1e-6
#: Merge distance as a fraction of the smallest extent of the pair's shapes.
MERGE_FRACTION = 0.1


def merge_indices(points: np.ndarray | list[list[float]], distance: float) -> list[int]:
    """Indices of the points kept when each point within ``distance`` of an earlier kept one
    is dropped (first come, first kept).  ``points``: an array or rows of Python floats."""
    coordinates = points if isinstance(points, list) else np.asarray(points, dtype=float).tolist()
    kept: list[int] = []
    for i, point in enumerate(coordinates):
        if all(math.sqrt(_squared_distance(point, coordinates[j])) > distance for j in kept):
            kept.append(i)
    return kept


def _squared_distance(a: list[float], b: list[float]) -> float:
    """``d @ d`` of ``d = a - b`` on Python floats: the same IEEE operations in the same order
    as numpy's dot of a short vector (so ``math.sqrt`` of it is ``np.linalg.norm(d)``)."""
    total = 0.0
    for x, y in zip(a, b, strict=True):
        offset = x - y
        total += offset * offset
    return total


def polygon_indices(points: np.ndarray, normals: np.ndarray) -> list[int]:
    """Indices (in input order) of the points that are vertices of the contact polygon, when
    all normals are parallel (a face contact) and there are more than 3 points; else all.

    The polygon is the convex hull of the points projected on the plane of the normal
    (Andrew's monotone chain); points on its edges are dropped too.
    """
    count = len(points)
    if count <= 3:
        return list(range(count))
    rows = np.asarray(normals, dtype=float).tolist()
    if any(math.sqrt(_squared_distance(row, rows[0])) > PARALLEL for row in rows):  # np.linalg.norm's arithmetic
        return list(range(count))
    u, w = tangent_basis(normals[0])  # the plane's axes
    # Python floats from here: the same IEEE operations, without numpy's per-call overhead
    coordinates = list(zip((points @ u).tolist(), (points @ w).tolist(), strict=True))
    extent = max(max(axis) - min(axis) for axis in zip(*coordinates, strict=True))  # np.ptp
    if extent == 0.0:
        return [0]
    tolerance = 1e-9 * extent * extent
    order = sorted(range(count), key=lambda i: coordinates[i])

    def chain(indices: list[int]) -> list[int]:
        hull: list[int] = []
        for i in indices:
            while len(hull) >= 2:
                a, b, c = coordinates[hull[-2]], coordinates[hull[-1]], coordinates[i]
                turn = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
                if turn > tolerance:
                    break
                hull.pop()
            hull.append(i)
        return hull[:-1]

    vertices = set(chain(order) + chain(order[::-1]))
    return [i for i in range(count) if i in vertices]
