"""Cap samplers of the outcome set (bullet_setimpact.laws.caps): relative rates, orderings, coverage."""

from __future__ import annotations

import numpy as np
import pytest

from bullet_setimpact import ImpactProblem, RouthImpact, planar
from bullet_setimpact.analysis.set_distance import distance_to_samples
from bullet_setimpact.laws.caps import ORDER_DECADES, CapSampler, halves_distance, ordering_log_rates, rate_factors


def chain(restitution: tuple[float, float]) -> tuple[ImpactProblem, np.ndarray]:
    """Wall | B | mass 2 | A | mass 1, frictionless, unit masses, ``q = (x1, x2)``: mass 1 strikes
    mass 2 resting against the wall.  ``Jn_A = (1, -1)``, ``Jn_B = (0, 1)``; ``v- = (-1, 0)``."""
    problem = ImpactProblem(np.eye(2), np.array([[1.0, -1.0], [0.0, 1.0]]), np.zeros((2, 1, 2)), 0.0, restitution=restitution)
    return problem, np.array([-1.0, 0.0])


def test_rate_factors_follow_the_fastest_pressing_contact() -> None:
    """Rates ``(1, 10^-2)``: both pressing, the slow contact gets ``10^-2`` of its cap; only the
    slow one pressing, it leads (factor 1) and the other is capped at 1, not ``10^2``; none
    pressing, every factor is 1.  An ordering's ``10^-400`` underflows to exactly 0."""
    log_rates = np.array([[0.0, -2.0]] * 3 + [[0.0, -ORDER_DECADES]])
    pressing = np.array([[True, True], [False, True], [False, False], [True, True]])
    np.testing.assert_allclose(rate_factors(log_rates, pressing), [[1.0, 0.01], [1.0, 1.0], [1.0, 1.0], [1.0, 0.0]], rtol=1e-15)
    assert rate_factors(log_rates, pressing)[3, 1] == 0.0


def test_orderings_put_each_contact_first_once() -> None:
    """Ranks as log-rates: 2 contacts give the orders (A, B) and (B, A); 5 contacts give the 5
    cyclic orders, each contact first once and every contact at every rank once."""
    np.testing.assert_array_equal(ordering_log_rates(2), -ORDER_DECADES * np.array([[0.0, 1.0], [1.0, 0.0]]))
    ranks = ordering_log_rates(5) / -ORDER_DECADES
    np.testing.assert_array_equal(np.argmin(ranks, axis=1), range(5))
    for square in (ranks, ranks.T):  # every row and every column a permutation of the ranks 0..4
        np.testing.assert_array_equal(np.sort(square, axis=1), np.tile(np.arange(5.0), (5, 1)))


def test_the_mixed_sampler_splits_every_kind_into_equal_halves() -> None:
    """``"mixed"`` over 1000 trajectories of 2 contacts: the 2 orderings twice (once per half),
    then ``round(998 / 16) = 62`` rate-sampled rows, then 936 uniform; each kind alternates
    between the halves, so each half holds 500 rows; caps lie in ``[0, 1]`` (units of ``h``).
    Chunks of 2^15 and 2^16 get 1024 rated rows each (a sixteenth, at most 1024), the
    orderings only in the first."""
    (batch,) = CapSampler("mixed", np.random.default_rng(0), 2, 10, 1000).chunks([1000])
    assert batch.caps.shape == (1000, 10, 2) and batch.log_rates is not None
    assert batch.log_rates.shape == (4 + 62, 2)
    np.testing.assert_array_equal(batch.caps[:4], 1.0)
    assert ((batch.caps >= 0.0) & (batch.caps <= 1.0)).all()
    assert (batch.log_rates[4:] <= 0.0).all() and (batch.log_rates[4:] >= -6.0).all()
    assert np.bincount(batch.half).tolist() == [500, 500]
    first, second = CapSampler("mixed", np.random.default_rng(0), 2, 10, 3 * 2**15).chunks([2**15, 2**16])
    assert first.log_rates is not None and second.log_rates is not None
    assert (len(first.log_rates), len(second.log_rates)) == (4 + 1024, 1024)  # 1/16 of each chunk, at most 1024


def test_an_unknown_sampler_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="sampler must be one of 'mixed', 'random', 'sobol', 'rates', got 'halton'"):
        CapSampler("halton", np.random.default_rng(0), 2, 10, 100)


def test_halves_distance_is_the_hausdorff_distance() -> None:
    """Half 0 = {(0, 0)}, half 1 = {(1, 0), (0, 3)}: from half 0 the nearest is 1 away, but
    (0, 3) is 3 from half 0, so the Hausdorff distance is 3.  An empty half gives inf."""
    velocities = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]])
    assert halves_distance(velocities, np.array([0, 1, 1])) == 3.0
    assert halves_distance(velocities, np.array([1, 1, 1])) == float("inf")


def test_orderings_reach_both_ends_of_the_chain() -> None:
    """The chain with ``e_A = 1`` and ``e_B = 0``, in the two sequential limits:

    - A first (B waits, cap 0): the equal masses exchange velocities elastically, ``(0, -1)``;
      then B alone stops mass 2 inelastically (A is separating): ``v+ = (0, 0)``;
    - B first: B is not colliding, so A leads, and B (cap ``h``, complementary) holds mass 2
      against the wall; mass 1 rebounds off a fixed mass with ``e = 1``: ``v+ = (1, 0)``.

    Both are in the default outcome set (to rounding, 1e-9), while 4096 uniform-cap samples
    come no closer than 1e-3 to the first (its last step needs B's caps near 0 for the whole
    elastic exchange)."""
    problem, v_minus = chain((1.0, 0.0))
    law = RouthImpact(2.0, 20)
    ends = np.array([[0.0, 0.0], [1.0, 0.0]])
    mixed = law.outcome_set(problem, v_minus, 64, rng=0)
    assert distance_to_samples(ends, mixed).max() <= 1e-9
    uniform = law.outcome_set(problem, v_minus, 4096, rng=0, sampler="random")
    assert distance_to_samples(ends[:1], uniform)[0] > 1e-3


def test_full_output_reports_coverage_from_equal_halves() -> None:
    """The rocking block at 2^12 default samples: every sample kept, half in each half, and the
    coverage estimate is the Hausdorff distance between them (recomputed here from the halves)."""
    example = planar.rocking_block()
    result = RouthImpact(example.step, example.max_steps).outcome_set(example.problem, example.v_minus, 2**12, rng=0, full_output=True)
    assert result.terminated == 2**12 and np.bincount(result.halves).tolist() == [2**11, 2**11]
    first, second = result.velocities[result.halves == 0], result.velocities[result.halves == 1]
    expected = max(distance_to_samples(first, second).max(), distance_to_samples(second, first).max())
    assert result.coverage() == pytest.approx(expected, rel=1e-12)
    assert 0.0 < result.coverage() < 0.1 * np.linalg.norm(example.v_minus)
