"""How far a velocity lies from a Routh outcome set with restitution (for compliant validation).

**The set.**  Algorithm 1 with restitution (:mod:`bullet_setimpact.laws.restitution`) maps
every cap sequence ``c`` in ``[0, h]^(N m)`` (and every LCP branch) to an outcome; the
outcome set is the set of terminated outcomes over all of them.  Any distribution over
``[0, h]^(N m)`` samples it.  :meth:`RouthImpact.outcome_set` draws caps i.i.d. uniform, which
puts vanishing probability on trajectories where one contact accrues impulse much faster
than another for the whole impact (all of one contact's caps near 0 for many steps), so its
samples miss the ends of the set that compliant contact reaches with very unequal
stiffnesses (journal Fig. 12: the sequential outcomes).  :func:`rate_sampled_outcomes` adds
trajectories whose caps are ``h U[0, 1]`` times a per-trajectory, per-contact rate
``10^(-decades u_i)``, ``u_i ~ U[0, 1]``: still caps in ``[0, h]``, hence members of the same
set, but with rate ratios log-uniform over ``decades`` decades.

**A witness.**  :func:`witness_outcome` runs Algorithm 1 once with the caps a compliant
simulation's own impulse increments suggest (``Delta Lambda_i`` per step, at most ``h``),
then uniform caps ``h U[0, 1]`` until the trajectory terminates: a member of the set chosen to
follow the compliant rates, so it reaches corners of the set no random sampler visits.

**The distance.**  :func:`distance_to_samples` is the Euclidean distance to the nearest
sample.  Every sample belongs to the set, so it bounds the distance to the set *from above*:
sparse sampling can make a point that is in the set look outside, never the reverse.  A
check ``distance <= tol`` is therefore conservative.  (The convex hull would not be: the sets
are curved, and a point in the hull's interior can lie outside the set.)
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.spatial import cKDTree

from ..core.problem import ImpactProblem
from ..errors import SamplesDroppedWarning
from ..laws.base import RandomLike, as_generator
from ..laws.restitution import elastic_step_solver, finished, integrate_elastic
from ..laws.routh import RouthImpact
from ..validation import positive_int

#: Decades of relative rate spanned by :func:`rate_sampled_outcomes` (beyond the 1e5 of Fig. 12).
RATE_DECADES = 6.0


def rate_sampled_outcomes(
    law: RouthImpact, problem: ImpactProblem, v_minus: np.ndarray, samples: int, rng: RandomLike = None, decades: float = RATE_DECADES
) -> np.ndarray:
    """Terminated outcomes of ``samples`` restitution trajectories of ``law`` (its ``h`` and ``N``)
    with caps ``h U[0, 1] 10^(-decades u_i)`` (module docstring); shape ``(kept, nv)``."""
    if not problem.elastic:
        raise ValueError("rate_sampled_outcomes needs a problem with some restitution > 0")
    samples = positive_int("samples", samples)
    generator = as_generator(rng)
    v = problem.validate_velocity(v_minus)
    m, horizon = problem.contacts, law.max_steps
    rates = 10.0 ** (-decades * generator.random((samples, 1, m)))
    caps = law.step_size(problem, v) * generator.random((samples, horizon, m)) * rates
    run = integrate_elastic(problem, elastic_step_solver(problem), np.tile(v, (samples, 1)), caps, generator)
    return run.velocity[finished(problem, run)]


def set_members(law: RouthImpact, problem: ImpactProblem, v_minus: np.ndarray, samples: int) -> np.ndarray:
    """Members of the restitution outcome set: ``samples`` of ``law.outcome_set`` (seed 0, dropped
    samples silently left out) and ``samples`` rate-sampled trajectories (seed 1, :func:`rate_sampled_outcomes`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplesDroppedWarning)
        uniform = law.outcome_set(problem, v_minus, samples, rng=0)
    return np.vstack([uniform, rate_sampled_outcomes(law, problem, v_minus, samples, rng=1)])


def witness_outcome(
    law: RouthImpact, problem: ImpactProblem, v_minus: np.ndarray, impulse_history: np.ndarray, rng: RandomLike = None
) -> np.ndarray | None:
    """The outcome of Algorithm 1 with caps ``diff(impulse_history)`` (split so none exceeds
    ``h``; rounding-level negative increments of an interpolated history set to 0) followed
    by ``law.max_steps`` uniform ones; None if it has not terminated then."""
    generator = as_generator(rng)
    v = problem.validate_velocity(v_minus)
    h = law.step_size(problem, v)
    increments = np.maximum(np.diff(np.asarray(impulse_history, dtype=float), axis=0), 0.0)
    pieces = np.maximum(np.ceil(increments.max(axis=1) / h), 1).astype(int)
    guided = np.repeat(increments / pieces[:, None], pieces, axis=0)
    caps = np.concatenate([guided, h * generator.random((law.max_steps, problem.contacts))])[None]
    run = integrate_elastic(problem, elastic_step_solver(problem, batched=False), v[None], caps, generator)
    return run.velocity[0] if finished(problem, run)[0] else None


def distance_to_set(
    law: RouthImpact,
    problem: ImpactProblem,
    v_minus: np.ndarray,
    velocity: np.ndarray,
    impulse_history: np.ndarray,
    members: np.ndarray,
    witness_above: float,
) -> float:
    """An upper bound on the distance from ``velocity`` (reached with ``impulse_history``, e.g. by
    :func:`bullet_setimpact.analysis.compliant.compliant_impact`) to the set: the nearest of ``members``,
    and where that exceeds ``witness_above`` the smaller of it and the witness's distance."""
    distance = float(distance_to_samples(velocity, members)[0])
    if distance > witness_above:
        witness = witness_outcome(law, problem, v_minus, impulse_history, rng=0)
        if witness is not None:
            distance = min(distance, float(np.linalg.norm(witness - velocity)))
    return distance


def distance_to_samples(velocities: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """Euclidean distance from each of ``velocities`` ``(n, nv)`` to the nearest of ``samples``
    ``(S, nv)``: an upper bound on the distance to the set they sample (module docstring)."""
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 2 or len(samples) == 0:
        raise ValueError(f"samples must be a non-empty (S, nv) array, got shape {samples.shape}")
    distance, _ = cKDTree(samples).query(np.atleast_2d(velocities))
    return np.asarray(distance)
