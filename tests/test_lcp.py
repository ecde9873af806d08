"""Lemke's algorithm (bullet_setimpact.core.lcp) and the branch samplers built on it (laws.branch_sampling)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from bullet_setimpact import AnitescuPotraImpact, ImpactProblem, LCPError, RouthImpact, planar
from bullet_setimpact.core import lcp
from bullet_setimpact.core import lcp_solve as lcp_module
from bullet_setimpact.core.branch_sampling import BatchedLCPSolver, LemkeSolver
from bullet_setimpact.core.lcp import RESIDUAL_TOL, basis_matrix, lcp_residual, lemke, random_covering
from bullet_setimpact.core.lcp_milp import milp_lcp
from bullet_setimpact.core.lcp_solve import complete_solve, solve_lcp
from bullet_setimpact.core.problem import COLLISION_TOL
from bullet_setimpact.errors import ImpactFailure, LCPSolverError, LemkeError, UnfinishedImpactWarning
from bullet_setimpact.laws.base import ImpactLaw
from bullet_setimpact.laws.routh import integrate, step_lcp_bounds, step_solver

from .hard_lcps import rigid_body_contacts


def _random_lcp(seed: int, n: int, family: str, degenerate: bool) -> tuple[np.ndarray, np.ndarray]:
    """A random LCP of the named matrix family.

    - "p": ``A A^T + 0.1 I + (K - K^T)``: positive definite, hence a P-matrix (unique solution).
    - "copositive-plus": ``B B^T + (K - K^T)`` with ``B`` of rank ``n - 1``: ``z^T W z = |B^T z|^2 >= 0``
      and ``z^T W z = 0`` implies ``(W + W^T) z = 2 B B^T z = 0``.
    ``degenerate`` zeroes about half of ``w`` (as the impact LCPs' zero rows do).
    """
    rng = np.random.default_rng(seed)
    skew = rng.normal(size=(n, n))
    skew = skew - skew.T
    if family == "p":
        a = rng.normal(size=(n, n))
        W = a @ a.T + 0.1 * np.eye(n) + skew
    else:
        b = rng.normal(size=(n, max(1, n - 1)))
        W = b @ b.T + skew
    w = rng.normal(size=n)
    if degenerate:
        w[rng.random(n) < 0.5] = 0.0
    return W, w


def _brute_force_solutions(W: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
    """Every basic solution, by trying all 2^n complementary bases (independent of Lemke)."""
    solutions = []
    for pattern in itertools.product([False, True], repeat=w.shape[0]):
        basis = np.array(pattern)
        B = basis_matrix(W, basis)
        if abs(np.linalg.det(B)) < 1e-12:
            continue
        x = np.linalg.solve(B, w)
        if np.all(x >= -1e-10):
            solutions.append(np.where(basis, np.maximum(x, 0.0), 0.0))
    return solutions


def _feasible(W: np.ndarray, w: np.ndarray) -> bool:
    """Whether some ``z >= 0`` has ``W z + w >= 0`` (an LP, independent of Lemke)."""
    result = linprog(np.zeros(w.shape[0]), A_ub=-W, b_ub=w, bounds=[(0, None)] * w.shape[0], method="highs")
    return result.status == 0


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), degenerate=st.booleans(), random_covering=st.booleans())
def test_lemke_matches_brute_force_on_p_matrices(seed: int, n: int, degenerate: bool, random_covering: bool) -> None:
    """A P-matrix LCP has exactly one solution (Cottle-Pang-Stone Thm 3.3.7); Lemke must return it."""
    W, w = _random_lcp(seed, n, "p", degenerate)
    covering = np.random.default_rng(seed).uniform(0.05, 1.0, n) if random_covering else None
    solution = lemke(W, w, covering=covering)
    solutions = _brute_force_solutions(W, w)
    assert solutions
    for expected in solutions:  # degenerate bases repeat the one solution
        np.testing.assert_allclose(solution.z, expected, atol=1e-9)
    assert solution.residual <= 1e-9
    assert lcp_residual(W, w, solution.z) <= 1e-9


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), degenerate=st.booleans())
def test_lemke_solves_copositive_plus_lcps_iff_feasible(seed: int, n: int, degenerate: bool) -> None:
    """For copositive-plus W, Lemke's algorithm solves every feasible LCP and ends on a ray
    only when the LCP is infeasible (Lemke's theorem; Cottle-Pang-Stone Thm 4.4.13).

    Feasibility is decided by an LP; a solution is checked against the complementarity
    residual and must be one of the brute-force basic solutions when W is nonsingular.
    Complementarity ``z_i y_i`` is compared with the scale of its rounding: ``y = W z + w``
    carries an error of order ``eps (|W| |z| + |w|)``, so ``z_i y_i`` may reach ``|z|`` times
    that (e.g. ``z ~ 4e4``, ``y ~ 5e-12`` for a nearly singular ``W``).
    """
    W, w = _random_lcp(seed, n, "copositive-plus", degenerate)
    if _feasible(W, w):
        solution = lemke(W, w, covering=np.random.default_rng(seed).uniform(0.05, 1.0, n))
        assert lcp_residual(W, w, solution.z) <= 1e-9
        assert np.all(solution.z >= 0.0)
        z_scale = 1.0 + np.abs(solution.z).max()
        y_scale = 1.0 + np.abs(W).max() * np.abs(solution.z).max() + np.abs(w).max()
        assert np.all(solution.z * solution.y <= 1e-9 * z_scale * y_scale)
    else:
        with pytest.raises(LCPError, match="ray"):
            lemke(W, w)


def test_lemke_raises_on_an_lcp_without_solution() -> None:
    """``W = [[-1]], w = [-1]``: ``y = -z - 1 < 0`` for every ``z >= 0``, so no solution exists."""
    with pytest.raises(LCPError, match="ray"):
        lemke(np.array([[-1.0]]), np.array([-1.0]))


def test_lemke_completes_a_secondary_ray_that_ends_at_a_solution(monkeypatch: pytest.MonkeyPatch) -> None:
    """A path that ends on a secondary ray with ``z0 = 0`` is completed to the solution.

    ``W = [[-1, -1, -1], [1, 1, 0], [1, 0, 1]]``, ``w = [1, -1, -1]``: ``y_2 >= 0`` and
    ``y_3 >= 0`` need ``z_1 + z_2 >= 1`` and ``z_1 + z_3 >= 1``, ``y_1 >= 0`` needs
    ``z_1 + z_2 + z_3 <= 1``; together ``z_2 = z_3 = 0`` and ``z_1 = 1``.  So ``z = (1, 0, 0)``
    (``y = 0``) is the only feasible point and the only solution.  Lemke's path from the
    covering of ones with the textbook ratio test reaches it with ``z0 = 0`` but ends on a
    secondary ray (every ``y`` is degenerate), so the solution must come from pivoting ``z0``
    out (a completion).
    """
    rays = []
    follow_path = lcp._follow_path

    def recording(*args: object, **kwargs: object) -> int:
        try:
            return follow_path(*args, **kwargs)  # type: ignore[arg-type]
        except lcp._SecondaryRayError:
            rays.append(True)
            raise

    monkeypatch.setattr(lcp, "_follow_path", recording)
    monkeypatch.setattr(lcp, "RATIO_TEST_SLACKS", (0.0,))
    W = np.array([[-1.0, -1.0, -1.0], [1.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    solution = lemke(W, np.array([1.0, -1.0, -1.0]), covering=np.ones(3))
    assert rays, "the path should end on a secondary ray"
    np.testing.assert_allclose(solution.z, [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(solution.y, 0.0, atol=1e-12)


def test_safe_inverse_rejects_ill_conditioned_bases() -> None:
    """The condition check of basis inverses (:data:`~bullet_setimpact.core.lcp.MAX_CONDITION` = 1e13).

    ``diag(1, d, 1)`` has condition number ``1 / d`` in every norm, and LAPACK's 1-norm
    estimate is exact for a diagonal matrix (its first probe finds the largest column of the
    inverse); ``[[1, a], [0, 1]]`` has inverse ``[[1, -a], [0, 1]]`` and 1-norm condition number
    ``(1 + a)^2``, 1e16 for ``a = 1e8``: the estimate (a lower bound, rarely off by more than
    3x) cannot fall below 1e13.  Exactly singular and non-finite matrices give None too.
    """
    assert lcp.MAX_CONDITION == 1e13
    inverse = lcp.safe_inverse(np.diag([1.0, 1e-12, 1.0]))
    assert inverse is not None
    np.testing.assert_allclose(inverse, np.diag([1.0, 1e12, 1.0]), rtol=1e-15)
    assert lcp.safe_inverse(np.diag([1.0, 1e-14, 1.0])) is None
    assert lcp.safe_inverse(np.array([[1.0, 1e8], [0.0, 1.0]])) is None
    np.testing.assert_allclose(lcp.safe_inverse(np.array([[1.0, 1e6], [0.0, 1.0]])), [[1.0, -1e6], [0.0, 1.0]])  # type: ignore[arg-type]
    assert lcp.safe_inverse(np.array([[1.0, 2.0], [2.0, 4.0]])) is None
    assert lcp.safe_inverse(np.array([[1.0, np.inf], [0.0, 1.0]])) is None


@pytest.mark.parametrize("n", [20, lcp.SPARSE_PIVOT_SIZE + 72])
def test_invert_basis_inverts_the_basis_matrix(n: int) -> None:
    """``invert_basis`` from the principal block ``W_ZZ`` (above SPARSE_PIVOT_SIZE) or directly.

    ``B`` has columns ``-W_j`` (``j`` basic) and ``e_j``: ``X B = I`` for ``X`` its inverse,
    checked to 1e-10 (``W`` standard normal plus ``n I``, so ``W_ZZ`` is strictly diagonally
    dominant on average and well conditioned).  A basic ``z`` whose column of ``W`` repeats
    another basic one makes ``W_ZZ`` (and ``B``) singular: ``LinAlgError``.
    """
    rng = np.random.default_rng(n)
    W = rng.standard_normal((n, n)) + n * np.eye(n)
    basis = rng.random(n) < 0.4
    np.testing.assert_allclose(lcp.invert_basis(W, basis) @ basis_matrix(W, basis), np.eye(n), atol=1e-10)
    first, second = basis.nonzero()[0][:2]
    W[:, second] = W[:, first]
    W[second] = W[first]
    with pytest.raises(np.linalg.LinAlgError):
        lcp.invert_basis(W, basis)


def test_large_pivots_update_the_tableau_as_the_dense_rank_one_update() -> None:
    """Above SPARSE_PIVOT_SIZE a pivot updates only the columns where the pivot row ``p = T_r /
    column_r`` is nonzero, in place by BLAS's rank-one update.  The dense update
    ``T - column p^T`` changes the other columns by exact zeros, so they must be equal bit for
    bit, as must the pivot row (set to ``p``).  Every other entry may differ from numpy's dense
    update only by rounding: numpy rounds the product and then the difference, a fused BLAS
    kernel once; with ``u = eps / 2`` numpy's error is at most ``u |c p| + u (|T| + |c p|) (1 + u)``
    and a fused one's ``u (|T| + |c p|)``, so the two differ by at most
    ``eps (|T| + 2 |c p|) + O(u^2) <= 2 eps (|T| + |c p|)`` (a tolerance the test then uses)."""
    rng = np.random.default_rng(3)
    n = lcp.SPARSE_PIVOT_SIZE + 40
    tableau = np.asfortranarray(rng.standard_normal((n, n + 1)) * (rng.random((n, n + 1)) < 0.1))
    row = int(np.argmax(np.count_nonzero(tableau, axis=1)))
    column = rng.standard_normal(n)
    pivot_row = tableau[row] / column[row]
    product = np.multiply.outer(column, pivot_row)
    expected = tableau - product
    expected[row] = pivot_row
    bound = 2 * np.finfo(float).eps * (np.abs(tableau) + np.abs(product))
    untouched = pivot_row == 0.0
    assert 0 < untouched.sum() < n  # both kinds of columns occur
    basic = np.arange(n)
    assert lcp._pivot(tableau, basic, row, column, 2 * n) == row
    assert basic[row] == 2 * n
    np.testing.assert_array_equal(tableau[:, untouched], expected[:, untouched])
    np.testing.assert_array_equal(tableau[row], pivot_row)
    assert np.all(np.abs(tableau - expected) <= bound)


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 80),
    ties=st.sampled_from(["none", "exact", "near"]),
    primal_tol=st.sampled_from([0.0, 1e-9]),
)
@settings(max_examples=300, deadline=None)
def test_both_ratio_tests_pick_the_same_row(seed: int, n: int, ties: str, primal_tol: float) -> None:
    """Up to SCALAR_TEST_SIZE rows the candidates and the minimum-ratio test run on Python floats,
    above it on numpy arrays.  Each path does the same IEEE operations on the same entries
    (``|x|`` maxima, ``(x_i + slack) / c_i``, ``x_i / c_i``, comparisons), so the two must return
    the same leaving row, bit for bit, on any tableau: random ones, ones
    whose basic values and column take three values (``exact``: ratios tie, and the artificial
    variable or the lexicographic rule decides), and ones whose ratios differ by less than a few
    Harris slacks (``near``: ``1 + k 3e-10``, so the tie window's exact arithmetic decides which
    rows tie), with either ratio test."""
    rng = np.random.default_rng(seed)
    tableau = rng.standard_normal((n, n + 1))
    column = rng.standard_normal(n)
    if ties == "exact":
        tableau[:, 0] = rng.choice([0.0, 0.5, 1.0], size=n)
        column = rng.choice([-1.0, 0.5, 2.0], size=n)
    elif ties == "near":
        column = rng.choice([-1.0, 0.5, 2.0], size=n)
        tableau[:, 0] = column * (1.0 + 3e-10 * rng.integers(0, 8, size=n))
    tableau[:, 0] = np.abs(tableau[:, 0])  # a feasible basis
    column[rng.integers(n)] = 1.0  # at least one candidate
    basic = rng.permutation(2 * n + 1)[:n]
    answers = []
    for size in (n, n - 1):  # the scalar path, then the numpy one
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(lcp, "SCALAR_TEST_SIZE", size)
            answers.append(lcp._leaving_row(tableau, column, basic, primal_tol))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("share", [0.1, 0.9])
def test_large_tableau_columns_are_the_product_to_rounding(share: float) -> None:
    """Above SPARSE_PIVOT_SIZE the column ``-B^-1 W_j`` is summed over the gathered nonzeros of
    ``W_j`` (a share of nonzeros up to GATHER_SHARE) or by BLAS over all of ``B^-1`` (denser).
    Either way each entry is a dot product of ``k <= n`` nonzero terms, whose rounding error in any
    summation order is at most ``gamma_k sum_i |b_i w_i|``, ``gamma_k = k u / (1 - k u)``, ``u = eps / 2``
    (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. 3.5).  The reference is the
    product in extended precision, itself within that bound of the exact one where ``longdouble``
    is only double, so the two may differ by ``2 gamma_n sum_i |b_i w_i|``."""
    rng = np.random.default_rng(7)
    n = lcp.SPARSE_PIVOT_SIZE + 60
    binv = np.asfortranarray(rng.standard_normal((n, n + 1)))[:, 1:]  # as Lemke's tableau holds B^-1
    W = rng.standard_normal((n, n)) * (rng.random((n, n)) < share)
    j = 5
    assert (np.count_nonzero(W[:, j]) > lcp.GATHER_SHARE * n) == (share > lcp.GATHER_SHARE)  # the branch meant
    column = lcp._tableau_column(W, binv, n + j)
    exact = -(binv.astype(np.longdouble) @ W[:, j].astype(np.longdouble))
    u = np.finfo(float).eps / 2
    bound = 2 * (n * u / (1 - n * u)) * (np.abs(binv) @ np.abs(W[:, j]))
    assert np.all(np.abs(column - exact) <= bound)


def test_large_lemke_runs_on_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above SPARSE_PIVOT_SIZE Lemke's paths run with BLAS limited to one thread (their products are
    memory-bound, and a threaded one waits for busy cores), and the caller's limit is back afterwards."""
    import threadpoolctl  # a runtime dependency (the package's threads.py)

    def blas_threads() -> int:
        # (1 where threadpoolctl finds no BLAS: then nothing can run threaded)
        return max((info["num_threads"] for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"), default=1)

    seen: list[int] = []
    original = lcp._tableau_column

    def recording(*args: object) -> np.ndarray:
        seen.append(blas_threads())
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(lcp, "_tableau_column", recording)
    rng = np.random.default_rng(1)
    n = lcp.SPARSE_PIVOT_SIZE + 22
    A = rng.standard_normal((n, 40))
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        lemke(A @ A.T + np.eye(n), rng.standard_normal(n))
        after = blas_threads()
    assert seen and set(seen) == {1}
    assert after == before


def test_lemke_pivot_cap_is_reported() -> None:
    """A problem needing more than one pivot fails loudly when capped at one pivot."""
    W, w = _random_lcp(3, 5, "p", degenerate=False)
    w = -np.abs(w) - 1.0
    with pytest.raises(LCPError, match="pivot cap"):
        lemke(W, w, max_pivots=1)


def test_lemke_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="W must have shape"):
        lemke(np.eye(2), np.ones(3))
    with pytest.raises(ValueError, match="finite"):
        lemke(np.eye(2), np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="covering"):
        lemke(np.eye(2), np.array([-1.0, 1.0]), covering=np.array([1.0, -1.0]))


@pytest.mark.parametrize("bad", [np.nan, np.inf, 0.0, -1.0])
@pytest.mark.parametrize("solve", [lemke, solve_lcp], ids=["lemke", "solve_lcp"])
def test_a_covering_entry_that_is_not_positive_and_finite_is_refused(solve: Callable, bad: float) -> None:
    """A NaN covering entry passed ``covering <= 0`` unnoticed and an infinite one makes every ratio
    NaN: each is refused before any pivot, by the one check :func:`lemke` and :func:`solve_lcp` share,
    naming the entry; a covering of the wrong length names its shape."""
    with pytest.raises(ValueError, match=re.escape(f"covering must be positive and finite, got covering[1] = {bad!r}")):
        solve(np.eye(2), np.array([-1.0, 1.0]), covering=np.array([1.0, bad]))
    with pytest.raises(ValueError, match=re.escape("covering must have shape (2,) to match w, got (3,)")):
        solve(np.eye(2), np.array([-1.0, 1.0]), covering=np.ones(3))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_solution_with_a_non_finite_entry_fails_the_residual_check(bad: float) -> None:
    """``z = [1, bad]`` for ``LCP(I, [-1, 0])``, whose solution is ``z = [1, 0]``: any NaN or
    infinite entry must give residual ``inf`` (NaN compares false, so without the check the
    violations below would all read as 0 and a NaN solution would pass)."""
    W, w = np.eye(2), np.array([-1.0, 0.0])
    assert lcp_residual(W, w, np.array([1.0, 0.0])) == 0.0
    assert lcp_residual(W, w, np.array([1.0, bad])) == np.inf


def test_trivial_lcp_returns_zero() -> None:
    """``w >= 0``: ``z = 0`` is a solution and Lemke needs no pivot."""
    solution = lemke(np.eye(3), np.array([1.0, 0.0, 2.0]))
    assert solution.pivots == 0
    np.testing.assert_array_equal(solution.z, np.zeros(3))


@pytest.mark.parametrize("family", ["p", "copositive-plus"])
def test_batched_solver_returns_valid_solutions_on_every_sample(family: str) -> None:
    """Every row of a batch solved through cached bases satisfies ``z >= 0``, ``Wz + w >= 0``
    and ``z^T (Wz + w) ~ 0`` (checked independently of the solver)."""
    W, _ = _random_lcp(11, 6, family, degenerate=False)
    rng = np.random.default_rng(0)
    u = rng.normal(size=(4000, 6))
    u[:, :2] = np.abs(u[:, :2])
    u[:, 2:] = u[:, 2:] ** 2 + 0.5  # feasible: w = u has positive entries beyond the first two
    u[rng.random(4000) < 0.3, 2] = 0.0  # degenerate rows
    u[:, 0] = -np.abs(u[:, 0])
    solver = BatchedLCPSolver(W, sparsify=(1,))
    z = solver.solve(u, rng, explore=8)
    for row, sample in zip(z, u, strict=True):
        assert lcp_residual(W, sample, row) <= 1e-8
    assert solver.stats.lemke_calls < 4000  # the cache answered most samples
    assert solver.stats.bases == len(solver.bases) >= 1


def test_batched_solver_ranks_its_bases_per_group() -> None:
    """Each ``group`` ranks the shared cache by its own hits.

    ``LCP(1, w)`` has one solution: ``z = 0`` (``y`` basic) for ``w >= 0``, ``z = -w`` (``z``
    basic) for ``w < 0``.  Group 0 solves 100 positive ``w``, group 1 solves 50 negative ones:
    each group's most-hit basis is its own, although the ``y`` basis has more hits in all (a
    ranking shared by the groups would put it first in both)."""
    solver = BatchedLCPSolver(np.array([[1.0]]))
    rng = np.random.default_rng(0)
    positive, negative = 0.1 + rng.random((100, 1)), -0.1 - rng.random((50, 1))
    np.testing.assert_array_equal(solver.solve(positive, rng, group=0), 0.0)
    np.testing.assert_array_equal(solver.solve(negative, rng, group=1), -negative)
    assert [basis.tolist() for basis in solver.ranked_bases(0)] == [[False], [True]]
    assert [basis.tolist() for basis in solver.ranked_bases(1)] == [[True], [False]]
    assert [basis.tolist() for basis in solver.ranked_bases(2)] == [[False], [True]]  # unhit: in the order found


def test_algorithm_1_ranks_each_step_as_its_own_group() -> None:
    """``integrate`` hands step ``first_step + i`` to the solver as its ``group``, one call a step."""
    example = planar.rocking_block()
    solver = step_solver(example.problem)
    groups: list[int] = []
    solve = solver.solve

    def recording(*args: object, group: int = 0, **kwargs: object) -> np.ndarray:
        groups.append(group)
        return solve(*args, group=group, **kwargs)  # type: ignore[arg-type]

    solver.solve = recording  # type: ignore[method-assign]
    rng = np.random.default_rng(2)
    caps = example.step * rng.random((64, 6, example.problem.contacts))
    run = integrate(example.problem, solver, np.tile(example.v_minus, (64, 1)), caps, rng, first_step=7)
    assert groups == list(range(7, 7 + int(run.steps.max())))


def test_lemke_solver_matches_lcp_conditions() -> None:
    """The per-sample randomized solver also returns valid solutions."""
    W, _ = _random_lcp(5, 4, "p", degenerate=False)
    rng = np.random.default_rng(1)
    u = rng.normal(size=(50, 4))
    z = LemkeSolver(W, sparsify=(0, 1)).solve(u, rng)
    for row, sample in zip(z, u, strict=True):
        assert lcp_residual(W, sample, row) <= 1e-9


@pytest.mark.parametrize("kind", [BatchedLCPSolver, LemkeSolver])
def test_solver_writes_z_into_out(kind: type) -> None:
    """``solve(..., out=buffer)`` returns ``buffer`` holding the ``z`` a call without it returns
    from the same random stream (every row written, whatever the buffer held); a buffer of
    another shape is refused."""
    W, _ = _random_lcp(5, 4, "p", degenerate=False)
    u = np.random.default_rng(2).normal(size=(300, 4))
    expected = kind(W, sparsify=(0, 1)).solve(u, np.random.default_rng(3), explore=4)
    buffer = np.full((300, 4), np.nan)
    z = kind(W, sparsify=(0, 1)).solve(u, np.random.default_rng(3), explore=4, out=buffer)
    assert z is buffer
    np.testing.assert_array_equal(z, expected)
    with pytest.raises(ValueError, match="out must be a float array of shape"):
        kind(W).solve(u, np.random.default_rng(3), out=np.empty((299, 4)))


@pytest.mark.parametrize("kind", [BatchedLCPSolver, LemkeSolver])
def test_solver_returns_the_requested_entries_of_z(kind: type) -> None:
    """``solve(..., entries=slice(1, 3))`` returns columns 1 and 2 of the ``z`` a call without it
    returns from the same random stream (into an ``out`` of that width); an ``out`` of the full
    width is then refused."""
    W, _ = _random_lcp(5, 4, "p", degenerate=False)
    u = np.random.default_rng(2).normal(size=(300, 4))
    expected = kind(W, sparsify=(0, 1)).solve(u, np.random.default_rng(3), explore=4)
    buffer = np.full((300, 2), np.nan)
    z = kind(W, sparsify=(0, 1)).solve(u, np.random.default_rng(3), explore=4, out=buffer, entries=slice(1, 3))
    assert z is buffer
    np.testing.assert_array_equal(z, expected[:, 1:3])
    with pytest.raises(ValueError, match="out must be a float array of shape"):
        kind(W).solve(u, np.random.default_rng(3), out=np.empty((300, 4)), entries=slice(1, 3))


def test_lemke_solves_a_step_lcp_with_small_velocities_beside_large_caps() -> None:
    """A regression case (found by the bulk loop): Lemke must not depend on units.

    Two planar contacts on a 2-DoF body (``M = diag(1.4, 0.7)``), both approaching at about
    2e-7 and 4e-7 m/s, caps 0.3 and 1.1 N s.  An exact solution exists (the LCP solved with
    every entry of ``w`` times 1e3 gives it, scaled).  Harris's ratio test with a slack of
    1e-9 of the largest basic value (the caps) is as wide as the velocity rows here and let
    a basic value end at -2e-9, a residual of 2e-9; Lemke must then follow the textbook
    ratio test and return a solution within 1e-9.
    """
    Jn, Jt = np.array([[-0.9, 0.0], [-1.7, -0.4]]), np.array([[[-1.5, 1.7]], [[-2.8, 1.4]]])
    problem = ImpactProblem(np.diag([1.4, 0.7]), Jn, Jt, np.array([0.7, 0.4]))
    v, caps = np.array([2e-7, 1e-7]), np.array([0.3, 1.1])
    W, R = problem.step_matrix, problem.step_rhs_map
    scaled = lemke(W, R @ np.concatenate([caps * 1e3, v * 1e3]))  # the same LCP, every entry of w times 1e3
    assert lcp_residual(W, R @ np.concatenate([caps, v]), scaled.z / 1e3) <= RESIDUAL_TOL
    solution = lemke(W, R @ np.concatenate([caps, v]))
    assert solution.residual <= RESIDUAL_TOL


def test_lemke_is_scale_invariant() -> None:
    """``LCP(a W, b w)`` is solved by ``b z / a`` when ``z`` solves ``LCP(W, w)``; with every
    tolerance relative, Lemke returns exactly that at a = 1e-6, b = 1e-9 and a = 1e4, b = 1e6
    (rocking-block step LCP of journal eq. 75), and the residual does not change."""
    example = planar.rocking_block()
    problem = example.problem
    W, R = problem.step_matrix, problem.step_rhs_map
    w = R @ np.concatenate([[0.1, 0.2], example.v_minus])
    reference = lemke(W, w)
    for a, b in ((1e-6, 1e-9), (1e4, 1e6)):
        scaled = lemke(a * W, b * w)
        np.testing.assert_allclose(scaled.z, b * reference.z / a, rtol=1e-9, atol=0.0)
        assert lcp_residual(a * W, b * w, scaled.z) <= 1e-9


# --------------------------------------------------------------------------- solve_lcp's chain
def _step_lcp(seed: int, m: int = 3, nv: int = 6, duplicate: bool = False) -> tuple[ImpactProblem, np.ndarray, np.ndarray]:
    """A random spatial step LCP (eq. 75): ``(problem, caps, v)``; ``duplicate`` repeats contact 0's rows."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(nv, nv))
    Jn, Jt = rng.normal(size=(m, nv)), rng.normal(size=(m, 2, nv))
    if duplicate:
        Jn[1], Jt[1] = Jn[0], Jt[0]
    problem = ImpactProblem(a @ a.T / nv + 0.1 * np.eye(nv), Jn, Jt, rng.uniform(0.0, 2.0, m))
    v = rng.normal(size=nv)
    if not problem.colliding(v):
        v = -v
    return problem, rng.uniform(0.0, 1.0, m), v


def _always_fails(*args: object, **kwargs: object) -> None:
    raise LemkeError("injected Lemke failure")


@pytest.mark.parametrize("seed", range(6))
def test_solve_lcp_with_an_rng_draws_as_randomized_lemke_did(seed: int) -> None:
    """The fast path is unchanged: ``solve_lcp(W, w, rng=...)`` returns what Lemke with the
    first random covering vector drawn from the same generator returns, and leaves the
    generator in the same state (one covering vector drawn)."""
    problem, caps, v = _step_lcp(seed)
    W, w = problem.step_matrix, problem.step_rhs_map @ np.concatenate([caps, v])
    rng_a, rng_b = np.random.default_rng(seed), np.random.default_rng(seed)
    solution = solve_lcp(W, w, rng=rng_a)
    reference = lemke(W, w, covering=random_covering(rng_b, w.shape[0]))
    np.testing.assert_array_equal(solution.z, reference.z)
    assert solution.method == "lemke" and not solution.fallback
    assert rng_a.random() == rng_b.random()


@pytest.mark.parametrize("duplicate", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_complete_stage_solves_step_lcps_to_full_precision(seed: int, duplicate: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every Lemke stage made to fail, ``solve_lcp`` still returns a solution of the step
    LCP within ``RESIDUAL_TOL`` (recomputed here), from the mixed-integer stage, and says so;
    also with two identical contacts (redundant rows: a singular ``W_SS``)."""
    problem, caps, v = _step_lcp(seed, duplicate=duplicate)
    W, w = problem.step_matrix, problem.step_rhs_map @ np.concatenate([caps, v])
    monkeypatch.setattr(lcp_module, "lemke_prechecked", _always_fails)
    monkeypatch.setattr(lcp_module, "lemke_equilibrated", _always_fails)
    solution = solve_lcp(W, w, rng=np.random.default_rng(seed), bounds=step_lcp_bounds(problem, caps, v))
    assert solution.method == "milp" and solution.fallback
    assert lcp_residual(W, w, solution.z) <= RESIDUAL_TOL


def _badly_scaled_p_lcp(seed: int, n: int = 6) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(W, w, A, q)``: a P-matrix LCP ``(A, q)`` and its scaled copy ``W = S A S``, ``w = S q``, with
    ``S`` from 1e-4 to 1e4 (``W``'s entries span 16 decades).  ``z_A`` solves ``(A, q)`` iff
    ``S^-1 z_A`` solves ``(W, w)``: ``S q + S A S (S^-1 z_A) = S (q + A z_A)`` keeps signs and
    complementarity, so the scaled LCP's unique solution is ``S^-1 z_A``."""
    A, q = _random_lcp(seed, n, "p", degenerate=seed % 2 == 1)
    scale = np.geomspace(1e-4, 1e4, n)[np.random.default_rng(seed).permutation(n)]
    return scale[:, None] * A * scale[None, :], scale * q, A, q


@pytest.mark.parametrize("seed", range(6))
def test_equilibration_bounds_every_entry_by_one_and_evens_the_rows(seed: int) -> None:
    """Each sweep divides entry ``(i, j)`` by ``sqrt(r_i r_j)`` with ``r_i, r_j`` (the largest of row
    and column ``i``, ``j``) both at least that entry, so after any sweep every entry is at most 1
    (up to rounding); and the rows' largest entries, 16 decades apart before, end within a
    factor 100 (Ruiz's scaling converges linearly; 10 sweeps)."""
    W = _badly_scaled_p_lcp(seed)[0]
    d = lcp.equilibration(W)
    scaled = np.abs(d[:, None] * W * d[None, :])
    assert np.all(d > 0.0) and scaled.max() <= 1.0 + 1e-12
    assert scaled.max(axis=1).min() >= 1e-2


@pytest.mark.parametrize("seed", range(6))
def test_lemke_equilibrated_returns_the_unique_solution_of_a_badly_scaled_lcp(seed: int) -> None:
    """On ``W = S A S`` (:func:`_badly_scaled_p_lcp`) the unique solution is ``S^-1 z_A``, with ``z_A``
    found by brute force on the well-scaled ``(A, q)``; ``lemke_equilibrated`` returns it, and its
    basis inverse (mapped back from the scaled basis) reproduces it as ``B^-1 w``."""
    W, w, A, q = _badly_scaled_p_lcp(seed)
    (expected_A,) = _brute_force_solutions(A, q)
    scale = np.geomspace(1e-4, 1e4, w.shape[0])[np.random.default_rng(seed).permutation(w.shape[0])]
    solution = lcp.lemke_equilibrated(W, w, None, None, RESIDUAL_TOL)
    np.testing.assert_allclose(solution.z * scale, expected_A, rtol=1e-9, atol=1e-9 * (1.0 + np.abs(expected_A).max()))
    assert solution.basis_inverse is not None
    basic = np.where(solution.basis, solution.basis_inverse @ w, 0.0)
    np.testing.assert_allclose(basic * scale, expected_A, rtol=1e-9, atol=1e-9 * (1.0 + np.abs(expected_A).max()))
    assert lcp_residual(W, w, solution.z) <= RESIDUAL_TOL


@pytest.mark.parametrize("seed", range(4))
def test_solve_lcp_tries_the_equilibrated_lcp_before_the_complete_stage(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """With Lemke on the unscaled LCP made to fail (every covering, float64 and longdouble),
    ``solve_lcp`` answers from the equilibrated stage, says so, and its solution passes the
    residual check recomputed here on the original step LCP."""
    problem, caps, v = _step_lcp(seed)
    W, w = problem.step_matrix, problem.step_rhs_map @ np.concatenate([caps, v])
    monkeypatch.setattr(lcp_module, "lemke_prechecked", _always_fails)
    solution = solve_lcp(W, w, rng=np.random.default_rng(seed), bounds=step_lcp_bounds(problem, caps, v))
    assert solution.method == "lemke equilibrated" and solution.fallback
    assert lcp_residual(W, w, solution.z) <= RESIDUAL_TOL


@pytest.mark.parametrize("randomized", [True, False])
def test_solve_lcp_runs_its_stages_in_the_documented_order(randomized: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every Lemke stage made to fail and recorded, ``solve_lcp`` tries, in this order
    (its docstring's stages 1-4, 6 and 7 for an LCP of at most ``LARGE_LCP`` rows): the requested
    start (with an ``rng``: ``LEMKE_ATTEMPTS`` random coverings; without: the default coverings),
    the equilibrated LCP, the default coverings (only after a requested start), extended
    precision, ``RESTART_COVERINGS`` restarts on the equilibrated LCP, and last the complete
    stage, which answers."""
    problem, caps, v = _step_lcp(0)
    W, w = problem.step_matrix, problem.step_rhs_map @ np.concatenate([caps, v])
    calls: list[str] = []

    def failing_lemke(
        W: np.ndarray, w: np.ndarray, covering: np.ndarray | None, max_pivots: int | None, tol: float, dtype: type = np.float64
    ) -> None:
        calls.append(("random covering" if covering is not None else "default coverings") + ("" if dtype is np.float64 else " longdouble"))
        raise LemkeError("injected Lemke failure")

    def failing_equilibrated(*args: object, **kwargs: object) -> None:
        calls.append("equilibrated")
        raise LemkeError("injected Lemke failure")

    monkeypatch.setattr(lcp_module, "lemke_prechecked", failing_lemke)
    monkeypatch.setattr(lcp_module, "lemke_equilibrated", failing_equilibrated)
    rng = np.random.default_rng(0) if randomized else None
    solution = solve_lcp(W, w, rng=rng, bounds=step_lcp_bounds(problem, caps, v))
    start = ["random covering"] * lcp.LEMKE_ATTEMPTS if randomized else ["default coverings"]
    restarts = ["equilibrated"] * lcp_module.RESTART_COVERINGS
    assert calls == [*start, "equilibrated", *(["default coverings"] if randomized else []), "default coverings longdouble", *restarts]
    assert solution.method == "milp"


@pytest.mark.parametrize("seed", range(10))
def test_complete_stage_finds_the_unique_solution_of_p_matrix_lcps(seed: int) -> None:
    """On a P-matrix LCP (unique solution, found by brute force over all 2^n bases) the
    complete stage, without bounds, returns that solution."""
    W, w = _random_lcp(seed, 6, "p", degenerate=seed % 2 == 1)
    (expected,) = _brute_force_solutions(W, w)
    np.testing.assert_allclose(complete_solve(W, w, None).z, expected, atol=1e-9 * (1.0 + np.abs(expected).max()))


def test_solve_lcp_raises_lcp_error_only_when_there_is_no_solution() -> None:
    """``LCP([[-1]], [-1])`` needs ``z >= 0`` with ``-z - 1 >= 0``: no feasible point at all, so
    no solution; with or without bounds the message says so."""
    W, w = np.array([[-1.0]]), np.array([-1.0])
    with pytest.raises(LCPError, match="has no solution") as without:
        solve_lcp(W, w)
    with pytest.raises(LCPError, match="has no solution") as with_bounds:
        solve_lcp(W, w, bounds=np.array([10.0]))
    assert type(without.value) is LCPError and type(with_bounds.value) is LCPError


def test_solver_failure_is_not_reported_as_no_solution() -> None:
    """A mixed-integer solve stopped by its time limit is a solver failure
    (:class:`LCPSolverError`), not a verdict on the LCP."""
    problem, caps, v = _step_lcp(3, m=8, nv=12)
    W, w = problem.step_matrix, problem.step_rhs_map @ np.concatenate([caps, v])
    with pytest.raises(LCPSolverError, match="stopped without an answer"):
        milp_lcp(W, w, step_lcp_bounds(problem, caps, v), time_limit=1e-9)


def test_fallbacks_are_counted_and_give_valid_solutions(monkeypatch: pytest.MonkeyPatch) -> None:
    """When randomized Lemke fails, both branch samplers answer the solves they need with the
    deterministic stages and count each in ``stats.fallbacks``, and drop the sparsified
    exploration probes (``stats.dropped_probes``); every Lemke call is one of the two, and every
    answer is a solution."""
    problem, caps, v = _step_lcp(4)
    u = np.tile(np.concatenate([caps, v]), (5, 1))
    original = lcp_module.lemke_prechecked

    def fails_on_random_coverings(W: np.ndarray, w: np.ndarray, covering: np.ndarray | None, *args: object) -> object:
        if covering is not None:
            raise LemkeError("injected failure of a random covering")
        return original(W, w, covering, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(lcp_module, "lemke_prechecked", fails_on_random_coverings)
    for batched in (False, True):
        solver = step_solver(problem, batched=batched)
        z = solver.solve(u, np.random.default_rng(0), explore=2)
        assert solver.stats.fallbacks >= 1 and solver.stats.dropped_probes >= 1
        assert solver.stats.fallbacks + solver.stats.dropped_probes == solver.stats.lemke_calls
        for row in z:
            assert lcp_residual(problem.step_matrix, problem.step_rhs_map @ u[0], row) <= RESIDUAL_TOL


@pytest.mark.parametrize("batched", [False, True])
def test_a_failed_probe_runs_no_deterministic_stage(batched: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sparsified exploration probe runs randomized Lemke alone: with Lemke made to fail on
    every probe (its right-hand side has a zeroed cap, which no sample here has: all caps are in
    (0.1, 1)), no deterministic stage is ever called on a probe's LCP, each probe is counted as
    dropped, and every sample is answered by the solve of its own LCP (a solution, checked)."""
    problem, caps, v = _step_lcp(4)
    caps = 0.1 + 0.9 * caps
    u = np.tile(np.concatenate([caps, v]), (32, 1))  # LemkeSolver probes each sample with probability 1/2
    m = problem.contacts
    original = lcp_module.lemke_prechecked
    deterministic_on_probes = []

    def fails_on_probes(W: np.ndarray, w: np.ndarray, covering: np.ndarray | None, *args: object) -> object:
        probe = bool(np.any(w[:m] == 0.0))  # the cap rows of the step LCP (eq. 75a)
        if probe and covering is None:
            deterministic_on_probes.append(w)
        if probe:
            raise LemkeError("injected failure on a probe")
        return original(W, w, covering, *args)  # type: ignore[arg-type]

    equilibrated = lcp_module.lemke_equilibrated

    def recorded_equilibrated(W: np.ndarray, w: np.ndarray, *args: object, **kwargs: object) -> object:
        if np.any(w[:m] == 0.0):
            deterministic_on_probes.append(w)
        return equilibrated(W, w, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lcp_module, "lemke_prechecked", fails_on_probes)
    monkeypatch.setattr(lcp_module, "lemke_equilibrated", recorded_equilibrated)
    solver = step_solver(problem, batched=batched)
    z = solver.solve(u, np.random.default_rng(1), explore=4)
    assert solver.stats.dropped_probes >= 1
    assert not deterministic_on_probes
    assert solver.stats.fallbacks == 0
    for row in z:
        assert lcp_residual(problem.step_matrix, problem.step_rhs_map @ u[0], row) <= RESIDUAL_TOL


def test_solve_lcp_without_the_complete_stages_needs_a_start() -> None:
    """``complete=False`` means "stage 1 only", so it needs the start stage 1 is about."""
    with pytest.raises(ValueError, match="complete=False"):
        solve_lcp(np.eye(2), np.array([-1.0, 1.0]), complete=False)


@pytest.mark.parametrize("seed", range(20))
def test_step_lcp_bounds_hold_for_a_solution(seed: int) -> None:
    """:func:`step_lcp_bounds` (derived in its docstring) bounds a solution: Lemke's solution,
    with each ``beta_i`` and ``gamma_i`` lowered to the least value its rows allow (still a
    solution, recomputed), lies within them, up to Lemke's round-off (``RESIDUAL_TOL`` of
    its largest entry: a zero cap's impulse may come out as 1e-15)."""
    problem, caps, v = _step_lcp(seed, m=4)
    caps[seed % 4] = 0.0
    W, w = problem.step_matrix, problem.step_rhs_map @ np.concatenate([caps, v])
    m, k = problem.contacts, problem.directions
    z = lemke(W, w).z.copy()
    velocity = problem.Jbar @ v + problem.delassus @ z[m : 2 * m + m * k]  # [Jn; J_D] v+ of the step
    z[:m] = np.where(z[:m] > 0.0, np.maximum(0.0, -velocity[:m]), 0.0)
    z[-m:] = np.where(z[-m:] > 0.0, np.maximum(0.0, -velocity[m:].reshape(m, k)).max(axis=1), 0.0)
    assert lcp_residual(W, w, z) <= RESIDUAL_TOL
    assert np.all(z <= step_lcp_bounds(problem, caps, v) + RESIDUAL_TOL * z.max())


# --------------------------------------------------------------------------- the laws on large and degenerate problems
def test_auto_step_size_ignores_zero_normal_rows() -> None:
    """A contact whose normal Jacobian row is zero (it cannot move along its normal) has
    ``Jn_i M^-1 Jn_i^T = 0``; ``step_size`` must not divide 0/0 (which made it fall back to
    1 N s) but use the other contact: ``-Jn_1 v / (Jn_1 M^-1 Jn_1^T) = 2 / (1 / 4) = 8`` N s
    for ``M = diag(4, 1)``, ``Jn_1 = [1, 0]``, ``v = [-2, 0]``."""
    problem = ImpactProblem(np.diag([4.0, 1.0]), np.array([[0.0, 0.0], [1.0, 0.0]]), np.zeros((2, 1, 2)), 0.0)
    assert RouthImpact("auto", 5).step_size(problem, np.array([-2.0, 0.0])) == pytest.approx(8.0, rel=1e-14)


@pytest.mark.parametrize("seed", range(3))
def test_auto_step_finishes_a_heavy_body_landing_on_a_light_one(seed: int) -> None:
    """A light body (mass 1e-8) resting on the ground, a heavy one (mass 1) landing on it at 1 m/s.

    Coordinates: heights ``x = (x_light, x_heavy)``; contacts ground-light (``Jn = [1, 0]``,
    resting) and light-heavy (``Jn = [-1, 1]``, approaching at 1 m/s), frictionless.  The auto
    step stops the approaching contact alone: ``1 / (1e8 + 1)`` N s.  Stopping the heavy body
    takes 1 N s through that contact, but ``max_steps + final_steps + 1 = 151`` steps of at
    most ``h`` supply 1.5e-6 N s: with that step fixed the impact cannot end.  The
    Anitescu-Potra impulses (both 1 N s: the light body ends at rest, so the two impulses on it
    balance) set the continuation's step, whose 100 caps ``U[0, 1]`` N s per contact fall short
    of the needed ~1 N s with probability below ``2^100 / 100!``: it terminates."""
    M = np.diag([1e-8, 1.0])
    problem = ImpactProblem(M, np.array([[1.0, 0.0], [-1.0, 1.0]]), np.zeros((2, 1, 2)), 0.0)
    v_minus = np.array([0.0, -1.0])
    h = RouthImpact("auto", 50).step_size(problem, v_minus)
    assert h == pytest.approx(1.0 / (1e8 + 1.0), rel=1e-12)
    assert not RouthImpact(h, 50).resolve(problem, v_minus, rng=seed, unfinished="return").terminated
    result = RouthImpact("auto", 50).resolve(problem, v_minus, rng=seed)
    assert result.terminated and not problem.colliding(result.v_plus).any()
    assert result.energy_after <= result.energy_before * (1.0 + 1e-12)
    # Non-colliding within COLLISION_TOL: v1+ >= -tol and v2+ - v1+ >= -tol, so v2+ = -1 + lambda_2 >= -2 tol.
    assert result.normal_impulse[1] >= 1.0 - 2.0 * COLLISION_TOL


@pytest.mark.parametrize("law", [AnitescuPotraImpact(), RouthImpact("auto", 50)], ids=["anitescu-potra", "routh"])
def test_a_box_landing_flat_on_128_contacts(law: ImpactLaw) -> None:
    """No contact cap: a planar box (mass 1, inertia 1/6) landing flat on 128 points of its
    bottom edge at ``v = (0.3, -1, 0.5)`` with ``mu = 0.5``.  Stopping it takes the impulse
    ``M (0 - v) = (-0.3, 1, -1/12)``: normal 1 and tangential 0.3 <= mu 1 (inside the
    cone), and the torque ``-1/12 = sum x_i n_i + 0.5 t`` needs the normal impulses'
    centroid at ``x = 1/15``, inside the edge; sliding is impossible (friction ``mu = 0.5``
    would reverse ``vx = 0.3``).  Every contact then sticks: ``v+ = 0`` for the
    Anitescu-Potra law; Routh's outcome must end non-colliding without energy gain."""
    M, Jn, Jt = rigid_body_contacts(np.random.default_rng(0), 128, spatial=False)
    problem = ImpactProblem(M, Jn, Jt, 0.5)
    result = law.resolve(problem, np.array([0.3, -1.0, 0.5]), rng=0)
    assert result.terminated and not problem.colliding(result.v_plus).any()
    assert result.energy_after <= result.energy_before * (1.0 + 1e-12)
    if isinstance(law, AnitescuPotraImpact):
        np.testing.assert_allclose(result.v_plus, 0.0, atol=1e-9)


# --------------------------------------------------------------------------- Routh's resolve always finishes
def _algorithm_1(law: RouthImpact, problem: ImpactProblem, v: np.ndarray, seed: int) -> np.ndarray:
    """Algorithm 1 as ``resolve`` ran it before the final phase existed: ``N`` steps of caps ``h U[0, 1]^m``."""
    rng = np.random.default_rng(seed)
    caps = law.step_size(problem, v) * rng.random((1, law.max_steps, problem.contacts))
    return integrate(problem, step_solver(problem, batched=False), v[None, :], caps, rng).velocity[0]


def test_resolve_finishes_compass_gait_impacts_and_keeps_the_others_unchanged() -> None:
    """The compass gait (journal Sec. 6, ``N = 5``): about 1.5% of Algorithm-1 runs still
    collide after 5 steps.  ``resolve`` must finish every one of 300 seeds within
    its documented bound ``max_steps + final_steps + 1``, without energy gain, and give the
    very same ``v+`` (bit for bit) as plain Algorithm 1 wherever that terminated."""
    example = planar.compass_gait()
    law = RouthImpact(example.step, example.max_steps)
    finished_late = 0
    for seed in range(300):
        result = law.resolve(example.problem, example.v_minus, rng=seed)
        assert result.terminated and not example.problem.colliding(result.v_plus).any()
        assert result.steps == min(result.steps, law.max_steps) + result.info["final_steps"]
        assert result.steps <= law.max_steps + law.final_steps + 1
        assert result.energy_after <= result.energy_before * (1.0 + 1e-12)
        plain = _algorithm_1(law, example.problem, example.v_minus, seed)
        if example.problem.colliding(plain).any():
            finished_late += 1
            assert result.info["final_steps"] >= 1
        else:
            np.testing.assert_array_equal(result.v_plus, plain)
            assert result.info["final_steps"] == 0
    assert finished_late >= 1  # the phase was exercised


def test_resolve_reports_an_impact_it_cannot_finish() -> None:
    """With ``final_steps=1`` and a tiny ``step`` (1e-4 N s against a 1 m/s approach of a unit
    mass: 1 N s needed) no run can end: ``terminated=False`` with a message naming both bounds,
    never silently: an :class:`UnfinishedImpactWarning` by default, an :class:`ImpactFailure`
    with ``unfinished="raise"``."""
    problem = ImpactProblem(np.eye(1), np.array([[1.0]]), np.zeros((1, 1, 1)), 0.0)
    law = RouthImpact(1e-4, 3, final_steps=1)
    with pytest.warns(UnfinishedImpactWarning, match="max_steps=3"):
        result = law.resolve(problem, np.array([-1.0]), rng=0)
    assert not result.terminated and result.steps == 3 + 1 + 1
    assert "max_steps=3" in result.message and "1 more" in result.message
    with pytest.raises(ImpactFailure, match=r"RouthImpact\.resolve did not terminate"):
        law.resolve(problem, np.array([-1.0]), rng=0, unfinished="raise")
    with pytest.raises(ValueError, match="unfinished must be one of 'warn', 'raise', 'return', got 'ignore'"):
        law.resolve(problem, np.array([-1.0]), rng=0, unfinished="ignore")


def test_final_steps_is_validated() -> None:
    with pytest.raises(ValueError, match="final_steps must be an integer >= 1, got 0"):
        RouthImpact(0.1, 5, final_steps=0)


@pytest.mark.parametrize("seed", range(4))
def test_extended_precision_lemke_finds_the_unique_solution(seed: int) -> None:
    """Stage 3 of ``solve_lcp`` (Lemke in ``np.longdouble``) returns, in float64, the unique
    solution of a P-matrix LCP (brute force over all 2^n bases)."""
    W, w = _random_lcp(seed, 6, "p", degenerate=True)
    (expected,) = _brute_force_solutions(W, w)
    solution = lemke(W, w, dtype=np.longdouble)
    assert solution.z.dtype == np.float64 and solution.basis_inverse is not None and solution.basis_inverse.dtype == np.float64
    np.testing.assert_allclose(solution.z, expected, atol=1e-9 * (1.0 + np.abs(expected).max()))


def test_large_lemke_in_both_arithmetics_ends_in_the_unique_solution() -> None:
    """Above SPARSE_PIVOT_SIZE the pivot updates float64 tableaus with BLAS and extended-precision
    ones with numpy (BLAS has no such type): both must end in the same solution.  ``W = A A^T + I``
    (``A`` 150 x 40) is positive definite, so the LCP has exactly one solution; with ``w``
    standard normal it is nondegenerate (checked: every pair has ``z_i + y_i > 1e-6``), so its
    complementary basis is unique too and both runs must return it, each within the residual
    tolerance.  Their ``z`` then solve one linear system (the basis's), so they agree to the
    tolerance times the scale."""
    rng = np.random.default_rng(0)
    n = lcp.SPARSE_PIVOT_SIZE + 22
    A = rng.standard_normal((n, 40))
    W, w = A @ A.T + np.eye(n), rng.standard_normal(n)
    fast, extended = lemke(W, w), lemke(W, w, dtype=np.longdouble)
    assert np.min(fast.z + fast.y) > 1e-6  # nondegenerate: the premise of a unique basis
    assert fast.pivots > 0 and fast.residual <= 1e-9 and extended.residual <= 1e-9
    np.testing.assert_array_equal(fast.basis, extended.basis)
    np.testing.assert_allclose(fast.z, extended.z, atol=1e-9 * (1.0 + np.abs(fast.z).max()))
