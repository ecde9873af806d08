"""Sequential impacts: one contact at a time, cycling through a fixed order (journal Sec. 2.2.2).

Each single impact is the one-contact Anitescu-Potra LCP (eq. 31 restricted to contact
``i``), i.e. an inelastic frictional impact at ``i`` alone.  The journal uses the orders
``(A, B, A, B, ...)`` and ``(B, A, B, A, ...)`` as comparison outcomes (Figs. 9-11).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.problem import COLLISION_TOL, ImpactProblem
from ..validation import positive_int
from .anitescu_potra import solve_anitescu_potra
from .base import ImpactLaw, LawOutcome, contact_orders, terminated_outcomes


class SequentialImpact(ImpactLaw):
    """Resolve colliding contacts one at a time in the cyclic ``order``.

    Parameters
    ----------
    order : sequence of int, optional
        Contact indices, visited cyclically; a contact that is not colliding when its
        turn comes is skipped.  Contacts absent from ``order`` are never resolved.
        Default: every contact in index order (for simulation, where ``m`` varies).
    max_cycles : int
        Passes through ``order`` before giving up (``terminated=False``).  Single impacts on a
        flat face converge only geometrically (about 0.86 per pass for a foot's 4 corners).
    """

    name = "sequential"

    def __init__(self, order: Sequence[int] | None = None, max_cycles: int = 1000) -> None:
        if order is not None:
            if isinstance(order, (str, bytes)) or not isinstance(order, Sequence) or len(order) == 0:
                raise ValueError(f"order must be a non-empty sequence of contact indices, got {order!r}")
            if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) and i >= 0 for i in order):
                raise ValueError(f"order must hold non-negative integer contact indices, got {list(order)!r}")
        self.order = None if order is None else [int(i) for i in order]
        self.max_cycles = positive_int("max_cycles", max_cycles)

    def spread_outcomes(self, problem: ImpactProblem, v_minus: np.ndarray, samples: int) -> np.ndarray:
        """Outcomes of every cyclic order of the contacts if ``m! <= samples``, else of
        ``samples`` random ones (``default_rng(0)``)."""
        m = problem.contacts
        rng = np.random.default_rng(0)
        orders = contact_orders(m, samples)
        cyclic = orders if orders is not None else [rng.permutation(m).tolist() for _ in range(samples)]
        return terminated_outcomes([SequentialImpact(order, self.max_cycles) for order in cyclic], problem, v_minus)

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        m = problem.contacts
        order = list(range(m)) if self.order is None else self.order
        unknown = [i for i in order if i >= m]
        if unknown:
            raise ValueError(f"order names contacts {unknown} but the problem has only {m} contacts (0..{m - 1})")
        single = {i: problem.subset([i]) for i in set(order)}
        v = v_minus.copy()
        path = [v.copy()]
        normal = np.zeros(m)
        friction = np.zeros((m, problem.Jt.shape[1]))
        for _ in range(self.max_cycles):
            for i in order:
                if not problem.colliding(v):
                    return LawOutcome(np.array(path), normal, friction, terminated=True)
                if problem.Jn[i] @ v >= -COLLISION_TOL:
                    continue
                v, impulse, _ = solve_anitescu_potra(single[i], v)
                normal[i] += impulse[0]
                friction[i] += single[i].friction_impulse(impulse[1:])[0]
                path.append(v.copy())
        terminated = not problem.colliding(v)
        message = "" if terminated else f"still colliding after max_cycles={self.max_cycles} passes through {order}"
        return LawOutcome(np.array(path), normal, friction, terminated=bool(terminated), message=message)
