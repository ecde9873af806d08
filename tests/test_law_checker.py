"""``bullet_setimpact.testing.check_law``: every shipped law passes it, and a law that breaks
one rule of the contract is rejected with that rule named."""

from __future__ import annotations

import numpy as np
import pytest

from bullet_setimpact import LAWS, AnitescuPotraImpact, ImpactLaw, ImpactProblem, LawContractError, get_law
from bullet_setimpact.laws.base import LawOutcome
from bullet_setimpact.testing import check_law


@pytest.mark.parametrize("name", sorted(LAWS))
def test_every_shipped_law_passes_the_checker(name: str) -> None:
    check_law(get_law(name), cases=20)


class SuperElasticImpact(ImpactLaw):
    """A toy law that reverses every contact's normal velocity with coefficient 2.

    For a single colliding contact ``i`` with normal velocity ``u = Jn_i v- < 0`` it applies
    the normal impulse ``Lambda = -3 u / (Jn_i M^-1 Jn_i^T)``, so ``Jn_i v+ = u + 3 (-u) = -2 u``:
    Newton's law (eq. 30) holds, the impulse is normal and non-negative (inside every friction
    cone) and ``v+`` separates, but the normal kinetic energy grows by a factor 4: the
    checker must reject it for the energy rule alone.
    """

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        i = int(np.argmin(problem.Jn @ v_minus))
        row = problem.Jn[i]
        direction = problem.solve_mass(row)
        impulse = np.zeros(problem.contacts)
        impulse[i] = -3.0 * (row @ v_minus) / (row @ direction)
        v_plus = v_minus + impulse[i] * direction
        still = problem.colliding(v_plus)
        return LawOutcome(
            np.array([v_minus, v_plus]),
            impulse,
            np.zeros((problem.contacts, problem.Jt.shape[1])),
            terminated=not still.any(),
            message="" if not still.any() else "another contact still collides",
        )


def test_an_energy_gaining_law_is_rejected() -> None:
    with pytest.raises(LawContractError, match="kinetic energy rises at increment 1"):
        check_law(SuperElasticImpact())


class AlternatingImpact(ImpactLaw):
    """A law with hidden state: odd calls give the Anitescu–Potra outcome, even calls give up
    (``v+ = v-``, ``terminated=False`` with a message).  Each outcome alone obeys the contract,
    but resolving the same impact twice with the same seed differs (the first case has a
    colliding contact, so the Anitescu–Potra outcome changes ``v``): the determinism rule
    must reject it on the first case."""

    def __init__(self) -> None:
        self._calls = 0

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        self._calls += 1
        if self._calls % 2:
            return AnitescuPotraImpact()._resolve(problem, v_minus, rng)
        zeros = np.zeros(problem.contacts)
        return LawOutcome(np.array([v_minus]), zeros, np.zeros((problem.contacts, problem.Jt.shape[1])), False, message="gave up")


def test_a_law_with_hidden_state_is_rejected() -> None:
    with pytest.raises(LawContractError, match=r"case 0 .*the same seed gave different outcomes"):
        check_law(AlternatingImpact())


def test_a_law_that_breaks_newtons_law_is_rejected() -> None:
    """A law returning ``v+ = 0`` with zero impulses breaks eq. (30) (``M (0 - v-) != 0``)."""

    class Stop(ImpactLaw):
        def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
            zeros = np.zeros(problem.contacts)
            return LawOutcome(np.array([v_minus, 0.0 * v_minus]), zeros, np.zeros((problem.contacts, problem.Jt.shape[1])), True)

    with pytest.raises(LawContractError, match=r"eq\. \(30\)"):
        check_law(Stop())
