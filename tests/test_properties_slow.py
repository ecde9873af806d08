"""Property tests at scale: 10^4 random step LCPs and 10^4 random impacts under every law.

Slow tier: ``python -m pytest -m slow`` (CI runs it too).  The two 10^4 loops are split over
two worker processes (spawned, single-threaded BLAS: the matrices are small, and two BLAS
thread pools on two cores only contend); each case is built from its seed alone, so any
failure is reproduced by ``step_lcp(seed)`` or ``impact_problem(seed)`` in one process.

The families (drawn so that what the package meets in simulation is inside them):

- ``M = (A A^T / nv + c I) s`` with ``A`` Gaussian, ``c`` log-uniform in ``[1e-3, 1]`` and a
  mass scale ``s`` log-uniform over four decades: SPD, condition number up to about 4e3;
- Gaussian ``Jn`` and ``Jt`` (planar: one tangent, spatial: two), a fifth of the contacts
  duplicating an earlier one (coincident points, as a box edge's corners in a planar model);
- ``mu`` uniform in ``[0, 10]``, a fifth exactly frictionless;
- a Gaussian velocity of log-uniform scale with about a quarter of the contacts exactly
  resting (``Jn_i v = 0`` up to round-off, as after an earlier impact), redrawn until some
  contact collides (Algorithm 1 only steps while one does);
- for the step LCP, caps ``h U[0, 1]`` with ``h`` log-uniform and a fifth of them zero (the
  sparsified exploration of :class:`~bullet_setimpact.core.branch_sampling.LemkeSolver`).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bullet_setimpact import (
    LAWS,
    AnitescuPotraImpact,
    ImpactProblem,
    LCPError,
    PlasticImpact,
    PropagativeImpact,
    RouthImpact,
    SequentialImpact,
)
from bullet_setimpact.core import lcp_solve as lcp_module
from bullet_setimpact.core.branch_sampling import random_lemke
from bullet_setimpact.core.lcp import RESIDUAL_TOL, lcp_residual, random_covering
from bullet_setimpact.core.lcp_solve import solve_lcp
from bullet_setimpact.errors import LemkeError
from bullet_setimpact.laws.routh import step_lcp_bounds

pytestmark = pytest.mark.slow

#: Sweep size of the bulk families: ``BULLET_SETIMPACT_SWEEP`` LCPs and as many impacts per law
#: (10,000 by default, as CI runs them; a smaller value gives a quicker, weaker local check).
SWEEP = os.environ.get("BULLET_SETIMPACT_SWEEP", "10000")
if not SWEEP.isdigit() or int(SWEEP) < 1:
    raise ValueError(f"BULLET_SETIMPACT_SWEEP must be a positive integer, got {SWEEP!r}")
N_LCPS = N_PROBLEMS = int(SWEEP)
WORKERS = min(2, os.cpu_count() or 1)
CHUNK = 250
#: Kinetic energy may not rise along a path by more than this fraction of ``E(v-)`` (round-off).
ENERGY_TOL = 1e-12
#: The two ways each bulk LCP is solved (:func:`_solve`).
LCP_SOLVERS = ("solve_lcp", "solve_lcp random covering")


# --------------------------------------------------------------------------- families
@dataclass(frozen=True)
class Shape:
    """The drawn sizes and scales of one random case (log10 of the scales)."""

    nv: int
    m: int
    spatial: bool
    mass_exp: float
    velocity_exp: float
    cap_exp: float


def build_problem(
    rng: np.random.Generator, shape: Shape, mu: np.ndarray, max_attempts: int = 100
) -> tuple[ImpactProblem, np.ndarray] | None:
    """A random impact problem of ``shape`` (module docstring) and a colliding velocity, or
    None if ``max_attempts`` velocity draws never collide (all contacts resting)."""
    nv, m = shape.nv, shape.m
    a = rng.normal(size=(nv, nv))
    M = (a @ a.T / nv + 10.0 ** rng.uniform(-3.0, 0.0) * np.eye(nv)) * 10.0**shape.mass_exp
    Jn = rng.normal(size=(m, nv))
    Jt = rng.normal(size=(m, 2 if shape.spatial else 1, nv))
    for i in range(1, m):
        if rng.random() < 0.2:
            j = int(rng.integers(i))
            Jn[i], Jt[i] = Jn[j], Jt[j]
    problem = ImpactProblem(M, Jn, Jt, mu)
    for _ in range(max_attempts):
        v = rng.normal(size=nv) * 10.0**shape.velocity_exp
        resting = rng.random(m) < 0.25
        if resting.any():
            v -= np.linalg.pinv(Jn[resting]) @ (Jn[resting] @ v)
        for candidate in (v, -v):
            if problem.colliding(candidate):
                return problem, candidate
    return None


def draw_mu(rng: np.random.Generator, m: int) -> np.ndarray:
    """Friction coefficients uniform in [0, 10], a fifth of them exactly 0."""
    return rng.uniform(0.0, 10.0, size=m) * (rng.random(m) >= 0.2)


def draw_case(
    rng: np.random.Generator,
    max_nv: int,
    max_m: int,
    mass_exp: tuple[float, float],
    velocity_exp: tuple[float, float],
    cap_exp: tuple[float, float] | None = None,
) -> tuple[Shape, ImpactProblem, np.ndarray]:
    """Draw shapes (``nv`` in 1..max_nv, ``m`` in 1..max_m, log10 scales uniform in the given
    ranges; ``cap_exp`` 0 when None) until :func:`build_problem` finds a colliding velocity."""
    while True:
        shape = Shape(
            nv=int(rng.integers(1, max_nv + 1)),
            m=int(rng.integers(1, max_m + 1)),
            spatial=bool(rng.random() < 0.5),
            mass_exp=float(rng.uniform(*mass_exp)),
            velocity_exp=float(rng.uniform(*velocity_exp)),
            cap_exp=0.0 if cap_exp is None else float(rng.uniform(*cap_exp)),
        )
        built = build_problem(rng, shape, draw_mu(rng, shape.m))
        if built is not None:
            return (shape, *built)


def step_lcp(seed: int) -> tuple[ImpactProblem, np.ndarray, np.ndarray, np.ndarray]:
    """Step LCP number ``seed`` of the bulk family: ``(problem, v, caps, w)`` with
    ``w = problem.step_rhs_map @ [caps; v]`` and ``W = problem.step_matrix`` (eq. 75).

    Sizes ``m`` in 1..8 and ``nv`` in 1..30; masses over 1e-2..1e2, velocities over
    1e-3..10 and caps over 1e-3..10 (SI units: 10 g to 100 kg bodies, 1 mm/s, the
    simulator's impact threshold, to 10 m/s)."""
    rng = np.random.default_rng(seed)
    shape, problem, v = draw_case(rng, 30, 8, (-2.0, 2.0), (-3.0, 1.0), (-3.0, 1.0))
    caps = 10.0**shape.cap_exp * rng.uniform(0.0, 1.0, size=shape.m) * (rng.random(shape.m) >= 0.2)
    return problem, v, caps, problem.step_rhs_map @ np.concatenate([caps, v])


def impact_problem(seed: int) -> tuple[ImpactProblem, np.ndarray]:
    """Impact problem number ``seed`` of the law family: ``m`` in 1..4, ``nv`` in 1..10,
    masses over 1e-1..10, velocities over 1e-2..10 (modest sizes: the sequential law makes
    up to ``max_cycles m`` single-impact LCP solves per problem)."""
    _, problem, v = draw_case(np.random.default_rng(seed), 10, 4, (-1.0, 1.0), (-2.0, 1.0))
    return problem, v


# --------------------------------------------------------------------------- workers
@dataclass(frozen=True)
class LCPRun:
    """One solve: the solver, and the relative residual of its solution or why it raised."""

    seed: int
    solver: str
    nv: int
    m: int
    spatial: bool
    mu_max: float
    residual: float | None
    error: str = ""
    method: str = ""


def _solve(solver: str, W: np.ndarray, w: np.ndarray, seed: int, bounds: np.ndarray) -> Any:
    """:func:`solve_lcp` from the covering vector of ones, or from a random one drawn from ``seed``."""
    if solver == "solve_lcp":
        return solve_lcp(W, w, bounds=bounds)
    return solve_lcp(W, w, covering=random_covering(np.random.default_rng(seed), w.shape[0]), bounds=bounds)


def solve_lcp_chunk(seeds: Sequence[int]) -> list[LCPRun]:
    """Solve every step LCP of ``seeds`` with :func:`solve_lcp` from the covering vector of
    ones and from a random one (bounds of :func:`step_lcp_bounds` for the complete stage);
    record each solution's residual (recomputed independently with :func:`lcp_residual`)
    and stage, or the exception it raised."""
    runs = []
    for seed in seeds:
        problem, v, caps, w = step_lcp(seed)
        W = problem.step_matrix
        for solver in LCP_SOLVERS:
            meta = (seed, solver, problem.dofs, problem.contacts, problem.spatial, float(problem.mu.max()))
            try:
                solution = _solve(solver, W, w, seed, step_lcp_bounds(problem, caps, v))
            except Exception as exc:  # recorded: the tests decide which exceptions are allowed
                runs.append(LCPRun(*meta, None, f"{type(exc).__name__}: {exc}"))
                continue
            runs.append(LCPRun(*meta, lcp_residual(W, w, solution.z), method=solution.method))
    return runs


def law_instances() -> dict[str, Any]:
    """Every law of ``LAWS``, built as a simulation would use it.  The sequential law gets
    ``max_cycles=100`` instead of 1000: a problem it cannot finish then costs 100 m instead of
    1000 m single-impact solves, which keeps 10^4 problems within the time budget."""
    laws = {
        "routh": RouthImpact(step="auto", max_steps=50),
        "anitescu-potra": AnitescuPotraImpact(),
        "sequential": SequentialImpact(max_cycles=100),
        "plastic": PlasticImpact(),
    }
    laws.update({f"propagative R={R}": PropagativeImpact(restitution=R, ignore_friction=True) for R in (0.0, 0.5, 1.0)})
    return laws


@dataclass(frozen=True)
class LawRun:
    """The checked quantities of one ``law.resolve`` (see :func:`resolve_chunk`)."""

    seed: int
    law: str
    error: str
    terminated: bool = False
    message: str = ""
    steps: int = 0
    energy_rise: float = 0.0
    in_cone: bool = True
    cone_excess: float = 0.0
    friction_max: float = 0.0
    colliding_after: bool = False
    newton_error: float = 0.0


def cone_excess(problem: ImpactProblem, lambda_n: np.ndarray, lambda_t: np.ndarray) -> float:
    """How far the tangential impulses stick out of the linearized cone, over ``1 + max
    lambda_n`` (the scale of ``in_friction_cone``'s tolerance): the largest of
    ``|lambda_t| - mu lambda_n`` (planar) or of the support along the polygon's edge normals
    minus ``mu lambda_n cos(pi / k)`` (spatial, ``k`` directions), and of ``-lambda_n``."""
    radius = problem.mu * np.maximum(lambda_n, 0.0)
    if problem.spatial:
        k = problem.directions
        angles = (2 * np.arange(k) + 1) * np.pi / k
        support = lambda_t @ np.array([np.cos(angles), np.sin(angles)])
        excess = support - radius[:, None] * np.cos(np.pi / k)
    else:
        excess = np.abs(lambda_t) - radius[:, None]
    worst = max(float(excess.max(initial=0.0)), float(-lambda_n.min(initial=0.0)))
    return worst / (1.0 + float(np.abs(lambda_n).max(initial=0.0)))


def resolve_chunk(seeds: Sequence[int]) -> list[LawRun]:
    """Resolve impact problem ``seed`` under every law and measure, for each result:

    - ``energy_rise``: the largest increase of ``E = v^T M v / 2`` between consecutive
      velocities of ``result.path``, divided by ``E(v-)``;
    - ``in_cone``: :meth:`ImpactProblem.in_friction_cone` (default tolerance, 1e-9), and
      ``cone_excess`` (:func:`cone_excess`) to say by how much an outlier misses;
    - ``friction_max``: the largest tangential impulse (must be 0 for the frictionless law);
    - ``colliding_after``: whether ``v+`` still collides;
    - ``newton_error``: ``|M (v+ - v-) - Jn^T Lambda_n - Jt^T Lambda_t|_inf`` over
      ``|M v-|_inf + |Jn^T Lambda_n + Jt^T Lambda_t|_inf`` (journal eq. 30).
    """
    laws = law_instances()
    runs = []
    for seed in seeds:
        problem, v = impact_problem(seed)
        energy_before = float(problem.kinetic_energy(v))
        for name, law in laws.items():
            try:
                result = law.resolve(problem, v, rng=seed, unfinished="return")  # terminated is recorded
            except Exception as exc:  # recorded: the tests decide which exceptions are allowed
                runs.append(LawRun(seed, name, f"{type(exc).__name__}: {exc}"))
                continue
            energies = problem.kinetic_energy(result.path)
            generalized = problem.Jn.T @ result.normal_impulse + np.einsum("idv,id->v", problem.Jt, result.friction_impulse)
            scale = float(np.abs(problem.M @ v).max() + np.abs(generalized).max())
            runs.append(
                LawRun(
                    seed,
                    name,
                    "",
                    terminated=bool(result.terminated),
                    message=result.message,
                    steps=result.steps,
                    energy_rise=float(np.max(np.diff(energies), initial=0.0)) / energy_before,
                    in_cone=problem.in_friction_cone(result.normal_impulse, result.friction_impulse),
                    cone_excess=cone_excess(problem, result.normal_impulse, result.friction_impulse),
                    friction_max=float(np.abs(result.friction_impulse).max(initial=0.0)),
                    colliding_after=bool(problem.colliding(result.v_plus)),
                    newton_error=float(np.abs(problem.M @ (result.v_plus - v) - generalized).max()) / scale,
                )
            )
    return runs


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def pool() -> Iterator[Executor | None]:
    """Two spawned worker processes with single-threaded BLAS (None on a one-core machine).
    The variables stay set while the pool lives: it spawns its workers on demand.  The
    workers import this module by its name (``tests.test_properties_slow``) to run its
    functions, so the repository root is on their ``sys.path`` (a spawned worker takes the
    parent's): last, so ``bullet_setimpact`` is still the one under test."""
    if WORKERS < 2:
        yield None
        return
    with pytest.MonkeyPatch.context() as patch:
        for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            patch.setenv(variable, "1")
        patch.setattr(sys, "path", [*sys.path, str(Path(__file__).resolve().parents[1])])
        with ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn")) as executor:
            yield executor


def _run_all(pool: Executor | None, work: Callable[[Sequence[int]], list[Any]], count: int) -> list[Any]:
    chunks = [range(start, min(start + CHUNK, count)) for start in range(0, count, CHUNK)]
    results = pool.map(work, chunks) if pool is not None else map(work, chunks)
    return [run for chunk in results for run in chunk]


@pytest.fixture(scope="module")
def lcp_runs(pool: Executor | None) -> list[LCPRun]:
    return _run_all(pool, solve_lcp_chunk, N_LCPS)


@pytest.fixture(scope="module")
def law_runs(pool: Executor | None) -> list[LawRun]:
    return _run_all(pool, resolve_chunk, N_PROBLEMS)


def _report(title: str, lines: list[str]) -> None:
    """Print a summary (shown with ``pytest -s``, or with the report of a failing test)."""
    print(f"\n{title}\n  " + "\n  ".join(lines))


# --------------------------------------------------------------------------- step LCPs
def test_step_lcp_family_is_the_stated_one(lcp_runs: list[LCPRun]) -> None:
    """10^4 LCPs, each solved twice; the draws span m = 1..8, nv = 1..30, planar and spatial
    contacts and mu up to 10 (so the contract below is checked on the whole family)."""
    first = [run for run in lcp_runs if run.solver == "solve_lcp"]
    assert len(first) == N_LCPS and len(lcp_runs) == 2 * N_LCPS
    assert {run.m for run in first} == set(range(1, 9))
    assert min(run.nv for run in first) == 1 and max(run.nv for run in first) == 30
    assert {run.spatial for run in first} == {False, True}
    assert max(run.mu_max for run in first) > 9.9


def test_every_step_lcp_is_solved_to_full_precision(lcp_runs: list[LCPRun]) -> None:
    """Every LCP is solved, and every returned ``z`` satisfies ``z >= 0``, ``Wz + w >= 0``,
    ``z^T (Wz + w) = 0`` to ``1e-9`` relative (:func:`lcp_residual`, recomputed here).

    A guarantee, not luck: the step LCP of eq. (75) always has a solution (journal Theorem
    6), and :func:`solve_lcp` ends, where Lemke fails, in a complete mixed-integer stage over
    bounds some solution meets.  Prints how many solves each stage answered and any seed
    that raised: ``step_lcp(seed)`` rebuilds the LCP, ``_solve(solver, W, w, seed, bounds)``
    repeats the solve."""
    failed = [run for run in lcp_runs if run.error]
    inexact = [run for run in lcp_runs if run.residual is not None and run.residual > RESIDUAL_TOL]
    lines = [f"{solver}: stages {dict(Counter(run.method for run in lcp_runs if run.solver == solver))}" for solver in LCP_SOLVERS]
    lines.append(f"{len(failed)} raised; {len(inexact)} returned solutions with residual > {RESIDUAL_TOL:.0e}")
    lines += [f"seed {run.seed} ({run.solver}, nv={run.nv}, m={run.m}): {run.error or f'{run.residual:.3e}'}" for run in failed + inexact]
    _report("step LCPs (eq. 75), 10^4 of the bulk family:", lines)
    assert not failed and not inexact, "\n".join(lines)


def test_seed_9281_is_solved_by_every_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    """Step LCP 9281 (nv = 30, m = 6) made Lemke end on a secondary ray with a singular basis
    on one machine and not on another: the last bits decided.  It must be solved
    by :func:`solve_lcp` as is, and also when every Lemke stage fails (the complete stage,
    which does not hang on pivot-level round-off)."""
    problem, v, caps, w = step_lcp(9281)
    W, bounds = problem.step_matrix, step_lcp_bounds(problem, caps, v)
    assert (problem.dofs, problem.contacts) == (30, 6)
    for solver in LCP_SOLVERS:
        assert lcp_residual(W, w, _solve(solver, W, w, 9281, bounds).z) <= RESIDUAL_TOL

    def fails(*args: object, **kwargs: object) -> None:
        raise LemkeError("injected")

    monkeypatch.setattr(lcp_module, "lemke_prechecked", fails)
    monkeypatch.setattr(lcp_module, "lemke_equilibrated", fails)
    solution = _solve("solve_lcp random covering", W, w, 9281, bounds)
    assert solution.method == "milp" and lcp_residual(W, w, solution.z) <= RESIDUAL_TOL


def test_hypothesis_step_lcps_are_all_solved() -> None:
    """The same contract on LCPs hypothesis draws (fixed seed: ``derandomize``): sizes,
    frictions (the edges 0 and 10 included), scales and which caps are zero are strategies;
    solved with :func:`solve_lcp` and with :func:`random_lemke` (three random covering
    vectors, then the deterministic stages), both with :func:`step_lcp_bounds`.  None raises."""
    raised: list[str] = []

    @settings(
        max_examples=300,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(
        nv=st.integers(1, 30),
        m=st.integers(1, 8),
        spatial=st.booleans(),
        mu=st.lists(st.floats(0.0, 10.0), min_size=8, max_size=8),
        mass_exp=st.floats(-2.0, 2.0),
        velocity_exp=st.floats(-3.0, 1.0),
        cap_exp=st.floats(-3.0, 1.0),
        zero_caps=st.lists(st.booleans(), min_size=8, max_size=8),
        seed=st.integers(0, 2**32 - 1),
    )
    def check(
        nv: int,
        m: int,
        spatial: bool,
        mu: list[float],
        mass_exp: float,
        velocity_exp: float,
        cap_exp: float,
        zero_caps: list[bool],
        seed: int,
    ) -> None:
        rng = np.random.default_rng(seed)
        built = build_problem(rng, Shape(nv, m, spatial, mass_exp, velocity_exp, cap_exp), np.array(mu[:m]))
        if built is None:
            return
        problem, v = built
        caps = 10.0**cap_exp * rng.uniform(0.0, 1.0, size=m) * ~np.array(zero_caps[:m])
        W, w = problem.step_matrix, problem.step_rhs_map @ np.concatenate([caps, v])
        bounds = step_lcp_bounds(problem, caps, v)
        solvers = (("solve_lcp", lambda: solve_lcp(W, w, bounds=bounds)), ("random_lemke", lambda: random_lemke(W, w, rng, bounds=bounds)))
        for name, solve in solvers:
            try:
                solution = solve()
            except LCPError as exc:
                raised.append(f"{name}: nv={nv} m={m} spatial={spatial} seed={seed}: {exc}")
                continue
            assert lcp_residual(W, w, solution.z) <= RESIDUAL_TOL

    check()
    _report("step LCPs drawn by hypothesis (300 examples, 2 solvers each):", [f"{len(raised)} raised LCPError", *raised])
    assert not raised, raised


# --------------------------------------------------------------------------- impact laws
def _by_law(runs: list[LawRun]) -> dict[str, list[LawRun]]:
    grouped: dict[str, list[LawRun]] = {}
    for run in runs:
        grouped.setdefault(run.law, []).append(run)
    return grouped


def _violations(runs: list[LawRun], what: str, describe: Callable[[LawRun], str]) -> str:
    """Per-law counts of ``runs`` and the first few, each with its reproducer."""
    counts = Counter(run.law for run in runs)
    listed = [
        f"{run.law} seed {run.seed}: {describe(run)}; reproduce: problem, v = impact_problem({run.seed}); "
        f"law_instances()[{run.law!r}].resolve(problem, v, rng={run.seed})"
        for run in runs[:12]
    ]
    return f"{len(runs)} results {what} ({dict(counts)}):\n" + "\n".join(listed)


def test_every_law_resolves_every_problem(law_runs: list[LawRun]) -> None:
    """Every law of ``LAWS`` (propagative at R = 0, 0.5, 1) resolves all 10^4 problems without
    raising.  Prints each law's non-terminated count: a law may stop with ``terminated=False``
    and a message (Routh after N steps, sequential after its cycles, the plastic law on
    Assumption A12 or several/no IV modes, propagative after its reflection cap, and
    Anitescu-Potra when round-off leaves ``Jn v+`` below ``-1e-8``), which is reported, not
    failed."""
    grouped = _by_law(law_runs)
    lines = []
    for name, runs in grouped.items():
        stopped = [run for run in runs if not run.terminated and not run.error]
        reasons = Counter(run.message.split(" after ")[0].split(":")[0][:70] for run in stopped)
        lines.append(f"{name:<18} {len(stopped):5d} of {len(runs)} not terminated {dict(reasons.most_common(3))}")
    _report("impact laws on 10^4 random problems:", lines)
    assert {name.split(" ")[0] for name in grouped} == set(LAWS)
    assert all(len(runs) == N_PROBLEMS for runs in grouped.values())
    errors = [run for run in law_runs if run.error]
    assert not errors, _violations(errors, "raised", lambda run: run.error)
    assert all(run.message for run in law_runs if not run.terminated)


def test_kinetic_energy_never_increases_along_the_path(law_runs: list[LawRun]) -> None:
    """No increment of any law adds kinetic energy beyond round-off, ``1e-12 E(v-)`` (journal
    Theorem 2 for Routh; every other law here is dissipative or, elastic, conservative)."""
    rising = sorted((run for run in law_runs if run.energy_rise > ENERGY_TOL), key=lambda run: -run.energy_rise)
    assert not rising, _violations(rising, f"gain more than {ENERGY_TOL:.0e} E(v-) in a step", lambda run: f"+{run.energy_rise:.2e} E(v-)")


def test_impulses_lie_in_the_friction_cone(law_runs: list[LawRun]) -> None:
    """Total impulses lie in the linearized cone (:meth:`ImpactProblem.in_friction_cone` at its
    default tolerance); the propagative law, run with ``ignore_friction=True``, applies no
    tangential impulse at all.  The message gives each outlier's step count: a sum of ``steps``
    LCP solutions, each accepted at residual ``1e-9``, may leave the cone by about ``steps``
    times that."""
    outside = [run for run in law_runs if not run.in_cone]
    frictional = [run for run in law_runs if run.law.startswith("propagative") and run.friction_max != 0.0]
    assert not frictional, _violations(frictional, "with friction", lambda run: f"|Lambda_t| = {run.friction_max:.2e}")
    assert not outside, _violations(outside, "outside the cone", lambda run: f"{run.steps} steps, cone excess {run.cone_excess:.2e}")


def test_terminated_outcomes_are_non_colliding(law_runs: list[LawRun]) -> None:
    """``terminated`` means ``v+`` collides nowhere (no ``Jn_i v+ < -1e-8``)."""
    colliding = [run for run in law_runs if run.terminated and run.colliding_after]
    assert not colliding, _violations(colliding, "terminated but colliding", lambda run: "v+ collides")


def test_newtons_law_of_impact_holds(law_runs: list[LawRun]) -> None:
    """``M (v+ - v-) = Jn^T Lambda_n + Jt^T Lambda_t`` (eq. 30) to 1e-9 relative: both sides are
    sums of the same increments, computed along two routes."""
    off = sorted((run for run in law_runs if run.newton_error > 1e-9), key=lambda run: -run.newton_error)
    assert not off, _violations(off, "off Newton's law", lambda run: f"relative error {run.newton_error:.2e}")


# --------------------------------------------------------------------------- the hard families
#: Step LCPs per hard family in the slow tier (``benchmarks/lcp_stress.py`` runs many more);
#: the contact-rich families are drawn with at most 32 contacts here (``small``).
HARD_LCPS = {"mu": 600, "mass": 600, "parallel": 600, "tiny": 600, "many": 20, "combined": 40}
#: Impacts per hard family resolved by the Anitescu-Potra and Routh laws.
HARD_IMPACTS = {"mu": 30, "mass": 30, "parallel": 30, "tiny": 30, "many": 4, "combined": 4}


def _map_jobs(pool: Executor | None, work: Callable[[Sequence[Any]], list[Any]], jobs: list[Any], size: int) -> list[Any]:
    """``work`` over ``jobs`` in chunks of ``size``, on the pool if there is one; the runs concatenated in order."""
    chunks = [jobs[start : start + size] for start in range(0, len(jobs), size)]
    return [run for chunk in (pool.map(work, chunks) if pool is not None else map(work, chunks)) for run in chunk]


def solve_hard_chunk(jobs: Sequence[tuple[str, int]]) -> list[tuple[str, int, str, float]]:
    """``(family, seed, stage or error, residual)`` of :func:`solve_lcp` (random covering from
    ``seed``, bounds of :func:`step_lcp_bounds`) on each hard step LCP of ``jobs``."""
    from tests.hard_lcps import step_lcp as hard_step_lcp

    runs = []
    for family, seed in jobs:
        W, w, bounds = hard_step_lcp(family, seed, small=True)
        try:
            solution = solve_lcp(W, w, rng=np.random.default_rng(seed), bounds=bounds)
        except Exception as exc:  # recorded: the test allows none
            runs.append((family, seed, f"{type(exc).__name__}: {exc}", np.inf))
            continue
        runs.append((family, seed, solution.method, lcp_residual(W, w, solution.z)))
    return runs


def test_hard_step_lcp_families_are_all_solved(pool: Executor | None) -> None:
    """The hard families (:mod:`tests.hard_lcps`: mu to 1e5, mass ratios to 1e8,
    near-parallel normals, 1e-9 velocities beside O(1), 16-32 contacts, all combined): every
    step LCP is solved within ``RESIDUAL_TOL`` (recomputed), none raises (the guarantee of
    the complete stage).  Prints the stages that answered."""
    jobs = [(family, seed) for family, count in HARD_LCPS.items() for seed in range(count)]
    runs = _map_jobs(pool, solve_hard_chunk, jobs, 50)
    lines = [f"{family:<9} {dict(Counter(run[2] for run in runs if run[0] == family))}" for family in HARD_LCPS]
    bad = [run for run in runs if run[3] > RESIDUAL_TOL]
    _report("hard step-LCP families (stages that answered):", lines + [f"failed: {run}" for run in bad[:10]])
    assert len(runs) == len(jobs) and not bad, bad[:10]


#: ``(family, seed)`` of ``benchmarks/lcp_stress.py``'s full-size runs that once raised.
STRESS_RAISES = (("combined", 78325),)


@pytest.mark.parametrize(("family", "seed"), STRESS_RAISES)
def test_step_lcps_that_raised_in_the_stress_run_are_solved(family: str, seed: int) -> None:
    """Combined seed 78,325 (n = 1408: 128 contacts on one body in two clusters 2e-9 apart,
    mu up to 8.4e4, normal velocities of 1e-8) raised before stage 6 of :func:`solve_lcp`
    existed: every Lemke stage ended on a secondary ray or cycled, the mixed-integer point
    could not be refined, and HiGHS's tighter retry reached its time limit.  Solved as the
    stress run solves it (random coverings from the seed, :func:`step_lcp_bounds`), the
    residual recomputed here."""
    from tests.hard_lcps import step_lcp as hard_step_lcp

    W, w, bounds = hard_step_lcp(family, seed)
    solution = solve_lcp(W, w, rng=np.random.default_rng(seed), bounds=bounds)
    assert lcp_residual(W, w, solution.z) <= RESIDUAL_TOL


def resolve_hard_chunk(jobs: Sequence[tuple[str, int]]) -> list[tuple[str, int, str, str, bool]]:
    """``(family, seed, law, error or "", terminated)`` of the Anitescu-Potra and Routh laws on each
    hard impact of ``jobs``; an error also when the outcome gains energy or is called terminated but collides."""
    from tests.hard_lcps import draw

    runs = []
    for family, seed in jobs:
        problem, v, _ = draw(family, seed, small=True)
        for law in (AnitescuPotraImpact(), RouthImpact.simulation_default()):
            try:
                result = law.resolve(problem, v, rng=seed, unfinished="return")  # terminated is recorded
                gained = result.energy_after > result.energy_before * (1.0 + 1e-9)
                false_end = result.terminated and problem.colliding(result.v_plus).any()
                error = "gained energy" if gained else "terminated but colliding" if false_end else ""
                terminated = result.terminated
            except Exception as exc:  # recorded: the test allows none
                error, terminated = f"{type(exc).__name__}: {exc}", False
            runs.append((family, seed, law.name, error, terminated))
    return runs


def test_hard_impacts_are_resolved(pool: Executor | None) -> None:
    """On the hard families' impact problems the Anitescu-Potra law (whose LCP goes through
    the same complete chain, so it can never raise :class:`LCPError`) and the Routh law
    (``simulation_default``) never raise and never gain energy beyond 1e-9.  Prints how many
    did not terminate (Routh within ``max_steps + final_steps + 1`` steps: reported, as in
    :func:`test_every_law_resolves_every_problem`; the simulator then falls back)."""
    jobs = [(family, seed) for family, count in HARD_IMPACTS.items() for seed in range(count)]
    runs = _map_jobs(pool, resolve_hard_chunk, jobs, 10)
    stopped = Counter(f"{run[0]} {run[2]}" for run in runs if not run[4] and not run[3])
    _report("hard impacts not terminated (family law: count):", [str(dict(stopped))])
    bad = [run for run in runs if run[3]]
    assert len(runs) == 2 * len(jobs) and not bad, bad[:10]
