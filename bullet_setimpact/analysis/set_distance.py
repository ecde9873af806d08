"""How far a velocity lies from a Routh outcome set with restitution (for compliant validation).

**The set.**  Algorithm 1 (with restitution: :mod:`bullet_setimpact.laws.restitution`) maps
every cap sequence in ``[0, h]^(N m)`` (and every LCP branch) to an outcome; the outcome set
is the set of terminated outcomes over all of them.  :meth:`RouthImpact.outcome_set`'s
default sampler (:mod:`bullet_setimpact.laws.caps`) mixes the journal's uniform caps with
log-uniform relative rates and every sequential ordering, so it reaches the ends of the set
that compliant contact reaches with very unequal stiffnesses (journal Fig. 12).

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


def set_members(law: RouthImpact, problem: ImpactProblem, v_minus: np.ndarray, samples: int) -> np.ndarray:
    """Members of the outcome set: ``law.outcome_set(problem, v_minus, samples, rng=0)`` with its
    default sampler, samples that did not terminate silently left out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplesDroppedWarning)
        return law.outcome_set(problem, v_minus, samples, rng=0)


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
