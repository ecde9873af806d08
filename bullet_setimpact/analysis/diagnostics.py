"""When is a simultaneous impact's outcome independent of the impact order?

Seghete & Murphey measure how strongly two contacts interact by the kinetic-metric angle
between their normals, ``c_ij = <u_i, u_j>_g / (|u_i|_g |u_j|_g)`` (their eq. 31 for
billiards), and prove the propagative outcome order-independent for pairwise orthogonal
normals (Theorem 2) and for two contacts with ``c = -1/2`` (Theorem 3).  Their indeterminacy
measure ``xi`` (Sec. VII-A) is the kinetic-metric distance between outcomes of different
orders, relative to ``|p_0|_g``; :func:`outcome_spread` extends it to every law.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.problem import COLLISION_TOL, ImpactProblem
from ..laws.base import ImpactLaw
from ..validation import positive_int

#: Tolerance on ``c_ij`` for the orthogonality and ``c = -1/2`` tests.
COUPLING_TOL = 1e-9
#: Array elements of outcome differences formed at once in :func:`outcome_spread` (bounds memory).
_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class OrderIndependence:
    """Result of :func:`order_independent`: ``independent`` and the ``reason`` (truthy like the bool)."""

    independent: bool
    reason: str

    def __bool__(self) -> bool:
        return self.independent


def normal_coupling(problem: ImpactProblem) -> np.ndarray:
    """``c_ij = G_ij / sqrt(G_ii G_jj)`` with ``G = Jn M^-1 Jn^T``, shape (m, m).

    The cosine of the kinetic-metric angle between contact normals ``i`` and ``j``
    (Seghete & Murphey eq. 31: ``cos(theta) / 2`` for equal billiard balls).
    """
    m = problem.contacts
    G = problem.delassus[:m, :m]
    scale = np.sqrt(np.diag(G))
    if np.any(scale == 0.0):
        raise ValueError(f"problem has contacts with a zero normal row: {np.flatnonzero(scale == 0.0).tolist()}")
    return G / np.outer(scale, scale)


def order_independent(problem: ImpactProblem, v_minus: np.ndarray) -> OrderIndependence:
    """Whether the propagative (elastic) outcome provably does not depend on the impact order.

    True when no contact collides, for a single contact, when one contact collides among
    two (every reflection is forced), when all normals are pairwise orthogonal (Seghete & Murphey Theorem 2),
    or for two colliding contacts with ``c_12 = -1/2`` (Theorem 3).  Otherwise False with
    reason ``"not guaranteed"`` (the outcome may still happen not to depend on the order).
    """
    v = problem.validate_velocity(v_minus)
    colliding = int(np.sum(problem.normal_velocities(v) < -COLLISION_TOL))
    m = problem.contacts
    if colliding == 0:
        return OrderIndependence(True, "no contact collides: v+ = v-")
    if m == 1:
        return OrderIndependence(True, "a single contact")
    c = normal_coupling(problem)
    off_diagonal = c[~np.eye(m, dtype=bool)]
    if np.all(np.abs(off_diagonal) <= COUPLING_TOL):
        return OrderIndependence(True, "pairwise orthogonal normals (Seghete-Murphey Theorem 2)")
    if m == 2 and colliding == 1:
        return OrderIndependence(True, "two contacts, one colliding: each reflection is forced")
    if m == 2 and abs(c[0, 1] + 0.5) <= COUPLING_TOL:
        return OrderIndependence(True, "two contacts with c = -1/2 (Seghete-Murphey Theorem 3)")
    return OrderIndependence(False, "not guaranteed")


def outcome_spread(law: ImpactLaw, problem: ImpactProblem, v_minus: np.ndarray, samples: int) -> float:
    """Largest kinetic-metric distance between outcomes, relative to ``|v_minus|_M``.

    ``max_ab sqrt((v_a - v_b)^T M (v_a - v_b)) / sqrt(v_minus^T M v_minus)``.  The outcomes are:

    the law's :meth:`~bullet_setimpact.laws.base.ImpactLaw.spread_outcomes` (by default
    ``resolve`` with seeds ``0..samples-1``; every order for the propagative and sequential
    laws, the sampled set for Routh's).

    Outcomes with ``terminated=False`` are left out (e.g. :class:`PlasticImpact` when the
    mode is not unique); if none is left the spread is ``nan``.
    """
    v = problem.validate_velocity(v_minus)
    samples = positive_int("samples", samples)
    norm = math.sqrt(2.0 * float(problem.kinetic_energy(v)))
    if norm == 0.0:
        raise ValueError("v_minus must be nonzero (the spread is relative to |v_minus|_M)")
    outcomes = law.spread_outcomes(problem, v, samples)
    if len(outcomes) == 0:
        return float("nan")
    return _diameter(outcomes, problem.M) / norm


def _diameter(points: np.ndarray, M: np.ndarray) -> float:
    """``max_ab |a - b|_M`` over the rows, from differences (no cancellation), in chunks."""
    rows = max(1, _CHUNK_ELEMENTS // points.size)
    largest = 0.0
    for start in range(0, len(points), rows):
        difference = points[start : start + rows, None, :] - points[None, :, :]
        largest = max(largest, float(np.einsum("abi,ij,abj->ab", difference, M, difference, optimize=True).max()))
    return math.sqrt(largest)
