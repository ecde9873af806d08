"""Stronge-type restitution against bilinear-spring compliant contact (journal Fig. 12, extended).

The compliant reference is :mod:`bullet_setimpact.analysis.compliant`; distances to the restitution
outcome set are upper bounds from members of the set (:mod:`bullet_setimpact.analysis.set_distance`):
a compliant outcome closer than the tolerance to some member is within the tolerance of the
set, whatever parts of the set the samplers missed.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from bullet_setimpact import ImpactProblem, RouthImpact, planar
from bullet_setimpact.analysis.compliant import compliant_impact, spring_forces
from bullet_setimpact.analysis.set_distance import distance_to_samples, distance_to_set, set_members, witness_outcome
from bullet_setimpact.laws.restitution import elastic_step_solver, finished, integrate_elastic

#: The target: compliant outcomes within 0.5 % of ``|v-|`` of the set.
TOLERANCE = 0.005
LAW = RouthImpact("auto", 200)


def chain(e: float) -> tuple[ImpactProblem, np.ndarray]:
    """Wall | B | mass 2 | A | mass 1, frictionless, unit masses, ``q = (x1, x2)``: mass 1 strikes
    mass 2 resting against the wall.  ``Jn_A = (1, -1)`` (the gap ``x1 - x2``), ``Jn_B = (0, 1)``;
    ``v- = (-1, 0)``."""
    problem = ImpactProblem(np.eye(2), np.array([[1.0, -1.0], [0.0, 1.0]]), np.zeros((2, 1, 2)), 0.0, restitution=e)
    return problem, np.array([-1.0, 0.0])


@pytest.mark.parametrize("e", [0.0, 0.3, 0.7, 1.0])
def test_one_frictionless_contact_rebounds_at_minus_e(e: float) -> None:
    """One contact of effective mass 1: loading to ``delta_max`` stores ``k delta_max^2 / 2 = v-^2 / 2``,
    the stiffer unloading line returns ``e^2`` of it, so ``v+ = -e v-`` (Stronge's coefficient,
    equal to Newton's for one frictionless contact).  Radau at ``rtol = 1e-10``: 1e-8 relative."""
    problem = ImpactProblem(np.eye(1), np.ones((1, 1)), np.zeros((1, 1, 1)), 0.0, restitution=e)
    outcome = compliant_impact(problem, np.array([-2.0]), np.array([3e5]))
    assert outcome.velocity[0] == pytest.approx(2.0 * e, abs=1e-8)
    assert outcome.normal_impulse[0] == pytest.approx(2.0 * (1.0 + e), rel=1e-8)


def test_only_stiffness_ratios_matter() -> None:
    """At a fixed configuration scaling every ``k`` by ``c`` rescales time and ``delta`` by
    ``c^-1/2`` and leaves velocities unchanged (module docstring): same ``v+`` to the solver's
    tolerance."""
    example = planar.rocking_block()
    problem = example.problem.with_restitution(0.5)
    soft = compliant_impact(problem, example.v_minus, np.array([3.0, 1.0]))
    stiff = compliant_impact(problem, example.v_minus, np.array([3e6, 1e6]))
    np.testing.assert_allclose(stiff.velocity, soft.velocity, atol=1e-8)


def test_the_spring_follows_the_stiffer_line_when_unloading_and_reloading() -> None:
    """``k = 2, e = 0.5``, ``delta_max = 1``: residual ``1 - e^2 = 0.75``; at ``delta = 0.9``
    unloading gives ``(k / e^2)(0.9 - 0.75) = 1.2`` and loading ``k 0.9 = 1.8``; below the
    residual the spring is empty."""
    k, e, top = np.array([2.0, 2.0, 2.0]), np.array([0.5, 0.5, 0.5]), np.ones(3)
    forces = spring_forces(np.array([0.9, 0.9, 0.7]), np.array([False, True, False]), top, k, e)
    np.testing.assert_allclose(forces, [1.2, 1.8, 0.0])


@pytest.mark.parametrize("ratio", [0.01, 1.0, 100.0])
def test_recompression_runs_up_the_unloading_line_without_loss(ratio: float) -> None:
    """The chain (:func:`chain`) with ``e = 0.5``: while mass 1 pushes, mass 2 is driven back into
    the wall after B has partly unloaded (and, for ``k_A / k_B = 0.01``, B past its previous
    maximum), so some contact re-compresses.

    Expectation from the bilinear picture: a contact dissipates only while it loads beyond its
    previous maximum, ``(1 - e^2)`` of the work done on the loading line; running back up the
    unloading line and down it again is elastic.  Summed, ``KE+ = KE- - sum_i (1 - e^2) k_i
    delta_max,i^2 / 2`` whatever the sequence of re-compressions (a rule that re-loaded along
    the loading line would lose more).  The law's re-compression rule (elastic up to the
    previous maximum, :mod:`bullet_setimpact.laws.restitution`) must then reach the same
    outcome: the witness trajectory, Algorithm 1 with the compliant impulse increments as
    caps, lands on the compliant ``v+`` up to its discretization (1e-4 here, from the 8 points
    per solver step of the history; measured 4e-5 at the worst ratio)."""
    e = 0.5
    problem, v_minus = chain(e)
    k = np.array([ratio, 1.0])
    outcome = compliant_impact(problem, v_minus, k)
    assert outcome.recompressions.sum() + outcome.reloadings.sum() >= 1
    loss = np.sum((1.0 - e**2) * k * outcome.max_compression**2 / 2.0)
    assert problem.kinetic_energy(outcome.velocity) == pytest.approx(problem.kinetic_energy(v_minus) - loss, rel=1e-7)
    witness = witness_outcome(LAW, problem, v_minus, outcome.impulse_history, rng=0)
    assert witness is not None
    np.testing.assert_allclose(witness, outcome.velocity, atol=1e-4)


def stiff_striker_closed_form(e: float = 0.5) -> tuple[float, np.ndarray]:
    """The chain's ``v+`` in the limit ``k_A / k_B -> inf`` (unit masses, ``k_B = 1``, ``v- = (-1, 0)``),
    from the bilinear-spring picture, and B's velocity when A strikes again.

    1. A alone, instantly: Newton's ``e`` for one frictionless contact, ``v = (-(1 - e), -(1 + e)) / 2``;
       A stored ``E_A = mu u^2 / 2 = 1/4`` (reduced mass ``mu = 1/2``, approach speed 1), returned
       ``e^2 E_A``, and is left on its unloading line (its dent, ``O(k_A^-1/2)``, is negligible).
    2. B loads: ``x2 = -(1 + e)/2 sin t`` until ``t = pi / 2``, ``delta_max = (1 + e) / 2``.
    3. B unloads on the line of stiffness ``1 / e^2`` (angular rate ``1 / e``) about its residual
       ``r = (1 - e^2) delta_max``: ``delta(s) = r + e^2 delta_max cos(s / e)``; mass 1 drifts at
       ``v1``, so the gap ``v1 (pi/2 + s) + delta(s)`` closes at the root ``s*`` (before B
       empties at ``s = e pi / 2``): B is partly unloaded, mass 2 moves at ``v2 = e delta_max sin(s*/e)``.
    4. A, instantly: the relative kinetic energy ``K = mu (v2 - v1)^2 / 2`` first climbs A's
       unloading line (``e^2 E_A``, elastic), then loads A past its old maximum: new maximum
       ``E_A' = E_A + K - e^2 E_A``, returned ``e^2 E_A'``; the centre-of-mass velocity is kept.
    5. B, driven back into compression by step 4 after partial unloading, climbs its unloading
       line elastically: its energy there, ``(delta - r)^2 / (2 e^2) + v2^2 / 2``, stays below the
       line's top ``e^2 delta_max^2 / 2``, so it is all returned and mass 2 leaves at
       ``sqrt(2 E)``; mass 1 moves away faster, nothing collides again.
    """
    mu, v1, v2 = 0.5, -(1.0 - e) / 2.0, -(1.0 + e) / 2.0
    stored = mu / 2.0
    top = (1.0 + e) / 2.0
    residual = (1.0 - e**2) * top

    def delta(s: float) -> float:
        return float(residual + e**2 * top * np.cos(s / e))

    s_star = brentq(lambda s: v1 * (np.pi / 2.0 + s) + delta(s), 0.0, e * np.pi / 2.0)
    v2 = e * top * np.sin(s_star / e)
    kinetic = mu * (v2 - v1) ** 2 / 2.0
    assert kinetic > e**2 * stored  # A reloads past its maximum
    new_max = stored + kinetic - e**2 * stored
    centre, separation = (v1 + v2) / 2.0, np.sqrt(2.0 * e**2 * new_max / mu)
    v1, v2 = centre + separation / 2.0, centre - separation / 2.0
    energy = (delta(s_star) - residual) ** 2 / (2.0 * e**2) + v2**2 / 2.0
    assert energy <= e**2 * top**2 / 2.0 and v1 > np.sqrt(2.0 * energy)  # no B reload, no third strike
    return float(e * top * np.sin(s_star / e)), np.array([v1, np.sqrt(2.0 * energy)])


def test_recompression_closed_form_under_the_law() -> None:
    """The law's re-compression rules on the chain with the phases of
    :func:`stiff_striker_closed_form` as caps: A alone (caps ``(1, 0)``) until it has returned
    its energy; B alone, one step with cap 1 (complementarity stops it at ``Jn_B v = 0``, impulse
    ``(1 + e)/2``) and one driven step with cap ``v2(s*)`` (B partly unloaded); A alone again;
    B alone.  Every step's work is exact (the velocity is linear in the impulse), so the law's
    ``v+`` equals the closed form to rounding (1e-9)."""
    e = 0.5
    problem, v_minus = chain(e)
    partial, expected = stiff_striker_closed_form(e)
    a_alone, b_alone = np.tile([1.0, 0.0], (10, 1)), np.tile([0.0, 1.0], (10, 1))
    caps = np.concatenate([a_alone, [[0.0, 1.0], [0.0, partial]], a_alone, b_alone])[None]
    run = integrate_elastic(problem, elastic_step_solver(problem, batched=False), v_minus[None], caps, np.random.default_rng(0))
    assert finished(problem, run)[0]
    np.testing.assert_allclose(run.velocity[0], expected, atol=1e-9)


def test_recompression_closed_form_under_compliant_contact() -> None:
    """The same limit for the compliant model at ``k_A / k_B = 1e6``: the limit is reached with an
    error ``O(sqrt(k_B / k_A))`` = 1e-3 (B's force, at most ``(1 + e) / 2``, acts during A's
    collisions, which last ``pi sqrt(mu / k_A)``); 3e-3 allowed.  A re-engages and reloads
    once, B is driven back into compression once (the counters), and a wrong rule (a fresh
    inelastic collision for A's second strike gives ``v1+ = 0.218``) is far outside."""
    problem, v_minus = chain(0.5)
    outcome = compliant_impact(problem, v_minus, np.array([1e6, 1.0]))
    np.testing.assert_allclose(outcome.velocity, stiff_striker_closed_form(0.5)[1], atol=3e-3)
    assert outcome.reloadings.tolist() == [1, 0]
    assert outcome.recompressions.tolist() == [1, 1]


def compliant_distances(name: str, e: float, ratios: np.ndarray, samples: int) -> np.ndarray:
    """Distances (relative to ``|v-|``) of compliant outcomes to the restitution set: upper bounds
    from ``outcome_set``'s and rate-sampled members, and the witness where those exceed half
    the tolerance (so no verdict rests on how densely the samplers happened to land)."""
    example = planar.example(name)
    problem = example.problem.with_restitution(e)
    members = set_members(LAW, problem, example.v_minus, samples)
    speed = float(np.linalg.norm(example.v_minus))
    distances = []
    for ratio in ratios:
        compliant = compliant_impact(problem, example.v_minus, np.array([ratio, 1.0]))
        bound = distance_to_set(
            LAW, problem, example.v_minus, compliant.velocity, compliant.impulse_history, members, TOLERANCE * speed / 2.0
        )
        distances.append(bound / speed)
    return np.array(distances)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rocking_block", "box_wall"])
@pytest.mark.parametrize("e", [0.3, 0.7])
def test_compliant_outcomes_lie_in_the_restitution_set(name: str, e: float) -> None:
    """Journal Fig. 12 with bilinear springs: ``k_A / k_B`` over 1e-5 ... 1e5 (7 log-spaced
    values here; 21 in ``benchmarks/compliant_validation.py``) and every compliant ``v+`` within
    0.5 % of ``|v-|`` of a member of the restitution outcome set (an upper bound on the
    distance to the set)."""
    distances = compliant_distances(name, e, np.logspace(-5, 5, 7), 2**13)
    assert distances.max() <= TOLERANCE, distances


#: The sweep of journal Fig. 12: stiffness ratios ``k_A / k_B`` from 1e-5 to 1e5.
RATIOS = np.logspace(-5, 5, 21)


def nearest_sample_distances(name: str, e: float, ratios: np.ndarray) -> np.ndarray:
    """Distances (relative to ``|v-|``) from compliant outcomes at ``ratios`` to the nearest of 2^14
    default ``outcome_set`` samples of the example's own law (its h and N, seed 0), with no
    witness: the samples alone must reach the compliant outcomes.  The compliant outcomes come
    from :func:`compliant_impact` (springs integrated by ``solve_ivp``), not from the law."""
    example = planar.example(name)
    problem = example.problem.with_restitution(e)
    law = RouthImpact(example.step, example.max_steps)
    samples = set_members(law, problem, example.v_minus, 2**14)
    outcomes = np.array([compliant_impact(problem, example.v_minus, np.array([ratio, 1.0])).velocity for ratio in ratios])
    return distance_to_samples(outcomes, samples) / np.linalg.norm(example.v_minus)


def test_default_samples_reach_the_ends_of_the_bouncing_block() -> None:
    """The rocking block with ``e = 0.5`` at the sweep's extremes, ``k_A / k_B = 1e-5`` and ``1e5``:
    one corner loads and unloads almost entirely before the other, the set's ends, which
    uniform caps reach only 5 % of ``|v-|`` away at this sample count.  The default sampler's
    orderings and rates reach both within 0.5 %."""
    distances = nearest_sample_distances("rocking_block", 0.5, np.array([1e-5, 1e5]))
    assert distances.max() <= TOLERANCE, distances


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "e"),
    [
        ("rocking_block", 0.0),
        ("rocking_block", 0.3),
        ("rocking_block", 0.5),
        ("rocking_block", 0.7),
        ("compass_gait", 0.0),
        ("box_wall", 0.0),
    ],
)
def test_default_samples_reach_every_compliant_outcome(name: str, e: float) -> None:
    """Journal Fig. 12 as an acceptance test of the default sampler: every compliant outcome of
    the 21-ratio sweep (bilinear springs with Stronge's ``e``; ``e = 0``: the inelastic sweep)
    within 0.5 % of ``|v-|`` of one of 2^14 default samples (:func:`nearest_sample_distances`)."""
    distances = nearest_sample_distances(name, e, RATIOS)
    assert distances.max() <= TOLERANCE, distances


def test_distance_to_samples_is_to_the_nearest_sample() -> None:
    """From ``(0, 1)`` the samples ``(0, 0)`` and ``(3, 4)`` are 1 and ``sqrt(9 + 9)`` away: 1."""
    np.testing.assert_allclose(distance_to_samples(np.array([0.0, 1.0]), np.array([[0.0, 0.0], [3.0, 4.0]])), [1.0])
    with pytest.raises(ValueError, match="non-empty"):
        distance_to_samples(np.zeros(2), np.zeros((0, 2)))
