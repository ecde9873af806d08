"""Cap samplers of Algorithm 1: the normal-impulse caps an outcome set's trajectories draw.

**Members.**  Algorithm 1 maps every sequence of caps ``lambda_n_max`` in ``[0, h]^m`` per
step (journal eq. 75), and every LCP branch, to an outcome; the set is the union of the
terminated outcomes.  Caps may even depend on the state reached: a trajectory is still a
run of eq. (75) with admissible caps, so its outcome is a member.  Any rule for choosing
caps therefore samples the same set; rules differ only in which parts they reach.

**Uniform caps** (``"random"``, ``"sobol"``; journal Sec. 5.3).  ``h U[0, 1]^m`` i.i.d. per
step.  Relative rates of impulse far from 1 need many steps in a row with one contact's caps
near 0, so they are rare: the set's ends, where one contact goes almost entirely first
(the sequential outcomes, compliant contact with very unequal stiffnesses: journal Fig. 12),
are seldom sampled.

**Rates** (``"rates"``).  Each trajectory draws a relative impulse rate per contact,
``r_i = 10^(-D u_i)`` with ``u ~ U[0, 1]^m`` (log-uniform over ``D =``
:data:`RATE_DECADES` decades).  At every step contact ``i``'s cap is
``h U_i min(1, r_i / max_j r_j)``, the maximum over the contacts still *pressing*
(colliding, ``J_n,j v < -tol``, or holding energy to return under restitution).  The fastest
pressing contact thus goes at full rate, a slow one waits at its rate ratio, and once the
fast ones are done the slow one goes at full rate: trajectories end within a few steps
whatever the ratio.

**Orderings.**  The limit of infinitely unequal rates: contact ``order[0]`` alone presses
until it is done (its caps ``h``; non-pressing contacts keep cap ``h`` and act by
complementarity), then ``order[1]``, and so on.  With compliant contact this is the limit
of one stiffness over the others going to infinity.  Log-rates ``-ORDER_DECADES * rank``
give it exactly (``10^-400`` underflows to 0).

**Mixed** (``"mixed"``, the default of :meth:`~bullet_setimpact.laws.routh.RouthImpact.outcome_set`).
The ``m`` orderings with each contact first (the others after it in cyclic index order; all
orderings for two contacts), then in each chunk :data:`RATE_SHARE` of the rest
rate-sampled (at most :data:`RATED_PER_CHUNK`) and the remainder uniform.

**Coverage.**  Each sample is labelled with one of two halves; both halves hold the same
mix (uniform and rate-sampled rows alternate, every ordering appears once in each half).
The Hausdorff distance between the halves' outcomes (:func:`halves_distance`) estimates how
far the set's points lie from the nearest sample: every sample is a point of the set, so a
half that misses a sample of the other half by ``d`` misses a point of the set by ``d``; the
whole sample, twice as dense, misses it by somewhat less.  It is an estimate, not a bound:
parts of the set neither half reaches do not show.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree
from scipy.stats import qmc

#: Decades of relative impulse rate the ``"rates"`` sampler spans.
RATE_DECADES = 6.0
#: Share of each chunk of the ``"mixed"`` sampler's trajectories (beyond the orderings) that
#: is rate-sampled, and the most rate-sampled trajectories in one chunk.  Rated trajectories
#: reach bases the uniform ones seldom use, so each costs a cache miss more often; the bound
#: keeps their number growing with the chunks, not with the samples.
RATE_SHARE, RATED_PER_CHUNK = 0.0625, 1024
#: Decades between consecutive contacts of an ordering (``10^-ORDER_DECADES`` is 0 in float64).
ORDER_DECADES = 400.0
#: The samplers :meth:`~bullet_setimpact.laws.routh.RouthImpact.outcome_set` accepts.
SAMPLERS = ("mixed", "random", "sobol", "rates")


@dataclass(frozen=True)
class CapBatch:
    """Trajectories of one kind in a chunk (batch dimension first).

    Attributes
    ----------
    caps : ndarray, shape (S, N, m)
        Caps in units of ``h`` (in ``[0, 1]``).
    log_rates : ndarray, shape (R, m), or None
        ``log10 r_i`` of the first ``R <= S`` trajectories (:func:`rate_factors`); the others'
        caps are uniform (factors 1).  None when all are.
    half : ndarray of int, shape (S,)
        The half (0 or 1) each trajectory belongs to, for :func:`halves_distance`; rows
        alternate within each kind, so both halves hold the same mix.
    """

    caps: np.ndarray
    log_rates: np.ndarray | None
    half: np.ndarray


def rate_factors(log_rates: np.ndarray, pressing: np.ndarray) -> np.ndarray:
    """Each contact's share of its cap, ``min(1, r_i / max_j r_j)`` over the pressing ``j``
    (module docstring), shape ``(S, m)``; 1 everywhere for a sample with no pressing contact.

    ``log_rates`` and ``pressing`` have shape ``(S, m)``."""
    lead = np.where(pressing, log_rates, -np.inf).max(axis=1, keepdims=True)  # -inf: none pressing, factors 1
    return np.asarray(10.0 ** np.minimum(log_rates - lead, 0.0))


def ordering_log_rates(contacts: int) -> np.ndarray:
    """Log-rates of the orderings the ``"mixed"`` sampler includes, one row each, shape ``(m, m)``:
    each contact first, the others after it in cyclic index order (contact ``i``'s rank in
    row ``j`` is ``(i - j) mod m``)."""
    ranks = (np.arange(contacts)[None, :] - np.arange(contacts)[:, None]) % contacts
    return -ORDER_DECADES * ranks.astype(float)


class CapSampler:
    """The caps of :meth:`~bullet_setimpact.laws.routh.RouthImpact.outcome_set`'s trajectories,
    chunk by chunk (module docstring).

    Parameters
    ----------
    sampler : {"mixed", "random", "sobol", "rates"}
    generator : numpy.random.Generator
    contacts, horizon : int
        ``m`` and Algorithm 1's ``N``.
    samples : int
        Trajectories in all.
    """

    def __init__(self, sampler: str, generator: np.random.Generator, contacts: int, horizon: int, samples: int) -> None:
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {', '.join(repr(name) for name in SAMPLERS)}, got {sampler!r}")
        self.sampler, self.generator, self.contacts, self.horizon = sampler, generator, contacts, horizon
        self._sobol = qmc.Sobol(d=contacts * horizon, scramble=True, seed=generator) if sampler == "sobol" else None
        orderings = ordering_log_rates(contacts) if sampler == "mixed" else np.zeros((0, contacts))
        self._orderings = np.repeat(orderings, 2, axis=0)[:samples]  # each ordering once in each half

    def chunks(self, sizes: list[int]) -> Iterator[CapBatch]:
        """One batch per chunk of ``sizes`` trajectories: the orderings open the first chunk, the
        rate-sampled trajectories follow, the uniform ones come last (their factors are 1, so
        ``log_rates`` covers only the rows before them)."""
        buffer = np.empty((max(sizes), self.contacts * self.horizon))
        for index, count in enumerate(sizes):
            ordered = self._orderings if index == 0 else self._orderings[:0]
            caps, log_rates = self._draw(count - len(ordered), buffer)
            half = np.arange(count - len(ordered)) % 2
            if len(ordered):
                caps = np.concatenate([np.ones((len(ordered), self.horizon, self.contacts)), caps])
                half = np.concatenate([np.arange(len(ordered)) % 2, half])
            if log_rates is not None or len(ordered):
                log_rates = np.concatenate([ordered, np.zeros((0, self.contacts)) if log_rates is None else log_rates])
            yield CapBatch(caps, log_rates, half)

    def _draw(self, count: int, buffer: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """``count`` trajectories' caps ``(count, N, m)`` and the log-rates of the rate-sampled
        ones, which come first (``(R, m)``; None for the ``"random"`` and ``"sobol"`` samplers)."""
        if self._sobol is not None:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*balance properties of Sobol.*")
                unit = self._sobol.random(count)
        else:  # one buffer for every chunk: fresh pages for m N doubles a sample cost more than the draws
            unit = self.generator.random(out=buffer[:count])
        caps = unit.reshape(count, self.horizon, self.contacts)
        if self.sampler not in ("rates", "mixed"):
            return caps, None
        rated = count if self.sampler == "rates" else min(round(RATE_SHARE * count), RATED_PER_CHUNK)
        return caps, -RATE_DECADES * self.generator.random((rated, self.contacts))


def halves_distance(velocities: np.ndarray, half: np.ndarray) -> float:
    """The Hausdorff distance between the rows of ``velocities`` labelled 0 and those labelled 1
    by ``half`` (module docstring); ``inf`` if a half is empty."""
    first, second = velocities[half == 0], velocities[half == 1]
    if not len(first) or not len(second):
        return float("inf")
    # Repeated outcomes (a contact sticking in many samples) change no distance, but make a k-d
    # tree's nearest-neighbour search degenerate: each half keeps one copy of each.
    first, second = np.unique(first, axis=0), np.unique(second, axis=0)
    forward, _ = cKDTree(second).query(first)
    backward, _ = cKDTree(first).query(second)
    return float(max(forward.max(), backward.max()))
