"""Anitescu & Potra's simultaneous inelastic impact LCP (journal eqs. 31-33).

All contacts are resolved at once: ``0 <= Lambda_n  _|_  Jn v+ >= 0`` with linearized
Coulomb friction at ``v+``.  :meth:`AnitescuPotraImpact.resolve` returns Lemke's solution
(or, where Lemke fails, that of :func:`~bullet_setimpact.core.lcp_solve.solve_lcp`'s complete stage);
:meth:`AnitescuPotraImpact.all_outcomes` enumerates every distinct post-impact velocity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from ..core.lcp import LCPSolution, lcp_residual
from ..core.lcp_solve import solve_lcp
from ..core.problem import ImpactProblem
from ..validation import positive_int
from .base import ImpactLaw, LawOutcome

#: LCP residual an enumerated LP solution must meet to count as an outcome.
ENUMERATION_TOL = 1e-7


def anitescu_potra_rhs(problem: ImpactProblem, v: np.ndarray) -> np.ndarray:
    """Right-hand side ``[Jbar v; 0]`` of the Anitescu-Potra LCP."""
    return np.concatenate([problem.Jbar @ v, np.zeros(problem.contacts)])


def apply_impulse(problem: ImpactProblem, v: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Velocity after the impulses ``z[:m(k+1)] = [lambda_n; lambda_D]`` (eq. 30) and those impulses."""
    impulse = z[: problem.Jbar.shape[0]]
    return v + problem.impulse_velocity_change(impulse), impulse


def solve_anitescu_potra(problem: ImpactProblem, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, LCPSolution]:
    """The solution of the Anitescu-Potra LCP: ``(v_plus, [lambda_n; lambda_D], solution)``.

    :func:`~bullet_setimpact.core.lcp_solve.solve_lcp` without a covering vector: Lemke's default
    covering vectors (ones, then fixed pseudo-random ones; above ``PIVOT_CAP_SIZE`` the ones
    last, :func:`~bullet_setimpact.core.lcp_solve.large_lcp_coverings`), so the result is deterministic.
    No bounds are passed to the complete stage: where rows are redundant (dependent
    ``Jbar`` rows) the impulses are bounded only along the range of ``Jbar^T`` (by the
    kinetic energy), so no finite bound holds for every problem; the complete stage then
    searches boxes grown from a feasible point.  It raises :class:`~bullet_setimpact.errors.LCPError`
    only when ``{z >= 0, Wz + w >= 0}`` is empty, which the AP LCP never is (it has a
    solution, Anitescu & Potra 1997), so at worst :class:`~bullet_setimpact.errors.LCPSolverError`.
    """
    solution = solve_lcp(problem.anitescu_potra_matrix, anitescu_potra_rhs(problem, v))
    return (*apply_impulse(problem, v, solution.z), solution)


@dataclass(frozen=True)
class _ContactMode:
    """Which side of each complementarity pair of one contact is zero."""

    name: str
    zero_z: tuple[int, ...]  # local indices (0 = lambda_n, 1..k = lambda_D, k+1 = gamma) with z = 0
    zero_y: tuple[int, ...]  # local indices with y = 0


def contact_modes(directions: int, spatial: bool) -> list[_ContactMode]:
    """The contact modes every Anitescu-Potra solution falls in (one contact, ``k`` directions).

    Separate (no impulse); stick (``Jt v+ = 0``); slide with friction on one direction, or on
    two adjacent ones (spatial only).  Together they cover every LCP solution: with
    ``lambda_n > 0``, ``gamma = 0`` forces ``J_D v+ >= 0`` over +/- pairs, i.e. sticking, and
    ``gamma > 0`` puts friction on the directions minimizing ``d_j . Jt v+``.
    """
    k = directions
    gamma = k + 1
    friction = tuple(range(1, k + 1))
    modes = [
        _ContactMode("separate", zero_z=(0, *friction), zero_y=(gamma,)),
        _ContactMode("stick", zero_z=(gamma,), zero_y=(0, *friction)),
    ]
    active_sets: list[tuple[int, ...]] = [(j,) for j in range(k)]
    if spatial:
        active_sets += [(j, (j + 1) % k) for j in range(k)]
    for active in active_sets:
        local = tuple(1 + j for j in active)
        modes.append(
            _ContactMode(
                f"slide{[int(j) for j in active]}",
                zero_z=tuple(i for i in friction if i not in local),
                zero_y=(0, gamma, *local),
            )
        )
    return modes


class AnitescuPotraImpact(ImpactLaw):
    """Simultaneous inelastic impact of Anitescu & Potra (journal eqs. 31-33).

    ``resolve`` returns the solution Lemke's algorithm (covering vector of ones) finds.
    The LCP may have several solutions; :meth:`all_outcomes` lists every distinct ``v+``.
    """

    name = "anitescu-potra"

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        v_plus, impulse, solution = solve_anitescu_potra(problem, v_minus)
        m = problem.contacts
        terminated = not problem.colliding(v_plus)
        return LawOutcome(
            path=np.array([v_minus, v_plus]),
            normal_impulse=impulse[:m],
            friction_impulse=problem.friction_impulse(impulse[m:]),
            terminated=bool(terminated),
            message="" if terminated else "Lemke's solution still collides (numerical failure)",
            info={"lcp_fallbacks": int(solution.fallback)},
        )

    def all_outcomes(self, problem: ImpactProblem, v_minus: np.ndarray, max_nodes: int = 200_000) -> np.ndarray:
        """Every distinct post-impact velocity of the Anitescu-Potra LCP, shape ``(K, nv)``.

        Depth-first search over per-contact modes (:func:`contact_modes`).  Each node fixes
        the modes of the first contacts, relaxes the rest to ``z >= 0, y >= 0``, and is
        pruned as soon as that linear program is infeasible.  Outcomes are de-duplicated by
        velocity (1e-6 relative).

        Raises
        ------
        ValueError
            If more than ``max_nodes`` linear programs would be needed.
        """
        v = problem.validate_velocity(v_minus)
        max_nodes = positive_int("max_nodes", max_nodes)
        W = problem.anitescu_potra_matrix
        w = anitescu_potra_rhs(problem, v)
        m, k = problem.contacts, problem.directions
        modes = contact_modes(k, problem.spatial)

        def global_index(contact: int, local: int) -> int:
            if local == 0:
                return contact
            if local <= k:
                return m + contact * k + (local - 1)
            return m + m * k + contact

        outcomes: list[np.ndarray] = []
        nodes = 0

        def feasible(zero_z: list[int], zero_y: list[int]) -> np.ndarray | None:
            nonlocal nodes
            nodes += 1
            if nodes > max_nodes:
                raise ValueError(f"all_outcomes needs more than max_nodes={max_nodes} linear programs for this problem")
            size = W.shape[0]
            bounds = [(0.0, 0.0) if i in zero_z else (0.0, None) for i in range(size)]
            equal = np.zeros(size, dtype=bool)
            equal[zero_y] = True
            result = linprog(
                c=np.ones(size),
                A_ub=-W[~equal] if (~equal).any() else None,
                b_ub=w[~equal] if (~equal).any() else None,
                A_eq=W[equal] if equal.any() else None,
                b_eq=-w[equal] if equal.any() else None,
                bounds=bounds,
                method="highs",
            )
            return result.x if result.status == 0 else None

        def search(contact: int, zero_z: list[int], zero_y: list[int]) -> None:
            if contact == m:
                z = feasible(zero_z, zero_y)
                if z is not None and lcp_residual(W, w, np.maximum(z, 0.0)) <= ENUMERATION_TOL:
                    outcomes.append(apply_impulse(problem, v, np.maximum(z, 0.0))[0])
                return
            for mode in modes:
                child_z = zero_z + [global_index(contact, i) for i in mode.zero_z]
                child_y = zero_y + [global_index(contact, i) for i in mode.zero_y]
                if contact == m - 1 or feasible(child_z, child_y) is not None:
                    search(contact + 1, child_z, child_y)

        search(0, [], [])
        return _unique_rows(np.array(outcomes).reshape(-1, problem.dofs), 1e-6)


def _unique_rows(rows: np.ndarray, rtol: float) -> np.ndarray:
    """Rows that differ from every earlier kept row by more than ``rtol`` (max-norm, relative)."""
    kept: list[np.ndarray] = []
    for row in rows:
        scale = rtol * (1.0 + np.max(np.abs(row)))
        if all(np.max(np.abs(row - other)) > scale for other in kept):
            kept.append(row)
    return np.array(kept).reshape(-1, rows.shape[1])
