"""Linear complementarity problems: Lemke's algorithm.

The problem ``LCP(W, w)`` asks for ``z`` with::

    z >= 0,   y = W z + w >= 0,   z^T y = 0.

This module knows nothing about mechanics.  Its solvers share one notion of a
*complementary basis*: a boolean mask ``basis`` where ``basis[i]`` says that ``z_i``
(rather than ``y_i``) is the basic variable of pair ``i``.  Its basis matrix has
column ``i`` equal to ``-W[:, i]`` if ``basis[i]`` else ``e_i``, and the basic values
are ``x = B^{-1} w``; the basis is feasible for ``w`` iff ``x >= 0``.

- :func:`lemke` pivots from the artificial basis with a (possibly random) covering
  vector and a lexicographic ratio test, so degenerate ``w`` (zeros in ``w`` are
  the rule in impact LCPs) cannot make it cycle.
- :func:`~bullet_setimpact.core.lcp_solve.solve_lcp` (the laws' one entry point) chains Lemke with
  the complete method of :mod:`bullet_setimpact.core.lcp_milp`.

The randomized branch samplers of the Routh law, built on :func:`lemke`, live in
:mod:`bullet_setimpact.core.branch_sampling`.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .._threads import one_blas_thread
from ..errors import LemkeError

#: Relative tolerance of the final residual check (feasibility and accuracy).
RESIDUAL_TOL = 1e-9
#: A solution from Lemke's tableau less accurate than this is refined by refactorizing its basis.
REFINE_TOL = 1e-13
#: Column entries below this fraction of the column's largest are not pivot candidates.
PIVOT_TOL = 1e-9
#: Ratios closer than this (relative to the largest) count as ties in the lexicographic ratio test.
TIE_TOL = 1e-11
#: Slack of Harris's ratio test, relative to the largest basic value.
PRIMAL_TOL = 1e-9
#: The ratio-test slacks :func:`lemke` tries in turn: Harris's, then the textbook test.  The
#: slack keeps round-off from choosing among degenerate ties, but where ``w`` mixes scales
#: (caps of 1 N s beside velocities of 1e-7 m/s) it can let a small basic value go negative.
RATIO_TEST_SLACKS = (PRIMAL_TOL, 0.0)


@dataclass(frozen=True)
class LCPSolution:
    """A solution of ``LCP(W, w)``.

    Attributes
    ----------
    z : ndarray, shape (n,)
        The solution, ``z >= 0``.
    y : ndarray, shape (n,)
        ``W z + w >= 0``, complementary to ``z``.
    basis : ndarray of bool, shape (n,)
        ``basis[i]`` is True where ``z_i`` is basic in the final complementary basis.
    basis_inverse : ndarray, shape (n, n), or None
        Inverse of the final basis matrix (Lemke's final tableau, never singular); None
        for a solution of the complete method on a singular basis (redundant rows).
    pivots : int
        Number of pivots Lemke needed (0 when ``w >= 0`` or from the complete method).
    residual : float
        Relative residual of the returned solution (see :func:`lcp_residual`).
    method : str
        The stage of :func:`~bullet_setimpact.core.lcp_solve.solve_lcp` that found it (``lcp_solve.METHODS``).
    """

    z: np.ndarray
    y: np.ndarray
    basis: np.ndarray
    basis_inverse: np.ndarray | None
    pivots: int
    residual: float
    method: str = "lemke"

    @property
    def fallback(self) -> bool:
        """True when the fast path (Lemke from the requested start) failed and a later stage solved it."""
        return self.method != "lemke"


def lcp_residual(W: np.ndarray, w: np.ndarray, z: np.ndarray) -> float:
    """Relative violation of ``z >= 0``, ``Wz + w >= 0`` and ``z^T (Wz + w) = 0``.

    Scale-invariant (the same for ``LCP(a W, b w)`` and ``b z / a``): a negative ``z`` is
    divided by ``||z||_inf``, a negative ``y`` by ``||w||_inf + ||W||_inf ||z||_inf``, and the
    complementarity gap by the product of the two.  A ``z`` with a NaN or infinite entry has
    residual ``inf`` (it fails every check instead of comparing as 0), without a warning.
    """
    if not z.size:
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):  # a non-finite z: _residual returns inf
        y = W @ z + w
    return _residual(W, w, z, y)


def _residual(W: np.ndarray, w: np.ndarray, z: np.ndarray, y: np.ndarray) -> float:
    """:func:`lcp_residual` of a non-empty ``z`` given its ``y = W z + w``."""
    scale_z = float(np.abs(z).max())
    if not math.isfinite(scale_z):
        return math.inf
    scale_y = float(np.abs(w).max()) + float(np.abs(W).max()) * scale_z
    if scale_y == 0.0:  # w = 0 and z = 0: the trivial solution
        return 0.0
    negative_z = max(0.0, -float(z.min())) / scale_z if scale_z > 0.0 else 0.0
    negative_y = max(0.0, -float(y.min())) / scale_y
    gap = float(np.abs(z * y).max()) / (scale_z * scale_y) if scale_z > 0.0 else 0.0
    return max(negative_z, negative_y, gap)


def basis_matrix(W: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Basis matrix of a complementary basis: column i is ``-W[:, i]`` or ``e_i``."""
    n = W.shape[0]
    B = np.eye(n)
    B[:, basis] = -W[:, basis]
    return B


def invert_basis(W: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """``B^-1`` of :func:`basis_matrix` (``LinAlgError`` when singular).

    Above :data:`SPARSE_PIVOT_SIZE` from its principal block: with ``Z`` the basic ``z`` and
    ``N`` the others, ``B x = b`` reads ``-W_ZZ x_Z = b_Z`` and ``x_N = b_N + W_NZ x_Z``, so
    ``B^-1`` has ``-W_ZZ^-1`` and ``-W_NZ W_ZZ^-1`` in its ``Z`` columns and ``I_N`` in the
    others: O(p^3 + n p^2) for ``p`` basic ``z`` instead of O(n^3).
    """
    n = W.shape[0]
    if n <= SPARSE_PIVOT_SIZE:
        return np.linalg.inv(basis_matrix(W, basis))
    basic, other = basis.nonzero()[0], (~basis).nonzero()[0]
    inverse = np.zeros((n, n))
    principal = -np.linalg.inv(W[np.ix_(basic, basic)])
    inverse[np.ix_(basic, basic)] = principal
    inverse[np.ix_(other, basic)] = W[np.ix_(other, basic)] @ principal
    inverse[other, other] = 1.0
    return inverse


#: ``ndarray.max`` / ``ndarray.min`` without their Python-level wrapper (the same reduction),
#: for the per-pivot work of Lemke's path.
_largest = np.maximum.reduce
_smallest = np.minimum.reduce


def _lexicographic_min_row(tableau: np.ndarray, candidates: np.ndarray, column: np.ndarray) -> int:
    """Among rows tied on the ratio ``x_i / column_i``, the lexicographic minimum of ``B^-1_i / column_i``.

    The rows of ``B^-1`` are linearly independent, so this order is strict and the
    lexicographic rule can never revisit a basis (no cycling under degeneracy).  Entries
    are compared with a relative tolerance: round-off must not break exact ties.
    """
    for j in range(1, tableau.shape[1]):
        ratios = tableau[candidates, j] / column[candidates]
        best = _smallest(ratios)
        candidates = candidates[ratios <= best + TIE_TOL * _largest(np.abs(ratios))]
        if candidates.size == 1:
            break
    return int(candidates[0])


def _leaving_row(tableau: np.ndarray, column: np.ndarray, basic: np.ndarray, primal_tol: float, pivot_tol: float = PIVOT_TOL) -> int | None:
    """Leaving row of the minimum-ratio test for the entering ``column``; None if no row is a candidate.

    The candidates are the rows where ``column`` exceeds ``pivot_tol`` times its largest
    magnitude (``pivot_tol = 0`` for the first pivot, whose positive covering vector makes every
    row one); None means a secondary ray.  Harris's two-pass test: rows whose ratio is within
    ``primal_tol`` (relative to the largest basic value) of the minimum count as tied (round-off
    in a degenerate tableau must not pick the winner); ``primal_tol = 0`` is the textbook test.
    Among ties the artificial variable leaves if it can (the path ends at once), else the
    lexicographic rule decides.  Up to :data:`SCALAR_TEST_SIZE` rows the test runs on Python
    scalars of the tableau's type (the same IEEE operations as numpy's, without its per-call cost).
    """
    if column.shape[0] > SCALAR_TEST_SIZE:
        x = tableau[:, 0]
        rows = (column > pivot_tol * _largest(np.abs(column))).nonzero()[0]
        if not rows.size:
            return None
        values, entries = x[rows], column[rows]
        slack = primal_tol * _largest(np.abs(x))
        tied = rows[values / entries <= _smallest((values + slack) / entries)].tolist()
    else:
        entries, values = column.tolist(), tableau[:, 0].tolist()
        threshold = pivot_tol * max(map(abs, entries))
        candidates = [i for i, entry in enumerate(entries) if entry > threshold]
        if not candidates:
            return None
        slack = primal_tol * max(map(abs, values))
        bound = min([(values[i] + slack) / entries[i] for i in candidates])
        tied = [i for i in candidates if values[i] / entries[i] <= bound]
    if len(tied) == 1:
        return int(tied[0])
    artificial = 2 * basic.shape[0]
    for i in tied:
        if basic[i] == artificial:
            return int(i)
    return _lexicographic_min_row(tableau, np.array(tied), column)


#: Above this size Lemke's pivots exploit the sparsity of ``B^-1`` and its paths run on one BLAS
#: thread (:func:`_pivot`, :func:`_tableau_column`); below, the dense update is faster.
SPARSE_PIVOT_SIZE = 128
#: Above :data:`SPARSE_PIVOT_SIZE`, a column of ``W`` with more than this share of nonzeros is
#: multiplied by all of ``B^-1`` rather than by the gathered columns of its nonzeros
#: (:func:`_tableau_column`). The two cost the same near 30% nonzeros at n = 300-1200, on one BLAS thread.
GATHER_SHARE = 0.3
#: Up to this size Lemke's ratio test runs on Python floats, above it on numpy arrays.
#: Both perform the same IEEE operations, so the pivots are bit-identical.
#: Below this size numpy's per-call cost outweighs its speed; the two break even near 64
#: (docs/performance.md).  It covers the spatial step LCPs of up to five contacts (11 m rows).
SCALAR_TEST_SIZE = 64
#: Attempts (each with a fresh random covering vector) before a randomized solve gives up.
LEMKE_ATTEMPTS = 3
#: A basis matrix with a larger condition number is rejected as singular to working precision.
MAX_CONDITION = 1e13


def random_covering(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random positive covering vector for :func:`lemke` (entries in [0.05, 1))."""
    return rng.uniform(0.05, 1.0, size=n)


def default_coverings(n: int) -> list[np.ndarray]:
    """All ones, then ``LEMKE_ATTEMPTS - 1`` fixed pseudo-random vectors: deterministic."""
    generator = np.random.default_rng(0)
    return [np.ones(n)] + [random_covering(generator, n) for _ in range(LEMKE_ATTEMPTS - 1)]


def safe_inverse(B: np.ndarray) -> np.ndarray | None:
    """``B^-1``, or None when ``B`` is singular or its condition number exceeds :data:`MAX_CONDITION`.

    The condition number is LAPACK's 1-norm estimate (``gecon``) from the LU factors that
    also give the inverse: O(n^2) beyond the factorization, where an SVD costs some 10 n^3.
    The estimate is a lower bound on the 1-norm condition number, rarely off by more than
    3x, which lies within a factor ``n`` of the 2-norm one.
    """
    if not np.all(np.isfinite(B)):
        return None
    lu, pivots, info = scipy.linalg.lapack.dgetrf(B)
    if info != 0:  # an exactly zero pivot
        return None
    rcond, info = scipy.linalg.lapack.dgecon(lu, np.linalg.norm(B, 1), norm="1")
    if info != 0 or not rcond * MAX_CONDITION >= 1.0:
        return None
    inverse, info = scipy.linalg.lapack.dgetri(lu, pivots)
    return inverse if info == 0 else None


#: Sweeps of :func:`equilibration`.
EQUILIBRATION_SWEEPS = 10


def equilibration(W: np.ndarray) -> np.ndarray:
    """Positive ``d`` such that ``diag(d) W diag(d)`` has rows and columns of largest magnitude near 1
    (Ruiz's symmetric scaling, :data:`EQUILIBRATION_SWEEPS` sweeps; a zero row and column keeps 1).

    ``LCP(D W D, D w)`` with ``D = diag(d)`` is the same problem: its ``z'`` and ``y'`` are
    ``z / d`` and ``d y``, so signs, complementarity and the complementary bases are kept.  A
    step LCP mixing mass ratios of 1e8 with friction coefficients of 1e5 spans many decades in
    ``W``; scaled, Lemke's pivots and ratio tests see entries of one size."""
    d = np.ones(W.shape[0])
    magnitude = np.abs(W)
    for _ in range(EQUILIBRATION_SWEEPS):
        scaled = d[:, None] * magnitude * d[None, :]
        largest = np.maximum(scaled.max(axis=1), scaled.max(axis=0))
        d /= np.sqrt(np.where(largest > 0.0, largest, 1.0))
    return d


def lemke_equilibrated(
    W: np.ndarray, w: np.ndarray, covering: np.ndarray | None, max_pivots: int | None, tol: float, d: np.ndarray | None = None
) -> LCPSolution:
    """:func:`lemke` on the equilibrated ``LCP(D W D, D w)``, its basis checked on ``LCP(W, w)``;
    ``d`` is :func:`equilibration` of ``W`` (computed if not given: pass it to try several coverings).

    Pair ``i``'s basic value is ``z_i = d_i z'_i`` or ``y_i = y'_i / d_i``, so the original basis
    inverse is ``diag(r) B'^-1 D`` with ``r_i = d_i`` where ``z_i`` is basic, else ``1 / d_i``;
    the solution is computed, refined and residual-checked on the original problem
    (:class:`LemkeError` above ``tol``), whatever the scaled residual was."""
    d = equilibration(W) if d is None else d
    scaled = lemke(d[:, None] * W * d[None, :], d * w, covering=covering, max_pivots=max_pivots, tol=math.inf)
    assert scaled.basis_inverse is not None  # Lemke's solutions always carry their basis inverse
    inverse = np.where(scaled.basis, d, 1.0 / d)[:, None] * scaled.basis_inverse * d[None, :]
    return _checked_solution(W, w, scaled.basis, inverse, scaled.pivots, tol)


def check_lcp(W: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``W`` and ``w`` as float arrays of matching shapes, finite; ValueError otherwise."""
    W = np.asarray(W, dtype=float)
    w = np.asarray(w, dtype=float)
    n = w.shape[0] if w.ndim == 1 else -1
    if w.ndim != 1 or W.shape != (n, n):
        raise ValueError(f"W must have shape ({n}, {n}) to match w, got {W.shape}")
    if not (np.isfinite(W).all() and np.isfinite(w).all()):
        raise ValueError("W and w must be finite (no NaN or inf)")
    return W, w


def lemke(
    W: np.ndarray,
    w: np.ndarray,
    covering: np.ndarray | None = None,
    max_pivots: int | None = None,
    tol: float = RESIDUAL_TOL,
    dtype: type = np.float64,
) -> LCPSolution:
    """Solve ``LCP(W, w)`` with Lemke's complementary pivoting (Cottle, Pang & Stone, Sec. 4.4).

    The path is followed with Harris's ratio test and, if that fails, again with the
    textbook one (:data:`RATIO_TEST_SLACKS`); every tolerance is relative, so the result
    does not depend on the units of ``W`` and ``w``.  This is the fast path of
    :func:`solve_lcp`, which the laws call.

    Parameters
    ----------
    W : array_like, shape (n, n)
    w : array_like, shape (n,)
    covering : array_like, shape (n,), optional
        Positive covering vector ``d`` of the artificial variable.  Different covering
        vectors follow different pivot paths and may end in different solutions when the
        LCP has several.  Default: :func:`default_coverings`, tried in turn.
    max_pivots : int, optional
        Pivot cap (default ``10 n + 100``).
    tol : float
        Relative residual the final solution must meet.
    dtype : numpy floating type
        Arithmetic of the tableau (``np.longdouble`` for extended precision); the
        solution is returned and checked in float64.

    Returns
    -------
    LCPSolution

    Raises
    ------
    LemkeError
        On ray termination (the LCP may have no solution), on reaching the pivot
        cap, or when the final residual exceeds ``tol``.
    """
    W, w = check_lcp(W, w)
    return lemke_prechecked(W, w, None if covering is None else check_covering(covering, w.shape[0]), max_pivots, tol, dtype)


def check_covering(covering: np.ndarray, n: int) -> np.ndarray:
    """``covering`` as a float vector of shape ``(n,)``, positive and finite; ValueError otherwise
    (naming the shape, or the first bad entry)."""
    checked = np.asarray(covering, dtype=float)
    if checked.shape != (n,):
        raise ValueError(f"covering must have shape ({n},) to match w, got {checked.shape}")
    bad = np.flatnonzero(~((checked > 0.0) & (checked < np.inf)))
    if bad.size:
        raise ValueError(f"covering must be positive and finite, got covering[{bad[0]}] = {float(checked[bad[0]])!r}")
    return checked


def lemke_prechecked(
    W: np.ndarray, w: np.ndarray, covering: np.ndarray | None, max_pivots: int | None, tol: float, dtype: type = np.float64
) -> LCPSolution:
    """:func:`lemke` on inputs already checked by :func:`check_lcp` and :func:`check_covering` (or a
    covering drawn by :func:`random_covering`): the entry of callers that check once and solve many
    times (:func:`~bullet_setimpact.core.lcp_solve.solve_lcp`'s stages)."""
    n = w.shape[0]
    if (w >= 0.0).all():
        basis = np.zeros(n, dtype=bool)
        return LCPSolution(np.zeros(n), w.copy(), basis, np.eye(n), 0, 0.0)
    coverings = default_coverings(n) if covering is None else [covering]
    max_pivots = 10 * n + 100 if max_pivots is None else max_pivots
    with one_blas_thread() if n > SPARSE_PIVOT_SIZE else contextlib.nullcontext():  # see _tableau_column
        return _lemke_paths(W, w, coverings, max_pivots, tol, dtype)


def _lemke_paths(W: np.ndarray, w: np.ndarray, coverings: list[np.ndarray], max_pivots: int, tol: float, dtype: type) -> LCPSolution:
    """:func:`lemke`'s paths: each covering vector with each ratio test in turn, until one ends in a solution."""
    n = w.shape[0]
    failures: dict[str, int] = {}
    Wt: np.ndarray = W.astype(dtype, copy=False)  # read only
    for d in coverings:
        covering_t: np.ndarray = d.astype(dtype)
        for primal_tol in RATIO_TEST_SLACKS:
            # Tableau rows [x | B^-1]; variables 0..n-1 are y, n..2n-1 are z, 2n is z0.
            tableau: np.ndarray = np.eye(n, n + 1, 1, dtype=dtype, order="F" if n > SPARSE_PIVOT_SIZE else "C")  # column-major: see _pivot
            tableau[:, 0] = w
            basic = np.arange(n)
            try:
                # First pivot: z0 enters (column -d); the row with the most negative w_i / d_i leaves.
                row = _leaving_row(tableau, covering_t, basic, primal_tol, pivot_tol=0.0)
                assert row is not None  # a positive covering vector makes every row a candidate
                return _path_solution(W, w, Wt, tableau, basic, row, -covering_t, max_pivots, primal_tol, tol)
            except LemkeError as exc:
                failures[str(exc)] = failures.get(str(exc), 0) + 1
    tried = f"{len(coverings)} covering vector(s) x {len(RATIO_TEST_SLACKS)} ratio tests"
    raise LemkeError(f"Lemke failed on all {tried}: " + "; ".join(f"{reason} (x{count})" for reason, count in failures.items()))


class _SecondaryRayError(LemkeError):
    """The entering column has no positive entry: ``z0`` cannot leave (after ``pivots`` pivots)."""

    def __init__(self, pivots: int) -> None:
        super().__init__("Lemke ended on a secondary ray: the LCP has no solution from this start")
        self.pivots = pivots


def _path_solution(
    W: np.ndarray,
    w: np.ndarray,
    Wt: np.ndarray,
    tableau: np.ndarray,
    basic: np.ndarray,
    row: int,
    column: np.ndarray,
    max_pivots: int,
    primal_tol: float,
    tol: float,
) -> LCPSolution:
    """Follow the path from ``z0`` entering at ``row`` and return the checked solution it ends in.

    ``Wt`` is ``W`` in the tableau's arithmetic.  On a secondary ray ``z0`` may already be
    zero to round-off (the path ran along a degenerate face): each complementary basis left
    by pivoting ``z0`` out for the orphan pair's ``y``, then its ``z``, is a candidate,
    accepted if its pivot passes the test of every other pivot (:data:`PIVOT_TOL`) and its
    solution the residual check.  One O(n^2) pivot each, no refactorization.
    """
    try:
        pivots = _follow_path(Wt, tableau, basic, row, column, max_pivots, primal_tol)
    except _SecondaryRayError as ray:
        n = basic.shape[0]
        row = int(np.flatnonzero(basic == 2 * n)[0])
        orphan = int(np.setdiff1d(np.arange(n), np.where(basic >= n, basic - n, basic)[basic < 2 * n])[0])
        reasons = []
        for entering in (orphan, orphan + n):
            column = _tableau_column(Wt, tableau[:, 1:], entering)
            if not abs(column[row]) > PIVOT_TOL * np.abs(column).max():
                reasons.append("singular basis")
                continue
            completed, completed_basic = tableau.copy(order="K"), basic.copy()
            _pivot(completed, completed_basic, row, column, entering)
            try:
                return _solution_from_tableau(W, w, completed, completed_basic, ray.pivots, tol)
            except LemkeError as exc:
                reasons.append(str(exc))
        raise LemkeError(f"{ray}; the bases without z0 are no solution ({'; '.join(reasons)})") from None
    return _solution_from_tableau(W, w, tableau, basic, pivots, tol)


def _follow_path(
    W: np.ndarray, tableau: np.ndarray, basic: np.ndarray, row: int, column: np.ndarray, max_pivots: int, primal_tol: float
) -> int:
    """Complementary pivoting from ``z0`` entering at ``row`` until ``z0`` leaves; returns the pivot count.

    ``tableau`` (rows ``[x | B^-1]``, column-major) and ``basic`` are updated in place.
    """
    n = basic.shape[0]
    binv = tableau[:, 1:]
    artificial = 2 * n
    entering = artificial
    pivots = 0
    # The set of basic variables as the bits of an integer, updated per pivot (cheaper than sorting ``basic``).
    members = sum(1 << variable for variable in basic.tolist())
    visited: set[int] = set()
    # Rows are the columns of ``-W``: ``B^-1 (-W_j)`` is ``-(B^-1 W_j)`` exactly (negation commutes with rounding).
    negated = None if n > SPARSE_PIVOT_SIZE else np.ascontiguousarray(-W.T)
    while True:
        leaving = _pivot(tableau, basic, row, column, entering)
        pivots += 1
        if leaving == artificial:
            return pivots
        if pivots >= max_pivots:
            raise LemkeError(f"Lemke reached the pivot cap ({max_pivots}) without a solution")
        members ^= (1 << leaving) | (1 << entering)
        if members in visited:  # round-off broke the lexicographic order: a path never repeats a basis
            raise LemkeError(f"Lemke revisited a basis after {pivots} pivots (cycling under degeneracy)")
        visited.add(members)
        entering = leaving + n if leaving < n else leaving - n
        column = binv @ negated[entering - n] if negated is not None and entering >= n else _tableau_column(W, binv, entering)
        leaving_row = _leaving_row(tableau, column, basic, primal_tol)
        if leaving_row is None:
            raise _SecondaryRayError(pivots)
        row = leaving_row


def _pivot(tableau: np.ndarray, basic: np.ndarray, row: int, column: np.ndarray, entering: int) -> int:
    """Pivot ``entering`` (tableau column ``column``) into ``row`` in place; returns the leaving variable.

    A rank-one update.  Above :data:`SPARSE_PIVOT_SIZE` it is restricted to the pivot row's
    nonzero columns of the column-major tableau.  ``B^-1`` of an impact LCP keeps some 5-20%
    nonzeros along a path, and the other columns would change by exact zeros, so the
    arithmetic is the full update's.

    Those columns are taken as the contiguous rows of ``tableau.T``: the update and its
    operands then share one layout.  They are updated in place by BLAS's rank-one ``dger``,
    which beats numpy's outer product and subtraction (docs/performance.md).  Where BLAS
    fuses the multiply-add, an entry is rounded once instead of twice.
    """
    pivot_row = tableau[row] / column[row]
    if tableau.shape[0] > SPARSE_PIVOT_SIZE:
        changed = pivot_row.nonzero()[0]
        columns = tableau.T  # a view: row j is the tableau's column j
        block = columns[changed]  # C-contiguous: its transpose is the column-major operand BLAS updates in place
        if block.dtype == np.float64:  # the returned array is block.T itself unless f2py had to copy
            block = scipy.linalg.blas.dger(-1.0, column, pivot_row[changed], a=block.T, overwrite_a=True).T
        else:  # extended precision: no BLAS
            block -= np.multiply.outer(pivot_row[changed], column)
        columns[changed] = block
    else:
        tableau -= column[:, None] * pivot_row
    tableau[row] = pivot_row
    leaving = int(basic[row])
    basic[row] = entering
    return leaving


def _tableau_column(W: np.ndarray, binv: np.ndarray, variable: int) -> np.ndarray:
    """The tableau column of ``variable`` (``y_j`` for ``j < n``, else ``z_{j-n}``): ``B^-1 e_j`` or ``-B^-1 W_j``.

    Above :data:`SPARSE_PIVOT_SIZE`, a sparse ``W_j`` takes the product over its nonzeros alone.
    Sparse means at most :data:`GATHER_SHARE` of its entries are nonzero.
    Contacts on other bodies give zeros, as in the jenga stack's columns.
    Only the matching columns of ``B^-1`` are gathered.

    A denser ``W_j`` takes BLAS's gemv over all of ``B^-1``.
    One body with every contact coupled gives such columns (67% nonzeros).
    Gemv reads ``B^-1`` once, which is faster than gathering most of it.

    :func:`lemke` runs such paths on one BLAS thread: a threaded gemv of this size
    waits for busy cores on a loaded machine (docs/performance.md).
    """
    n = binv.shape[0]
    if variable < n:
        return binv[:, variable].copy()
    column = W[:, variable - n]
    if n > SPARSE_PIVOT_SIZE:
        rows = column.nonzero()[0]
        if rows.size <= GATHER_SHARE * n:
            return -np.einsum("ij,j->i", binv[:, rows], column[rows])
    return -(binv @ column)


def _solution_from_tableau(W: np.ndarray, w: np.ndarray, tableau: np.ndarray, basic: np.ndarray, pivots: int, tol: float) -> LCPSolution:
    """The complementary solution of a final tableau, with ``B^-1`` reordered by pair."""
    n = basic.shape[0]
    basis = np.zeros(n, dtype=bool)
    pair_row = [0] * n  # the row of each pair's basic variable
    for row, variable in enumerate(basic.tolist()):
        if variable >= n:
            basis[variable - n] = True
        pair_row[variable - n if variable >= n else variable] = row
    return _checked_solution(W, w, basis, tableau[pair_row, 1:], pivots, tol)


def _checked_solution(W: np.ndarray, w: np.ndarray, basis: np.ndarray, basis_inverse: np.ndarray, pivots: int, tol: float) -> LCPSolution:
    """The basic solution of a complementary basis, residual-checked.

    The tableau's ``B^-1`` carries the round-off of every pivot, which can leave a velocity
    row at -5e-8 where the exact answer is 0: unless its solution is accurate to
    :data:`REFINE_TOL`, one step of iterative refinement (residual ``w - B x`` through the same
    ``B^-1``) follows, and if that is still short of it the basis is refactorized; the most
    accurate solution is kept.
    ``basis_inverse`` may be in extended precision; the solution is float64.
    :class:`LemkeError` if neither meets ``tol``.
    """
    x = (basis_inverse @ w.astype(basis_inverse.dtype, copy=False)).astype(float, copy=False)
    basis_inverse = basis_inverse.astype(float, copy=False)  # the caller's own array (a take of the tableau)
    z = np.maximum(np.where(basis, x, 0.0), 0.0)
    y = W @ z + w
    residual = _residual(W, w, z, y)
    if residual > REFINE_TOL:  # one step of iterative refinement with the tableau's B^-1: O(n^2)
        x = x + basis_inverse @ (w - np.where(basis, 0.0, x) + W[:, basis] @ x[basis])
        refined = np.maximum(np.where(basis, x, 0.0), 0.0)
        refined_y = W @ refined + w
        refined_residual = _residual(W, w, refined, refined_y)
        if refined_residual < residual:
            z, y, residual = refined, refined_y, refined_residual
    if residual > REFINE_TOL:
        with contextlib.suppress(np.linalg.LinAlgError):  # singular to working precision: keep the tableau's
            refactored = invert_basis(W, basis)
            refined = np.maximum(np.where(basis, refactored @ w, 0.0), 0.0)
            refined_y = W @ refined + w
            refined_residual = _residual(W, w, refined, refined_y)
            if refined_residual < residual:
                z, y, residual, basis_inverse = refined, refined_y, refined_residual, refactored
    if residual > tol:
        raise LemkeError(f"Lemke's solution has residual {residual:.3e} above the tolerance {tol:.1e}")
    return LCPSolution(z, y, basis, basis_inverse, pivots, residual)
