"""The impact-law interface: ``resolve(problem, v_minus, rng) -> ImpactResult``.

Modelled on ``scipy.integrate.OdeSolver``: the public :meth:`ImpactLaw.resolve` does the
bookkeeping (input checks, random generator, energies, result assembly) and a law fills
in one method, :meth:`ImpactLaw._resolve`, which returns a :class:`LawOutcome`.

Rules for implementers of ``_resolve``:

- use only the :class:`~bullet_setimpact.core.problem.ImpactProblem` (never PyBullet);
- draw randomness only from the ``rng`` argument (no global state);
- return the velocity after every impulse increment in ``path`` (``path[0] == v_minus``),
  the total normal impulse per contact and the total tangential impulse per contact;
- never hide a solver failure: let :class:`~bullet_setimpact.errors.LCPError` propagate,
  or return ``terminated=False`` with a ``message``.

Hooks a law may override (callers never branch on the law's type):

- :attr:`ImpactLaw.needs_external_force`: true when ``_resolve`` reads
  ``problem.external_force`` (the simulator then fills it in);
- :attr:`ImpactLaw.honours_restitution`: true when ``_resolve`` uses
  ``problem.restitution`` (the simulator then fills it in from Bullet's dynamics);
- :meth:`ImpactLaw.simulation_default`: the instance :func:`~bullet_setimpact.laws.get_law`
  builds from the registry name, with defaults fit for simulation.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import permutations
from typing import Any, ClassVar

import numpy as np

from ..core.problem import ImpactProblem
from ..errors import ImpactFailure, UnfinishedImpactWarning, warn

RandomLike = None | int | np.random.SeedSequence | np.random.Generator
#: What :meth:`ImpactLaw.resolve` does with an outcome that did not terminate.
UNFINISHED = ("warn", "raise", "return")


def as_generator(rng: RandomLike, name: str = "rng") -> np.random.Generator:
    """A ``numpy.random.Generator`` from ``None``, an int seed >= 0, a ``SeedSequence`` or a
    generator; ``ValueError`` naming the argument ``name`` otherwise."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng < 0:
        raise ValueError(f"{name} must be a non-negative integer seed, got {rng!r}")
    if rng is None or (isinstance(rng, (int, np.integer, np.random.SeedSequence)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise ValueError(f"{name} must be None, an int, a SeedSequence or a numpy Generator, got {type(rng).__name__}")


@dataclass(frozen=True)
class LawOutcome:
    """What a law's ``_resolve`` returns; :class:`ImpactResult` adds the bookkeeping."""

    path: np.ndarray = field(repr=False)  # one row per step: the repr stays a few lines
    normal_impulse: np.ndarray
    friction_impulse: np.ndarray
    terminated: bool
    message: str = ""
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ImpactResult:
    """The outcome of one impact.

    Attributes
    ----------
    v_plus : ndarray, shape (nv,)
        Post-impact generalized velocity.
    steps : int
        Number of impulse increments (LCP steps for Routh, single impacts for sequential).
    normal_impulse : ndarray, shape (m,)
        Total normal impulse per contact.
    friction_impulse : ndarray, shape (m, 1) or (m, 2)
        Total tangential impulse per contact, in the contact's tangent basis.
    terminated : bool
        True when ``v_plus`` is non-colliding (no ``Jn_i v_plus < -1e-8``).
    energy_before, energy_after : float
        Kinetic energy ``0.5 v^T M v`` before and after.
    path : ndarray, shape (steps + 1, nv)
        Velocity after each increment; ``path[0]`` is ``v_minus``.
    message : str
        Why the law stopped, when it did not terminate.
    info : dict
        Law-specific extras (e.g. the selected contact mode of the plastic law).
    """

    v_plus: np.ndarray
    steps: int
    normal_impulse: np.ndarray
    friction_impulse: np.ndarray
    terminated: bool
    energy_before: float
    energy_after: float
    path: np.ndarray = field(repr=False)  # one row per step: the repr stays a few lines
    message: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def energy_lost(self) -> float:
        """``energy_before - energy_after`` (non-negative for every law here)."""
        return self.energy_before - self.energy_after


class ImpactLaw(ABC):
    """Base class of impact laws: subclasses implement :meth:`_resolve`."""

    #: Registry name (``LAWS`` key, CLI ``--law``).
    name: ClassVar[str] = ""

    @property
    def needs_external_force(self) -> bool:
        """Whether :meth:`_resolve` needs ``problem.external_force`` (default: no)."""
        return False

    @property
    def honours_restitution(self) -> bool:
        """Whether :meth:`_resolve` uses ``problem.restitution`` (default: no, inelastic)."""
        return False

    @classmethod
    def simulation_default(cls) -> ImpactLaw:
        """The law with defaults fit for simulation (what ``get_law(name)`` returns)."""
        return cls()

    def resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: RandomLike = None, *, unfinished: str = "warn") -> ImpactResult:
        """Resolve the impact of ``problem`` from ``v_minus``.

        Parameters
        ----------
        problem : ImpactProblem
        v_minus : array_like, shape (nv,)
            Pre-impact generalized velocity.
        rng : None, int, SeedSequence or Generator
            Source of randomness (used by set-valued laws only).
        unfinished : {"warn", "raise", "return"}, keyword-only
            What an outcome with ``terminated=False`` does: an
            :class:`~bullet_setimpact.errors.UnfinishedImpactWarning` (default), an
            :class:`~bullet_setimpact.errors.ImpactFailure`, or nothing (for a caller that
            checks ``terminated`` itself).
        """
        if not isinstance(problem, ImpactProblem):
            raise ValueError(f"problem must be an ImpactProblem, got {type(problem).__name__}")
        if unfinished not in UNFINISHED:
            raise ValueError(f"unfinished must be one of {', '.join(repr(name) for name in UNFINISHED)}, got {unfinished!r}")
        v = problem.validate_velocity(v_minus)
        outcome = self._resolve(problem, v, as_generator(rng))
        if not outcome.terminated and unfinished != "return":
            text = f"{type(self).__name__}.resolve did not terminate: {outcome.message or 'still colliding'}"
            if unfinished == "raise":
                raise ImpactFailure(text)
            warn(text, UnfinishedImpactWarning)
        v_plus = outcome.path[-1].copy()
        return ImpactResult(
            v_plus=v_plus,
            steps=len(outcome.path) - 1,
            normal_impulse=outcome.normal_impulse,
            friction_impulse=outcome.friction_impulse,
            terminated=outcome.terminated,
            energy_before=float(problem.kinetic_energy(v)),
            energy_after=float(problem.kinetic_energy(v_plus)),
            path=outcome.path,
            message=outcome.message,
            info=outcome.info,
        )

    def spread_outcomes(self, problem: ImpactProblem, v_minus: np.ndarray, samples: int) -> np.ndarray:
        """The outcomes ``diagnostics.outcome_spread`` compares, shape ``(k, nv)``: by default
        ``resolve`` with seeds ``0..samples-1``.  A law whose outcomes vary by a parameter
        (an order, a sampled set) overrides this hook to span them."""
        return terminated_outcomes([self] * samples, problem, v_minus)

    @abstractmethod
    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        """Compute the impact; see the module docstring for the rules."""

    def __repr__(self) -> str:
        params = ", ".join(f"{key}={value!r}" for key, value in vars(self).items() if not key.startswith("_"))
        return f"{type(self).__name__}({params})"


def terminated_outcomes(variants: Sequence[ImpactLaw], problem: ImpactProblem, v_minus: np.ndarray) -> np.ndarray:
    """``v_plus`` of ``variants[i].resolve(problem, v_minus, rng=i)`` for each ``i`` whose
    result terminated, shape ``(k, nv)`` (the rows :meth:`ImpactLaw.spread_outcomes` gives)."""
    results = [variant.resolve(problem, v_minus, rng=seed, unfinished="return") for seed, variant in enumerate(variants)]
    return np.array([result.v_plus for result in results if result.terminated]).reshape(-1, problem.dofs)


def contact_orders(contacts: int, samples: int) -> list[list[int]] | None:
    """Every order of ``contacts`` contacts if there are at most ``samples`` of them, else None."""
    return [list(order) for order in permutations(range(contacts))] if math.factorial(contacts) <= samples else None
