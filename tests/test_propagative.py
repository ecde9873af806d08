"""Seghete & Murphey's propagative law (``PropagativeImpact``): Gamma's identities, Newton's
cradle (their Example 1), the energetic restitution (16)-(17) and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bullet_setimpact import ImpactProblem
from bullet_setimpact.errors import UnfinishedImpactWarning
from bullet_setimpact.laws.propagative import PropagativeImpact, plastic_projection, reflection


def _spd(rng: np.random.Generator, n: int) -> np.ndarray:
    a = rng.normal(size=(n, n))
    return a @ a.T + 0.5 * np.eye(n)


def _frictionless(M: np.ndarray, Jn: np.ndarray) -> ImpactProblem:
    return ImpactProblem(M, Jn, np.zeros((len(Jn), 1, M.shape[0])), 0.0)


# ----------------------------------------------------------------------------- Gamma (eq. 7)
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nv=st.integers(1, 8), scale=st.floats(0.01, 100.0), sign=st.sampled_from([-1.0, 1.0]))
def test_gamma_is_an_involutive_scale_invariant_g_isometry(seed: int, nv: int, scale: float, sign: float) -> None:
    """Eq. (8) ``Gamma^2 = I``; eq. (9) ``Gamma(alpha u) = Gamma(u)``; Lemma 5 (eq. 21):
    ``<p Gamma, q Gamma>_g = <p, q>_g``, i.e. ``Gamma M^-1 Gamma^T = M^-1`` for covectors and
    ``Gamma^T M Gamma = M`` for velocities; and it reverses the contact's normal velocity,
    ``u Gamma v = -u v`` (the feasible root of eq. 4)."""
    rng = np.random.default_rng(seed)
    M = _spd(rng, nv)
    u = rng.normal(size=nv)
    gamma = reflection(_frictionless(M, u[None, :]), 0)
    scaled = reflection(_frictionless(M, sign * scale * u[None, :]), 0)
    tol = 1e-9 * (1 + np.abs(gamma).max()) ** 2
    np.testing.assert_allclose(gamma @ gamma, np.eye(nv), atol=tol)
    np.testing.assert_allclose(scaled, gamma, atol=tol)
    Minv = np.linalg.inv(M)
    np.testing.assert_allclose(gamma @ Minv @ gamma.T, Minv, atol=tol * (1 + np.abs(Minv).max()))
    np.testing.assert_allclose(gamma.T @ M @ gamma, M, atol=tol * (1 + np.abs(M).max()))
    v = rng.normal(size=nv)
    assert u @ gamma @ v == pytest.approx(-(u @ v), abs=tol * (1 + np.abs(u).max() * np.abs(v).max()))


# ---------------------------------------------------------------- Newton's cradle (Example 1)
CRADLE_JN = np.array([[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]])  # u = D phi_1, v = D phi_2


def _cradle(masses: tuple[float, float, float]) -> ImpactProblem:
    return _frictionless(np.diag(masses), CRADLE_JN)


@pytest.mark.parametrize("order", ["argmin", "argmax", "random", [0, 1], [1, 0]])
def test_cradle_elastic_passes_the_velocity_through(order) -> None:
    """Equal masses, ``[v, 0, 0]`` with ``v = 1.5``: only u (A-B) is infeasible at first.
    ``Gamma(u)`` swaps A and B (Example 1) giving ``[0, v, 0]``; now v (B-C), feasible at the
    start, is infeasible, and ``Gamma(v)`` gives ``[0, 0, v]``.  A law that checked only the
    initially infeasible contacts would stop at ``[0, v, 0]``.  Every order agrees (only one
    contact is ever infeasible)."""
    result = PropagativeImpact(order=order).resolve(_cradle((1.0, 1.0, 1.0)), np.array([1.5, 0.0, 0.0]), rng=3)
    np.testing.assert_allclose(result.v_plus, [0.0, 0.0, 1.5], atol=1e-15)
    assert result.info["sequence"] == (0, 1)
    assert result.terminated and result.energy_lost == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("order", ["argmin", "argmax", [0, 1], [1, 0]])
def test_cradle_equal_masses_is_order_independent_for_any_infeasible_momentum(order) -> None:
    """Example 1, eq. (15): ``Gamma(u) Gamma(v) Gamma(u) = Gamma(v) Gamma(u) Gamma(v)`` is the
    reversal ``[a, b, c] -> [c, b, a]`` (Theorem 3, ``<u, v>_g = -1/2``).  ``[2, 0, -1]``: both
    contacts infeasible; each order reflects three times and ends at ``[-1, 0, 2]``."""
    result = PropagativeImpact(order=order).resolve(_cradle((1.0, 1.0, 1.0)), np.array([2.0, 0.0, -1.0]))
    np.testing.assert_allclose(result.v_plus, [-1.0, 0.0, 2.0], atol=1e-14)
    assert len(result.info["sequence"]) == 3


def test_cradle_plastic_moves_together() -> None:
    """R = 0, eq. (11): ``Jn v+ = 0`` forces equal velocities; momentum ``m v`` is conserved,
    so ``v+ = [v/3, v/3, v/3]`` (impulses ``2 m v/3`` at u and ``m v/3`` at v, both >= 0)."""
    result = PropagativeImpact(restitution=0.0).resolve(_cradle((1.0, 1.0, 1.0)), np.array([1.5, 0.0, 0.0]))
    np.testing.assert_allclose(result.v_plus, [0.5, 0.5, 0.5], atol=1e-14)
    np.testing.assert_allclose(result.normal_impulse, [1.0, 0.5], atol=1e-14)


def test_cradle_inelastic_loses_two_thirds_of_one_minus_r_squared() -> None:
    """R = 0.7: ``E- = v^2/2`` and the plastic outcome keeps ``3 (v/3)^2/2 = E-/3``, so
    ``E_p = 2 E-/3``; definition (16) loses ``(1 - R^2) E_p = (2/3)(1 - 0.49) E- = 0.34 E-``.
    The elastic outcome ``[0, 0, v]`` only reflects u and v, which the projection stops, so (18)
    holds and ``alpha = R``: ``v+ = 0.7 [0, 0, v] + 0.3 [v/3]*3 = [0.1, 0.1, 0.8] v``."""
    v = 1.5
    result = PropagativeImpact(restitution=0.7).resolve(_cradle((1.0, 1.0, 1.0)), np.array([v, 0.0, 0.0]))
    assert result.energy_lost / result.energy_before == pytest.approx((2.0 / 3.0) * (1 - 0.7**2), rel=1e-12)
    assert result.info["alpha"] == pytest.approx(0.7, rel=1e-12)
    np.testing.assert_allclose(result.v_plus, [0.1 * v, 0.1 * v, 0.8 * v], atol=1e-14)


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ([0, 1], [-5.0 / 3.0, 0.0, 1.0 / 3.0]),  # u first: [-1.6667, 0, 0.3333]
        ("argmax", [-5.0 / 3.0, 0.0, 1.0 / 3.0]),
        ([1, 0], [-4.0 / 3.0, -7.0 / 9.0, 5.0 / 9.0]),  # v first: [-1.3333, -0.7778, 0.5556]
        ("argmin", [-4.0 / 3.0, -7.0 / 9.0, 5.0 / 9.0]),
    ],
)
def test_cradle_unequal_masses_depends_on_the_order(order, expected) -> None:
    """Masses (1, 1, 2), ``[1, 0, -1]``: both contacts close at speed 1.  Elastic two-body
    collisions (``v1' = ((m1 - m2) v1 + 2 m2 v2)/(m1 + m2)``):

    - u first: A-B swap -> ``[0, 1, -1]``; B-C: ``vB = (-1 - 4)/3 = -5/3``, ``vC = (-1 + 2)/3
      = 1/3``; A-B swap -> ``[-5/3, 0, 1/3]``, feasible.
    - v first: B-C -> ``vB = -4/3, vC = -1/3``; A-B swap -> ``[-4/3, 1, -1/3]``; B-C ->
      ``vB = (-1 - 4/3)/3 = -7/9``, ``vC = (-1/3 + 2)/3 = 5/9``; feasible.

    Both keep ``E = (1 + 0 + 2)/2 = 1.5`` (``(25 + 2)/18`` and ``(144 + 49 + 50)/162``).
    ``argmin`` compares ``Jn v / sqrt(Jn M^-1 Jn^T)``: ``-1/sqrt(2) = -0.707`` (u) against
    ``-1/sqrt(1.5) = -0.816`` (v), so it starts with v, ``argmax`` with u."""
    result = PropagativeImpact(order=order).resolve(_cradle((1.0, 1.0, 2.0)), np.array([1.0, 0.0, -1.0]))
    np.testing.assert_allclose(result.v_plus, expected, atol=1e-14)
    assert result.energy_after == pytest.approx(1.5, rel=1e-14)


def test_reflections_are_capped_and_reported() -> None:
    """The equal-mass cradle from ``[1.5, 0, 0]`` needs two reflections (above); with
    ``max_reflections=1`` it stops at ``[0, 1.5, 0]`` with B-C still closing."""
    with pytest.warns(UnfinishedImpactWarning, match="max_reflections=1"):
        result = PropagativeImpact(max_reflections=1).resolve(_cradle((1.0, 1.0, 1.0)), np.array([1.5, 0.0, 0.0]))
    assert not result.terminated and "max_reflections=1" in result.message
    np.testing.assert_allclose(result.v_plus, [0.0, 1.5, 0.0], atol=1e-15)


# ------------------------------------------------------------ random frictionless impacts
def _random_two_contact(seed: int, nv: int) -> tuple[ImpactProblem, np.ndarray]:
    rng = np.random.default_rng(seed)
    problem = _frictionless(_spd(rng, nv), rng.normal(size=(2, nv)))
    v = rng.normal(size=nv)
    v -= (problem.Jn[0] @ v + 1.0) * problem.Jn[0] / (problem.Jn[0] @ problem.Jn[0])  # Jn_0 v = -1
    return problem, v


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nv=st.integers(2, 7), R=st.floats(0.0, 1.0), order=st.sampled_from(["argmin", "argmax"]))
def test_restitution_meets_its_energetic_definition(seed: int, nv: int, R: float, order: str) -> None:
    """Two independent contacts always terminate (their Theorem 1): the reflections are a
    billiard in the wedge ``{Jn_0 v >= 0, Jn_1 v >= 0}`` whose angle in the kinetic metric is
    ``alpha = pi - acos(c)``, ``c`` the normals' cosine in ``M^-1``, and a wedge billiard
    reflects at most ``ceil(pi / alpha)`` times; ``max_reflections`` is set to that bound
    (near-opposite normals need thousands).  Elastic reflections keep
    the energy (Lemma 5) and end feasible; the plastic outcome satisfies eq. (10) as a
    complementarity problem (``lambda >= 0``, ``Jn v_p >= 0``, ``lambda . Jn v_p = 0``,
    ``M (v_p - v) = Jn^T lambda``); and the blend meets (16): ``sqrt(1 - dE/E_p) = R`` with
    ``E_p = E- - E(v_p)``, also when (18) fails (a contact the projection leaves alone)."""
    problem, v = _random_two_contact(seed, nv)
    delassus = problem.Jn @ problem.solve_mass(problem.Jn.T)
    cosine = np.clip(delassus[0, 1] / np.sqrt(delassus[0, 0] * delassus[1, 1]), -1.0, 1.0)
    reflections = math.ceil(np.pi / (np.pi - np.arccos(cosine))) + 1
    law = PropagativeImpact(restitution=R, order=order, max_reflections=reflections)
    result = law.resolve(problem, v)
    assert result.terminated and not problem.colliding(result.v_plus)
    elastic = PropagativeImpact(order=order, max_reflections=reflections).resolve(problem, v)
    assert elastic.energy_after == pytest.approx(elastic.energy_before, rel=1e-12)
    assert np.all(elastic.normal_impulse >= 0.0)
    v_p, lam = plastic_projection(problem, v)
    gap = problem.normal_velocities(v_p)
    scale = 1.0 + np.abs(v).max()
    assert np.all(lam >= -1e-12) and np.all(gap >= -1e-9 * scale) and abs(lam @ gap) <= 1e-9 * scale * (1 + lam.max())
    np.testing.assert_allclose(problem.M @ (v_p - v), problem.Jn.T @ lam, atol=1e-9 * scale * (1 + np.abs(problem.M).max()))
    E_minus, E_plastic_after = result.energy_before, float(problem.kinetic_energy(v_p))
    E_p = E_minus - E_plastic_after
    if E_p > 1e-9 * E_minus:
        assert np.sqrt(max(1.0 - result.energy_lost / E_p, 0.0)) == pytest.approx(R, abs=1e-6)


def test_blend_weight_differs_from_r_when_eq_18_fails() -> None:
    """Random impact (seed 1, nv = 4) whose elastic sequence reflects a contact that the
    plastic projection leaves separating: ``<v_p, v_e - v_p>_M != 0`` (computed here), so the
    paper's step from (17) to ``alpha = R`` via (18) does not apply.  The law must still meet
    definition (16), with some ``alpha != R``."""
    problem, v = _random_two_contact(1, 4)
    result = PropagativeImpact(restitution=0.5).resolve(problem, v)
    v_e, v_p = result.info["v_elastic"], result.info["v_plastic"]
    assert abs(v_p @ problem.M @ (v_e - v_p)) > 0.1
    E_p = result.energy_before - float(problem.kinetic_energy(v_p))
    assert np.sqrt(1.0 - result.energy_lost / E_p) == pytest.approx(0.5, rel=1e-10)
    assert abs(result.info["alpha"] - 0.5) > 0.1
    np.testing.assert_allclose(result.v_plus, result.info["alpha"] * v_e + (1 - result.info["alpha"]) * v_p, atol=1e-14)


# ------------------------------------------------------------------------------ bad input
def test_bad_input_gets_a_clear_error() -> None:
    """R outside [0, 1] (or NaN); an unknown order rule; an order naming contacts the problem
    lacks (they are named); a repeated contact; friction passed to the frictionless law."""
    for R in (-0.1, 1.1, float("nan")):
        with pytest.raises(ValueError, match="restitution"):
            PropagativeImpact(restitution=R)
    with pytest.raises(ValueError, match="order must be one of"):
        PropagativeImpact(order="first")
    with pytest.raises(ValueError, match="repeat"):
        PropagativeImpact(order=[0, 0])
    with pytest.raises(ValueError, match="order must hold"):
        PropagativeImpact(order=[0, -1])
    cradle = _cradle((1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match=r"order names contacts \[2, 5\]"):
        PropagativeImpact(order=[5, 0, 2]).resolve(cradle, np.array([1.0, 0.0, 0.0]))
    frictional = ImpactProblem(np.eye(3), CRADLE_JN, np.zeros((2, 1, 3)), [0.0, 0.4])
    with pytest.raises(ValueError, match=r"mu > 0 at contacts \[1\].*ignore_friction"):
        PropagativeImpact().resolve(frictional, np.array([1.0, 0.0, 0.0]))
    ignored = PropagativeImpact(ignore_friction=True).resolve(frictional, np.array([1.5, 0.0, 0.0]))
    np.testing.assert_allclose(ignored.v_plus, [0.0, 0.0, 1.5], atol=1e-15)
    np.testing.assert_array_equal(ignored.friction_impulse, 0.0)
