"""One contract for every law (journal Theorems 2 and 7): over random SPD M, random Jacobians
(m <= 5, nv <= 12) and random mu, no step adds kinetic energy, every impulse lies in the
linearized friction cone, and every terminated outcome is non-colliding."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bullet_setimpact.testing import check_outcome, random_impact

from .conftest import contract_laws


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    nv=st.integers(1, 12),
    m=st.integers(1, 5),
    spatial=st.booleans(),
)
def test_every_law_obeys_the_impact_contract(seed: int, nv: int, m: int, spatial: bool) -> None:
    problem, v = random_impact(seed, nv, m, spatial)
    for law in contract_laws(m):
        result = law.resolve(problem, v, rng=seed, unfinished="return")  # check_outcome reads terminated
        check_outcome(problem, v, result)
        assert result.energy_after <= result.energy_before * (1 + 1e-12) + 1e-15, type(law).__name__
