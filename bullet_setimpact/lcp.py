"""Linear complementarity problems: Lemke's algorithm and a batched basis-cache solver.

The problem ``LCP(W, w)`` asks for ``z`` with::

    z >= 0,   y = W z + w >= 0,   z^T y = 0.

This module knows nothing about mechanics.  Two solvers share one notion of a
*complementary basis*: a boolean mask ``basis`` where ``basis[i]`` says that ``z_i``
(rather than ``y_i``) is the basic variable of pair ``i``.  Its basis matrix has
column ``i`` equal to ``-W[:, i]`` if ``basis[i]`` else ``e_i``, and the basic values
are ``x = B^{-1} w``; the basis is feasible for ``w`` iff ``x >= 0``.

- :func:`lemke` pivots from the artificial basis with a (possibly random) covering
  vector and a lexicographic ratio test, so degenerate ``w`` (zeros in ``w`` are
  the rule in impact LCPs) cannot make it cycle.
- :class:`BatchedLCPSolver` keeps the bases Lemke ends in for one fixed ``W`` and
  tests thousands of right-hand sides against them with one matrix product each
  (Halm & Posa, journal Sec. 5: ``W`` is fixed during an impact, only ``w`` moves).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from .errors import LCPError

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
    basis_inverse : ndarray, shape (n, n)
        Inverse of the final basis matrix (never singular: Lemke's final tableau).
    pivots : int
        Number of pivots Lemke needed (0 when ``w >= 0``).
    residual : float
        Relative residual of the returned solution (see :func:`lcp_residual`).
    """

    z: np.ndarray
    y: np.ndarray
    basis: np.ndarray
    basis_inverse: np.ndarray
    pivots: int
    residual: float


def lcp_residual(W: np.ndarray, w: np.ndarray, z: np.ndarray) -> float:
    """Relative violation of ``z >= 0``, ``Wz + w >= 0`` and ``z^T (Wz + w) = 0``.

    Scale-invariant (the same for ``LCP(a W, b w)`` and ``b z / a``): a negative ``z`` is
    divided by ``||z||_inf``, a negative ``y`` by ``||w||_inf + ||W||_inf ||z||_inf``, and the
    complementarity gap by the product of the two.
    """
    if not z.size:
        return 0.0
    y = W @ z + w
    scale_z = float(np.abs(z).max())
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


def _lexicographic_min_row(tableau: np.ndarray, candidates: np.ndarray, column: np.ndarray) -> int:
    """Among rows tied on the ratio ``x_i / column_i``, the lexicographic minimum of ``B^-1_i / column_i``.

    The rows of ``B^-1`` are linearly independent, so this order is strict and the
    lexicographic rule can never revisit a basis (no cycling under degeneracy).  Entries
    are compared with a relative tolerance: round-off must not break exact ties.
    """
    for j in range(1, tableau.shape[1]):
        ratios = tableau[candidates, j] / column[candidates]
        best = ratios.min()
        candidates = candidates[ratios <= best + TIE_TOL * np.abs(ratios).max()]
        if candidates.size == 1:
            break
    return int(candidates[0])


def _min_ratio_row(tableau: np.ndarray, candidates: np.ndarray, column: np.ndarray, basic: np.ndarray, primal_tol: float) -> int:
    """Leaving row of the minimum-ratio test over ``candidates`` (rows with ``column > 0``).

    Harris's two-pass test: rows whose ratio is within ``primal_tol`` (relative to the
    largest basic value) of the minimum count as tied (round-off in a degenerate tableau
    must not pick the winner); ``primal_tol = 0`` is the textbook test.  Among ties the
    artificial variable leaves if it can (the path ends at once), else the lexicographic
    rule decides.
    """
    x = tableau[candidates, 0]
    pivots = column[candidates]
    slack = primal_tol * abs(tableau[:, 0]).max()
    tied = candidates[x / pivots <= ((x + slack) / pivots).min()]
    if tied.size == 1:
        return int(tied[0])
    artificial = (basic[tied] == 2 * basic.shape[0]).nonzero()[0]
    if artificial.size:
        return int(tied[artificial[0]])
    return _lexicographic_min_row(tableau, tied, column)


#: Attempts (each with a fresh random covering vector) before a randomized solve gives up.
LEMKE_ATTEMPTS = 3


def random_covering(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random positive covering vector for :func:`lemke` (entries in [0.05, 1))."""
    return rng.uniform(0.05, 1.0, size=n)


def lemke(
    W: np.ndarray,
    w: np.ndarray,
    covering: np.ndarray | None = None,
    max_pivots: int | None = None,
    tol: float = RESIDUAL_TOL,
) -> LCPSolution:
    """Solve ``LCP(W, w)`` with Lemke's complementary pivoting (Cottle, Pang & Stone, Sec. 4.4).

    The path is followed with Harris's ratio test and, if that fails, again with the
    textbook one (:data:`RATIO_TEST_SLACKS`); every tolerance is relative, so the result
    does not depend on the units of ``W`` and ``w``.

    Parameters
    ----------
    W : array_like, shape (n, n)
    w : array_like, shape (n,)
    covering : array_like, shape (n,), optional
        Positive covering vector ``d`` of the artificial variable.  Different covering
        vectors follow different pivot paths and may end in different solutions when the
        LCP has several.  Default: all ones, then (if that path ends on a ray) up to
        ``LEMKE_ATTEMPTS - 1`` fixed pseudo-random vectors.
    max_pivots : int, optional
        Pivot cap (default ``10 n + 100``).
    tol : float
        Relative residual the final solution must meet.

    Returns
    -------
    LCPSolution

    Raises
    ------
    LCPError
        On ray termination (the LCP may have no solution), on reaching the pivot
        cap, or when the final residual exceeds ``tol``.
    """
    W = np.asarray(W, dtype=float)
    w = np.asarray(w, dtype=float)
    n = w.shape[0]
    if W.shape != (n, n):
        raise ValueError(f"W must have shape ({n}, {n}) to match w, got {W.shape}")
    if not (np.all(np.isfinite(W)) and np.all(np.isfinite(w))):
        raise ValueError("W and w must be finite (no NaN or inf)")
    if np.all(w >= 0.0):
        basis = np.zeros(n, dtype=bool)
        return LCPSolution(np.zeros(n), w.copy(), basis, np.eye(n), 0, 0.0)
    if covering is None:  # all ones, then fixed pseudo-random vectors: deterministic
        generator = np.random.default_rng(0)
        coverings = [np.ones(n)] + [random_covering(generator, n) for _ in range(LEMKE_ATTEMPTS - 1)]
    else:
        coverings = [np.asarray(covering, dtype=float)]
        if coverings[0].shape != (n,) or np.any(coverings[0] <= 0.0):
            raise ValueError(f"covering must be a positive vector of shape ({n},)")
    max_pivots = 10 * n + 100 if max_pivots is None else max_pivots
    failures: dict[str, int] = {}
    for d in coverings:
        for primal_tol in RATIO_TEST_SLACKS:
            # Tableau rows [x | B^-1]; variables 0..n-1 are y, n..2n-1 are z, 2n is z0.
            tableau = np.hstack([w[:, None], np.eye(n)])
            basic = np.arange(n)
            try:
                # First pivot: z0 enters (column -d); the row with the most negative w_i / d_i leaves.
                row = _min_ratio_row(tableau, np.arange(n), d, basic, primal_tol)
                return _path_solution(W, w, tableau, basic, row, -d, max_pivots, primal_tol, tol)
            except LCPError as exc:
                failures[str(exc)] = failures.get(str(exc), 0) + 1
    tried = f"{len(coverings)} covering vector(s) x {len(RATIO_TEST_SLACKS)} ratio tests"
    raise LCPError(f"Lemke failed on all {tried}: " + "; ".join(f"{reason} (x{count})" for reason, count in failures.items()))


def lemke_from_solution(
    W: np.ndarray,
    w: np.ndarray,
    start: LCPSolution,
    covering: np.ndarray,
    max_pivots: int | None = None,
    tol: float = RESIDUAL_TOL,
) -> LCPSolution | None:
    """Follow the Lemke path that leaves the known solution ``start`` and return its other end.

    With covering vector ``d``, the almost-complementary paths pair the LCP's solutions and
    its primary ray (Cottle, Pang & Stone, Sec. 4.4).  Lemke's algorithm only reaches the
    solution paired with the ray; re-entering the artificial variable at ``start`` walks
    to the solution paired with ``start`` instead.  This finds solutions no covering vector
    would make Lemke return (e.g. RAMone's step LCP, where the "trailing foot free" branch
    has the opposite index).  Returns None when the path ends on a ray.
    """
    n = w.shape[0]
    max_pivots = 10 * n + 100 if max_pivots is None else max_pivots
    basic = np.where(start.basis, np.arange(n) + n, np.arange(n))
    tableau = np.hstack([(start.basis_inverse @ w)[:, None], start.basis_inverse])
    column = -(start.basis_inverse @ covering)
    candidates = np.flatnonzero(column > PIVOT_TOL * max(column.max(), -column.min()))
    if candidates.size == 0:
        return None
    for primal_tol in RATIO_TEST_SLACKS:
        path_tableau, path_basic = tableau.copy(), basic.copy()
        try:
            row = _min_ratio_row(path_tableau, candidates, column, path_basic, primal_tol)
            return _path_solution(W, w, path_tableau, path_basic, row, column, max_pivots, primal_tol, tol)
        except LCPError:
            continue
    return None


class _SecondaryRayError(LCPError):
    """The entering column has no positive entry: ``z0`` cannot leave (after ``pivots`` pivots)."""

    def __init__(self, pivots: int) -> None:
        super().__init__("Lemke ended on a secondary ray: the LCP has no solution from this start")
        self.pivots = pivots


def _path_solution(
    W: np.ndarray,
    w: np.ndarray,
    tableau: np.ndarray,
    basic: np.ndarray,
    row: int,
    column: np.ndarray,
    max_pivots: int,
    primal_tol: float,
    tol: float,
) -> LCPSolution:
    """Follow the path from ``z0`` entering at ``row`` and return the checked solution it ends in.

    On a secondary ray ``z0`` may already be zero to round-off (the path ran along a
    degenerate face): the complementary basis left by dropping ``z0`` (the orphan pair's
    ``y`` basic) is then a solution, accepted if it passes the residual check.
    """
    try:
        pivots = _follow_path(W, tableau, basic, row, column, max_pivots, primal_tol)
    except _SecondaryRayError as ray:
        n = basic.shape[0]
        basis = np.zeros(n, dtype=bool)
        basis[basic[(basic >= n) & (basic < 2 * n)] - n] = True
        try:
            return _checked_solution(W, w, basis, np.linalg.inv(basis_matrix(W, basis)), ray.pivots, tol)
        except (LCPError, np.linalg.LinAlgError) as exc:
            raise LCPError(f"{ray}; the basis without z0 is no solution ({exc})") from exc
    return _solution_from_tableau(W, w, tableau, basic, pivots, tol)


def _follow_path(
    W: np.ndarray, tableau: np.ndarray, basic: np.ndarray, row: int, column: np.ndarray, max_pivots: int, primal_tol: float
) -> int:
    """Complementary pivoting from ``z0`` entering at ``row`` until ``z0`` leaves; returns the pivot count.

    ``tableau`` (rows ``[x | B^-1]``) and ``basic`` are updated in place.
    """
    n = basic.shape[0]
    binv = tableau[:, 1:]
    artificial = 2 * n
    entering = artificial
    pivots = 0
    visited: set[bytes] = set()
    while True:
        pivot_row = tableau[row] / column[row]
        tableau -= column[:, None] * pivot_row
        tableau[row] = pivot_row
        leaving = int(basic[row])
        basic[row] = entering
        pivots += 1
        if leaving == artificial:
            return pivots
        if pivots >= max_pivots:
            raise LCPError(f"Lemke reached the pivot cap ({max_pivots}) without a solution")
        signature = np.sort(basic).tobytes()
        if signature in visited:  # round-off broke the lexicographic order: a path never repeats a basis
            raise LCPError(f"Lemke revisited a basis after {pivots} pivots (cycling under degeneracy)")
        visited.add(signature)
        entering = leaving + n if leaving < n else leaving - n
        column = binv[:, entering].copy() if entering < n else -(binv @ W[:, entering - n])
        candidates = (column > PIVOT_TOL * max(column.max(), -column.min())).nonzero()[0]
        if candidates.size == 0:
            raise _SecondaryRayError(pivots)
        row = _min_ratio_row(tableau, candidates, column, basic, primal_tol)


def _solution_from_tableau(W: np.ndarray, w: np.ndarray, tableau: np.ndarray, basic: np.ndarray, pivots: int, tol: float) -> LCPSolution:
    """The complementary solution of a final tableau, with ``B^-1`` reordered by pair."""
    n = basic.shape[0]
    basis = np.zeros(n, dtype=bool)
    basis[basic[basic >= n] - n] = True
    pair_row = np.empty(n, dtype=int)
    pair_row[np.where(basic >= n, basic - n, basic)] = np.arange(n)
    return _checked_solution(W, w, basis, tableau[pair_row, 1:], pivots, tol)


def _checked_solution(W: np.ndarray, w: np.ndarray, basis: np.ndarray, basis_inverse: np.ndarray, pivots: int, tol: float) -> LCPSolution:
    """The basic solution of a complementary basis, residual-checked.

    The tableau's ``B^-1`` carries the round-off of every pivot, which can leave a velocity
    row at -5e-8 where the exact answer is 0: unless its solution is accurate to
    :data:`REFINE_TOL`, the basis is refactorized and the more accurate of the two kept.
    :class:`LCPError` if neither meets ``tol``.
    """
    z = np.maximum(np.where(basis, basis_inverse @ w, 0.0), 0.0)
    residual = lcp_residual(W, w, z)
    if residual > REFINE_TOL:
        with contextlib.suppress(np.linalg.LinAlgError):  # singular to working precision: keep the tableau's
            refactored = np.linalg.inv(basis_matrix(W, basis))
            refined = np.maximum(np.where(basis, refactored @ w, 0.0), 0.0)
            refined_residual = lcp_residual(W, w, refined)
            if refined_residual < residual:
                z, residual, basis_inverse = refined, refined_residual, refactored
    if residual > tol:
        raise LCPError(f"Lemke's solution has residual {residual:.3e} above the tolerance {tol:.1e}")
    return LCPSolution(z, W @ z + w, basis, basis_inverse, pivots, residual)


def random_lemke(W: np.ndarray, w: np.ndarray, rng: np.random.Generator, tol: float = RESIDUAL_TOL) -> LCPSolution:
    """:func:`lemke` with a random covering vector, retried with fresh ones on failure.

    Raises the last :class:`LCPError` (with the attempt count) if all attempts fail.
    """
    for attempt in range(1, LEMKE_ATTEMPTS + 1):
        try:
            return lemke(W, w, covering=random_covering(rng, w.shape[0]), tol=tol)
        except LCPError as exc:
            if attempt == LEMKE_ATTEMPTS:
                raise LCPError(f"{exc} (after {LEMKE_ATTEMPTS} random covering vectors)") from exc
    raise AssertionError("unreachable")


def sparsified(u: np.ndarray, sparsify: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """``u`` with a random non-empty subset of the ``sparsify`` entries set to zero (None if empty)."""
    if sparsify.size == 0:
        return None
    mask = rng.random(sparsify.size) < 0.5
    mask[rng.integers(sparsify.size)] = True
    alternative = u.copy()
    alternative[sparsify[mask]] = 0.0
    return alternative


def _switchable_entries(sparsify: np.ndarray, switchable: np.ndarray | None, sample: int) -> np.ndarray:
    """The ``sparsify`` entries sample ``sample`` may switch off (all when ``switchable`` is None)."""
    if switchable is None or sparsify.size == 0:
        return sparsify
    return sparsify[switchable[sample]]


def _parameter_rows(u: np.ndarray, rhs_map: np.ndarray | None) -> np.ndarray:
    """``u`` as a float array of shape ``(S, p)`` matching ``rhs_map`` (shape ``(n, p)``), finite."""
    u = np.asarray(u, dtype=float)
    assert rhs_map is not None  # set in __post_init__
    if u.ndim != 2 or u.shape[1] != rhs_map.shape[1]:
        raise ValueError(f"u must have shape (samples, {rhs_map.shape[1]}) to match rhs_map, got {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ValueError("u must be finite (no NaN or inf)")
    return u


@dataclass
class SolverStatistics:
    """Counters of an LCP batch solver (cumulative over its lifetime)."""

    solves: int = 0
    cache_hits: int = 0
    lemke_calls: int = 0
    bases: int = 0


@dataclass
class LemkeSolver:
    """Solve ``LCP(W, R u)`` sample by sample with randomized Lemke (no cache).

    Each sample draws its branch: with probability 1/2 it first tries the final basis of
    Lemke on a *sparsified* parameter vector (a random subset of the ``sparsify`` entries
    zeroed), kept if that basis is feasible for the true ``u``; otherwise, or else, Lemke
    with a random covering vector.  The sparsified solve reaches solutions Lemke's path
    from the ray never ends in.  Same interface as :class:`BatchedLCPSolver`.
    """

    W: np.ndarray
    rhs_map: np.ndarray | None = None
    sparsify: tuple[int, ...] = ()
    tol: float = RESIDUAL_TOL
    stats: SolverStatistics = field(default_factory=SolverStatistics)

    def __post_init__(self) -> None:
        self.W = np.asarray(self.W, dtype=float)
        self.rhs_map = np.eye(self.W.shape[0]) if self.rhs_map is None else np.asarray(self.rhs_map, dtype=float)
        self._sparsify = np.asarray(self.sparsify, dtype=int)

    def solve(self, u: np.ndarray, rng: np.random.Generator, explore: int = 0, switchable: np.ndarray | None = None) -> np.ndarray:
        """Solve every row of ``u`` (shape ``(S, p)``); returns ``z`` with shape ``(S, n)``.

        ``switchable`` (shape ``(S, len(sparsify))``, default all True) says which
        ``sparsify`` entries each sample may switch off.
        """
        u = _parameter_rows(u, self.rhs_map)
        z = np.zeros((u.shape[0], self.W.shape[0]))
        for i, sample in enumerate(u):
            z[i] = self._solve_one(sample, _switchable_entries(self._sparsify, switchable, i), rng)
        self.stats.solves += u.shape[0]
        return z

    def _solve_one(self, sample: np.ndarray, allowed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        w = self.rhs_map @ sample
        alternative = sparsified(sample, allowed, rng) if rng.random() < 0.5 else None
        if alternative is not None:
            self.stats.lemke_calls += 1
            solution = random_lemke(self.W, self.rhs_map @ alternative, rng, self.tol)
            x = solution.basis_inverse @ w
            if np.all(x >= -self.tol * (1.0 + np.max(np.abs(w)))):
                return np.maximum(np.where(solution.basis, x, 0.0), 0.0)
        self.stats.lemke_calls += 1
        return random_lemke(self.W, w, rng, self.tol).z


@dataclass
class _CachedBasis:
    basis: np.ndarray  # (n,) bool
    response: np.ndarray  # (n, p): basic values x = response @ u
    hits: int = 0


@dataclass
class BatchedLCPSolver:
    """Solve ``LCP(W, R u)`` for one fixed ``W`` and many parameter vectors ``u``.

    The right-hand side is ``w = R u`` with a fixed ``R`` (shape ``(n, p)``; identity by
    default), so a cached basis answers a whole batch with one ``(n, p) @ (p, S)``
    product.  Bases come from :func:`lemke`'s final tableau and are never singular.

    For each sample the solver picks uniformly at random among the feasible bases of
    the ``candidates`` most-hit cached bases (an LCP with several solutions therefore
    keeps all its branches instead of collapsing onto one pivot rule); samples with no
    feasible candidate are tested against the rest of the cache, and only a true miss
    calls Lemke, with a random covering vector.  ``explore`` further samples per call go
    to Lemke to discover bases the cache lacks: once on their own ``u`` and once on a
    sparsified ``u`` (see :class:`LemkeSolver`).  The cache is kept ordered by hit count.

    Parameters
    ----------
    W : ndarray, shape (n, n)
    rhs_map : ndarray, shape (n, p), optional
        ``R`` in ``w = R u``.
    sparsify : tuple of int
        Entries of ``u`` that exploration may switch off.
    candidates : int
        Number of most-hit bases among which a feasible one is drawn at random.
    tol : float
        Relative residual tolerance (solutions within it are clipped to ``z >= 0``).
    """

    W: np.ndarray
    rhs_map: np.ndarray | None = None
    sparsify: tuple[int, ...] = ()
    candidates: int = 16
    tol: float = RESIDUAL_TOL
    stats: SolverStatistics = field(default_factory=SolverStatistics)

    def __post_init__(self) -> None:
        self.W = np.asarray(self.W, dtype=float)
        n = self.W.shape[0]
        self.rhs_map = np.eye(n) if self.rhs_map is None else np.asarray(self.rhs_map, dtype=float)
        self._rhs_norm = float(np.max(np.sum(np.abs(self.rhs_map), axis=1), initial=0.0))
        self._sparsify = np.asarray(self.sparsify, dtype=int)
        self._cache: list[_CachedBasis] = []
        self._position: dict[bytes, int] = {}

    @property
    def bases(self) -> list[np.ndarray]:
        """The cached complementary bases, most-hit first."""
        return [entry.basis for entry in self._cache]

    def solve(self, u: np.ndarray, rng: np.random.Generator, explore: int = 0, switchable: np.ndarray | None = None) -> np.ndarray:
        """Solve the batch; returns ``z`` with shape ``(S, n)`` (``u`` has shape ``(S, p)``).

        ``explore`` samples also go to Lemke; ``switchable`` (shape ``(S, len(sparsify))``,
        default all True) limits which ``sparsify`` entries their exploration may zero.
        """
        u = _parameter_rows(u, self.rhs_map)
        samples = u.shape[0]
        if samples == 0:
            return np.zeros((0, self.W.shape[0]))
        columns = np.ascontiguousarray(u.T)
        scale = self.tol * (1.0 + self._rhs_norm * np.max(np.abs(u), axis=1))
        choice = np.full(samples, -1)
        best_key = np.full(samples, -1.0)
        for index, entry in enumerate(self._cache[: self.candidates]):
            feasible = (entry.response @ columns).min(axis=0) >= -scale
            if feasible.any():
                key = np.where(feasible, rng.random(samples), -1.0)
                better = key > best_key
                best_key[better] = key[better]
                choice[better] = index
        for index in range(self.candidates, len(self._cache)):
            pending = np.flatnonzero(choice < 0)
            if pending.size == 0:
                break
            feasible = (self._cache[index].response @ columns[:, pending]).min(axis=0) >= -scale[pending]
            choice[pending[feasible]] = index
        self.stats.cache_hits += int((choice >= 0).sum())

        explored = rng.choice(samples, size=min(explore, samples), replace=False) if explore else np.empty(0, int)
        for i in explored:
            choice[i] = self._explore(u[i], _switchable_entries(self._sparsify, switchable, i), scale[i], rng)
        for i in range(samples):
            if choice[i] < 0:
                index = self._lemke_index(self.rhs_map @ u[i], rng)
                pending = np.flatnonzero(choice < 0)
                feasible = (self._cache[index].response @ columns[:, pending]).min(axis=0) >= -scale[pending]
                choice[pending[feasible]] = index
                choice[i] = index

        z = np.zeros((samples, self.W.shape[0]))
        for index in np.unique(choice):
            chosen = np.flatnonzero(choice == index)
            entry = self._cache[index]
            entry.hits += chosen.size
            z[chosen] = np.where(entry.basis, (entry.response @ columns[:, chosen]).T, 0.0)
        self.stats.solves += samples
        self._cache.sort(key=lambda entry: -entry.hits)
        self._position = {entry.basis.tobytes(): index for index, entry in enumerate(self._cache)}
        self.stats.bases = len(self._cache)
        return np.maximum(z, 0.0)

    def _explore(self, sample: np.ndarray, allowed: np.ndarray, scale: float, rng: np.random.Generator) -> int:
        """Lemke on the sample itself and on a sparsified copy; returns a feasible one of the two at random."""
        indices = [self._lemke_index(self.rhs_map @ sample, rng)]
        alternative = sparsified(sample, allowed, rng)
        if alternative is not None:
            index = self._lemke_index(self.rhs_map @ alternative, rng)
            if np.all(self._cache[index].response @ sample >= -scale):
                indices.append(index)
        return indices[rng.integers(len(indices))]

    def _lemke_index(self, w: np.ndarray, rng: np.random.Generator) -> int:
        """Run randomized Lemke on ``w``; return the cache index of its final basis (added if new)."""
        self.stats.lemke_calls += 1
        solution = random_lemke(self.W, w, rng, self.tol)
        key = solution.basis.tobytes()
        if key not in self._position:
            self._position[key] = len(self._cache)
            self._cache.append(_CachedBasis(solution.basis, solution.basis_inverse @ self.rhs_map))
        return self._position[key]
