"""Generators of hard step LCPs (eq. 75) and impact problems: the hard families.

Each family draws, from a seed alone, an :class:`~bullet_setimpact.ImpactProblem`, a
colliding velocity and step caps; the step LCP is then ``W = problem.step_matrix``,
``w = problem.step_rhs_map @ [caps; v]``.  Used by the slow tier
(``test_properties_slow.py``, a few hundred per family) and by ``benchmarks/lcp_stress.py``
(many thousands per family).

- ``bulk``: the slow tier's own family (:func:`tests.test_properties_slow.step_lcp`);
- ``mu``: friction coefficients log-uniform in ``[1e-2, 1e5]`` (RAMone's ``mu = 1e5``);
- ``mass``: per-DoF mass ratios up to ``1e8`` (``M = S (A A^T / nv + c I) S``, ``S`` diagonal
  log-uniform over ``1e-4..1e4``, so ``S^2`` spans eight decades);
- ``parallel``: near-parallel contact normals: every row a copy of one of two base rows
  plus a perturbation of relative size ``1e-9..1e-5`` (redundant rows, as a face-face
  contact's coincident points);
- ``tiny``: half the contacts at normal velocities of order ``1e-9`` m/s (the velocity
  projected onto them), the others at ``1e-3..10`` m/s;
- ``many``: 16 to :data:`MAX_MANY` contacts on one rigid body (6 DoF, rank-deficient rows);
- ``combined``: all of the above at once.
"""

from __future__ import annotations

import numpy as np

from bullet_setimpact import ImpactProblem

#: The families, in table order.
FAMILIES = ("bulk", "mu", "mass", "parallel", "tiny", "many", "combined")
#: Largest contact count the ``many`` and ``combined`` families draw.
MAX_MANY = 128


def _colliding(problem: ImpactProblem, v: np.ndarray) -> np.ndarray:
    """``v`` or ``-v``, whichever collides (``v`` if neither: the caller redraws)."""
    return v if problem.colliding(v).any() or not problem.colliding(-v).any() else -v


def rigid_body_contacts(rng: np.random.Generator, m: int, spatial: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``M``, ``Jn``, ``Jt`` of one box (unit mass, inertia 1/6) with ``m`` points on its bottom face.

    Spatial: 6 DoF ``[v; omega]``, points uniform on the face ``z = -0.5``; planar: 3 DoF
    ``[vx, vy, omega]``, points on the edge ``y = -0.5``.  Rows are dependent beyond 3
    (spatial) or 2 (planar) contacts.
    """
    if not spatial:
        x = rng.uniform(-0.5, 0.5, m)
        Jn = np.column_stack([np.zeros(m), np.ones(m), x])
        Jt = np.column_stack([np.ones(m), np.zeros(m), np.full(m, 0.5)])[:, None, :]
        return np.diag([1.0, 1.0, 1.0 / 6.0]), Jn, Jt
    x, y = rng.uniform(-0.5, 0.5, (2, m))
    zero, half, one = np.zeros(m), np.full(m, 0.5), np.ones(m)
    Jn = np.column_stack([zero, zero, one, y, -x, zero])  # e_z . (v + omega x r), r = (x, y, -0.5)
    Jt = np.stack(
        [np.column_stack([one, zero, zero, zero, -half, -y]), np.column_stack([zero, one, zero, half, zero, x])],
        axis=1,
    )
    return np.diag([1.0, 1.0, 1.0, 1.0 / 6.0, 1.0 / 6.0, 1.0 / 6.0]), Jn, Jt


def _generic(rng: np.random.Generator, family: str, m: int, nv: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``M, Jn, Jt, mu`` of a random family member (before the velocity is drawn)."""
    hard = {family} if family != "combined" else {"mu", "mass", "parallel", "tiny", "many"}
    spatial = bool(rng.random() < 0.5)
    if "many" in hard:
        M, Jn, Jt = rigid_body_contacts(rng, m, spatial)
        nv = M.shape[0]
    else:
        a = rng.normal(size=(nv, nv))
        M = a @ a.T / nv + 10.0 ** rng.uniform(-3.0, 0.0) * np.eye(nv)
        Jn, Jt = rng.normal(size=(m, nv)), rng.normal(size=(m, 2 if spatial else 1, nv))
    if "mass" in hard:
        scale = 10.0 ** rng.uniform(-2.0, 2.0, nv)  # S^2 spans up to 1e8
        M = scale[:, None] * M * scale[None, :]
        M = 0.5 * (M + M.T)
    if "parallel" in hard and m >= 2:
        base = rng.integers(0, 2, m)
        size = 10.0 ** rng.uniform(-9.0, -5.0)
        Jn = Jn[base] + size * rng.normal(size=Jn.shape) * np.abs(Jn).max()
        Jt = Jt[base] + size * rng.normal(size=Jt.shape) * np.abs(Jt).max()
    mu = rng.uniform(0.0, 10.0, m) * (rng.random(m) >= 0.2)
    if "mu" in hard:
        mu = 10.0 ** rng.uniform(-2.0, 5.0, m)
    return M, Jn, Jt, mu


def draw(family: str, seed: int, small: bool = False) -> tuple[ImpactProblem, np.ndarray, np.ndarray]:
    """Member ``seed`` of ``family``: ``(problem, v, caps)`` with ``v`` colliding.

    ``small`` keeps ``many``/``combined`` at most 32 contacts (for the slow tier's budget).
    """
    if family == "bulk":
        from .test_properties_slow import step_lcp  # the slow tier's own family

        problem, v, caps, _ = step_lcp(seed)
        return problem, v, caps
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    rng = np.random.default_rng([seed, FAMILIES.index(family)])
    while True:
        many = family in ("many", "combined")
        m = int(rng.integers(16, (32 if small else MAX_MANY) + 1)) if many else int(rng.integers(1, 9))
        M, Jn, Jt, mu = _generic(rng, family, m, int(rng.integers(1, 31)))
        problem = ImpactProblem(M, Jn, Jt, mu)
        v = rng.normal(size=problem.dofs) * 10.0 ** rng.uniform(-3.0, 1.0)
        if family in ("tiny", "combined"):  # half the contacts moved to normal velocities of order 1e-9
            slow = rng.random(m) < 0.5
            if slow.any():
                v -= np.linalg.pinv(Jn[slow]) @ (Jn[slow] @ v - 1e-9 * rng.normal(size=int(slow.sum())))
        v = _colliding(problem, v)
        if problem.colliding(v).any():
            caps = 10.0 ** rng.uniform(-3.0, 1.0) * rng.uniform(0.0, 1.0, m) * (rng.random(m) >= 0.2)
            return problem, v, caps


def step_lcp(family: str, seed: int, small: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(W, w, bounds)`` of member ``seed`` of ``family``'s step LCP (bounds: :func:`step_lcp_bounds`)."""
    from bullet_setimpact.laws.routh import step_lcp_bounds

    problem, v, caps = draw(family, seed, small)
    return problem.step_matrix, problem.step_rhs_map @ np.concatenate([caps, v]), step_lcp_bounds(problem, caps, v)
