"""Order-independence diagnostics: normal coupling, Seghete & Murphey's Theorems 2-3, and the
indeterminacy ``xi`` of their billiard break (Sec. VII-A, Fig. 5)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from bullet_setimpact import AnitescuPotraImpact, ImpactProblem, RouthImpact, SamplesDroppedWarning, SequentialImpact, planar
from bullet_setimpact.analysis.diagnostics import normal_coupling, order_independent, outcome_spread
from bullet_setimpact.laws.plastic import PlasticImpact
from bullet_setimpact.laws.propagative import PropagativeImpact


def billiards(theta_deg: float, third_contact: bool = False) -> tuple[ImpactProblem, np.ndarray]:
    """Their Fig. 4 with equal unit masses: cue ball c at the origin moving at ``(1, 0)`` along
    the bisector of the angle ``theta`` between the struck balls a (above) and b (below).
    ``q = (x_a, y_a, x_b, y_b, x_c, y_c)``; the gap gradient of contact c-a is ``n_a`` on a and
    ``-n_a`` on c, ``n_a = (cos theta/2, sin theta/2)`` the unit vector from c to a.  With
    ``third_contact`` the touching pair a-b gets its own contact (normal from b to a)."""
    half = np.deg2rad(theta_deg) / 2.0
    n_a, n_b = np.array([np.cos(half), np.sin(half)]), np.array([np.cos(half), -np.sin(half)])
    rows = [np.concatenate([n_a, 0 * n_a, -n_a]), np.concatenate([0 * n_b, n_b, -n_b])]
    if third_contact:
        n_ab = (n_a - n_b) / np.linalg.norm(n_a - n_b)
        rows.append(np.concatenate([n_ab, -n_ab, 0 * n_ab]))
    Jn = np.array(rows)
    return ImpactProblem(np.eye(6), Jn, np.zeros((len(Jn), 1, 6)), 0.0), np.array([0.0, 0.0, 0.0, 0.0, 1.0, 0.0])


def xi_by_hand(theta_deg: float) -> float:
    """``xi = |p_ab - p_ba|_g / |p_0|_g`` from equal-mass elastic ball collisions, written
    independently of the package: along the line of centres ``n`` the two balls exchange
    their normal velocities (``v_a += ((v_c - v_a).n) n``, ``v_c -= ...``), repeated while some
    pair still closes.  With unit masses ``|p|_g`` is the Euclidean norm of the stacked
    velocities and ``|p_0|_g = 1``."""
    half = np.deg2rad(theta_deg) / 2.0
    normals = [np.array([np.cos(half), np.sin(half)]), np.array([np.cos(half), -np.sin(half)])]
    outcomes = []
    for first in (0, 1):
        velocity = [np.zeros(2), np.zeros(2), np.array([1.0, 0.0])]  # a, b, c
        ball = first
        while any((velocity[2] - velocity[i]) @ normals[i] > 1e-12 for i in (0, 1)):
            closing = (velocity[2] - velocity[ball]) @ normals[ball]
            if closing > 1e-12:
                velocity[ball] = velocity[ball] + closing * normals[ball]
                velocity[2] = velocity[2] - closing * normals[ball]
            ball = 1 - ball
        outcomes.append(np.concatenate(velocity))
    return float(np.linalg.norm(outcomes[0] - outcomes[1]))


# --------------------------------------------------------------------------- coupling
@pytest.mark.parametrize("theta", [70.0, 90.0, 120.0, 150.0])
def test_billiard_coupling_is_half_the_cosine(theta: float) -> None:
    """Their eq. (31): ``<D phi_a, D phi_b>_g = cos(theta)/m_c`` with ``|D phi|_g^2 = 1/m_a +
    1/m_c = 2`` (unit masses), so ``c_ab = cos(theta)/2``; ``c_ii = 1``."""
    c = normal_coupling(billiards(theta)[0])
    np.testing.assert_allclose(c, [[1.0, np.cos(np.deg2rad(theta)) / 2], [np.cos(np.deg2rad(theta)) / 2, 1.0]], atol=1e-15)


def test_cradle_coupling_is_minus_one_half() -> None:
    """Their Sec. V: equal masses, ``u = [-1, 1, 0]``, ``v = [0, -1, 1]``: ``u M^-1 v^T = -1/m``
    and ``|u|_g^2 = |v|_g^2 = 2/m``, so ``c = -1/2`` for any m."""
    problem = ImpactProblem(3.0 * np.eye(3), [[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]], np.zeros((2, 1, 3)), 0.0)
    assert normal_coupling(problem)[0, 1] == pytest.approx(-0.5, rel=1e-14)


# --------------------------------------------------------------------- order independence
@pytest.mark.parametrize(("theta", "independent"), [(90.0, True), (70.0, False), (120.0, False), (150.0, False)])
def test_billiards_order_independence(theta: float, independent: bool) -> None:
    """``c = cos(theta)/2`` is 0 only at 90 degrees (Theorem 2: orthogonal normals); at 70,
    120 and 150 degrees ``c = 0.171, -0.25, -0.433`` is neither 0 nor -1/2 (Theorem 3), so
    nothing is guaranteed.  Both contacts collide (``c`` moves along the bisector)."""
    problem, v = billiards(theta)
    result = order_independent(problem, v)
    assert bool(result) is independent
    assert ("Theorem 2" in result.reason) if independent else (result.reason == "not guaranteed")


def test_cradle_order_independence() -> None:
    """Equal masses, both contacts colliding (``[2, 0, -1]``): ``c = -1/2``, Theorem 3.  Masses
    (1, 1, 2): ``c = -1/sqrt(2 * 1.5) = -0.577``, not guaranteed, and indeed the two orders give
    different outcomes (test_propagative).  ``[1, 0, 0]`` with equal masses: one colliding
    contact of two, so every reflection is forced.  At rest: no impact."""
    Jn, Jt = np.array([[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]]), np.zeros((2, 1, 3))
    equal, unequal = ImpactProblem(np.eye(3), Jn, Jt, 0.0), ImpactProblem(np.diag([1.0, 1.0, 2.0]), Jn, Jt, 0.0)
    assert "Theorem 3" in order_independent(equal, np.array([2.0, 0.0, -1.0])).reason
    assert not order_independent(unequal, np.array([1.0, 0.0, -1.0]))
    assert "forced" in order_independent(unequal, np.array([1.0, 0.0, 0.0])).reason
    assert "no contact collides" in order_independent(unequal, np.zeros(3)).reason


# ----------------------------------------------------------------------- outcome spread
@pytest.mark.parametrize(("theta", "expected"), [(90.0, 0.0), (70.0, 0.510), (120.0, np.sqrt(5.0) / 4.0)])
def test_billiards_xi(theta: float, expected: float) -> None:
    """Their Fig. 5.  At 90 degrees the reflections commute (Lemma 7), ``xi = 0``.  At 120
    degrees by hand: a first, ``(v_c . n_a) = 1/2`` gives a ``(1/4, sqrt3/4)`` and c
    ``(3/4, -sqrt3/4)``; then ``(v_c . n_b) = 3/4`` gives b ``(3/8, -3 sqrt3/8)`` and c
    ``(3/8, sqrt3/8)``, after which c-a separates; b first is the mirror image.  The
    differences are ``(-1/8, -sqrt3/8)``, ``(1/8, -sqrt3/8)``, ``(0, sqrt3/4)``: ``xi^2 = 1/16 +
    1/16 + 3/16``, ``xi = sqrt5/4 = 0.5590``.  At 70 degrees: :func:`xi_by_hand`, 0.5102.  The
    argmin/argmax orders tie here (c moves along the bisector); the spread also tries both
    priority orders."""
    assert xi_by_hand(theta) == pytest.approx(expected, abs=1e-3)
    problem, v = billiards(theta)
    assert outcome_spread(PropagativeImpact(), problem, v, samples=2) == pytest.approx(xi_by_hand(theta), abs=1e-12)


def test_sixty_degrees_modelled_with_the_third_contact() -> None:
    """At 60 degrees a and b touch: a third contact a-b.  By hand (as at 120 degrees), a first
    leaves a ``(3/4, sqrt3/4)``, b ``(3/8, -sqrt3/8)``: a and b move apart, so a-b never becomes
    infeasible and the outcomes are those of the two-contact model, ``xi = sqrt(3 * 12/64) =
    3/4``.  The couplings are all ``cos(60 deg)/2 = 1/4``: not guaranteed."""
    problem, v = billiards(60.0, third_contact=True)
    np.testing.assert_allclose(normal_coupling(problem)[np.triu_indices(3, 1)], 0.25, atol=1e-15)
    assert not order_independent(problem, v)
    assert outcome_spread(PropagativeImpact(), problem, v, samples=6) == pytest.approx(0.75, abs=1e-12)


def test_spread_of_the_set_valued_model_is_the_diameter_of_its_outcome_set() -> None:
    """For RouthImpact the spread is the diameter of ``outcome_set(..., rng=0)`` in the
    kinetic metric, recomputed here with ``scipy.spatial.distance.pdist`` on ``C^T v``
    (``M = C C^T``), over ``|v-|_M``.  Deterministic laws have spread 0."""
    example = planar.rocking_block()
    law = RouthImpact(example.step, example.max_steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplesDroppedWarning)
        outcomes = law.outcome_set(example.problem, example.v_minus, 512, rng=0)
        spread = outcome_spread(law, example.problem, example.v_minus, 512)
    C = np.linalg.cholesky(example.problem.M)
    norm = np.sqrt(example.v_minus @ example.problem.M @ example.v_minus)
    assert spread == pytest.approx(pdist(outcomes @ C).max() / norm, rel=1e-10)
    assert spread > 0.1  # the set holds rest and pivots (journal Fig. 9)
    for deterministic in (AnitescuPotraImpact(), PlasticImpact()):
        assert outcome_spread(deterministic, example.problem, example.v_minus, 3) == 0.0


def test_sequential_spread_compares_both_cyclic_orders() -> None:
    """On the journal's rocking block the sequential orders (A, B, ...) and (B, A, ...) end
    pivoting on opposite corners (journal Fig. 9); the spread must equal the distance between
    the two ``SequentialImpact`` runs, computed here directly."""
    example = planar.rocking_block()
    problem, v = example.problem, example.v_minus
    first, second = (SequentialImpact(order).resolve(problem, v).v_plus for order in ([0, 1], [1, 0]))
    expected = np.sqrt((first - second) @ problem.M @ (first - second) / (v @ problem.M @ v))
    assert expected > 0.1
    assert outcome_spread(SequentialImpact(), problem, v, samples=2) == pytest.approx(expected, rel=1e-12)


def test_bad_input_gets_a_clear_error() -> None:
    """``samples`` must be a positive int, ``v_minus`` nonzero and of the right shape."""
    problem, v = billiards(90.0)
    with pytest.raises(ValueError, match="samples"):
        outcome_spread(PropagativeImpact(), problem, v, samples=0)
    with pytest.raises(ValueError, match="v_minus must be nonzero"):
        outcome_spread(PropagativeImpact(), problem, np.zeros(6), samples=2)
    with pytest.raises(ValueError, match=r"v_minus must have shape \(6,\)"):
        order_independent(problem, np.zeros(5))


def test_outcome_spread_uses_the_law_hook() -> None:
    """``outcome_spread`` asks the law for its outcomes (``spread_outcomes``), with no type
    checks: a toy law giving v- and 0 on a unit point mass has spread |v-|_M / |v-|_M = 1."""

    class TwoOutcomes(PlasticImpact):
        def spread_outcomes(self, problem, v_minus, samples):  # type: ignore[no-untyped-def]
            return np.array([v_minus, np.zeros_like(v_minus)])

    problem = ImpactProblem(np.eye(1), [[1.0]], np.zeros((1, 1, 1)), 0.0)
    assert outcome_spread(TwoOutcomes(), problem, np.array([-2.0]), 4) == 1.0
