"""One contract for every law (journal Theorems 2 and 7): over random SPD M, random Jacobians
(m <= 5, nv <= 12) and random mu, no step adds kinetic energy, every impulse lies in the
linearized friction cone, and every terminated outcome is non-colliding."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bullet_setimpact import ImpactProblem

from .conftest import contract_laws


def random_problem(seed: int, nv: int, m: int, spatial: bool) -> tuple[ImpactProblem, np.ndarray]:
    """A random impact: SPD ``M``, Jacobian rows scaled to unit effective mass, mu in [0, 2],
    and a pre-impact velocity with at least one contact colliding."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(nv, nv))
    M = a @ a.T + 0.3 * np.eye(nv)
    Jn = rng.normal(size=(m, nv))
    Jn /= np.sqrt(np.einsum("iv,iv->i", Jn, np.linalg.solve(M, Jn.T).T))[:, None]
    Jt = rng.normal(size=(m, 2 if spatial else 1, nv))
    mu = rng.uniform(0.0, 2.0, size=m) * (rng.random(m) < 0.8)
    v = rng.normal(size=nv)
    normal = Jn @ v
    if normal.min() >= -1e-3:
        v -= (normal.min() + 1.0) * Jn[normal.argmin()] / (Jn[normal.argmin()] @ Jn[normal.argmin()])
    return ImpactProblem(M, Jn, Jt, mu), v


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    nv=st.integers(1, 12),
    m=st.integers(1, 5),
    spatial=st.booleans(),
)
def test_every_law_obeys_the_impact_contract(seed: int, nv: int, m: int, spatial: bool) -> None:
    problem, v = random_problem(seed, nv, m, spatial)
    for law in contract_laws(m):
        result = law.resolve(problem, v, rng=seed)
        energies = problem.kinetic_energy(result.path)
        assert np.all(np.diff(energies) <= 1e-12 * energies[0] + 1e-15), type(law).__name__
        assert result.energy_after <= result.energy_before * (1 + 1e-12) + 1e-15
        assert problem.in_friction_cone(result.normal_impulse, result.friction_impulse, tol=1e-8), type(law).__name__
        if result.terminated:
            assert not problem.colliding(result.v_plus), type(law).__name__
        else:
            assert result.message
        # Newton's law of impact, eq. (30): M (v+ - v-) = Jn^T Lambda_n + Jt^T Lambda_t.
        generalized = problem.Jn.T @ result.normal_impulse + np.einsum("idv,id->v", problem.Jt, result.friction_impulse)
        np.testing.assert_allclose(problem.M @ (result.v_plus - v), generalized, atol=1e-8 * (1 + np.abs(generalized).max()))
