"""Stronge-type energetic restitution inside the set-valued Routh law (beyond the journal).

The journal's Sec. 7 proposes letting Stronge's restitution "resolve at arbitrary relative
rates in a similar fashion to the compression-only setting"; Mirtich (1996) combined Routh's
method with Stronge's coefficient for one contact, Liu et al. (2008) tracked a potential
energy per contact.  The model built here:

**Energy per contact.**  Contact ``i`` does work ``W_i = int v_n,i d lambda_n,i`` (eq. 10 per
contact).  Over one step of Algorithm 1 the velocity moves linearly with the impulse, so the
step's work is exactly ``dW_i = d lambda_n,i (v_n,i^- + v_n,i^+) / 2``.  Each contact keeps

- ``Q_i >= 0``: energy it still has to return, and
- ``R_i >= 0``: energy returned since its last loading that it would take back elastically.

This is the bilinear spring of Stronge's picture (loading stiffness ``k_i``, unloading
``k_i / e_i^2``): on loading it stores ``-dW`` of which ``e_i^2`` is recoverable; unloading
returns at most ``e_i^2`` of the largest compression's stored energy; re-compression after
a partial unloading runs back up the unloading line (elastic, the ``R_i`` part, fully
recoverable) before loading further.  So a step with ``dW_i < 0`` (absorbed ``a = -dW_i``)
does ``r = min(a, R_i)``, ``Q_i += r + e_i^2 (a - r)``, ``R_i -= r``; a step with
``dW_i > 0`` does ``Q_i -= dW_i``, ``R_i += dW_i`` (capped at ``Q_i``).  A contact that only
compresses once returns ``W_restitution,i = -e_i^2 W_compression,i`` (Stronge's energetic
coefficient); with ``e_i = 0`` nothing is ever stored.

**Step LCP.**  Active samples are those with a compressing contact (``v_n,i < -tol``) or a
contact with energy left (``Q_i > 0``).  Every step draws caps ``h U[0, 1]^m`` as eq. (75).
A *restituting* contact (``Q_i > 0`` and ``v_n,i >= -tol``) is driven: its normal impulse in
the step is its cap ``d_i``.  A *separating* contact with ``e_i > 0`` (``Q_i = 0``,
``v_n,i > tol``) is inactive: cap 0 (eq. 75 would let it take impulse as soon as the step
carries it through ``v_n = 0``, doing positive work it never stored; it takes part again once
it compresses).  Every other contact, and every contact with ``e_i = 0`` whatever its state, is
complementary as in eq. (75): an inelastic contact beside restituting ones follows the
inelastic law's step.  (With every ``e_i = 0`` the law runs
the inelastic Algorithm 1 unchanged, so its draws and outcomes are bit-identical.)  The
driven impulses move to the right-hand side: ``v -> v + M^-1 Jn^T d``, the driven contacts'
LCP caps are 0 (so their LCP normal impulse is 0), and the friction-cone row of contact
``i`` becomes ``mu_i (lambda_n,i + d_i) - 1^T lambda_D,i >= 0`` (eq. 33 with the driven part
on the right).  Friction keeps eq. (75)'s maximal-dissipation rows at every contact.  The
LCP matrix is eq. (75)'s own; only the right-hand side map gains the ``mu d`` columns.

**End of a contact's energy.**  If a driven contact's work over the step would exceed
``Q_i``, the whole step is shortened: its impulse is scaled by the ``t`` in ``(0, 1)`` at
which that contact's work along the step reaches ``Q_i`` (a quadratic in ``t``, see
:func:`step_fraction`), so the contact returns exactly its energy and ``Q_i = 0``; no second
LCP and no extra random draw.  Since ``dKE = sum_i dW_i`` exactly for the step (``v^+ - v^- =
M^-1 Jbar^T dlambda``), frictionless impacts with ``e = 1`` conserve ``KE + sum Q`` up to
rounding and the ``ENERGY_TOL`` cut-off.

**Termination.**  No contact compressing and none with energy left (``Q_i = 0``).  In an
outcome set, samples still active after ``max_steps`` steps are dropped: Algorithm 2's final
``eps / (3 psi)`` step cannot return energy.  ``RouthImpact.resolve`` finishes them with
continuation and release steps (:func:`release_caps`).

**Rates.**  With ``log_rates`` each step's caps are scaled by the relative rates of
:mod:`~bullet_setimpact.laws.caps`, the contacts *pressing* being those compressing or holding
energy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.branch_sampling import EXPLORE_PER_STEP, BatchedLCPSolver, LemkeSolver, active_rows
from ..core.problem import COLLISION_TOL, ImpactProblem, step_lcp_bounds
from .caps import rate_factors

#: Energy left below this fraction of the sample's initial kinetic energy counts as returned.
ENERGY_TOL = 1e-12


@dataclass(frozen=True)
class ElasticRun:
    """A batch of restitution runs: velocities, impulses, steps, energy left, path."""

    velocity: np.ndarray  # (S, nv)
    steps: np.ndarray  # (S,)
    impulse: np.ndarray  # (S, m (k+1))
    energy_left: np.ndarray  # (S, m): Q_i at the end
    path: list[np.ndarray]
    returnable: np.ndarray  # (S, m): R_i at the end
    negligible: np.ndarray  # (S,): energy counted as returned, ENERGY_TOL times the first start's kinetic energy


def driven_rhs_map(problem: ImpactProblem) -> np.ndarray:
    """``R`` with ``w = R [lambda_n_max; v; d]``: eq. (75a)'s map plus the friction-cone
    rows' ``mu_i d_i`` (scaled like :attr:`ImpactProblem.anitescu_potra_matrix`'s rows)."""
    m = problem.contacts
    base = problem.step_rhs_map
    cone_rows = base.shape[0] - m + np.arange(m)
    extra = np.zeros((base.shape[0], m))
    extra[cone_rows, np.arange(m)] = problem.mu / np.maximum(1.0, problem.mu)
    return np.hstack([base, extra])


def elastic_step_solver(problem: ImpactProblem, batched: bool = True) -> BatchedLCPSolver | LemkeSolver:
    """A solver of the step LCP with driven impulses, parameterized by ``[caps; v + M^-1 Jn^T d; d]``."""
    kind = BatchedLCPSolver if batched else LemkeSolver
    m, nv = problem.contacts, problem.dofs
    return kind(
        problem.step_matrix,
        driven_rhs_map(problem),
        sparsify=tuple(range(m)),
        bounds=lambda u: step_lcp_bounds(problem, u[:m], u[m : m + nv], driven=u[m + nv :]),
    )


def book_work(work: np.ndarray, stored: np.ndarray, returnable: np.ndarray, e_squared: np.ndarray) -> None:
    """Update ``stored`` (``Q``) and ``returnable`` (``R``) in place for step works ``work``
    (bilinear-spring bookkeeping of the module docstring)."""
    absorbed = np.maximum(-work, 0.0)
    elastic = np.minimum(absorbed, returnable)
    released = np.minimum(np.maximum(work, 0.0), stored)
    stored += elastic + e_squared * (absorbed - elastic) - released
    returnable += released - elastic


def integrate_elastic(
    problem: ImpactProblem,
    solver: BatchedLCPSolver | LemkeSolver,
    velocity: np.ndarray,
    caps: np.ndarray,
    rng: np.random.Generator,
    record_path: bool = False,
    cap_scale: float = 1.0,
    log_rates: np.ndarray | None = None,
    start: ElasticRun | None = None,
    first_step: int = 0,
) -> ElasticRun:
    """Algorithm 1 with restitution for a batch: up to ``caps.shape[1]`` steps with caps
    ``cap_scale * caps`` (``caps``: ``(S, N, m)``, scaled for the active samples only).

    ``log_rates`` (shape ``(R, m)``, ``R <= S``) scales the first ``R`` samples' caps at each
    step by :func:`~.caps.rate_factors` of the contacts pressing at its start (compressing
    or holding energy); the other samples' factors are 1.  ``start``
    continues an earlier run of the same samples from its end (its velocity, energies and
    step counts; ``velocity`` is then ignored); ``first_step`` is the index of the first of
    these steps (the batched solver's ``group``)."""
    m, nbar = problem.contacts, problem.Jbar.shape[0]
    e_squared = problem.restitution**2
    restituting = problem.restitution > 0.0
    count = len(velocity) if start is None else len(start.velocity)
    if start is None:  # nothing accrued, stored or returned yet (copied below)
        zeros, energy = np.zeros((count, m)), np.asarray(problem.kinetic_energy(velocity))
        negligible = ENERGY_TOL * (energy + np.finfo(float).tiny)
        start = ElasticRun(velocity, np.zeros(count, dtype=int), np.zeros((count, nbar)), zeros, [], zeros, negligible)
    velocity, steps, impulse = start.velocity.copy(), start.steps.copy(), start.impulse.copy()
    stored, returnable, negligible = start.energy_left.copy(), start.returnable.copy(), start.negligible
    path = [velocity.copy()] if record_path else []
    normal = problem.normal_velocities(velocity)
    for index in range(caps.shape[1]):
        pressing = (normal < -COLLISION_TOL) | (stored > 0.0)
        running = np.any(pressing, axis=1)
        if not running.any():
            break
        active = active_rows(running)
        v0, vn0, cap = velocity[active], normal[active], cap_scale * caps[active, index]
        if log_rates is not None:  # the rated samples are a prefix of the active ones
            rows = np.arange(count)[active]
            rated = int(np.searchsorted(rows, len(log_rates)))
            cap[:rated] *= rate_factors(log_rates[rows[:rated]], pressing[rows[:rated]])
        driven = (stored[active] > 0.0) & (vn0 >= -COLLISION_TOL)
        separating = (stored[active] == 0.0) & (vn0 > COLLISION_TOL) & restituting
        push = np.where(driven, cap, 0.0)
        u = np.hstack([np.where(driven | separating, 0.0, cap), v0 + push @ problem.Minv_JbarT[:, :m].T, push])
        z = solver.solve(u, rng, EXPLORE_PER_STEP, switchable=vn0 >= -COLLISION_TOL, group=first_step + index)
        increment = z[:, m : m + nbar]
        increment[:, :m] += push
        change = problem.normal_velocities(problem.impulse_velocity_change(increment))
        fraction, limiting = step_fraction(increment[:, :m], vn0, change, stored[active], driven)
        increment *= fraction[:, None]
        work = increment[:, :m] * (vn0 + fraction[:, None] * change / 2.0)
        q_active, r_active = stored[active], returnable[active]
        book_work(work, q_active, r_active, e_squared)
        r_active += np.where(limiting, q_active, 0.0)
        q_active[limiting | (q_active <= negligible[active, None])] = 0.0
        stored[active], returnable[active] = q_active, r_active
        velocity[active] += problem.impulse_velocity_change(increment)
        impulse[active] += increment
        steps[active] += 1
        normal[active] = problem.normal_velocities(velocity[active])
        if record_path:
            path.append(velocity.copy())
    return ElasticRun(velocity, steps, impulse, stored, path, returnable, negligible)


def step_fraction(
    normal_impulse: np.ndarray, vn0: np.ndarray, change: np.ndarray, stored: np.ndarray, driven: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The fraction ``t`` in ``(0, 1]`` of each sample's step that no driven contact overspends,
    and the contact that limits it (a boolean mask, shape ``(S, m)``).

    Along the step scaled by ``t`` contact ``i`` does work ``a t^2 + b t`` (``a = dl dv / 2``,
    ``b = dl vn0``).  Where its largest value on ``[0, 1]`` (at ``t = 1``, or at ``-b / 2a``
    when ``a < 0``) exceeds ``Q_i``, the first crossing of ``Q_i`` is
    ``2 Q / (b + sqrt(b^2 + 4 a Q))`` (the smaller positive root when ``a < 0``).
    """
    a, b = normal_impulse * change / 2.0, normal_impulse * vn0
    with np.errstate(divide="ignore", invalid="ignore"):
        turning = np.where(a < 0.0, -b / (2.0 * a), 1.0)
    peak = np.where((turning > 0.0) & (turning < 1.0), -(b**2) / (4.0 * np.where(a < 0.0, a, -1.0)), a + b)
    over = driven & (peak > stored)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = 2.0 * stored / (b + np.sqrt(np.maximum(b**2 + 4.0 * a * stored, 0.0)))
    crossing = np.where(over, np.clip(root, 0.0, 1.0), 1.0)
    fraction = crossing.min(axis=1)
    limiting = over & (crossing == fraction[:, None])
    return fraction, limiting


def release_caps(problem: ImpactProblem, run: ElasticRun, attempt: int) -> np.ndarray:
    """Caps of release step ``attempt`` (0, 1, ...) of :meth:`RouthImpact.resolve
    <bullet_setimpact.laws.routh.RouthImpact>`'s finish, shape ``(S, m)``: at every contact
    ``2^(attempt + 1)`` times the largest impulse one contact would need alone, to stop
    (``-v_n,i / a_i`` while compressing) or to return its energy ``Q_i`` from ``v_n,i``
    (``(-v_n,i + sqrt(v_n,i^2 + 2 a_i Q_i)) / a_i``, where the work ``p v_n,i + a_i p^2 / 2``
    of an impulse ``p`` reaches ``Q_i``), ``a_i = Jn_i M^-1 Jn_i^T``.

    With one contact these caps exceed what it needs: a compressing contact stops in one
    step (complementarity, eq. 75), and a driven one is cut at the exact fraction where it
    has returned ``Q_i`` (:func:`step_fraction`), so two release steps end any impact there.
    Contacts with ``a_i`` below ``1e-12`` of the largest cannot move along their normal and
    are left out of the maximum."""
    a = problem.normal_inverse_mass
    movable = a > 1e-12 * a.max(initial=0.0)
    vn = problem.normal_velocities(run.velocity)[:, movable]
    q, a = run.energy_left[:, movable], a[movable]
    stopping = np.maximum(-vn, 0.0) / a
    returning = (np.sqrt(vn**2 + 2.0 * a * q) - vn) / a
    largest = np.max(np.maximum(stopping, returning), axis=1, initial=0.0)
    return np.repeat(2.0 ** (attempt + 1) * largest[:, None], problem.contacts, axis=1)


def finished(problem: ImpactProblem, run: ElasticRun) -> np.ndarray:
    """Samples with no contact compressing and no energy left to return."""
    return ~problem.colliding(run.velocity) & ~np.any(run.energy_left > 0.0, axis=1)
