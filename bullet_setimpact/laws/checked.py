"""``CheckedLaw``: a law wrapper that accepts an outcome only when it may be written back.

Like gymnasium's ``Wrapper``, :class:`CheckedLaw` wraps any law and keeps its interface
(``resolve(problem, v_minus, rng)``).  An outcome is accepted when ``v+`` is a finite vector
of the right shape, the impact terminated, ``v+`` no longer collides (``Jn v+ >= 0`` on
every contact) and the kinetic energy did not grow (journal Theorem 3's dissipation).  A
rejected outcome, or a law that raised, is replaced by the ``fallback``'s checked outcome
or reported as :class:`~bullet_setimpact.errors.ImpactFailure` with the cause chained.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.problem import ImpactProblem
from ..errors import ImpactFailure, SetImpactError
from .base import ImpactLaw, ImpactResult, RandomLike

#: Relative energy increase above which a law's outcome is rejected.
ENERGY_TOL = 1e-9


@dataclass(frozen=True)
class CheckedOutcome:
    """An accepted outcome: the result, the name of the law that gave it and why the wrapped
    law was not used (empty when it was)."""

    result: ImpactResult
    law: str
    failure: str = ""


def law_name(law: object) -> str:
    """A law's registry name, else its class name."""
    return getattr(law, "name", "") or type(law).__name__


def rejection(problem: ImpactProblem, result: ImpactResult) -> str | None:
    """Why an outcome may not be written back, or None when it passes."""
    if not np.isfinite(result.v_plus).all() or result.v_plus.shape != (problem.dofs,):
        return "v_plus is not a finite vector of the right shape"
    if not result.terminated:
        return f"the impact did not terminate ({result.message or 'still colliding'})"
    if problem.colliding(result.v_plus):
        return "v_plus still collides"
    if result.energy_after > result.energy_before * (1.0 + ENERGY_TOL) + 1e-12:
        return f"kinetic energy grew from {result.energy_before:.6g} to {result.energy_after:.6g} J"
    return None


class CheckedLaw:
    """``law`` whose outcomes are checked; ``fallback`` (a law, or None to raise) replaces a
    rejected one.

    Parameters
    ----------
    law : ImpactLaw
        The law to check.
    fallback : ImpactLaw, optional
        Law applied (deterministically, without the random generator) when ``law`` fails;
        its outcome is checked too.  None: a failure raises
        :class:`~bullet_setimpact.errors.ImpactFailure`.
    """

    def __init__(self, law: ImpactLaw, fallback: ImpactLaw | None = None) -> None:
        self.law = law
        self.fallback = fallback

    @property
    def name(self) -> str:
        """The wrapped law's name."""
        return law_name(self.law)

    @property
    def honours_restitution(self) -> bool:
        """The wrapped law's :attr:`~ImpactLaw.honours_restitution` (False for duck-typed laws)."""
        return bool(getattr(self.law, "honours_restitution", False))

    @property
    def needs_external_force(self) -> bool:
        """Whether the wrapped law needs ``problem.external_force``."""
        return bool(getattr(self.law, "needs_external_force", False))

    def check(self, problem: ImpactProblem, v_minus: np.ndarray, rng: RandomLike = None) -> CheckedOutcome:
        """The law's outcome if it passes, else the fallback's (see the module docstring).

        Raises
        ------
        ImpactFailure
            When the law fails and there is no fallback, or the fallback fails too; the
            law's exception, if it raised, is the cause.
        """
        name = self.name
        cause: BaseException | None = None
        reason: str | None
        try:
            # rejection() reports an unfinished outcome: the package's laws need not warn of it too
            options = {"unfinished": "return"} if isinstance(self.law, ImpactLaw) else {}
            result = self.law.resolve(problem, v_minus, rng=rng, **options)
            reason = rejection(problem, result)
        except (SetImpactError, ValueError) as exc:  # the law cannot solve this problem
            reason, cause = f"{type(exc).__name__}: {exc}", exc
        if reason is None:
            return CheckedOutcome(result, name)
        if self.fallback is None:
            raise ImpactFailure(
                f"{name} failed at an impact with {problem.contacts} contacts: {reason}; nothing was written back"
            ) from cause
        try:
            fallback = self.fallback.resolve(problem, v_minus, unfinished="return")
            fallback_reason = rejection(problem, fallback)
        except (SetImpactError, ValueError) as exc:  # the fallback cannot solve it either
            fallback_reason, cause = f"{type(exc).__name__}: {exc}", exc
        if fallback_reason is not None:
            raise ImpactFailure(
                f"{name} failed ({reason}) and so did the {law_name(self.fallback)} fallback ({fallback_reason})"
            ) from cause
        return CheckedOutcome(fallback, law_name(self.fallback), f"{name}: {reason}")

    def resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: RandomLike = None) -> ImpactResult:
        """The checked outcome's result (``ImpactLaw``'s interface)."""
        return self.check(problem, v_minus, rng).result

    def __repr__(self) -> str:
        return f"CheckedLaw({self.law!r}, fallback={self.fallback!r})"
