"""Every law against closed-form single- and decoupled-contact impacts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bullet_setimpact import AnitescuPotraImpact, ImpactProblem, RouthImpact, SequentialImpact, planar

from .conftest import contract_laws


def _random_spd(rng: np.random.Generator, n: int) -> np.ndarray:
    a = rng.normal(size=(n, n))
    return a @ a.T + 0.5 * np.eye(n)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nv=st.integers(1, 8))
def test_single_frictionless_contact_is_the_plastic_projection(seed: int, nv: int) -> None:
    """One frictionless contact: every inelastic law stops the normal motion with the least
    kinetic-energy change, ``v+ = v - M^-1 Jn^T (Jn M^-1 Jn^T)^-1 Jn v`` (Routh's method with
    ``mu = 0`` integrates ``M dv/ds = Jn^T`` until ``Jn v = 0``; eq. 36), computed here directly."""
    rng = np.random.default_rng(seed)
    M = _random_spd(rng, nv)
    Jn = rng.normal(size=(1, nv))
    Jn /= np.sqrt(Jn[0] @ np.linalg.solve(M, Jn[0]))  # unit effective mass: the impact needs impulse |Jn v|
    problem = ImpactProblem(M, Jn, rng.normal(size=(1, 1, nv)), 0.0)
    v = rng.normal(size=nv)
    v -= (Jn[0] @ v + 1.0) / (Jn[0] @ Jn[0]) * Jn[0]  # make Jn v = -1 (colliding)
    Minv_JnT = np.linalg.solve(M, Jn.T)
    expected = v - (Minv_JnT @ np.linalg.solve(Jn @ Minv_JnT, Jn @ v)).ravel()
    for law in contract_laws(1):
        result = law.resolve(problem, v, rng=seed)
        assert result.terminated
        np.testing.assert_allclose(result.v_plus, expected, atol=1e-9 * (1 + np.abs(v).max()))


@pytest.mark.parametrize(
    ("v", "mu", "expected"),
    [
        ((0.3, -1.0), 0.5, (0.0, 0.0)),  # |vt| = 0.3 <= mu |vn| = 0.5: sticks
        ((-0.5, -1.0), 0.5, (0.0, 0.0)),  # boundary case |vt| = mu |vn|: sticks
        ((1.0, -1.0), 0.5, (0.5, 0.0)),  # slides: vt+ = 1 - 0.5 * 1
        ((-2.0, -0.5), 1.0, (-1.5, 0.0)),  # slides: vt+ = -2 + 1 * 0.5
    ],
)
def test_single_frictional_point_contact_planar(v: tuple, mu: float, expected: tuple) -> None:
    """A point mass m on a floor (``M = m I``, ``Jn = [0, 1]``, ``Jt = [1, 0]``): the normal
    impulse is ``m |vn|``; it sticks iff the needed tangential impulse ``m |vt|`` is within
    ``mu m |vn|``, otherwise it slides with ``vt+ = vt - mu |vn| sign(vt)`` (normal and
    tangential are decoupled, so Routh's differential friction gives the same)."""
    problem = ImpactProblem(2.0 * np.eye(2), np.array([[0.0, 1.0]]), np.array([[[1.0, 0.0]]]), mu)
    for law in contract_laws(1):
        result = law.resolve(problem, np.array(v), rng=0)
        np.testing.assert_allclose(result.v_plus, expected, atol=1e-9)
        assert result.normal_impulse[0] == pytest.approx(2.0 * abs(v[1]))


def test_decoupled_contacts_collapse_the_set_to_one_point() -> None:
    """Seghete-Murphey Theorem 2: with ``Jn M^-1 Jn^T`` diagonal and no friction, the impulses
    do not interact, so every ordering gives the same result (each contact's normal velocity
    is zeroed independently): ``v+ = v - M^-1 Jn^T G^-1 Jn v`` with G diagonal.

    ``Jn = Q^T A^-1`` with ``M^-1 = A A^T`` and orthonormal ``Q`` makes ``G = Jn M^-1 Jn^T = I``.
    """
    rng = np.random.default_rng(7)
    nv = 5
    M = _random_spd(rng, nv)
    A = np.linalg.cholesky(np.linalg.inv(M))
    Q, _ = np.linalg.qr(rng.normal(size=(nv, 2)))
    Jn = Q.T @ np.linalg.inv(A)
    problem = ImpactProblem(M, Jn, rng.normal(size=(2, 1, nv)), 0.0)
    np.testing.assert_allclose(Jn @ np.linalg.solve(M, Jn.T), np.eye(2), atol=1e-12)
    v = np.linalg.solve(Jn.T @ Jn + np.eye(nv) * 1e-3, Jn.T @ np.array([-1.0, -0.4]))
    expected = v - np.linalg.solve(M, Jn.T @ (Jn @ v))
    for order in ([0, 1], [1, 0]):
        np.testing.assert_allclose(SequentialImpact(order).resolve(problem, v).v_plus, expected, atol=1e-10)
    samples = RouthImpact(step=0.2, max_steps=50).outcome_set(problem, v, samples=2000, rng=0)
    assert len(samples) == 2000
    np.testing.assert_allclose(samples, np.broadcast_to(expected, samples.shape), atol=1e-9)


def test_zeno_rocking_block_impact_scales_rate_by_0_7() -> None:
    """Journal eq. (68), corrected in NOTES.md: a sticking impact at corner B while the block
    (w = 1, h = 2, m = 1, I = (w^2 + h^2)/12 = 5/12) pivots about A scales the angular rate by
    ``(I - m r^2 cos 2 alpha) / (I + m r^2)``, ``r^2 = (w^2 + h^2)/4 = 5/4``,
    ``cos 2 alpha = (w^2 - h^2)/(w^2 + h^2) = -3/5``: ``(5/12 + 3/4) / (5/3) = 0.7``.

    Pivoting about A = (-w/2, -h/2) from the centre at rate ``omega`` gives the centre velocity
    ``omega x (w/2, h/2) = omega (-h/2, w/2)``.
    """
    example = planar.rocking_block()
    omega = -1.0
    v = np.array([-omega * 1.0, omega * 0.5, omega])
    np.testing.assert_allclose(example.problem.normal_velocities(v)[0], 0.0, atol=1e-15)
    corner_b = example.problem.subset([1])
    for law in contract_laws(1):
        result = law.resolve(corner_b, v, rng=0)
        assert result.v_plus[2] / omega == pytest.approx(0.7, rel=1e-12)


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: RouthImpact(step=0.0, max_steps=10), "step must be a positive"),
        (lambda: RouthImpact(step=-1.0, max_steps=10), "step must be a positive"),
        (lambda: RouthImpact(step=float("nan"), max_steps=10), "step must be a positive"),
        (lambda: RouthImpact(step=0.1, max_steps=0), "max_steps must be an integer >= 1"),
        (lambda: RouthImpact(step=0.1, max_steps=2.5), "max_steps must be an integer >= 1"),
        (lambda: SequentialImpact([]), "order must be a non-empty"),
        (lambda: SequentialImpact("AB"), "order must be a non-empty"),
        (lambda: SequentialImpact([0, -1]), "non-negative integer"),
        (lambda: SequentialImpact([0, 1], max_cycles=0), "max_cycles must be an integer >= 1"),
    ],
)
def test_law_parameters_are_validated(factory, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


def test_resolve_validates_its_inputs() -> None:
    example = planar.rocking_block()
    law = AnitescuPotraImpact()
    with pytest.raises(ValueError, match="problem must be an ImpactProblem"):
        law.resolve("not a problem", example.v_minus)  # type: ignore[arg-type]  # deliberate bad input
    with pytest.raises(ValueError, match="v_minus must have shape"):
        law.resolve(example.problem, np.zeros(2))
    with pytest.raises(ValueError, match="rng must be"):
        law.resolve(example.problem, example.v_minus, rng="seed")  # type: ignore[arg-type]  # deliberate
    with pytest.raises(ValueError, match="order names contacts"):
        SequentialImpact([0, 5]).resolve(example.problem, example.v_minus)
    with pytest.raises(ValueError, match="eps must lie in"):
        RouthImpact(0.3, 10).outcome_set(example.problem, example.v_minus, 10, eps=0.5)
    with pytest.raises(ValueError, match="sampler must be"):
        RouthImpact(0.3, 10).outcome_set(example.problem, example.v_minus, 10, sampler="halton")
