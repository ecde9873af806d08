"""The set-valued Routh impact law of Halm & Posa (journal Sec. 3 and 5, Algorithms 1-2).

Routh's single-contact method extended to many contacts whose normal impulses accrue at
arbitrary relative rates.  Discretely, each step draws a cap ``lambda_n_max ~ h U[0,1]^m``
and solves the step LCP (eq. 75); the impact ends when no active contact is colliding.

Several solutions per step.  Assumption 6 of the journal (one velocity per step) fails for
e.g. the compass gait, whose Anitescu-Potra sub-LCP has three solutions.  A deterministic
pivot rule would silently keep a single branch, so every step here picks its solution at
random: Lemke runs with a random positive covering vector, and the batched solver draws
uniformly among the cached complementary bases that are feasible for the sample (see
:class:`~bullet_setimpact.core.branch_sampling.BatchedLCPSolver`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal, overload

import numpy as np

from ..core.branch_sampling import EXPLORE_PER_STEP, BatchedLCPSolver, LemkeSolver, active_rows
from ..core.problem import COLLISION_TOL, ImpactProblem, approaching, friction_basis, step_lcp_bounds
from ..errors import SamplesDroppedWarning, warn
from ..validation import positive_int, positive_number
from .anitescu_potra import solve_anitescu_potra
from .base import ImpactLaw, LawOutcome, RandomLike, as_generator
from .caps import CapSampler, halves_distance, rate_factors
from .restitution import elastic_step_solver, finished, integrate_elastic, release_caps

#: Samples integrated together in :meth:`RouthImpact.outcome_set`: its first chunk, and the
#: most of any later one (each doubles the last); and the most bytes of caps a chunk holds.
FIRST_CHUNK, CHUNK_SIZE, CHUNK_BYTES = 16384, 262144, 2**27
#: Default bound on :meth:`RouthImpact.resolve`'s steps beyond ``max_steps`` (before the final ``eps`` step).
FINAL_STEPS = 100
#: :meth:`RouthImpact.step_size` ignores contacts whose ``Jn_i M^-1 Jn_i^T`` is below this
#: fraction of the largest (zero or round-off rows).
RIGID_ROW_TOL = 1e-12


@dataclass(frozen=True)
class Trajectories:
    """Velocities and impulses of a batch of Algorithm-1 runs (batch dimension first)."""

    velocity: np.ndarray  # (S, nv)
    steps: np.ndarray  # (S,)
    impulse: np.ndarray  # (S, m (k+1)): accumulated [lambda_n; lambda_D]; (S, 0) if not recorded
    path: list[np.ndarray]  # velocity after each step (S, nv), path[0] = start


def step_solver(problem: ImpactProblem, batched: bool = True) -> BatchedLCPSolver | LemkeSolver:
    """A fresh solver of ``problem``'s step LCP (eq. 75), parameterized by ``u = [lambda_n_max; v]``.

    Exploration may zero the caps (a contact then takes no impulse in that step).
    """
    kind = BatchedLCPSolver if batched else LemkeSolver
    return kind(
        problem.step_matrix,
        problem.step_rhs_map,
        sparsify=tuple(range(problem.contacts)),
        bounds=lambda u: step_lcp_bounds(problem, u[: problem.contacts], u[problem.contacts :]),
    )


def integrate(
    problem: ImpactProblem,
    solver: BatchedLCPSolver | LemkeSolver,
    velocity: np.ndarray,
    caps: np.ndarray,
    rng: np.random.Generator,
    record_path: bool = False,
    cap_scale: float = 1.0,
    record_impulse: bool = True,
    first_step: int = 0,
    log_rates: np.ndarray | None = None,
) -> Trajectories:
    """Algorithm 1 for a batch: step the LCP (eq. 75) while colliding, up to ``caps.shape[1]`` steps.

    ``cap_scale * caps`` (``caps`` of shape ``(S, N, m)``) are the normal-impulse caps of every
    step of every sample, scaled step by step for the samples still active only; with
    ``log_rates`` (shape ``(R, m)``, ``R <= S``) the caps of the first ``R`` samples are further
    scaled at each step by :func:`~.caps.rate_factors` of the contacts colliding at the step's
    start (the other samples' factors are 1).  Without
    ``record_impulse`` the impulses are not accumulated (``impulse`` has no columns).
    ``first_step`` is Algorithm 1's index of the first of these steps: step ``first_step + i``
    is the solver's ``group`` (a batched solver ranks its cached bases per step).
    """
    m = problem.contacts
    velocity = velocity.copy()
    steps = np.zeros(len(velocity), dtype=int)
    impulse = np.zeros((len(velocity), problem.Jbar.shape[0] if record_impulse else 0))
    path = [velocity.copy()] if record_path else []
    impulses = slice(m, m + problem.Jbar.shape[0])  # the entries [lambda_n; lambda_D] of the step LCP's z
    solutions = np.empty((len(velocity), problem.Jbar.shape[0]))  # each step's impulses, in the leading rows
    # Each step's u = [caps; v] transposed, in the leading entries (the solver wants u's columns contiguous).
    width = m + velocity.shape[1]
    parameters = np.empty(len(velocity) * width)
    # The colliding samples' rows, kept compacted (their velocities, normal velocities, impulses)
    # and written back when they stop, instead of a gather and a scatter of every array per step.
    normal = problem.normal_velocities(velocity)
    colliding = approaching(normal)
    active = np.flatnonzero(colliding)
    if active.size < len(velocity):
        moving, normal, accrued = velocity[active], normal[active], impulse[active]
    else:  # all colliding (outcome_set's first step): no copies, the write-backs are then in place
        moving, accrued = velocity, impulse
    for index in range(caps.shape[1]):
        if not active.size:
            break
        columns = parameters[: width * active.size].reshape(width, active.size)
        for contact in range(m):  # one take per contact: cheaper than a 2-D fancy index of caps
            np.take(caps[:, index, contact], active, out=columns[contact])
        np.multiply(columns[:m], cap_scale, out=columns[:m])
        if log_rates is not None:  # the rated samples are a prefix of the active ones (active is sorted)
            rated = int(np.searchsorted(active, len(log_rates)))
            columns[:m, :rated] *= rate_factors(log_rates[active[:rated]], normal[:rated] < -COLLISION_TOL).T
        columns[m:] = moving.T
        increment = solver.solve(
            columns.T,
            rng,
            EXPLORE_PER_STEP,
            switchable=normal >= -COLLISION_TOL,
            out=solutions[: active.size],
            entries=impulses,
            group=first_step + index,
        )
        moving += problem.impulse_velocity_change(increment)
        if record_impulse:
            accrued += increment
        normal = problem.normal_velocities(moving)
        colliding = approaching(normal)
        if record_path or not colliding.all():  # write back the samples that stop (all of them for the path)
            stopped = slice(None) if record_path else np.flatnonzero(~colliding)
            velocity[active[stopped]], impulse[active[stopped]], steps[active[stopped]] = moving[stopped], accrued[stopped], index + 1
            keep = active_rows(colliding)
            active, moving, normal, accrued = active[keep], moving[keep], normal[keep], accrued[keep]
        if record_path:
            path.append(velocity.copy())
    velocity[active], impulse[active], steps[active] = moving, accrued, caps.shape[1]  # still colliding after every step
    return Trajectories(velocity, steps, impulse, path)


def chunk_sizes(samples: int, caps_per_sample: int = 1) -> list[int]:
    """:meth:`RouthImpact.outcome_set`'s chunks: :data:`FIRST_CHUNK` samples, then each twice the
    last, up to :data:`CHUNK_SIZE`, until ``samples`` are drawn; no chunk holds more than
    :data:`CHUNK_BYTES` of caps (``caps_per_sample`` doubles a sample: ``m N``).

    The first chunk fills the solver's empty cache: every sample goes to Lemke or to the bases
    Lemke found before it, a test of each new basis on every sample still pending, so its cost
    grows as the square of its size.  Later chunks, answered from the cache, gain from their
    size: fewer exploration calls (:data:`~.branch_sampling.EXPLORE_PER_STEP` a step and
    chunk) and fewer NumPy calls a sample (docs/performance.md)."""
    largest = max(1, min(CHUNK_SIZE, CHUNK_BYTES // (8 * caps_per_sample)))
    sizes: list[int] = []
    size, left = min(FIRST_CHUNK, largest), samples
    while left > 0:
        sizes.append(min(size, left))
        left -= sizes[-1]
        size = min(2 * size, largest)
    return sizes


def final_step_cap(problem: ImpactProblem, eps: float) -> float:
    """Algorithm 2's final cap ``eps / (3 psi)``, ``psi = sigma_max(M^-1 Jbar^T) m (1 + max mu) + 1`` (journal Sec. 5.3)."""
    psi = np.linalg.svd(problem.Minv_JbarT, compute_uv=False)[0] * problem.contacts * (1.0 + problem.mu.max()) + 1.0
    return float(eps / (3.0 * psi))


@dataclass(frozen=True)
class OutcomeSet:
    """Algorithm 2's approximation of the post-impact set, with its statistics.

    Attributes
    ----------
    velocities : ndarray, shape (kept, nv)
        Post-impact velocities of the samples that terminated (non-colliding).
    samples : int
        Samples drawn.
    terminated : int
        Samples non-colliding after Algorithm 1's ``max_steps`` steps plus the final
        ``eps / (3 psi)`` step (``== len(velocities)``).
    terminated_in_algorithm1 : int
        Samples that had already terminated within ``max_steps`` steps.
    lcp_solves : int
        Step LCPs solved in total, final step included.
    lemke_calls : int
        Of those, how many went to Lemke (cache misses and exploration).
    fallbacks : int
        Of the Lemke calls, how many randomized Lemke failed on and a deterministic stage
        of :func:`~bullet_setimpact.core.lcp_solve.solve_lcp` answered (one valid solution each).
    seconds : float
        Wall-clock time.
    halves : ndarray of int, shape (kept,)
        Which of two equally mixed halves each kept sample belongs to (:mod:`.caps`).
    """

    velocities: np.ndarray
    samples: int
    terminated: int
    terminated_in_algorithm1: int
    lcp_solves: int
    lemke_calls: int
    fallbacks: int
    seconds: float
    halves: np.ndarray = field(repr=False)

    @property
    def lcps_per_sample(self) -> float:
        """Mean LCP solves per sample (journal Table 3's first column)."""
        return self.lcp_solves / self.samples

    def coverage(self) -> float:
        """An estimate of how far points of the set lie from the nearest sample: the Hausdorff
        distance between the two halves' velocities (:func:`~.caps.halves_distance`; same
        units as ``velocities``; ``inf`` when a half kept no sample).  Computed on each call,
        with a k-d tree per half."""
        return halves_distance(self.velocities, self.halves)


class RouthImpact(ImpactLaw):
    """Set-valued Routh impact (journal Sec. 3; discretized by eq. 75, Algorithms 1 and 2).

    Parameters
    ----------
    step : float or "auto"
        ``h`` in N s: each step's normal impulse caps are drawn from ``h U[0, 1]^m``;
        ``"auto"`` scales it to the impact (:meth:`step_size`), for simulation.
    max_steps : int
        ``N``: Algorithm 1's steps per sample (:meth:`outcome_set`'s trajectory length).
    final_steps : int, keyword-only
        :meth:`resolve` always finishes an impact that still collides after ``max_steps``:
        it continues Algorithm 1 (fresh caps ``h U[0, 1]^m``, drawn after the first ``N``
        steps' draws, so impacts that end within ``N`` steps are unchanged) for at most
        ``final_steps`` more steps (default :data:`FINAL_STEPS`), then takes Algorithm 2's
        final step with every cap ``eps / (3 psi)`` (:func:`final_step_cap`, ``eps = h /
        100`` as in :meth:`outcome_set`).  An impact thus takes at most
        ``max_steps + final_steps + 1`` LCP steps; ``terminated=False`` only if it still
        collides after them.  ``info["final_steps"]`` counts the steps beyond ``N``.
        Repeating the ``eps / (3 psi)`` step alone would not do: on the compass gait it is
        1.2e-6 N s against 0.018 m/s still to stop, some 4e4 steps.
    friction_directions : int, keyword-only, optional
        Override the problem's number of linearized friction directions (spatial only).

    Notes
    -----
    Each step may have several LCP solutions (the journal's Assumption 6 fails for the
    compass gait and RAMone).  The solution is drawn at random: by Lemke with a random
    positive covering vector, or uniformly among the cached feasible bases (module
    docstring).  Reproducible for a given ``rng``.

    A problem with some ``restitution > 0`` runs Stronge-type restitution at arbitrary
    relative rates (:mod:`~bullet_setimpact.laws.restitution`).  :meth:`resolve` finishes it
    as it finishes an inelastic impact: after ``max_steps`` steps a sample still compressing
    or holding energy continues with up to ``final_steps`` fresh steps, then takes up to
    ``final_steps`` *release* steps whose caps exceed what any one contact needs to stop or
    to return its energy (:func:`~bullet_setimpact.laws.restitution.release_caps`, doubled at
    each release step).  The bound: at most ``max_steps + 2 final_steps`` LCP steps.  One
    contact always ends within two release steps, at ``v+ = -e v-`` to rounding whatever
    ``step`` and ``max_steps`` (a compressing contact stops in one step, a driven one is cut
    where it has returned its energy); with several contacts each release step ends at least
    one contact's compression or energy once the caps are large enough, which the doubling
    reaches.  :meth:`outcome_set` keeps Algorithm 2 as the journal states it: samples still
    active after ``N`` steps are dropped.

    ``resolve`` never returns ``terminated=False`` silently: it warns
    (:class:`~bullet_setimpact.errors.UnfinishedImpactWarning`), or raises with
    ``unfinished="raise"`` (:meth:`~bullet_setimpact.laws.base.ImpactLaw.resolve`).
    """

    name = "routh"

    def __init__(
        self, step: float | str, max_steps: int, *, final_steps: int | None = None, friction_directions: int | None = None
    ) -> None:
        if step == "auto":
            self.step: float | str = step
        else:
            try:
                self.step = positive_number("step", step)
            except ValueError:
                raise ValueError(f"step must be a positive number (N s) or 'auto', got {step!r}") from None
        self.max_steps = positive_int("max_steps", max_steps)
        self.final_steps = FINAL_STEPS if final_steps is None else positive_int("final_steps", final_steps)
        self.friction_directions = None if friction_directions is None else positive_int("friction_directions", friction_directions)
        if self.friction_directions is not None:
            friction_basis(2, self.friction_directions)  # spatial contacts, the ones it applies to: an even integer >= 4

    @property
    def honours_restitution(self) -> bool:
        """Stronge-type restitution at arbitrary relative rates (:mod:`.restitution`)."""
        return True

    @classmethod
    def simulation_default(cls) -> RouthImpact:
        """``RouthImpact("auto", 50)``: a step fit to each impact's scale (:meth:`step_size`)."""
        return cls("auto", 50)

    def spread_outcomes(self, problem: ImpactProblem, v_minus: np.ndarray, samples: int) -> np.ndarray:
        """The sampled post-impact set, ``outcome_set(problem, v_minus, samples, rng=0)``."""
        return self.outcome_set(problem, v_minus, samples, rng=0)

    def step_size(self, problem: ImpactProblem, v_minus: np.ndarray) -> float:
        """``h`` in N s: the fixed ``step``, or for ``step="auto"`` the largest normal impulse that
        would stop one colliding contact alone, ``max_i -Jn_i v / (Jn_i M^-1 Jn_i^T)`` (so one
        step can end any single contact's collision whatever the impact's scale).

        Contacts whose inverse effective mass ``Jn_i M^-1 Jn_i^T`` is zero (a zero Jacobian
        row: the contact cannot move along its normal) or below :data:`RIGID_ROW_TOL` of the
        largest are left out: they can neither collide nor be stopped.  ``1.0`` only when no
        other contact approaches (no step is then taken)."""
        if self.step != "auto":
            return float(self.step)
        normal = problem.normal_velocities(v_minus)
        effective = problem.normal_inverse_mass
        movable = effective > RIGID_ROW_TOL * np.max(effective, initial=0.0)
        stopping = np.max(-normal[movable] / effective[movable], initial=0.0)
        return float(stopping) if stopping > 0.0 else 1.0

    def _continuation_step(self, problem: ImpactProblem, v: np.ndarray, step: float) -> float:
        """``h`` of :meth:`resolve`'s steps beyond ``max_steps``: ``step``, or for ``step="auto"`` at
        least the largest normal impulse of the Anitescu-Potra outcome from ``v`` (journal eqs. 31-33).

        The auto step stops any single contact alone, but a contact between a light body and
        a heavy one (mass ratio 1e8) stops at ``h ~ m_light v`` while the heavy body behind it
        needs ``~ m_heavy v``: ``max_steps + final_steps`` such steps cannot supply it.  The
        Anitescu-Potra impulses end the collision in one step, so they are the collision's
        own scale.  Impacts that end within ``max_steps`` steps are unchanged.
        """
        if self.step != "auto":
            return step
        impulse = solve_anitescu_potra(problem, v)[1][: problem.contacts]
        return max(step, float(impulse.max(initial=0.0)))

    def _problem(self, problem: ImpactProblem) -> ImpactProblem:
        """``problem`` with this law's friction-direction count, if it overrides one."""
        if self.friction_directions is None or self.friction_directions == problem.directions:
            return problem
        return problem.with_friction_directions(self.friction_directions)

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        """Algorithm 1 for one sample."""
        problem = self._problem(problem)
        if problem.elastic:
            return self._resolve_elastic(problem, v_minus, rng)
        m = problem.contacts
        step = self.step_size(problem, v_minus)
        caps = step * rng.random((1, self.max_steps, m))
        solver = step_solver(problem, batched=False)
        run = integrate(problem, solver, v_minus[None, :], caps, rng, record_path=True)
        path = [snapshot[0] for snapshot in run.path[: int(run.steps[0]) + 1]]
        impulse = run.impulse[0]
        final_steps = 0
        if problem.colliding(run.velocity[0]):  # continue Algorithm 1, then Algorithm 2's final step
            step = self._continuation_step(problem, run.velocity[0], step)
            final_caps = np.concatenate(
                [step * rng.random((1, self.final_steps, m)), np.full((1, 1, m), final_step_cap(problem, step / 100.0))], axis=1
            )
            final = integrate(problem, solver, run.velocity, final_caps, rng, record_path=True, first_step=self.max_steps)
            final_steps = int(final.steps[0])
            path += [snapshot[0] for snapshot in final.path[1 : final_steps + 1]]
            impulse = impulse + final.impulse[0]
        terminated = not problem.colliding(path[-1])
        return LawOutcome(
            path=np.array(path),
            normal_impulse=impulse[:m],
            friction_impulse=problem.friction_impulse(impulse[m:]),
            terminated=terminated,
            message=""
            if terminated
            else f"still colliding after max_steps={self.max_steps} steps, {self.final_steps} more and the final eps / (3 psi) step",
            info={"lcp_fallbacks": solver.stats.fallbacks, "final_steps": final_steps},
        )

    def _resolve_elastic(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        """Algorithm 1 with restitution (:mod:`.restitution`) for one sample, finished as the
        class docstring states: ``max_steps`` steps, up to ``final_steps`` continuation steps,
        then up to ``final_steps`` release steps (:func:`release_caps`)."""
        m = problem.contacts
        step = self.step_size(problem, v_minus)
        solver = elastic_step_solver(problem, batched=False)
        run = integrate_elastic(problem, solver, v_minus[None, :], step * rng.random((1, self.max_steps, m)), rng, record_path=True)
        path = run.path[: int(run.steps[0]) + 1]
        done = int(run.steps[0])
        if not finished(problem, run)[0]:  # continue Algorithm 1 with fresh caps, as the inelastic path does
            caps = self._continuation_step(problem, run.velocity[0], step) * rng.random((1, self.final_steps, m))
            run = integrate_elastic(problem, solver, run.velocity, caps, rng, record_path=True, start=run, first_step=self.max_steps)
            path += run.path[1 : int(run.steps[0]) - done + 1]
        release = 0
        while release < self.final_steps and not finished(problem, run)[0]:
            before = int(run.steps[0])
            caps = release_caps(problem, run, release)[:, None, :]
            run = integrate_elastic(problem, solver, run.velocity, caps, rng, record_path=True, start=run, first_step=self.max_steps)
            path += run.path[1 : int(run.steps[0]) - before + 1]
            release += 1
        terminated = bool(finished(problem, run)[0])
        return LawOutcome(
            path=np.array([snapshot[0] for snapshot in path]),
            normal_impulse=run.impulse[0, :m],
            friction_impulse=problem.friction_impulse(run.impulse[0, m:]),
            terminated=terminated,
            message=""
            if terminated
            else f"still colliding or restituting after max_steps={self.max_steps} steps, "
            f"{self.final_steps} more and {self.final_steps} release steps",
            info={"lcp_fallbacks": solver.stats.fallbacks, "final_steps": max(0, int(run.steps[0]) - self.max_steps)},
        )

    @overload
    def outcome_set(
        self,
        problem: ImpactProblem,
        v_minus: np.ndarray,
        samples: int,
        rng: RandomLike = ...,
        eps: float | None = ...,
        sampler: str = ...,
        full_output: Literal[False] = ...,
    ) -> np.ndarray: ...

    @overload
    def outcome_set(
        self,
        problem: ImpactProblem,
        v_minus: np.ndarray,
        samples: int,
        rng: RandomLike = ...,
        eps: float | None = ...,
        sampler: str = ...,
        *,
        full_output: Literal[True],
    ) -> OutcomeSet: ...

    def outcome_set(
        self,
        problem: ImpactProblem,
        v_minus: np.ndarray,
        samples: int,
        rng: RandomLike = None,
        eps: float | None = None,
        sampler: str = "mixed",
        full_output: bool = False,
    ) -> np.ndarray | OutcomeSet:
        """Approximate the post-impact set (journal Algorithm 2), ends included.

        Runs ``samples`` Algorithm-1 trajectories batched, takes one final step with caps
        ``eps / (3 psi)`` where ``psi = sigma_max(M^-1 Jbar^T) m (1 + max mu) + 1``, and drops
        the samples that still collide (a :class:`SamplesDroppedWarning` says how many).
        With restitution (:mod:`.restitution`) there is no final step: samples still
        compressing or holding energy after ``N`` steps are dropped.

        Parameters
        ----------
        problem : ImpactProblem
        v_minus : array_like, shape (nv,)
        samples : int
            Number of trajectories ``M``.
        rng : None, int, SeedSequence or Generator
        eps : float, optional
            Approximation constant in ``(0, step)``; default ``step / 100``.
        sampler : {"mixed", "random", "sobol", "rates"}
            How each trajectory's caps are drawn (:mod:`.caps`; every rule samples the same
            set, they differ in which parts they reach):

            - ``"mixed"`` (default): the sequential orderings with each contact first (each
              contact alone until it is done, in turn) as explicit members, a sixteenth
              of the rest (at most 1024 a chunk) with log-uniform relative rates, the
              others uniform.  Reaches the set's ends;
            - ``"random"``: the journal's i.i.d. caps ``h U[0, 1]^m`` per step;
            - ``"sobol"``: a scrambled Sobol sequence over the ``m N`` caps of a trajectory
              (as the authors' code did; use a power of two for ``samples``);
            - ``"rates"``: every trajectory with log-uniform relative rates.
        full_output : bool
            Return an :class:`OutcomeSet` with statistics and :meth:`OutcomeSet.coverage`
            instead of the bare array.

        Returns
        -------
        ndarray, shape (kept, nv), or OutcomeSet
        """
        start = time.perf_counter()
        problem = self._problem(problem)
        v = problem.validate_velocity(v_minus)
        samples = positive_int("samples", samples)
        step = self.step_size(problem, v)
        eps = step / 100.0 if eps is None else positive_number("eps", eps)
        if eps >= step:
            raise ValueError(f"eps must lie in (0, step={step}), got {eps}")
        generator = as_generator(rng)
        m, horizon = problem.contacts, self.max_steps
        caps = CapSampler(sampler, generator, m, horizon, samples)
        final_cap = final_step_cap(problem, eps)
        solver = elastic_step_solver(problem) if problem.elastic else step_solver(problem)

        kept: list[np.ndarray] = []
        halves: list[np.ndarray] = []
        terminated_early = 0
        lcp_solves = 0
        for batch in caps.chunks(chunk_sizes(samples, m * horizon)):
            count = len(batch.caps)
            starts = np.broadcast_to(v, (count, v.size))  # read only: the integrators copy their start
            if problem.elastic:
                elastic = integrate_elastic(problem, solver, starts, batch.caps, generator, cap_scale=step, log_rates=batch.log_rates)
                lcp_solves += int(elastic.steps.sum())
                done = finished(problem, elastic)
                terminated_early += int(done.sum())
                kept.append(elastic.velocity[done])
                halves.append(batch.half[done])
                continue
            run = integrate(problem, solver, starts, batch.caps, generator, cap_scale=step, record_impulse=False, log_rates=batch.log_rates)
            lcp_solves += int(run.steps.sum())
            velocity = run.velocity
            colliding = problem.colliding(velocity)
            terminated_early += int(count - colliding.sum())
            if colliding.any():
                active = np.flatnonzero(colliding)
                final_caps = np.full((active.size, 1, m), final_cap)
                velocity[active] = integrate(
                    problem, solver, velocity[active], final_caps, generator, record_impulse=False, first_step=horizon
                ).velocity
                lcp_solves += active.size
            done = ~problem.colliding(velocity)
            kept.append(velocity[done])
            halves.append(batch.half[done])
        velocities = np.concatenate(kept)
        dropped = samples - len(velocities)
        if dropped:
            warn(
                f"outcome_set dropped {dropped} of {samples} samples that still collide after "
                f"max_steps={horizon} steps and the final eps step",
                SamplesDroppedWarning,
            )
        if not full_output:
            return velocities
        return OutcomeSet(
            velocities=velocities,
            samples=samples,
            terminated=len(velocities),
            terminated_in_algorithm1=terminated_early,
            lcp_solves=lcp_solves,
            lemke_calls=solver.stats.lemke_calls,
            fallbacks=solver.stats.fallbacks,
            seconds=time.perf_counter() - start,
            halves=np.concatenate(halves),
        )
