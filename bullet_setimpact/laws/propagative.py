"""Seghete & Murphey's propagative model of simultaneous frictionless impacts.

Elastic (``R = 1``): the momentum is reflected across one currently infeasible contact at a
time with ``Gamma(u)`` (their eq. 7) until no contact is infeasible (eq. 14).  Feasibility is
checked against *every* contact of the problem, not only those infeasible at the start: in
Newton's cradle the resting contact B-C becomes infeasible only after A-B is reflected.

Plastic (``R = 0``): the kinetic-metric projection of eq. (11).  Inelastic: the blend of
eq. (17) whose weight ``alpha`` meets the energetic restitution definition (16),
``sqrt(1 - dE / E_p) == R``.  The paper's printed ``alpha = sqrt(1 - R^2)`` contradicts (16);
putting the blend (17) with (18) into (16) gives ``alpha = R`` (an erratum of the paper).

Velocities stand in for the paper's momentum covectors: ``v = M^-1 p^T``, so
``<p, q>_g = v^T M w`` for ``w = M^-1 q^T``, and ``p Gamma(u)`` is the velocity ``Gamma(u) v``
(the same matrix, since ``M^-1 Gamma^T = Gamma M^-1``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.lcp_solve import solve_lcp
from ..core.problem import COLLISION_TOL, ImpactProblem
from ..validation import positive_int
from .base import ImpactLaw, LawOutcome, contact_orders, terminated_outcomes

ORDER_RULES = ("argmin", "argmax", "random")


def reflection(problem: ImpactProblem, contact: int) -> np.ndarray:
    """``Gamma(u) = I - 2 M^-1 u^T u / (u M^-1 u^T)`` for ``u = Jn[contact]`` (eq. 7b), shape (nv, nv).

    It maps the pre-impact velocity of an elastic impact at ``contact`` alone to the
    post-impact one, ``v+ = Gamma v-``.
    """
    u = problem.Jn[contact]
    Minv_uT = problem.solve_mass(u)
    return np.eye(problem.dofs) - 2.0 * np.outer(Minv_uT, u) / (u @ Minv_uT)


def plastic_projection(problem: ImpactProblem, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The plastic outcome (eq. 11) and its normal impulses, ``(v_plastic, lambda_n)``.

    Solves ``0 <= lambda  _|_  Jn (v + M^-1 Jn^T lambda) >= 0``: the velocity nearest to ``v``
    in the kinetic-energy metric with no contact approaching.  The contacts that take an
    impulse end with zero normal velocity, as in eq. (11); a contact that separates anyway
    is left alone, since pulling it back would need ``lambda < 0`` against eq. (10b).
    """
    m = problem.contacts
    lambda_n = solve_lcp(problem.delassus[:m, :m], problem.normal_velocities(v)).z
    return v + problem.impulse_velocity_change(np.concatenate([lambda_n, np.zeros(m * problem.directions)])), lambda_n


class PropagativeImpact(ImpactLaw):
    """Propagative simultaneous impact (Seghete & Murphey), frictionless.

    Parameters
    ----------
    restitution : float
        Energetic coefficient ``R`` in ``[0, 1]`` (their eq. 16): 1 elastic, 0 plastic.
    order : {"argmin", "argmax", "random"} or sequence of int
        Which infeasible contact is reflected next.  ``"argmin"``: the most infeasible one,
        ``argmin <w_i, p>_g`` with unit normals ``w_i = u_i / |u_i|_g`` (their Sec. VII-B);
        ``"argmax"``: the least infeasible one; ``"random"``: uniform, from ``rng``; a
        sequence: a priority list of contact indices (contacts it omits rank after it, by
        index).  Ties go to the lowest index.
    ignore_friction : bool
        The model is frictionless; a problem with some ``mu > 0`` is rejected unless this is
        True, in which case friction is ignored (no tangential impulse).
    max_reflections : int
        Cap on the number of reflections; beyond it the result has ``terminated=False``
        (termination is proven only for two contacts, their Theorem 1).

    Notes
    -----
    ``info`` holds ``sequence`` (the reflected contacts, in order), ``alpha`` (the weight of
    the elastic outcome in eq. 17), ``v_elastic`` and ``v_plastic`` (None when not computed).
    """

    name = "propagative"

    def __init__(
        self,
        restitution: float = 1.0,
        order: str | Sequence[int] = "argmin",
        ignore_friction: bool = False,
        max_reflections: int = 1000,
    ) -> None:
        try:
            R = float(restitution)
        except (TypeError, ValueError):
            raise ValueError(f"restitution must be a number in [0, 1], got {restitution!r}") from None
        if not 0.0 <= R <= 1.0:
            raise ValueError(f"restitution must lie in [0, 1] (energetic coefficient, eq. 16), got {restitution!r}")
        self.restitution = R
        self.order = _validated_order(order)
        self.ignore_friction = bool(ignore_friction)
        self.max_reflections = positive_int("max_reflections", max_reflections)

    @classmethod
    def simulation_default(cls) -> PropagativeImpact:
        """Plastic (``R = 0``), ignoring friction: the model is frictionless, while simulated
        contacts have ``mu > 0``."""
        return cls(restitution=0.0, ignore_friction=True)

    def spread_outcomes(self, problem: ImpactProblem, v_minus: np.ndarray, samples: int) -> np.ndarray:
        """Outcomes with the orders ``"argmin"``, ``"argmax"`` and every priority list of the
        contacts if ``m! <= samples``, else ``samples`` runs of ``order="random"`` (seeds
        ``0..``).  With two contacts the first reflection fixes the rest, so their spread is
        Seghete & Murphey's ``xi`` (Sec. VII-A)."""
        orders = contact_orders(problem.contacts, samples)
        rules: list = ["argmin", "argmax", *(orders if orders is not None else ["random"] * samples)]
        variants = [PropagativeImpact(self.restitution, rule, self.ignore_friction, self.max_reflections) for rule in rules]
        return terminated_outcomes(variants, problem, v_minus)

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        m = problem.contacts
        frictional = np.flatnonzero(problem.mu > 0.0).tolist()
        if frictional and not self.ignore_friction:
            raise ValueError(
                f"PropagativeImpact is frictionless, but the problem has mu > 0 at contacts {frictional}; "
                "pass ignore_friction=True to ignore friction"
            )
        if not isinstance(self.order, str):
            unknown = sorted(i for i in self.order if i >= m)
            if unknown:
                raise ValueError(f"order names contacts {unknown} but the problem has only {m} contacts (0..{m - 1})")
        friction = np.zeros((m, problem.Jt.shape[1]))
        R = self.restitution
        info: dict = {"sequence": (), "alpha": R, "v_elastic": None, "v_plastic": None}
        if R > 0.0:
            path, lambda_e, sequence = self._reflect(problem, v_minus, rng)
            info.update(sequence=sequence, v_elastic=path[-1])
            if problem.colliding(path[-1]):
                message = f"still infeasible after max_reflections={self.max_reflections} reflections"
                return LawOutcome(path, lambda_e, friction, False, message, info)
            if R == 1.0:
                return LawOutcome(path, lambda_e, friction, True, info=info)
        v_plastic, lambda_p = plastic_projection(problem, v_minus)
        info["v_plastic"] = v_plastic
        if R == 0.0:
            return LawOutcome(np.array([v_minus, v_plastic]), lambda_p, friction, True, info=info)
        alpha = info["alpha"] = _blend_weight(problem, v_minus, info["v_elastic"], v_plastic, R)
        v_plus = alpha * info["v_elastic"] + (1.0 - alpha) * v_plastic
        normal = alpha * lambda_e + (1.0 - alpha) * lambda_p
        return LawOutcome(np.array([v_minus, v_plus]), normal, friction, not problem.colliding(v_plus), info=info)

    def _reflect(self, problem: ImpactProblem, v: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
        """Elastic reflections (eq. 14) until feasible or capped: ``(path, lambda_n, sequence)``."""
        m = problem.contacts
        effective = np.diag(problem.delassus)[:m]  # u_i M^-1 u_i^T
        rank = np.arange(m) + m
        if not isinstance(self.order, str):
            rank[list(self.order)] = np.arange(len(self.order))
        path, sequence, impulse = [v], [], np.zeros(m)
        maps: dict[int, np.ndarray] = {}
        for _ in range(self.max_reflections):
            normal = problem.normal_velocities(v)
            infeasible = np.flatnonzero(normal < -COLLISION_TOL)
            if infeasible.size == 0:
                break
            if self.order == "argmin":
                i = int(infeasible[np.argmin(normal[infeasible] / np.sqrt(effective[infeasible]))])
            elif self.order == "argmax":
                i = int(infeasible[np.argmax(normal[infeasible] / np.sqrt(effective[infeasible]))])
            elif self.order == "random":
                i = int(rng.choice(infeasible))
            else:
                i = int(infeasible[np.argmin(rank[infeasible])])
            if i not in maps:
                maps[i] = reflection(problem, i)
            v = maps[i] @ v
            impulse[i] -= 2.0 * normal[i] / effective[i]  # lambda of eq. (7): -2 <p, u>_g / |u|_g^2
            sequence.append(i)
            path.append(v)
        return np.array(path), impulse, tuple(sequence)


def _validated_order(order: object) -> str | list[int]:
    """``order`` as a rule name or a list of distinct contact indices, or ``ValueError``."""
    if isinstance(order, str):
        if order not in ORDER_RULES:
            raise ValueError(f"order must be one of {ORDER_RULES} or a sequence of contact indices, got {order!r}")
        return order
    if not isinstance(order, Sequence) or len(order) == 0:
        raise ValueError(f"order must be one of {ORDER_RULES} or a non-empty sequence of contact indices, got {order!r}")
    if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) and i >= 0 for i in order):
        raise ValueError(f"order must hold non-negative integer contact indices, got {list(order)!r}")
    if len(set(order)) != len(order):
        raise ValueError(f"order must not repeat contacts, got {list(order)!r}")
    return [int(i) for i in order]


def _blend_weight(problem: ImpactProblem, v_minus: np.ndarray, v_elastic: np.ndarray, v_plastic: np.ndarray, R: float) -> float:
    """``alpha`` of eq. (17) meeting definition (16): ``E(alpha) = E- - (1 - R^2) E_p``.

    ``E(alpha) = E(v_p) + alpha <v_p, d>_M + alpha^2 E(d)`` with ``d = v_e - v_p``, and
    ``E_p = E- - E(v_p)``.  When (18) holds (``<v_p, d>_M = 0``: every reflected contact is
    one the projection stops) the root is exactly ``alpha = R``.
    """
    d = v_elastic - v_plastic
    a = float(problem.kinetic_energy(d))
    e_minus = float(problem.kinetic_energy(v_minus))
    e_plastic = float(problem.kinetic_energy(v_plastic))
    target = e_minus - (1.0 - R**2) * (e_minus - e_plastic)
    if a <= 1e-15 * e_minus:
        return R  # elastic and plastic outcomes coincide: there is no energy to lose
    b = float(v_plastic @ problem.M @ d)
    c = e_plastic - target
    return float(np.clip((-b + np.sqrt(max(b * b - 4.0 * a * c, 0.0))) / (2.0 * a), 0.0, 1.0))
