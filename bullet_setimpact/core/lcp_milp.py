"""The complete LCP method: a mixed-integer feasibility problem solved by HiGHS.

With upper bounds ``z <= U`` that some solution of ``LCP(W, w)`` meets, the LCP is
equivalent to finding ``z`` and binaries ``b`` with (big-M form, Hu, Mitchell, Pang &
Yu, SIAM J. Optim. 19 (2008))::

    0 <= z <= U b,   0 <= y = W z + w <= Y (1 - b),

where ``Y_i = w_i + sum_j max(W_ij, 0) U_j`` bounds ``y_i`` over the box.  ``b_i = 1``
lets ``z_i`` be positive and forces ``y_i = 0``; ``b_i = 0`` the converse.  HiGHS's
branch and bound (``scipy.optimize.milp``) either finds such a point or proves that none
exists, so the answer does not hang on pivot-level round-off.  The variables are scaled
to ``s = z / U`` and the rows to ``y / Y``, so that every big-M constant is 1.

HiGHS works to a feasibility tolerance of about 1e-6; the caller
(:func:`bullet_setimpact.core.lcp_solve.solve_lcp`) refines the solution on its support to full
precision and checks its residual.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from ..errors import LCPSolverError

#: Wall-clock limit of one mixed-integer solve [s].
MILP_TIME_LIMIT = 120.0
#: HiGHS's primal and integrality tolerances, tried in turn by
#: :func:`~bullet_setimpact.core.lcp_solve.complete_solve`: its defaults (1e-7, 1e-6; fastest, and their
#: "infeasible" is the verdict), then tighter ones when the default point cannot be refined
#: (the big-M rows are scaled by bounds that may exceed the values that matter by orders of
#: magnitude).  At 1e-10 HiGHS calls solvable step LCPs infeasible.
HIGHS_TOLERANCES = (None, 1e-9)


def milp_lcp(
    W: np.ndarray, w: np.ndarray, upper: np.ndarray, tolerance: float | None = None, time_limit: float = MILP_TIME_LIMIT
) -> tuple[np.ndarray, np.ndarray] | None:
    """A point ``(z, b)`` of the big-M formulation over ``0 <= z <= upper``, or None if it is infeasible.

    ``b`` (bool) marks the pairs whose ``z`` may be positive (``y = 0`` there).
    ``tolerance``: HiGHS's primal and integrality feasibility tolerance (None: its defaults).

    Raises
    ------
    LCPSolverError
        If HiGHS stops without an answer (time limit, numerical trouble).
    """
    n = w.shape[0]
    upper = np.maximum(np.asarray(upper, dtype=float), 0.0)
    y_upper = w + np.maximum(W, 0.0) @ upper
    if np.any(y_upper < 0.0):  # some y_i < 0 everywhere in the box
        return None
    free = upper > 0.0
    rows = y_upper > 0.0
    col_scale = np.where(free, upper, 0.0)
    row_scale = np.where(rows, y_upper, 1.0)
    A = W * col_scale[None, :] / row_scale[:, None]  # y / Y as a function of s
    offset = w / row_scale
    identity = sparse.identity(n, format="csr")
    zeros = sparse.csr_matrix((n, n))
    A_sparse = sparse.csr_matrix(A)
    # Rows: y/Y >= 0 (y = 0 where Y = 0); y/Y + b <= 1; s - b <= 0.
    constraints = [
        LinearConstraint(sparse.hstack([A_sparse, zeros]), -offset, np.where(rows, np.inf, -offset)),
        LinearConstraint(sparse.hstack([A_sparse[rows], identity[rows]]), -np.inf, 1.0 - offset[rows]),
        LinearConstraint(sparse.hstack([identity, -identity]), -np.inf, 0.0),
    ]
    bounds = Bounds(np.zeros(2 * n), np.concatenate([free.astype(float), free.astype(float)]))
    integrality = np.concatenate([np.zeros(n), np.ones(n)])
    options: dict[str, float | bool] = {"time_limit": time_limit, "presolve": True}
    if tolerance is not None:
        options.update(primal_feasibility_tolerance=tolerance, mip_feasibility_tolerance=tolerance)
    with warnings.catch_warnings():  # scipy passes options it does not know to HiGHS verbatim, with a warning
        warnings.filterwarnings("ignore", message="Unrecognized options detected", category=RuntimeWarning)
        result = milp(c=np.zeros(2 * n), constraints=constraints, integrality=integrality, bounds=bounds, options=options)
    if result.status == 2:
        return None
    if result.x is None:
        raise LCPSolverError(f"the mixed-integer LCP solve (HiGHS) stopped without an answer: {result.message} (status {result.status})")
    s, b = result.x[:n], result.x[n:]
    return np.clip(s, 0.0, 1.0) * col_scale, b > 0.5


def feasible_point(W: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """A point of ``{z >= 0, Wz + w >= 0}`` minimizing ``sum z`` (linear program), or None if the set is empty.

    An empty set proves that ``LCP(W, w)`` has no solution.
    """
    n = w.shape[0]
    result = linprog(c=np.ones(n), A_ub=-W, b_ub=w, bounds=[(0.0, None)] * n, method="highs")
    if result.status == 2:
        return None
    if result.x is None:
        raise LCPSolverError(f"the feasibility LP (HiGHS) stopped without an answer: {result.message} (status {result.status})")
    return np.maximum(result.x, 0.0)
