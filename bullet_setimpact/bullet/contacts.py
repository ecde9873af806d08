"""Contact sets of a live PyBullet world at its current configuration.

A contact is a pair of points, one on link A and one on link B, with the unit normal on B
pointing towards A and the signed gap ``d`` (negative when penetrating), as PyBullet's
``getClosestPoints``/``getContactPoints`` report them.  The impact problem needs *every*
active point of a face contact, but ``getClosestPoints`` gives one point per link pair and
Bullet's manifold gains one new point per step for a convex shape against ``GEOM_PLANE``.
The set is therefore completed from box corners: every corner of a box within the
tolerance of the other link becomes a contact (4 for a box landing flat, 2 for an edge),
its distance to boxes, planes and spheres computed in closed form, to other shapes with a
point probe through ``getClosestPoints``.  Convex meshes, cylinders and capsules rely on
Bullet's own manifold points and closest point (their face contacts may be incomplete);
the shipped URDFs use boxes and spheres.  The links of bodies whose collision shapes cannot
be read (MJCF bodies, :func:`~.following.shape_data_unsafe`) hold one shape of geometry
:data:`UNKNOWN_GEOMETRY`: they too rely on Bullet's points and point probes.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate, combinations
from typing import Concatenate, ParamSpec, TypeVar

import numpy as np
import pybullet as p

from ..errors import ManifoldCompletionWarning, warn
from .box_geometry import box_corners, box_distance, box_separation
from .frames import inertial_frame, rotation_matrix
from .inventory import world_bodies
from .reduction import MERGE_FRACTION, merge_indices, polygon_indices

#: Bullet clamps the product of the two lateral frictions to this (btManifoldResult).
MAX_COMBINED_FRICTION = 10.0
#: Radius of the sphere used to probe point-to-shape distances.
PROBE_RADIUS = 1e-4
#: Extra distance [m] when looking for link pairs near contact.  Bullet's contact
#: manifold (what its solver uses) measures boxes with sharp corners, but
#: ``getClosestPoints`` runs GJK on boxes rounded by their 1 mm collision margin and reports
#: a tilted corner up to ``margin (sqrt(3) - 1) = 0.73 mm`` too far; pairs are therefore
#: found with this slack and measured on the vertices.
SEED_MARGIN = 2e-3
#: The geometry of a link's shape that cannot be read: no corners, no reach, measured by
#: Bullet (its closest points and point probes) like a mesh.
UNKNOWN_GEOMETRY = -1

_P = ParamSpec("_P")
_R = TypeVar("_R")
#: ``_vertex_gaps``' answer without rows (read-only: shared by every call).
_NO_ROWS: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[int]] = (
    np.zeros((0, 3)),
    np.zeros(0),
    np.zeros((0, 3)),
    np.zeros(0, dtype=int),
    [],
)
for _array in _NO_ROWS[:4]:
    _array.setflags(write=False)


Pair = tuple[tuple[int, int], tuple[int, int]]
Feature = tuple
#: How a PyBullet contact point names its link pair: ``point[1:5]``, ``(bodyA, bodyB, linkA, linkB)``.
PointKey = tuple[int, int, int, int]


def pair_key(pair: Pair) -> Pair:
    """A link pair ``((body, link), (body, link))`` in canonical (sorted) order."""
    return (pair[0], pair[1]) if pair[0] <= pair[1] else (pair[1], pair[0])


def point_keys(pair: Pair) -> tuple[PointKey, PointKey]:
    """The two :data:`PointKey` by which PyBullet's contact points may name a link pair, one per order."""
    (body_a, link_a), (body_b, link_b) = pair
    return (body_a, body_b, link_a, link_b), (body_b, body_a, link_b, link_a)


def feature_pair(feature: Feature) -> Pair:
    """The link pair (:func:`pair_key` order) of a contact feature."""
    if feature[0] in ("vertex", "point"):
        return pair_key(((feature[1], feature[2]), (feature[4], feature[5])))
    return feature[1]


#: Two of Bullet's points of one link pair at least this far apart [m] on a link may be distinct
#: contacts (a capsule's two ends), and at least :data:`SEPARATION_FRACTION` of the smaller link's
#: size (Bullet's points on a resting mesh wheel wander a centimetre among its hull's vertices):
#: :meth:`ContactFinder.separation`.
POINT_SEPARATION = 1e-2
SEPARATION_FRACTION = 0.25
#: Where link pairs touching through Bullet's points alone touched: their points on the pair's
#: first link (:func:`pair_key` order), in its inertial frame, one row each
#: (:meth:`ContactFinder.touched_points`).
Touched = dict[Pair, np.ndarray]


@dataclass(frozen=True)
class Contact:
    """One contact point pair.

    Attributes
    ----------
    body_a, link_a, body_b, link_b : int
        PyBullet body ids and link indices (-1 for a base).
    position_a, position_b : ndarray, shape (3,)
        World positions of the points on A and on B.
    normal : ndarray, shape (3,)
        Unit contact normal on B, pointing towards A.
    gap : float
        Signed distance [m] (negative = penetration).
    mu : float
        Friction coefficient, combined as Bullet does (product of the lateral frictions,
        clamped to 10).
    feature : tuple
        What the point is, to follow it over time: ``("vertex", body, link, index, body,
        link)`` for a vertex of the first link touching the second, ``("pair", pair)`` for
        Bullet's closest point of a link pair, ``("point", body, link, (x, y, z), body, link)``
        for a material point of the first link (in its inertial frame) that arrived beside the
        pair's touching points (:meth:`ContactFinder.distinguished`).
    """

    body_a: int
    link_a: int
    body_b: int
    link_b: int
    position_a: np.ndarray
    position_b: np.ndarray
    normal: np.ndarray
    gap: float
    mu: float
    feature: Feature = ()

    @property
    def pair(self) -> Pair:
        """``((body_a, link_a), (body_b, link_b))``."""
        return (self.body_a, self.link_a), (self.body_b, self.link_b)

    def position_on(self, link: tuple[int, int]) -> np.ndarray:
        """The contact's world point on ``link`` ``(body, link)``, one of its two."""
        return self.position_a if link == (self.body_a, self.link_a) else self.position_b

    def side(self, body: int) -> tuple[int, np.ndarray, int]:
        """``(link, world point, other body)`` of ``body``'s side of the contact (A if both)."""
        if self.body_a == body:
            return self.link_a, self.position_a, self.body_b
        if self.body_b == body:
            return self.link_b, self.position_b, self.body_a
        raise ValueError(f"body {body} is not in the contact between bodies {self.body_a} and {self.body_b}")


@dataclass(frozen=True)
class _Shape:
    """One collision shape of a link, in the link's inertial (centre-of-mass) frame."""

    geometry: int
    dimensions: np.ndarray
    position: np.ndarray
    rotation: np.ndarray  # 3x3, shape frame -> inertial frame
    vertices: np.ndarray | None  # (8, 3) corners in the inertial frame, for boxes
    half: np.ndarray  # dimensions / 2 (a box's half extents)


#: A vertex evaluation: ``(body_v, link_v, body_s, link_s, flip)``, the vertices of link ``v``
#: against link ``s`` (``flip``: ``s`` is link A of the pair).
VertexJob = tuple[int, int, int, int, bool]


def _vertex_jobs(body_a: int, link_a: int, body_b: int, link_b: int) -> tuple[VertexJob, VertexJob]:
    """The two vertex evaluations of a link pair: A's vertices against B, then B's against A."""
    return (body_a, link_a, body_b, link_b, False), (body_b, link_b, body_a, link_a, True)


@dataclass(frozen=True)
class _Touching:
    """The vertices of a job's link ``v`` in contact with link ``s``, one row each (shape-major
    when ``s`` has several shapes): vertex indices, world vertices, gaps, contact normals (on
    B, pointing to A), the points on ``s``, and the geometry of the shape of ``s`` touched."""

    indices: np.ndarray
    vertices: np.ndarray
    gaps: np.ndarray
    normals: np.ndarray
    on_shapes: np.ndarray
    geometries: list[int]

    @classmethod
    def of(cls, parts: list[tuple], flip: bool) -> _Touching:
        """From one part ``(indices, vertices, gaps, normals from s, points on s, geometry)`` per
        shape of ``s`` touched, in order; ``flip``: ``s`` is link A, so the normals turn round."""
        geometries = [part[5] for part in parts for _ in range(len(part[0]))]
        if len(parts) == 1:
            indices, vertices, gaps, normals, on_shapes, _ = parts[0]
        else:
            indices, vertices, gaps, normals, on_shapes = (np.concatenate([part[column] for part in parts]) for column in range(5))
        return cls(indices, vertices, gaps, -normals if flip else normals, on_shapes, geometries)


def _vertex_points(job: VertexJob, touching: _Touching | None) -> list[tuple[Feature, list[float], np.ndarray]]:
    """``(feature, position_a, normal)`` of each contact :meth:`ContactFinder._vertex_contacts` would build."""
    if touching is None:
        return []
    body_v, link_v, body_s, link_s, flip = job
    positions = (touching.on_shapes if flip else touching.vertices).tolist()
    return [
        (("vertex", body_v, link_v, index, body_s, link_s), position, normal)
        for index, position, normal in zip(touching.indices.tolist(), positions, touching.normals, strict=True)
    ]


#: The shape of a link whose collision shapes cannot be read (:data:`UNKNOWN_GEOMETRY`).
_UNKNOWN_SHAPE = _Shape(UNKNOWN_GEOMETRY, np.zeros(3), np.zeros(3), np.eye(3), None, np.zeros(3))

#: A pose's bits: position and quaternion as seven doubles.
_POSE_BITS = struct.Struct("7d")


@dataclass
class _Frame:
    """A link's inertial frame at one pose (``bits``), with its world corners once computed."""

    bits: bytes
    point: tuple[float, ...]  # the origin as PyBullet's floats
    origin: np.ndarray
    orientation: tuple[float, ...]  # PyBullet's quaternion (x, y, z, w)
    corners: np.ndarray | None = None
    corner_rows: list[list[float]] | None = None  # corners as Python floats, for the pruning test
    placements: list[tuple[np.ndarray, np.ndarray]] | None = None  # world centre and rotation of each shape
    aabb: tuple[tuple[float, ...], tuple[float, ...]] | None = None  # PyBullet's world box of the link's shapes
    _rotation: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.origin.setflags(write=False)  # shared by every query at this pose

    @property
    def rotation(self) -> np.ndarray:
        """The rotation matrix of ``orientation`` (:func:`~.frames.rotation_matrix`), computed once."""
        if self._rotation is None:
            self._rotation = rotation_matrix(self.orientation)
            self._rotation.setflags(write=False)
        return self._rotation


def _one_configuration(method: Callable[Concatenate[ContactFinder, _P], _R]) -> Callable[Concatenate[ContactFinder, _P], _R]:
    """Read each link pose and world corners once during the query ``method`` (the world does
    not move within it)."""

    @functools.wraps(method)
    def query(self: ContactFinder, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        if self._poses is not None:  # inside another query
            return method(self, *args, **kwargs)
        self._poses = {}
        try:
            return method(self, *args, **kwargs)
        finally:
            self._poses = None

    return query


class ContactFinder:
    """Finds the contact set of the bodies of a PyBullet client (see module docstring).

    Parameters
    ----------
    client : int
        PyBullet physics client id.
    dynamic : sequence of int
        Bodies whose contacts matter (contacts between two other bodies are ignored).
    tolerance : float
        Points with gap <= tolerance are contacts [m].
    opaque : collection of int
        Bodies whose collision shapes must not be read (:data:`UNKNOWN_GEOMETRY`).
    probe : int, optional
        The probe sphere's collision shape, when an earlier finder of the client created one
        (default: create it).
    """

    def __init__(self, client: int, dynamic: list[int], tolerance: float, opaque: Collection[int] = (), probe: int | None = None) -> None:
        self.client = client
        self.tolerance = tolerance
        self.dynamic = set(dynamic)
        self.opaque = frozenset(opaque)
        self._shapes: dict[tuple[int, int], list[_Shape]] = {}
        self._vertices: dict[tuple[int, int], np.ndarray | None] = {}
        #: Each link's vertex indices, ``0 .. k - 1`` (read-only: shared by every query).
        self._all_indices: dict[tuple[int, int], np.ndarray] = {}
        self._friction: dict[tuple[int, int], float] = {}
        self._reach: dict[tuple[int, int], float] = {}
        self._separations: dict[Pair, float] = {}
        self._geometries: dict[tuple[int, int], frozenset[int]] = {}
        self._merge_distances: dict[tuple, float] = {}
        self._poses: dict[tuple[int, int], _Frame] | None = None
        #: Each link's last pose (the bits PyBullet reported), inertial origin and rotation and
        #: world corners (once computed): reused while the bits are the same (static bodies).
        self._frames: dict[tuple[int, int], _Frame] = {}
        #: The probe sphere's collision shape (see ``probe``).
        self.probe = p.createCollisionShape(p.GEOM_SPHERE, radius=PROBE_RADIUS, physicsClientId=client) if probe is None else probe
        self._warned: set[tuple[int, int, int, int]] = set()
        self.refresh_bodies()

    def refresh_bodies(self) -> None:
        """Re-read the world's bodies (call after loading or removing bodies).

        :attr:`pairs` holds the body pairs with a tracked body, both with a collision shape (a
        body without, as panda-gym's ghost targets, never touches anything: its links cannot
        gain shapes)."""
        self._shapes.clear()
        self._vertices.clear()
        self._all_indices.clear()
        self._friction.clear()
        self._reach.clear()
        self._geometries.clear()
        self._merge_distances.clear()
        self._frames.clear()
        #: Each body's links, the base (-1) first.
        self.links = {body: range(-1, p.getNumJoints(body, physicsClientId=self.client)) for body in world_bodies(self.client)}
        # read every link's static data now, not in the first contact query (an impact)
        for body, links in self.links.items():
            for link in links:
                self._link_vertices(body, link)
                self._link_reach(body, link)
                self.friction(body, link, body, link)
        solid = [body for body, links in self.links.items() if any(self._link_shapes(body, link) for link in links)]
        #: The body pairs of the contact search.
        self.pairs = [(a, b) for a, b in combinations(solid, 2) if a in self.dynamic or b in self.dynamic]

    # ------------------------------------------------------------------ gaps
    def _closest_points(self, distance: float, bodies: set[int] | None, pairs: list[tuple[int, int]] | None = None) -> Iterator[tuple]:
        """Bullet's ``getClosestPoints`` answers of every body pair (of ``pairs``, default
        :attr:`pairs`) within ``distance`` (``bodies``: only the pairs involving one of them)."""
        for body_a, body_b in self.pairs if pairs is None else pairs:
            if bodies is None or body_a in bodies or body_b in bodies:
                yield from p.getClosestPoints(body_a, body_b, distance, physicsClientId=self.client)

    def closest(self, distance: float, bodies: set[int] | None = None) -> list[Contact]:
        """Bullet's closest point of every link pair within ``distance`` (one point per pair).

        ``bodies`` limits the query to body pairs involving one of them.
        """
        return [self._from_bullet(point) for point in self._closest_points(distance, bodies)]

    def pair_gaps(self, distance: float, bodies: set[int] | None = None, pairs: list[tuple[int, int]] | None = None) -> dict[Pair, float]:
        """Minimum gap of every link pair within ``distance``, keyed by :func:`pair_key` (no
        :class:`Contact` is built: the resting-contact path calls this every step); ``bodies`` and
        ``pairs`` limit the body pairs as in :meth:`_closest_points`."""
        gaps: dict[Pair, float] = {}
        for point in self._closest_points(distance, bodies, pairs):
            key = pair_key(((point[1], point[3]), (point[2], point[4])))
            gaps[key] = min(gaps.get(key, np.inf), float(point[8]))
        return gaps

    def seed_gaps(self, body_a: int, body_b: int) -> dict[Pair, float]:
        """Minimum gap of each link pair of two bodies within the seed band (``tolerance +
        SEED_MARGIN``): the pairs :meth:`contacts` evaluates, by the same query."""
        return self.pair_gaps(self.tolerance + SEED_MARGIN, pairs=[(body_a, body_b)])

    def link_gaps(self, link_pairs: list[Pair], distance: float) -> dict[Pair, float]:
        """Minimum gap of each of ``link_pairs`` within ``distance`` (absent beyond it)."""
        gaps: dict[Pair, float] = {}
        for pair in link_pairs:
            (body_a, link_a), (body_b, link_b) = pair
            for point in p.getClosestPoints(body_a, body_b, distance, link_a, link_b, physicsClientId=self.client):
                gaps[pair] = min(gaps.get(pair, np.inf), float(point[8]))
        return gaps

    # ---------------------------------------------------------------- contacts
    @_one_configuration
    def contacts(self) -> list[Contact]:
        """The full contact set (gap <= tolerance), completed from the shapes' vertices.

        For each link pair Bullet finds within the tolerance: the vertex contacts of both
        links and Bullet's manifold points within the tolerance; Bullet's single closest
        point only when those are empty (curved shapes, edge-on-edge).
        """
        return self._seeds_contacts(list(self._closest_points(self.tolerance + SEED_MARGIN, None)))

    def _search_order(self, pair: Pair) -> Pair:
        """``pair`` in the orientation the whole search queries it in (A's body first in :attr:`pairs`)."""
        return pair if (pair[0][0], pair[1][0]) in self.pairs else (pair[1], pair[0])

    @_one_configuration
    def pair_contacts(self, pair: Pair) -> list[Contact]:
        """The contacts :meth:`contacts` finds between the two links of ``pair`` (the same
        evaluation, of one link pair)."""
        (body_a, link_a), (body_b, link_b) = self._search_order(pair)
        return self._seeds_contacts(
            p.getClosestPoints(body_a, body_b, self.tolerance + SEED_MARGIN, link_a, link_b, physicsClientId=self.client)
        )

    @_one_configuration
    def corner_pair_features(self, pair: Pair) -> set[Feature]:
        """The features of :meth:`pair_contacts` for a link pair with box corners in contact,
        found by the same evaluation without building its contacts.

        A box corner within the tolerance puts the pair's closest point within the seed band
        (:data:`SEED_MARGIN`), so Bullet's closest-point query, which only decides whether the
        pair is evaluated at all, is made only when no corner touches."""
        (body_a, link_a), (body_b, link_b) = self._search_order(pair)
        jobs = _vertex_jobs(body_a, link_a, body_b, link_b)
        candidates = [
            point for job, touching in zip(jobs, self._touching_vertices(jobs), strict=True) for point in _vertex_points(job, touching)
        ]
        if not candidates:
            return {contact.feature for contact in self.pair_contacts(pair)}
        manifold = self.manifold_points(body_a, link_a, body_b, link_b)
        positions = [position for _, position, _ in candidates] + [list(point[5]) for point in manifold]
        normals = [normal for _, _, normal in candidates] + [point[7] for point in manifold]
        kept = self._reduced(((body_a, link_a), (body_b, link_b)), positions, normals)
        return {candidates[i][0] if i < len(candidates) else ("pair", pair_key(pair)) for i in kept}

    def _seeds_contacts(self, answers: Sequence[tuple]) -> list[Contact]:
        """The contacts of the link pairs of ``getClosestPoints`` answers within the seed band (Bullet's
        tuples: a :class:`Contact` is built only for the points kept): each pair's vertex contacts,
        the pairs' vertices measured together (:meth:`_touching_vertices`), with Bullet's manifold
        points, reduced; Bullet's closest point alone when both are empty.

        Bullet answers once per pair of collision shapes, so a link with several shapes (a
        compound base) has several answers: each link pair is evaluated once, its seed the
        closest of its answers."""
        closest: dict[PointKey, tuple] = {}
        for answer in answers:
            key = answer[1:5]
            if key not in closest or answer[8] < closest[key][8]:
                closest[key] = answer
        seeds = list(closest.values())
        jobs = [job for seed in seeds for job in _vertex_jobs(seed[1], seed[3], seed[2], seed[4])]
        touching = self._touching_vertices(jobs)
        result: list[Contact] = []
        for index, seed in enumerate(seeds):
            sides = range(2 * index, 2 * index + 2)
            candidates = [contact for side in sides for contact in self._vertex_contacts(jobs[side], touching[side])]
            manifold = self.manifold_points(seed[1], seed[3], seed[2], seed[4])
            if candidates or manifold:
                result += self._reduce(candidates, manifold)
            elif float(seed[8]) <= self.tolerance:
                result.append(self._from_bullet(seed))
        return result

    def manifold_points(self, body_a: int, link_a: int, body_b: int, link_b: int) -> list[tuple]:
        """Bullet's manifold points of a link pair within the tolerance, as PyBullet returns them."""
        points = p.getContactPoints(body_a, body_b, link_a, link_b, physicsClientId=self.client)
        return [point for point in points if self.within_tolerance(point)]

    def within_tolerance(self, point: tuple) -> bool:
        """Whether a PyBullet contact point is a manifold point of the evaluation (distance within the tolerance)."""
        return float(point[8]) <= self.tolerance

    def merge_distance(self, link_a: tuple[int, int], link_b: tuple[int, int]) -> float:
        """Points of one link pair closer than this are one point [m]: the contact tolerance
        (gaps cannot tell them apart), at most :data:`~.reduction.MERGE_FRACTION` of the
        smallest box or sphere extent of the two links."""
        key = (link_a, link_b, self.tolerance)
        if key not in self._merge_distances:
            extents = [
                float(shape.dimensions[0] if shape.geometry == p.GEOM_SPHERE else np.min(shape.dimensions))
                for link in (link_a, link_b)
                for shape in self._link_shapes(*link)
                if shape.geometry in (p.GEOM_BOX, p.GEOM_SPHERE)
            ]
            self._merge_distances[key] = min([self.tolerance, *(MERGE_FRACTION * extent for extent in extents)])
        return self._merge_distances[key]

    def _reduce(self, candidates: list[Contact], manifold: list[tuple]) -> list[Contact]:
        """One link pair's candidates, then its Bullet manifold points (as PyBullet returned
        them: a :class:`Contact` is built only for those kept), reduced (:meth:`_reduced`)."""
        if len(candidates) + len(manifold) <= 1:
            return candidates + [self._from_bullet(point) for point in manifold]
        points = [c.position_a.tolist() for c in candidates] + [list(point[5]) for point in manifold]  # position_a's floats
        normals = [c.normal for c in candidates] + [point[7] for point in manifold]
        pair = candidates[0].pair if candidates else ((manifold[0][1], manifold[0][3]), (manifold[0][2], manifold[0][4]))
        return [
            candidates[i] if i < len(candidates) else self._from_bullet(manifold[i - len(candidates)])
            for i in self._reduced(pair, points, normals)
        ]

    def _reduced(self, pair: Pair, positions: list[list[float]], normals: list) -> list[int]:
        """Indices of the points of one link pair (their ``position_a`` and normals) that are kept:
        without near-duplicates and, for a face contact, only its contact polygon's vertices
        (:mod:`.reduction`)."""
        if len(positions) <= 1:
            return list(range(len(positions)))
        kept = merge_indices(positions, self.merge_distance(*pair))
        if len(kept) <= 3:
            return kept
        polygon = polygon_indices(np.array([positions[i] for i in kept]), np.array([normals[i] for i in kept]))
        return [kept[i] for i in polygon]

    @_one_configuration
    def feature_gaps(self, features: list[Feature], distance: float) -> dict[Feature, float]:
        """Current gaps of the given features (``inf`` beyond ``distance`` for pair features).

        A pair's gap is the smaller of Bullet's closest-point distance and its box corners'
        gaps (sharp, as Bullet's manifold measures them; ``getClosestPoints`` rounds boxes).
        """
        gaps: dict[Feature, float] = {}
        groups: dict[tuple[int, int, int, int], list[Feature]] = {}
        for feature in features:
            if feature[0] == "vertex":
                groups.setdefault((feature[1], feature[2], feature[4], feature[5]), []).append(feature)
        for (body_v, link_v, body_s, link_s), members in groups.items():
            indices = np.array([feature[3] for feature in members])
            values = self._vertex_gaps(body_v, link_v, body_s, link_s, indices, with_normals=False)[1]
            # one row per member and shape of s, shape-major (see _vertex_gaps): the smallest over the shapes
            if len(values) > len(members):
                values = values.reshape(-1, len(members)).min(axis=0)
            gaps.update(zip(members, values.tolist(), strict=True))
        for feature in features:
            if feature[0] == "point":
                gaps[feature] = self._point_gap(feature, distance)
            if feature[0] != "pair":
                continue
            (body_a, link_a), (body_b, link_b) = feature[1]
            points = p.getClosestPoints(body_a, body_b, distance, link_a, link_b, physicsClientId=self.client)
            closest = min((point[8] for point in points), default=np.inf)
            # corners farther than Bullet's closest point cannot be the minimum: skip links beyond it
            near = max(closest, 0.0) if points else None
            gaps[feature] = min(
                closest,
                _smallest(self._vertex_gaps(body_a, link_a, body_b, link_b, near=near, with_normals=False)[1]),
                _smallest(self._vertex_gaps(body_b, link_b, body_a, link_a, near=near, with_normals=False)[1]),
            )
        return gaps

    def corner_gaps(self, pair: Pair, near: float | None = None) -> dict[Feature, float]:
        """Gap of every box corner of either link of ``pair`` to the other link (the smallest
        over the other link's shapes), keyed by vertex feature; with ``near``, a link's corners
        are left out when all of them are provably farther than ``near`` (:meth:`_all_far`)."""
        gaps: dict[Feature, float] = {}
        for (body_v, link_v), (body_s, link_s) in (pair, pair[::-1]):
            _, values, _, indices, _ = self._vertex_gaps(body_v, link_v, body_s, link_s, near=near, with_normals=False)
            for index, gap in zip(indices.tolist(), values.tolist(), strict=True):
                feature = ("vertex", body_v, link_v, index, body_s, link_s)
                gaps[feature] = min(gaps.get(feature, np.inf), gap)
        return gaps

    def nearest_feature(self, link_a: tuple[int, int], link_b: tuple[int, int], point_a: np.ndarray, point_b: np.ndarray) -> Feature:
        """The feature of a Bullet contact point: the box corner of either link nearest to it
        (within 1 cm), else the link pair's closest-point feature."""
        best: tuple[float, Feature] = (1e-2, ("pair", pair_key((link_a, link_b))))
        for (body_v, link_v), (body_s, link_s), point in ((link_a, link_b, point_a), (link_b, link_a, point_b)):
            vertices, _, _, indices, _ = self._vertex_gaps(body_v, link_v, body_s, link_s, with_normals=False)
            if len(vertices):
                distances = np.linalg.norm(vertices - point, axis=1)
                nearest = int(np.argmin(distances))
                if distances[nearest] < best[0]:
                    best = (float(distances[nearest]), ("vertex", body_v, link_v, int(indices[nearest]), body_s, link_s))
        return best[1]

    @_one_configuration
    def touched_points(self, contacts: Sequence[Contact]) -> Touched:
        """Where each link pair of ``contacts`` that can gain a point touches (:data:`Touched`,
        :meth:`gains_points`)."""
        groups: dict[Pair, list[Contact]] = {}
        for contact in contacts:
            groups.setdefault(pair_key(contact.pair), []).append(contact)
        return {
            pair: np.array([self._local(pair[0], contact.position_on(pair[0])) for contact in group])
            for pair, group in groups.items()
            if self.gains_points(pair, group)
        }

    def gains_points(self, pair: Pair, contacts: Sequence[Contact]) -> bool:
        """Whether Bullet's points of a link pair touching through ``contacts`` are followed for
        points it gains: none is a box corner (those are features of their own), and the pair can
        touch at more than one point (:meth:`single_point`)."""
        return all(contact.feature[0] != "vertex" for contact in contacts) and not self.single_point(pair)

    @_one_configuration
    def distinguished(self, contacts: list[Contact], touching: Collection[Feature], touched: Touched) -> list[Contact]:
        """``contacts``, each of Bullet's points that arrived beside a link pair's touching ones given
        a feature of its own.  Bullet's points of a link pair share its pair feature, so a capsule
        resting on one end would never see its other end land.  Such a point of a pair touching
        through Bullet's points (its pair feature in ``touching``, its points ``touched``) is the
        material point ``("point", ...)`` of the pair's first link (:func:`_gained`)."""
        candidates: dict[Pair, list[tuple[int, np.ndarray]]] = {}
        for index, contact in enumerate(contacts):
            pair = pair_key(contact.pair)
            if contact.feature == ("pair", pair) and contact.feature in touching and pair in touched:
                candidates.setdefault(pair, []).append((index, self._local(pair[0], contact.position_on(pair[0]))))
        result = list(contacts)
        for pair, members in candidates.items():
            (body_a, link_a), (body_b, link_b) = pair
            gained = _gained([local for _, local in members], touched[pair], self.separation(pair))
            for (index, local), new in zip(members, gained, strict=True):
                if new:
                    result[index] = replace(contacts[index], feature=("point", body_a, link_a, tuple(local.tolist()), body_b, link_b))
        return result

    @_one_configuration
    def manifold_touch(self, pair: Pair, touched: np.ndarray) -> np.ndarray | None:
        """Where a link pair touching through Bullet's points alone touches now, as :meth:`contacts`
        would find it from Bullet's manifold (as its collision detection left it) and
        :meth:`touched_points` keep it; None when that manifold has no point within the tolerance
        (the pair touches no more, or through a closest point the evaluation would take instead)
        or a point there is gained beside ``touched`` (:meth:`distinguished` would tell it apart)."""
        first = pair[0]
        (body_a, link_a), (body_b, link_b) = self._search_order(pair)
        kept = self._reduce([], self.manifold_points(body_a, link_a, body_b, link_b))
        now = [self._local(first, contact.position_on(first)) for contact in kept]
        return None if not now or any(_gained(now, touched, self.separation(pair))) else np.array(now)

    def single_point(self, pair: Pair) -> bool:
        """Whether the two links of ``pair`` can touch at one point only: one is a single sphere,
        the other a single box, sphere, capsule, cylinder or plane (convex both)."""
        shapes = [self._link_shapes(*link) for link in pair]
        convex = (p.GEOM_BOX, p.GEOM_SPHERE, p.GEOM_CAPSULE, p.GEOM_CYLINDER, p.GEOM_PLANE)
        if any(len(sides) != 1 for sides in shapes):
            return False
        geometries = {shapes[0][0].geometry, shapes[1][0].geometry}
        return p.GEOM_SPHERE in geometries and geometries <= set(convex)

    def separation(self, pair: Pair) -> float:
        """How far apart [m] two of the pair's points must lie to be distinct contacts: the larger
        of :data:`POINT_SEPARATION` and :data:`SEPARATION_FRACTION` of the smaller link's size (the
        diagonal of PyBullet's world box of its shapes, ``getAABB``, when first asked)."""
        if pair not in self._separations:
            sizes = []
            for body, link in pair:
                low, high = p.getAABB(body, link, physicsClientId=self.client)
                sizes.append(math.dist(low, high))
            self._separations[pair] = max(POINT_SEPARATION, SEPARATION_FRACTION * min(sizes))
        return self._separations[pair]

    def _local(self, link: tuple[int, int], point: np.ndarray) -> np.ndarray:
        """A world point in the link's inertial frame."""
        origin, rotation = self._pose(*link)
        return (point - origin) @ rotation

    def _point_gap(self, feature: Feature, reach: float) -> float:
        """Gap of a material point feature to its other link (``inf`` beyond ``reach`` against
        shapes measured with the probe)."""
        body, link, local, body_o, link_o = feature[1:]
        origin, rotation = self._pose(body, link)
        point = (origin + rotation @ np.array(local))[None, :]
        return min(float(gaps[0]) for gaps, _ in self._shape_distances(point, body_o, link_o, False, reach))

    def _from_bullet(self, point: tuple) -> Contact:
        body_a, body_b, link_a, link_b = point[1], point[2], point[3], point[4]
        return Contact(
            body_a,
            link_a,
            body_b,
            link_b,
            np.array(point[5]),
            np.array(point[6]),
            np.array(point[7]),
            float(point[8]),
            self.friction(body_a, link_a, body_b, link_b),
            ("pair", pair_key(((body_a, link_a), (body_b, link_b)))),
        )

    def friction(self, body_a: int, link_a: int, body_b: int, link_b: int) -> float:
        """Bullet's combined friction: ``min(10, mu_a mu_b)`` of the links' lateral frictions."""
        values = []
        for key in ((body_a, link_a), (body_b, link_b)):
            if key not in self._friction:
                self._friction[key] = float(p.getDynamicsInfo(key[0], key[1], physicsClientId=self.client)[1])
            values.append(self._friction[key])
        return min(max(values[0] * values[1], 0.0), MAX_COMBINED_FRICTION)

    # --------------------------------------------------------- completion
    def _link_shapes(self, body: int, link: int) -> list[_Shape]:
        key = (body, link)
        if key not in self._shapes:
            if body in self.opaque:
                self._shapes[key] = [_UNKNOWN_SHAPE]
                return self._shapes[key]
            shapes = []
            for data in p.getCollisionShapeData(body, link, physicsClientId=self.client):
                geometry, dimensions = data[2], np.array(data[3], dtype=float)
                rotation = rotation_matrix(data[6])
                position = np.array(data[5])
                vertices = None
                if geometry == p.GEOM_BOX:
                    vertices = box_corners(dimensions / 2.0) @ rotation.T + position
                shapes.append(_Shape(geometry, dimensions, position, rotation, vertices, dimensions / 2.0))
            self._shapes[key] = shapes
        return self._shapes[key]

    def link_corners(self, body: int, link: int) -> np.ndarray | None:
        """All box corners of a link in its inertial frame, ``(k, 3)`` (the rows of every vertex
        query, in order), or None."""
        return self._link_vertices(body, link)

    def only_shape(self, body: int, link: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
        """``(geometry, world centre, world rotation, dimensions)`` of a link's collision shape at
        its current pose, when it has exactly one; else None."""
        shapes = self._link_shapes(body, link)
        if len(shapes) != 1:
            return None
        centre, rotation = self._placements(body, link)[0]
        return shapes[0].geometry, centre, rotation, shapes[0].dimensions

    @_one_configuration
    def box_gap(self, pair: Pair) -> float | None:
        """Distance between the two links of ``pair`` measured sharp, as Bullet's box-box detector
        and the corner completion see them (:func:`~.box_geometry.box_separation`; 0.0 when they
        touch), when every collision shape of both is a box; else None."""
        sides = []
        for body, link in pair:
            shapes = self._link_shapes(body, link)
            if not shapes or any(shape.geometry != p.GEOM_BOX for shape in shapes):
                return None
            sides.append(
                [(centre, rotation, shape.half) for shape, (centre, rotation) in zip(shapes, self._placements(body, link), strict=True)]
            )
        return min(box_separation(*box_a, *box_b) for box_a in sides[0] for box_b in sides[1])

    def geometries(self, body: int, link: int) -> frozenset[int]:
        """The geometry types (``p.GEOM_*``) of the link's collision shapes."""
        key = (body, link)
        if key not in self._geometries:
            self._geometries[key] = frozenset(shape.geometry for shape in self._link_shapes(body, link))
        return self._geometries[key]

    def _link_vertices(self, body: int, link: int) -> np.ndarray | None:
        """All box corners of a link in its inertial frame, ``(k, 3)``, or None."""
        key = (body, link)
        if key not in self._vertices:
            corners = [shape.vertices for shape in self._link_shapes(body, link) if shape.vertices is not None]
            self._vertices[key] = np.vstack(corners) if corners else None
            if corners:
                self._all_indices[key] = np.arange(sum(len(vertices) for vertices in corners))
                self._all_indices[key].setflags(write=False)
        return self._vertices[key]

    def _frame(self, body: int, link: int) -> _Frame:
        """The link's :class:`_Frame` at its current pose (:func:`~.frames.inertial_frame`'s
        origin and its rotation, computed again only when PyBullet reports other bits)."""
        position, orientation = inertial_frame(self.client, body, link)
        bits = _POSE_BITS.pack(*position, *orientation)
        frame = self._frames.get((body, link))
        if frame is None or frame.bits != bits:
            frame = _Frame(bits, tuple(position), np.array(position), tuple(orientation))
            self._frames[body, link] = frame
        return frame

    def _query_frame(self, body: int, link: int) -> _Frame:
        """The link's :class:`_Frame`, read once per query."""
        if self._poses is None:
            return self._frame(body, link)
        key = (body, link)
        if key not in self._poses:
            self._poses[key] = self._frame(body, link)
        return self._poses[key]

    def _pose(self, body: int, link: int) -> tuple[np.ndarray, np.ndarray]:
        """The link's inertial origin and rotation (:func:`~.frames.inertial_frame`), read once per query."""
        frame = self._query_frame(body, link)
        return frame.origin, frame.rotation

    def _world_corners(self, frame: _Frame, local: np.ndarray) -> np.ndarray:
        """World positions of all of a link's corners ``local`` at ``frame``'s pose, computed once per pose."""
        if frame.corners is None:
            frame.corners = local @ frame.rotation.T + frame.origin
            frame.corners.setflags(write=False)  # shared by the callers
            frame.corner_rows = frame.corners.tolist()
        return frame.corners

    def _placements(self, body: int, link: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """World centre and rotation of each collision shape of the link, computed once per pose."""
        frame = self._query_frame(body, link)
        if frame.placements is None:
            frame.placements = [
                (frame.origin + frame.rotation @ shape.position, frame.rotation @ shape.rotation) for shape in self._link_shapes(body, link)
            ]
        return frame.placements

    def _link_reach(self, body: int, link: int) -> float:
        """Radius [m] of a ball about the link's inertial origin that holds all its shapes
        (``inf`` when a shape is not a box or a sphere)."""
        key = (body, link)
        if key not in self._reach:
            radii = [
                float(np.linalg.norm(shape.position))
                + (float(np.linalg.norm(shape.dimensions)) / 2.0 if shape.geometry == p.GEOM_BOX else float(shape.dimensions[0]))
                if shape.geometry in (p.GEOM_BOX, p.GEOM_SPHERE)
                else np.inf
                for shape in self._link_shapes(body, link)
            ]
            self._reach[key] = max(radii, default=np.inf)
        return self._reach[key]

    def _vertex_rows(
        self, body_v: int, link_v: int, body_s: int, link_s: int, indices: np.ndarray | None = None, near: float | None = None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """World positions of link ``v``'s vertices (all, or those of ``indices``) and their indices;
        None when it has none, or with ``near`` when every vertex is farther than ``near`` from
        link ``s``'s ball (:meth:`_link_reach`), i.e. no gap can be ``<= near``."""
        local = self._link_vertices(body_v, link_v)
        if local is None:
            return None
        if indices is not None:
            origin, rotation = self._pose(body_v, link_v)
            return local[indices] @ rotation.T + origin, indices
        frame = self._query_frame(body_v, link_v)
        vertices = self._world_corners(frame, local)
        if near is not None and self._all_far((body_v, link_v, frame), body_s, link_s, near):
            return None
        return vertices, self._all_indices[(body_v, link_v)]

    def _shape_distances(
        self, vertices: np.ndarray, body_s: int, link_s: int, with_normals: bool, reach: float | None = None
    ) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """:meth:`_vertex_distances` of world ``vertices`` to each collision shape of link ``s``, in order."""
        return [
            self._vertex_distances(vertices, shape, centre, frame, body_s, link_s, with_normals, reach)
            for shape, (centre, frame) in zip(self._link_shapes(body_s, link_s), self._placements(body_s, link_s), strict=True)
        ]

    def _vertex_gaps(
        self,
        body_v: int,
        link_v: int,
        body_s: int,
        link_s: int,
        indices: np.ndarray | None = None,
        near: float | None = None,
        with_normals: bool = True,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, list[int]]:
        """Vertices of link ``v`` (world), their gaps and unit normals to link ``s``.

        Returns ``(vertices, gaps, normals, indices, geometries)``, one row per vertex and
        shape of ``s`` (``geometries`` names the shape of ``s`` each row was measured against).
        ``near``: return no rows when no gap can be ``<= near`` (:meth:`_vertex_rows`).
        ``with_normals=False``: the caller needs the gaps only (``normals`` may then be None).
        """
        rows = self._vertex_rows(body_v, link_v, body_s, link_s, indices, near)
        if rows is None:
            return _NO_ROWS
        vertices, indices = rows
        shapes = self._link_shapes(body_s, link_s)
        measured = self._shape_distances(vertices, body_s, link_s, with_normals)
        geometries = [shape.geometry for shape in shapes for _ in indices]
        if len(shapes) == 1:
            return vertices, measured[0][0], measured[0][1], indices, geometries
        count = len(shapes)
        gaps = np.concatenate([gap for gap, _ in measured]) if measured else np.zeros(0)
        normals = None
        if with_normals:
            normals = np.vstack([normal for _, normal in measured if normal is not None]) if measured else np.zeros((0, 3))
        return np.tile(vertices, (count, 1)), gaps, normals, np.tile(indices, count), geometries

    def _all_far(self, owner: tuple[int, int, _Frame], body: int, link: int, near: float) -> bool:
        """Whether every vertex of link ``owner = (body, link, frame)`` (the frame's world corners,
        :meth:`_world_corners`) is farther than ``near`` from the link: beyond its ball
        (:meth:`_link_reach`) when its shapes are boxes and spheres, else beyond PyBullet's world
        box of its shapes (``getAABB``, which holds them, margins included; read once per pose).
        Against a ball, the ball of the owner's reach (which holds its vertices) answers first
        when it lies inside or beyond it, else each vertex does."""
        body_v, link_v, corners = owner
        assert corners.corners is not None and corners.corner_rows is not None  # computed by _world_corners
        frame = self._query_frame(body, link)
        reach = self._link_reach(body, link) + near
        if math.isfinite(reach):
            apart, spread = math.dist(corners.point, frame.point), self._link_reach(body_v, link_v)
            if apart + spread < reach * (1.0 - 1e-9):  # margins for rounding, here and below
                return False
            if apart - spread > reach * (1.0 + 1e-9):
                return True
            return _all_beyond(corners.corners, corners.corner_rows, frame.origin, reach * reach * (1.0 + 1e-9))
        if frame.aabb is None:
            frame.aabb = p.getAABB(body, link, physicsClientId=self.client)
        (low_x, low_y, low_z), (high_x, high_y, high_z) = frame.aabb
        margin = near * (1.0 + 1e-9) + 1e-12
        return not any(
            low_x - margin <= x <= high_x + margin and low_y - margin <= y <= high_y + margin and low_z - margin <= z <= high_z + margin
            for x, y, z in corners.corner_rows
        )

    def _touching_vertices(self, jobs: Sequence[VertexJob]) -> list[_Touching | None]:
        """For each job ``(body_v, link_v, body_s, link_s, flip)``, the vertices of link ``v`` in
        contact with link ``s`` (``flip``: ``s`` is link A), or None when none is.

        The jobs against one link ``s`` are measured together: one :meth:`_vertex_distances` per
        shape of ``s`` over all their vertices, since NumPy's cost per call, not per row, is what
        an evaluation of a few link pairs pays.  The arithmetic is row by row, so each row is the
        one measured alone up to how BLAS rounds a product's rows (to the bit for a box's 8
        corners and more on the machines measured, docs/performance.md).  A vertex exactly on an
        edge or corner of the other box has no normal: it is skipped (the other link's vertices
        and Bullet's manifold hold that contact)."""
        found: list[_Touching | None] = [None] * len(jobs)
        groups: dict[tuple[int, int], list[tuple[int, np.ndarray, np.ndarray]]] = {}
        for number, (body_v, link_v, body_s, link_s, _) in enumerate(jobs):
            rows = self._vertex_rows(body_v, link_v, body_s, link_s, near=self.tolerance)
            if rows is not None:
                groups.setdefault((body_s, link_s), []).append((number, *rows))
        for (body_s, link_s), members in groups.items():
            stacked = members[0][1] if len(members) == 1 else np.concatenate([vertices for _, vertices, _ in members])
            bounds = list(accumulate((len(vertices) for _, vertices, _ in members), initial=0))
            parts: list[list[tuple]] = [[] for _ in members]
            for shape, (gaps, normals) in zip(
                self._link_shapes(body_s, link_s), self._shape_distances(stacked, body_s, link_s, True), strict=True
            ):
                assert normals is not None  # asked for
                hits = np.flatnonzero((gaps <= self.tolerance) & (np.einsum("ij,ij->i", normals, normals) > 0.25))
                if not len(hits):
                    continue
                picked, directions, picked_gaps = stacked[hits], normals[hits], gaps[hits]
                on_shapes = picked - picked_gaps[:, None] * directions
                cuts = np.searchsorted(hits, bounds).tolist()
                for part, (_, _, indices), start, low, high in zip(parts, members, bounds, cuts, cuts[1:], strict=False):
                    if low < high:
                        window = slice(low, high)
                        part.append(
                            (
                                indices[hits[window] - start],
                                picked[window],
                                picked_gaps[window],
                                directions[window],
                                on_shapes[window],
                                shape.geometry,
                            )
                        )
            for (number, _, _), part in zip(members, parts, strict=True):
                if part:
                    found[number] = _Touching.of(part, flip=jobs[number][4])
        return found

    def _vertex_contacts(self, job: VertexJob, touching: _Touching | None) -> list[Contact]:
        """The contacts of a job's vertices found touching (:meth:`_touching_vertices`)."""
        if touching is None:
            return []
        body_v, link_v, body_s, link_s, flip = job
        mu = self.friction(body_v, link_v, body_s, link_s)
        found = []
        for geometry, index, gap, vertex, normal, on_shape in zip(
            touching.geometries,
            touching.indices.tolist(),
            touching.gaps.tolist(),
            touching.vertices,
            touching.normals,
            touching.on_shapes,
            strict=True,
        ):
            if geometry == p.GEOM_PLANE and (body_v, link_v, body_s, link_s) not in self._warned:
                self._warn_plane(body_v, link_v, body_s, link_s)
            feature = ("vertex", body_v, link_v, index, body_s, link_s)
            if flip:
                found.append(Contact(body_s, link_s, body_v, link_v, on_shape, vertex, normal, gap, mu, feature))
            else:
                found.append(Contact(body_v, link_v, body_s, link_s, vertex, on_shape, normal, gap, mu, feature))
        return found

    def _warn_plane(self, body_v: int, link_v: int, body_s: int, link_s: int) -> None:
        self._warned.add((body_v, link_v, body_s, link_s))
        warn(
            f"body {body_v} link {link_v} touches a GEOM_PLANE (body {body_s}): Bullet reports one point per step "
            "for such pairs, so bullet-setimpact completes the contact set from the vertices",
            ManifoldCompletionWarning,
        )

    def _vertex_distances(
        self,
        vertices: np.ndarray,
        shape: _Shape,
        centre: np.ndarray,
        frame: np.ndarray,
        body: int,
        link: int,
        with_normals: bool = True,
        reach: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Signed distances from world ``vertices`` to a shape, and unit normals from the shape to
        them (None for a box when not ``with_normals``); a shape measured with the probe answers
        ``inf`` beyond ``reach`` (default: the tolerance)."""
        local = (vertices - centre) @ frame
        if shape.geometry == p.GEOM_PLANE:
            normal = shape.dimensions / np.linalg.norm(shape.dimensions)
            return local @ normal, np.tile(frame @ normal, (len(vertices), 1))
        if shape.geometry == p.GEOM_SPHERE:
            radius = shape.dimensions[0]
            distance = np.linalg.norm(local, axis=1)
            return distance - radius, (local / np.maximum(distance, 1e-12)[:, None]) @ frame.T
        if shape.geometry == p.GEOM_BOX:
            return box_distance(local, shape.half, frame, with_normals)
        gaps, normals = [], []
        for vertex in vertices:
            points = p.getClosestPoints(
                bodyA=-1,
                bodyB=body,
                distance=(self.tolerance if reach is None else reach) + PROBE_RADIUS,
                linkIndexB=link,
                collisionShapeA=self.probe,
                collisionShapePositionA=vertex.tolist(),
                physicsClientId=self.client,
            )
            if points:
                best = min(points, key=lambda point: point[8])
                gaps.append(best[8] + PROBE_RADIUS)
                normals.append(-np.array(best[7]))  # Bullet's normal points from the shape (B) to the probe (A)
            else:
                gaps.append(np.inf)
                normals.append(np.zeros(3))
        return np.array(gaps), np.array(normals).reshape(-1, 3)


#: Up to this many points :func:`_all_beyond` runs on Python floats (numpy's per-call cost dominates).
FEW_POINTS = 16


def _all_beyond(points: np.ndarray, rows: list[list[float]], centre: np.ndarray, squared: float) -> bool:
    """Whether every point's squared distance to ``centre`` exceeds ``squared`` (a pruning test:
    the caller's margin covers the rounding of either way of summing the squares); ``rows``:
    ``points.tolist()``."""
    if len(points) > FEW_POINTS:
        offsets = points - centre
        return bool(np.einsum("ij,ij->i", offsets, offsets).min() > squared)
    cx, cy, cz = centre.tolist()
    return all((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz) > squared for x, y, z in rows)


def _gained(points: Sequence[np.ndarray], before: np.ndarray, separation: float) -> list[bool]:
    """Which of a link pair's ``points`` (on its first link, in its frame) arrived beside the
    points where it touched, ``before``: those farther than ``separation`` from every one of
    them, while another lies within it of one.  All of them far means the pair rolled or slid on
    (its points move on together), and none of them is new."""
    apart = [bool(np.min(np.linalg.norm(before - point, axis=1)) > separation) for point in points]
    return apart if any(apart) and not all(apart) else [False] * len(points)


def _smallest(values: np.ndarray) -> float:
    """``values.min(initial=inf)`` as a float, without a reduction over no rows."""
    return float(values.min()) if values.size else np.inf
