"""The one LCP entry point of the laws: Lemke's fast path, then a complete method.

:func:`solve_lcp` tries, in order (its docstring lists the seven stages):

- Lemke (:mod:`bullet_setimpact.core.lcp`) with the given or random covering vectors;
- Lemke with the default coverings, on the equilibrated and on the plain LCP, and in
  extended precision;
- Lemke from more pseudo-random coverings;
- the mixed-integer formulation of :mod:`bullet_setimpact.core.lcp_milp`, solved by HiGHS
   and polished on its support.  It finds a solution whenever one exists within the given
   bounds.

Every returned solution passes the same residual check.  Nothing inexact is ever returned.

The complete stage can itself fail, and says so (:class:`~bullet_setimpact.errors.LCPSolverError`):

- when HiGHS reaches its time limit (:data:`~bullet_setimpact.core.lcp_milp.MILP_TIME_LIMIT`);
- when its point cannot be refined to ``tol``.  HiGHS's point is feasible only to about 1e-6
  of the big-M scales, which a badly scaled, degenerate LCP of a thousand rows can defeat.
  The stress run's combined seed 78,325 is such an LCP; stage 6 (restart coverings on the
  equilibrated LCP) solves it before the mixed-integer stage is reached.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import numpy as np

from ..errors import LCPError, LCPSolverError, LemkeError
from .lcp import (
    LEMKE_ATTEMPTS,
    REFINE_TOL,
    RESIDUAL_TOL,
    LCPSolution,
    basis_matrix,
    check_covering,
    check_lcp,
    default_coverings,
    equilibration,
    lcp_residual,
    lemke_equilibrated,
    lemke_prechecked,
    random_covering,
    safe_inverse,
)
from .lcp_milp import HIGHS_TOLERANCES, feasible_point, milp_lcp

#: Above this size :func:`solve_lcp` skips the extended-precision stage (unvectorized
#: arithmetic: seconds per path).
LARGE_LCP = 256
#: Above this size :func:`solve_lcp` caps Lemke's pivots at :data:`LARGE_PIVOT_FACTOR` ``n``
#: instead of ``10 n + 100``, tries one random covering vector (not three) in stage 1, and
#: the default ones in the order of :func:`large_lcp_coverings`: a failing path is long there.
#: 704 is the size of the step LCP of 64 spatial contacts with 8 friction directions
#: (64 x 11 rows). Up to it, every LCP gets the full pivot budget.
PIVOT_CAP_SIZE = 704
#: (4: the jenga stack's step LCPs, n = 902, need up to 2.3 n pivots from random coverings.)
LARGE_PIVOT_FACTOR = 4
#: Stages 5 and 6 of :func:`solve_lcp` try this many more pseudo-random covering vectors (a
#: fixed seed, :data:`RESTART_SEED`) with the default pivot cap ``10 n + 100``.
#: Stage 5 (above :data:`PIVOT_CAP_SIZE`) is for LCPs on which every capped path fails.
#: The jenga stack's Anitescu-Potra LCP on a ``GEOM_PLANE`` (n = 840) is one: a few random
#: coverings solve it, where the mixed-integer stage reaches its time limit.
#: Stage 6 (every size) tries the same coverings on the equilibrated LCP.  It answers most of
#: the hard LCPs of the stress run's combined family before they reach the slower
#: mixed-integer stage.  Among them is one (seed 78,325, n = 1408) whose mixed-integer point
#: cannot be refined.  Counts and times: docs/performance.md.
RESTART_COVERINGS = 8
#: Seed of the coverings of :data:`RESTART_COVERINGS`.
RESTART_SEED = 1


def large_lcp_coverings(n: int) -> list[np.ndarray]:
    """:func:`~bullet_setimpact.core.lcp.default_coverings` with the covering of ones moved last (above :data:`PIVOT_CAP_SIZE`).

    A symmetric stack ties exactly in the first ratio test under the covering of ones (two
    mirror-image contacts with the same ``w_i``) and its degenerate path then cycles or ends on
    a secondary ray after hundreds of pivots: the jenga stack's largest Anitescu-Potra LCP
    does both.  Pseudo-random coverings break such ties.
    """
    ones, *others = default_coverings(n)
    return [*others, ones]


def restart_coverings(n: int) -> list[np.ndarray | None]:
    """The :data:`RESTART_COVERINGS` pseudo-random covering vectors of stages 5 and 6 (seed :data:`RESTART_SEED`)."""
    generator = np.random.default_rng(RESTART_SEED)
    return [random_covering(generator, n) for _ in range(RESTART_COVERINGS)]


#: The stages of :func:`solve_lcp`, in order (``LCPSolution.method``).
METHODS = (
    "lemke",
    "lemke equilibrated",
    "lemke default covering",
    "lemke longdouble",
    "lemke restarts",
    "lemke equilibrated restarts",
    "milp",
)


def solve_lcp(
    W: np.ndarray,
    w: np.ndarray,
    covering: np.ndarray | None = None,
    rng: np.random.Generator | None = None,
    bounds: np.ndarray | Callable[[], np.ndarray] | None = None,
    tol: float = RESIDUAL_TOL,
    complete: bool = True,
) -> LCPSolution:
    """Solve ``LCP(W, w)``: Lemke first, then stages that cannot fail on a solvable LCP.

    Stages (``LCPSolution.method``):

    1. ``"lemke"``: Lemke from the requested start: the ``covering`` vector, or with
       ``rng`` :data:`LEMKE_ATTEMPTS` random covering vectors drawn from it in turn (how
       the Routh law picks a random branch), or else the default coverings;
    2. ``"lemke equilibrated"``: the default coverings on the equilibrated LCP
       (:func:`~bullet_setimpact.core.lcp.lemke_equilibrated`), checked on the original: where
       ``W`` spans many decades (mass ratios 1e8 beside mu 1e5), the scaled path rarely ends on
       the secondary rays the unscaled one does.  It comes before the unscaled default
       coverings because, on the stress run's hard families, it answers every step LCP
       they answer, and more, sooner (docs/performance.md);
    3. ``"lemke default covering"``: :func:`default_coverings` (if stage 1 used others);
    4. ``"lemke longdouble"``: the same in extended precision (skipped above :data:`LARGE_LCP`);
       above :data:`PIVOT_CAP_SIZE` one random covering vector (not three) is tried in
       stage 1, the default ones in the order of :func:`large_lcp_coverings`, and each path
       is capped at :data:`LARGE_PIVOT_FACTOR` ``n`` pivots;
    5. ``"lemke restarts"`` (above :data:`PIVOT_CAP_SIZE` only): :data:`RESTART_COVERINGS`
       more pseudo-random coverings, uncapped (``10 n + 100`` pivots): the long degenerate
       paths of contact-rich LCPs;
    6. ``"lemke equilibrated restarts"``: the same coverings on the equilibrated LCP;
    7. ``"milp"``: the complete method (:func:`complete_solve`).

    Parameters
    ----------
    W, w : array_like
        The LCP.
    covering : array_like, optional
        Covering vector of stage 1 (exclusive with ``rng``).
    rng : numpy Generator, optional
        Source of stage 1's random covering vectors.
    bounds : array_like, shape (n,), or a callable returning one, optional
        Upper bounds ``z <= bounds`` that some solution satisfies, if one exists (e.g.
        :func:`~bullet_setimpact.laws.routh.step_lcp_bounds`).  With them an infeasible
        mixed-integer problem proves that the LCP has no solution; without them stage 7
        searches growing boxes and can only prove it when ``{z >= 0, Wz + w >= 0}`` is empty.
        A callable is called only if stage 7 is reached (Lemke almost always answers first).
    tol : float
        Relative residual (:func:`lcp_residual`) every returned solution meets.
    complete : bool
        False: stage 1 only (a requested start is then required), for an optional probe whose
        answer the caller can do without; its failure raises :class:`LemkeError` instead of
        running the deterministic stages (seconds on a contact-rich LCP, up to the mixed-integer
        stage's time limit).

    Raises
    ------
    LemkeError
        Only with ``complete=False``: Lemke failed from the requested start.
    LCPError
        Only when the LCP has no solution (the message says why that is certain).
    LCPSolverError
        When the complete method itself fails (time limit, a point that cannot be refined
        to ``tol``, no certified bound).
    """
    W, w = check_lcp(W, w)
    n = w.shape[0]
    if covering is not None and rng is not None:
        raise ValueError("give solve_lcp either a covering vector or an rng, not both")
    if not complete and covering is None and rng is None:
        raise ValueError("solve_lcp(complete=False) needs a requested start: a covering vector or an rng")
    if covering is not None:
        covering = check_covering(covering, n)
    large = n > PIVOT_CAP_SIZE
    max_pivots = LARGE_PIVOT_FACTOR * n if large else None
    reasons: list[str] = []
    if covering is not None or rng is not None:
        for _ in range(1 if covering is not None or large else LEMKE_ATTEMPTS):
            d = covering if covering is not None else random_covering(rng, n)  # type: ignore[arg-type]
            try:
                return lemke_prechecked(W, w, d, max_pivots, tol)
            except LemkeError as exc:
                reasons.append(str(exc))
        if not complete:
            raise LemkeError("Lemke failed from the requested start: " + "; ".join(dict.fromkeys(reasons)))

    def plain(dtype: type, cap: int | None = max_pivots) -> Callable[[np.ndarray | None], LCPSolution]:
        return lambda start: lemke_prechecked(W, w, start, cap, tol, dtype)

    scaling = functools.cache(lambda: equilibration(W))  # once for all the stages' coverings

    def scaled(cap: int | None = max_pivots) -> Callable[[np.ndarray | None], LCPSolution]:
        return lambda start: lemke_equilibrated(W, w, start, cap, tol, scaling())

    equilibrated = ("lemke equilibrated", scaled())
    # without a requested start (reasons empty), stage 1 is the default coverings themselves
    stages = [equilibrated, ("lemke default covering", plain(np.float64))] if reasons else [("lemke", plain(np.float64)), equilibrated]
    if n <= LARGE_LCP:
        stages.append(("lemke longdouble", plain(np.longdouble)))
    coverings: list[np.ndarray | None] = list(large_lcp_coverings(n)) if large else [None]
    attempts = [(method, solve, lambda: coverings) for method, solve in stages]
    restarts = functools.cache(lambda: restart_coverings(n))  # drawn only if a restart stage is reached
    if large:
        attempts.append(("lemke restarts", plain(np.float64, None), restarts))
    attempts.append(("lemke equilibrated restarts", scaled(None), restarts))
    for method, solve, starts in attempts:
        for start in starts():
            try:
                solution = solve(start)
            except LemkeError as exc:
                reasons.append(str(exc))
                continue
            return dataclasses.replace(solution, method=method)
    return complete_solve(W, w, bounds() if callable(bounds) else bounds, tol, context="; ".join(dict.fromkeys(reasons)))


#: Box growth of :func:`complete_solve` without given bounds: the LP point's scale times these.
UNBOUNDED_BOXES = (10.0, 1e4, 1e8)
#: With given bounds an "infeasible" from HiGHS is confirmed on a box this much larger (a
#: different scaling of the same problem) before :class:`LCPError` says there is no solution.
VERDICT_RETRY_FACTOR = 1e3


def complete_solve(W: np.ndarray, w: np.ndarray, bounds: np.ndarray | None, tol: float = RESIDUAL_TOL, context: str = "") -> LCPSolution:
    """Stage 7 of :func:`solve_lcp`: the mixed-integer formulation (:func:`~bullet_setimpact.core.lcp_milp.milp_lcp`), polished.

    With ``bounds`` one solve decides the LCP (an infeasible verdict is confirmed on a larger
    box, :data:`VERDICT_RETRY_FACTOR`).  Without, a linear program first checks
    ``{z >= 0, Wz + w >= 0}`` (empty: no solution), then boxes of :data:`UNBOUNDED_BOXES`
    times its point's scale are searched in turn.  ``context`` (why Lemke failed) is
    appended to error messages.
    """
    n = w.shape[0]
    suffix = f" (Lemke: {context})" if context else ""
    if bounds is not None:
        bounds = np.asarray(bounds, dtype=float)
        if bounds.shape != (n,) or not np.all(np.isfinite(bounds)) or np.any(bounds < 0.0):
            raise ValueError(f"bounds must be a finite non-negative vector of shape ({n},), got {bounds!r}")
        boxes = [bounds, VERDICT_RETRY_FACTOR * bounds]  # the second only if HiGHS calls the first infeasible
    else:
        point = feasible_point(W, w)
        if point is None:
            raise LCPError("the LCP has no solution: no z >= 0 has W z + w >= 0 (the feasibility LP is infeasible)" + suffix)
        scale = max(float(point.max()), float(np.abs(w).max()) / max(float(np.abs(W).max()), np.finfo(float).tiny), 1.0)
        boxes = [np.full(n, factor * scale) for factor in UNBOUNDED_BOXES]
    for upper in boxes:
        failure: LCPSolverError | None = None
        for tolerance in HIGHS_TOLERANCES:
            found = milp_lcp(W, w, upper, tolerance)
            if found is None:
                break  # the default tolerance's verdict (a tighter one is tried only after a found point)
            try:
                return _polished(W, w, *found, tol=tol, suffix=suffix)
            except LCPSolverError as exc:
                failure = exc
        if failure is not None:
            raise failure
    if bounds is not None:
        raise LCPError("the LCP has no solution: its mixed-integer formulation over the given bounds is infeasible" + suffix)
    raise LCPSolverError(f"no solution with z <= {boxes[-1][0]:.3g} (mixed-integer formulation infeasible); pass bounds to decide" + suffix)


#: Newton corrections of :func:`_polished` on the mixed-integer point's support.
POLISH_ITERATIONS = 3


def _polished(W: np.ndarray, w: np.ndarray, z: np.ndarray, support: np.ndarray, tol: float, suffix: str) -> LCPSolution:
    """Refine the mixed-integer point ``z`` to full precision on its ``support`` (pairs with ``y = 0``).

    The point meets HiGHS's tolerance only.  Fixing the complementarity pattern, each
    correction is the least-squares (minimum-norm) ``delta`` with ``W_SS delta = -y_S``
    (singular ``W_SS``, from redundant rows, included), ``z_i = 0`` off the support.  The
    solution keeps the basis inverse of its support when that basis is well conditioned and
    reproduces it (so a branch sampler may cache it), else ``basis_inverse`` is None.
    """
    z = np.where(support, np.maximum(z, 0.0), 0.0)
    residual = lcp_residual(W, w, z)
    block = W[np.ix_(support, support)]
    for _ in range(POLISH_ITERATIONS):
        if residual <= REFINE_TOL or not support.any():
            break
        delta = np.linalg.lstsq(block, -(W @ z + w)[support], rcond=None)[0]
        refined = z.copy()
        refined[support] = np.maximum(z[support] + delta, 0.0)
        refined_residual = lcp_residual(W, w, refined)
        if refined_residual >= residual:
            break
        z, residual = refined, refined_residual
    if residual > tol:
        raise LCPSolverError(f"the mixed-integer solution could not be refined below {tol:.1e} (residual {residual:.3e})" + suffix)
    inverse = safe_inverse(basis_matrix(W, support))
    if inverse is not None:
        basic = np.maximum(np.where(support, inverse @ w, 0.0), 0.0)
        basic_residual = lcp_residual(W, w, basic)
        if basic_residual <= max(residual, REFINE_TOL):
            z, residual = basic, basic_residual
        else:
            inverse = None
    return LCPSolution(z, W @ z + w, support.copy(), inverse, 0, residual, "milp")
