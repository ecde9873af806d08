"""A link pair touching a static box or plane through box corners, checked every step cheaply.

The distance budget (:mod:`.budget`) evaluates a link pair alone, every step, when its
corners creep: a humanoid's box feet sliding a few mm/s over the ground spend their 0.1 mm
of slack within a step.  That evaluation
(:meth:`~.contacts.ContactFinder.corner_pair_features`) queries PyBullet for the pair, the
costliest part of a resting step.  A
:class:`CornerWatch` answers the same question (does the evaluation find the same touching
corners and nothing else?) from one pose read: the moving link's corners, their gaps to the
static shape, their normals, and whether Bullet's manifold points of the pair merge into them
(:mod:`.reduction`).

It uses the evaluation's formulas but not its operation order, so it decides only with a
margin of :data:`MARGIN` (round-off is some 1e-15 m): a gap within it of the tolerance, a
normal that may be degenerate, a manifold point within it of the merge distance, and the watch
answers ``None``; the pair is then evaluated in full.  The static box's own corners stay out of
contact by an account: their distance to the moving link at the start, less the most any
link has spent since (:attr:`~.budget.DistanceBudget.most`, a bound on every point's displacement).

A resting link barely moves between steps, so the gaps of all eight corners are computed only
when the link may have moved far enough to change which corners touch: the last such
computation keeps its pose and the *clearance* (the least ``gap - tol`` of the corners out of
contact), and while no corner can have moved by the clearance since (:func:`corner_motion`),
only the touching corners are placed (their normals and positions, for the manifold check, are
needed each step) and their own gaps tell whether they still touch.  A resting foot's touching
corner sits 0.1 mm inside the tolerance but its nearest other corner a centimetre out, so the
clearance is the centimetre: all eight are placed when the foot has crept that far.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pybullet as p

from ..contacts import ContactFinder, Feature, Pair
from ..frames import inertial_frame, rotation_rows

#: [m] Decisions closer than this to the evaluation's thresholds are left to the evaluation.
MARGIN = 1e-9
#: At most this many touching corners (with four or more the evaluation may reduce them to
#: their contact polygon's vertices, which the watch does not repeat).
MAX_CORNERS = 3

#: A corner placed: its world position, its position in the static shape's frame, its gap.
Placed = tuple[list[float], list[float], float]


class CornerWatch:
    """The per-step check of one link pair (see module docstring); built by :meth:`start`."""

    def __init__(
        self,
        finder: ContactFinder,
        moving: tuple[int, int],
        static: tuple[int, int],
        corners: np.ndarray,
        shape: tuple[int, np.ndarray, np.ndarray, np.ndarray],
        rows: frozenset[int],
        moving_is_a: bool,
        spent: float,
        far: float,
    ) -> None:
        self.moving = moving
        self._finder = finder
        self._client = finder.client
        self._tolerance = finder.tolerance
        geometry, centre, frame, dimensions = shape
        #: The shape's axes in the world (its frame's columns): a box face's outward normal is one of them, signed.
        self._axes = frame.T.tolist()
        #: A box's half extents, or None for a plane; a plane's unit normal (shape frame, world).
        self._half = (dimensions / 2.0).tolist() if geometry == p.GEOM_BOX else None
        plane_normal = dimensions / np.linalg.norm(dimensions)
        self._plane_normal = plane_normal.tolist()
        self._world_plane_normal = (frame @ plane_normal).tolist()
        self._rows = rows
        self._moving_is_a = moving_is_a
        a, b = (moving, static) if moving_is_a else (static, moving)
        self._point_key = (a[0], b[0], a[1], b[1])  # as a contact point names the pair (bodyA, bodyB, linkA, linkB)
        self._swapped_key = (b[0], a[0], b[1], a[1])
        self._merge = finder.merge_distance(a, b)
        self._until = spent + far  # the static corners' account: the most any link spends may reach this
        self._corners = corners.tolist()  # the moving link's box corners (its inertial frame)
        self._reach = max(math.sqrt(sum(x * x for x in corner)) for corner in self._corners)
        self._centre = centre.tolist()
        #: The pose (position, quaternion) at which all corners' gaps were last computed, and
        #: their clearance then: the least ``gap - tol`` of the corners out of contact (None:
        #: compute them at the next check).
        self._reference: tuple[Sequence[float], Sequence[float], float] | None = None
        #: Checks that placed only the touching corners (the others could not have moved enough).
        self.shortcuts = 0

    @classmethod
    def start(cls, finder: ContactFinder, pair: Pair, corners: set[Feature], moving_bodies: set[int], spent: float) -> CornerWatch | None:
        """A watch of ``pair``, whose evaluation found the box ``corners`` of one link touching
        the other, or None where it does not apply: the other link static with a single box
        or plane shape, at most :data:`MAX_CORNERS` corners.  ``spent``: the most any link has spent so
        far (:attr:`~.budget.DistanceBudget.most`)."""
        first, second = pair
        if (first[0] in moving_bodies) == (second[0] in moving_bodies):
            return None
        moving, static = (first, second) if first[0] in moving_bodies else (second, first)
        shape, link_corners = finder.only_shape(*static), finder.link_corners(*moving)
        if shape is None or shape[0] not in (p.GEOM_BOX, p.GEOM_PLANE) or link_corners is None or len(corners) > MAX_CORNERS:
            return None
        if any(feature[1:3] != moving or feature[4:6] != static for feature in corners):
            return None
        static_corners = [gap for feature, gap in finder.corner_gaps(pair).items() if feature[1:3] == static]
        far = min(static_corners, default=math.inf) - finder.tolerance - MARGIN
        if not far > 0.0:
            return None
        moving_is_a = (moving[0], static[0]) in finder.pairs
        return cls(finder, moving, static, link_corners, shape, frozenset(feature[3] for feature in corners), moving_is_a, spent, far)

    def holds(self, spent: float, manifold: Sequence[tuple]) -> bool | None:
        """True when the evaluation of the pair finds the same touching corners and nothing else,
        False when it finds another set, None when the margins cannot tell (evaluate it).
        ``spent``: the most any link has spent so far; ``manifold``: Bullet's contact points
        (``p.getContactPoints()``, every pair) read after the step."""
        if not spent < self._until:
            return False
        position, orientation = inertial_frame(self._client, *self.moving)
        placed = self._place_touching(position, orientation)
        if placed is None:
            every = self._place_all(position, orientation)
            if every is None:
                return None
            placed = every
            if frozenset(row for row, (_, _, gap) in placed.items() if gap < self._tolerance) != self._rows:
                touching = sum(gap < self._tolerance for _, _, gap in placed.values())
                return None if touching > MAX_CORNERS else False
            # a pose with the watched corners touching, and how far the others are from entering the tolerance
            clearance = min(gap - self._tolerance for row, (_, _, gap) in placed.items() if row not in self._rows)
            self._reference = (position, orientation, clearance)
        positions = []
        for row in self._rows:
            corner, local, gap = placed[row]
            normal = self._normal(local, gap)  # the evaluation drops a corner without one
            if normal is None:
                return None
            # position_a: the corner itself on link A, else its projection on the static shape (on A)
            positions.append(corner if self._moving_is_a else [x - gap * n for x, n in zip(corner, normal, strict=True)])
        return self._manifold_merges(positions, manifold)

    def _place_touching(self, position: Sequence[float], orientation: Sequence[float]) -> dict[int, Placed] | None:
        """The touching corners placed (:meth:`_place`) when the pose's check needs no other: no
        corner out of contact can have moved by the clearance since the reference pose, and each
        touching corner's gap is below the tolerance by more than the margin.  Then the touching
        set is the watched one and no gap is within the margin of the tolerance, as
        :meth:`_place_all` would find; else None (place them all)."""
        reference = self._reference
        if reference is None or not corner_motion(reference[0], reference[1], position, orientation, self._reach) < reference[2] - MARGIN:
            return None
        rotation = rotation_rows(orientation)
        below = self._tolerance - MARGIN
        placed = {}
        for row in self._rows:
            placed[row] = corner = self._place(self._corners[row], rotation, position)
            if not corner[2] < below:
                return None
        self.shortcuts += 1
        return placed

    def _place_all(self, position: Sequence[float], orientation: Sequence[float]) -> dict[int, Placed] | None:
        """Every corner placed (:meth:`_place`), or None when a gap is within the margin of the tolerance."""
        rotation = rotation_rows(orientation)
        placed = {row: self._place(corner, rotation, position) for row, corner in enumerate(self._corners)}
        if any(abs(gap - self._tolerance) <= MARGIN for _, _, gap in placed.values()):
            return None
        return placed

    def _place(self, corner: list[float], rotation: list[list[float]], position: Sequence[float]) -> Placed:
        """One corner's world position, position in the static shape's frame and gap (the
        evaluation's ``box_distance`` for a box), on Python floats: a watch places its touching
        corners every step and all eight now and then, where NumPy's per-call cost on arrays of
        eight corners is larger than the arithmetic."""
        x, y, z = corner
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rotation
        px, py, pz = position
        wx, wy, wz = r00 * x + r01 * y + r02 * z + px, r10 * x + r11 * y + r12 * z + py, r20 * x + r21 * y + r22 * z + pz
        cx, cy, cz = self._centre
        dx, dy, dz = wx - cx, wy - cy, wz - cz
        (a0, b0, c0), (a1, b1, c1), (a2, b2, c2) = self._axes
        local = [a0 * dx + b0 * dy + c0 * dz, a1 * dx + b1 * dy + c1 * dz, a2 * dx + b2 * dy + c2 * dz]
        if self._half is None:
            nx, ny, nz = self._plane_normal
            return [wx, wy, wz], local, local[0] * nx + local[1] * ny + local[2] * nz
        hx, hy, hz = self._half
        ex, ey, ez = abs(local[0]) - hx, abs(local[1]) - hy, abs(local[2]) - hz
        outside = math.sqrt(max(ex, 0.0) ** 2 + max(ey, 0.0) ** 2 + max(ez, 0.0) ** 2)
        return [wx, wy, wz], local, outside + min(max(ex, ey, ez), 0.0)

    def _normal(self, local: list[float], gap: float) -> list[float] | None:
        """The static shape's outward unit normal (world) at a touching corner at ``local``
        (the shape's frame), as the evaluation finds it, or None when it may find none."""
        if self._half is None:
            return self._world_plane_normal
        lx, ly, lz = local
        hx, hy, hz = self._half
        ex, ey, ez = abs(lx) - hx, abs(ly) - hy, abs(lz) - hz
        if gap < -MARGIN:  # inside: along the one deepest axis (no tie within the margin); unrolled, run every step
            if ex >= ey:
                deepest, second = (0, max(ey, ez)) if ex >= ez else (2, ex)
            else:
                deepest, second = (1, max(ex, ez)) if ey >= ez else (2, ey)
            coordinate = local[deepest]
            if (ex, ey, ez)[deepest] - second <= MARGIN or abs(coordinate) <= MARGIN:
                return None
            sign = math.copysign(1.0, coordinate)
            ax, ay, az = self._axes[deepest]
            return [sign * ax, sign * ay, sign * az]
        if not gap > MARGIN:
            return None
        excess = [ex, ey, ez]  # outside: along the excesses that are positive (all by more than the margin)
        if any(abs(e) <= MARGIN for e in excess):
            return None
        direction = [math.copysign(max(e, 0.0), x) for e, x in zip(excess, local, strict=True)]
        length = math.sqrt(sum(x * x for x in direction))
        return [sum(axis[i] * weight for axis, weight in zip(self._axes, direction, strict=True)) / length for i in range(3)]

    def _manifold_merges(self, positions: list[list[float]], manifold: Sequence[tuple]) -> bool | None:
        """Whether every manifold point of the pair within the tolerance merges into one of the
        touching corners (at ``positions``, their ``position_a``), as :func:`~.reduction.merge_indices`
        drops it; None when a distance is within the margin of the merge distance.  The pair's
        points are taken from ``manifold`` with their position on link A (PyBullet's pair query
        returns the same point with A and B exchanged when Bullet stores the pair the other way)."""
        merge = self._merge
        if len(positions) > 1 and any(math.dist(a, b) <= merge + MARGIN for i, a in enumerate(positions) for b in positions[i + 1 :]):
            return None  # corners that could merge with each other: the evaluation decides
        finder, key_ab, key_ba = self._finder, self._point_key, self._swapped_key
        for point in manifold:
            key = point[1:5]
            if key == key_ab:
                on_a = point[5]
            elif key == key_ba:
                on_a = point[6]
            else:
                continue
            if not finder.within_tolerance(point):
                continue
            nearest = min(math.dist(on_a, position) for position in positions)
            if nearest > merge + MARGIN:
                return False  # kept: a feature of its own
            if nearest > merge - MARGIN:
                return None
        return True


def corner_motion(
    position: Sequence[float], orientation: Sequence[float], new_position: Sequence[float], new_orientation: Sequence[float], reach: float
) -> float:
    """A bound on how far any point within ``reach`` of a link frame's origin moved between two
    poses (positions, unit quaternions ``(x, y, z, w)``): the origin's move plus ``2 reach
    |q' - q|`` (with the sign of ``q'`` nearer ``q``).  A rotation by ``theta`` moves such a point by
    at most ``2 reach sin(theta / 2)``, and ``sin(theta / 2) <= |q' - q|`` for unit quaternions
    with ``q . q' >= 0`` (``sin^2 = u^2 (1 - u^2 / 4)`` with ``u = |q' - q|``).  Unrolled on Python
    floats: a watch calls it every step, where generators over the four components cost more than the arithmetic."""
    x, y, z, w = orientation
    a, b, c, d = new_orientation
    if x * a + y * b + z * c + w * d < 0.0:
        a, b, c, d = -a, -b, -c, -d
    turn = math.sqrt((a - x) ** 2 + (b - y) ** 2 + (c - z) ** 2 + (d - w) ** 2)
    return math.dist(position, new_position) + 2.0 * reach * turn
