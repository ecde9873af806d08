"""An impact problem at one configuration: M, contact Jacobians, friction (journal Sec. 2.2).

:class:`ImpactProblem` holds everything an impact law may use and nothing about where it
came from (PyBullet, closed form, ...).  It builds the linearized friction cone (journal
eqs. 19-22), the step LCP of Algorithm 1 (eq. 75, with the transposes the printed equation
drops on its Jacobian products restored: :meth:`ImpactProblem.step_matrix`) and the
Anitescu-Potra LCP (eqs. 31-33).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
from scipy.linalg import cho_solve
from scipy.linalg.lapack import dpotrs

#: Normal velocity below which a contact counts as colliding (journal eq. 28, Alg. 1).
COLLISION_TOL = 1e-8
#: Default number of linearized friction directions for spatial contacts.
SPATIAL_FRICTION_DIRECTIONS = 8


def friction_basis(tangent_dim: int, directions: int | None = None) -> np.ndarray:
    """Unit friction directions ``D`` as rows, shape ``(k, tangent_dim)`` (journal eq. 19).

    Planar contacts (one tangent) use ``D = [+1, -1]``.  Spatial contacts use ``k`` directions
    evenly spaced on the circle (default 8, i.e. every 45 degrees); ``k`` must be even so that
    they come in ``+/-`` pairs and the cone is symmetric.
    """
    if tangent_dim == 1:
        if directions not in (None, 2):
            raise ValueError(f"friction_directions must be 2 for planar contacts, got {directions!r}")
        return np.array([[1.0], [-1.0]])
    k = SPATIAL_FRICTION_DIRECTIONS if directions is None else directions
    if not isinstance(k, (int, np.integer)) or k < 4 or k % 2:
        raise ValueError(f"friction_directions must be an even integer >= 4 for spatial contacts, got {k!r}")
    angles = 2.0 * np.pi * np.arange(k) / k
    return np.column_stack([np.cos(angles), np.sin(angles)])


def approaching(normal: np.ndarray, tol: float = COLLISION_TOL) -> np.ndarray:
    """Whether any normal velocity (last axis of ``normal``, shape ``(..., m)``) is below ``-tol``.

    This is the colliding set of eq. 28, ``(normal < -tol).any(axis=-1)``.  It is computed as
    an OR of the ``m`` columns: numpy reduces along a short last axis with one inner loop per
    row, which is much slower for small ``m``."""
    below = np.zeros(normal.shape[:-1], dtype=bool)
    for column in range(normal.shape[-1]):
        np.logical_or(below, np.less(normal[..., column], -tol), out=below)
    return below


def _finite_array(name: str, value: object, ndim: int) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite, but it contains NaN or inf")
    return array


def _per_contact(name: str, value: object, m: int) -> np.ndarray:
    """``value`` (a scalar or shape ``(m,)``) as a finite float array of shape ``(m,)``."""
    array = np.asarray(value, dtype=float)
    array = np.broadcast_to(array, (m,)).copy() if array.ndim == 0 else array
    if array.shape != (m,):
        raise ValueError(f"{name} must be a scalar or have shape ({m},), got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite, but it contains NaN or inf")
    return array


class ImpactProblem:
    """Impact data at one configuration ``q``: ``M(q)``, ``Jn(q)``, ``Jt(q)``, ``mu``.

    Parameters
    ----------
    M : array_like, shape (nv, nv)
        Generalized inertia, symmetric positive definite.
    Jn : array_like, shape (m, nv)
        Contact normal Jacobian; ``Jn v`` are the normal velocities (positive = separating).
    Jt : array_like, shape (m, 1, nv) or (m, 2, nv)
        Tangent Jacobians: one tangent for planar contacts, two orthonormal ones for spatial.
    mu : float or array_like, shape (m,)
        Friction coefficients, ``mu >= 0``.
    friction_directions : int, optional
        Number ``k`` of linearized friction directions (planar: 2; spatial: even, default 8).
    external_force : array_like, shape (nv,), optional
        Generalized non-contact force ``f`` at the impact (gravity, actuation), for the laws
        whose :attr:`~bullet_setimpact.laws.base.ImpactLaw.needs_external_force` is true
        (the plastic law's pseudo-impulse, Johnson et al. eq. 55).  None when not given.
    restitution : float or array_like, shape (m,), optional
        Stronge's energetic coefficients ``e_i`` in ``[0, 1]`` per contact (default 0, an
        inelastic impact); honoured by :class:`~bullet_setimpact.laws.routh.RouthImpact`
        (model in :mod:`bullet_setimpact.laws.restitution`).
    constraints : array_like, shape (r, nv), optional
        Jacobian ``G`` of ideal bilateral constraints that hold through the impact (closed
        kinematic loops, welds): their impulses ``G^T lambda_c`` are free and workless, so
        every velocity change keeps ``G dv = 0``.  The problem is then the same problem in
        the coordinates ``nu`` of ``v = N nu`` (``N``: :attr:`free_basis`, ``G N = 0``), with
        ``M_r = N^T M N`` and ``J N``.  It is expressed in ``v``: ``M^-1`` becomes the
        constrained inverse ``N M_r^-1 N^T`` (:meth:`solve_mass`), which every law uses, so a
        law's outcome is that of the reduced problem.  ``v_minus`` should satisfy
        ``G v_minus = 0`` (:meth:`constrained_velocity`); the part of it that does not is
        kept.  Redundant rows are allowed; constraints that fix every velocity are not.

    Raises
    ------
    ValueError
        Naming the argument: M not symmetric positive definite, shape mismatch,
        ``mu < 0``, restitution outside ``[0, 1]``, NaN or inf, or no contacts.  There is no
        upper limit on the contacts (the LCP solvers handle hundreds; large sets are reduced
        before they get here).
    """

    def __init__(
        self,
        M: np.ndarray,
        Jn: np.ndarray,
        Jt: np.ndarray,
        mu: float | np.ndarray,
        friction_directions: int | None = None,
        *,
        external_force: np.ndarray | None = None,
        restitution: float | np.ndarray | None = None,
        constraints: np.ndarray | None = None,
    ) -> None:
        M = _finite_array("M", M, 2)
        Jn = _finite_array("Jn", Jn, 2)
        Jt = _finite_array("Jt", Jt, 3)
        nv = M.shape[0]
        if M.shape != (nv, nv) or nv == 0:
            raise ValueError(f"M must be square and non-empty, got shape {M.shape}")
        magnitude = np.abs(M)
        # np.allclose(M, M.T, rtol=1e-9, atol=...) of a finite M, without its dispatch
        if not (np.abs(M - M.T) <= 1e-12 * max(1.0, float(magnitude.max())) + 1e-9 * magnitude.T).all():
            raise ValueError("M must be symmetric (M != M.T beyond 1e-9 relative)")
        try:
            cholesky = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            raise ValueError("M must be positive definite (Cholesky factorization failed)") from None
        m = Jn.shape[0]
        if m == 0:
            raise ValueError("Jn must have at least one contact row (m = 0)")
        if Jn.shape[1] != nv:
            raise ValueError(
                f"Jn has {Jn.shape[1]} columns but M is {nv} x {nv}: both must have one column per generalized velocity "
                f"(Jn of shape (m, {nv}) for this M, or M of size {Jn.shape[1]} for this Jn)"
            )
        if Jt.shape[0] != m or Jt.shape[1] not in (1, 2) or Jt.shape[2] != nv:
            raise ValueError(f"Jt must have shape ({m}, 1, {nv}) or ({m}, 2, {nv}), got {Jt.shape}")
        mu_array = _per_contact("mu", mu, m)
        if (mu_array < 0.0).any():
            raise ValueError(f"mu must be >= 0, got {mu_array.min()}")
        if restitution is None:
            restitution_array = np.zeros(m)
        else:
            restitution_array = _per_contact("restitution", restitution, m)
            if ((restitution_array < 0.0) | (restitution_array > 1.0)).any():
                raise ValueError(f"restitution must lie in [0, 1], got {restitution_array.tolist()}")
        if external_force is not None:
            external_force = _finite_array("external_force", external_force, 1)
            if external_force.shape != (nv,):
                raise ValueError(f"external_force must have shape ({nv},), got {external_force.shape}")

        self.M = M
        self.Jn = Jn
        self.Jt = Jt
        self.mu = mu_array
        #: Stronge's energetic coefficients of restitution ``e_i``, shape (m,) (0 = inelastic).
        self.restitution = restitution_array
        #: Generalized non-contact force at the impact, shape (nv,), or None.
        self.external_force = external_force
        #: Unit friction directions as rows, shape (k, tangent_dim).
        self.D = friction_basis(Jt.shape[1], friction_directions)
        #: Jacobian ``G`` of the bilateral constraints, shape (r, nv), or None.
        self.constraints: np.ndarray | None = None
        #: Columns spanning the velocities the constraints allow (``G N = 0``), or None.
        self.free_basis: np.ndarray | None = None
        if constraints is not None:
            self.constraints = _finite_array("constraints", constraints, 2)
            self.free_basis = free_basis(self.constraints, nv)
            if not self.free_basis.shape[1]:
                raise ValueError(f"constraints fix every one of the {nv} velocities; expected some velocity left free")
            reduced = self.free_basis.T @ M @ self.free_basis
            cholesky = np.linalg.cholesky(0.5 * (reduced + reduced.T))
        self._cholesky = cholesky

    # ------------------------------------------------------------------ sizes
    @property
    def contacts(self) -> int:
        """Number of contacts ``m``."""
        return self.Jn.shape[0]

    @property
    def dofs(self) -> int:
        """Number of generalized velocities ``nv``."""
        return self.M.shape[0]

    @property
    def directions(self) -> int:
        """Number of linearized friction directions ``k`` per contact."""
        return self.D.shape[0]

    @property
    def spatial(self) -> bool:
        """True for spatial (two-tangent) contacts, False for planar ones."""
        return self.Jt.shape[1] == 2

    # ---------------------------------------------------------- derived blocks
    @cached_property
    def JD(self) -> np.ndarray:
        """Friction-direction Jacobian ``J_D`` (shape ``(m k, nv)``), rows ``d_j^T J_t,i`` per contact."""
        return np.einsum("kd,idv->ikv", self.D, self.Jt).reshape(-1, self.dofs)

    @cached_property
    def Jbar(self) -> np.ndarray:
        """``[Jn; J_D]``, shape ``(m (k + 1), nv)`` (journal eq. 35)."""
        return np.concatenate([self.Jn, self.JD])

    @cached_property
    def Minv_JbarT(self) -> np.ndarray:
        """``M^-1 Jbar^T``, shape ``(nv, m (k + 1))``: velocity change per unit impulse."""
        return self.solve_mass(self.Jbar.T)

    @cached_property
    def normal_inverse_mass(self) -> np.ndarray:
        """``Jn_i M^-1 Jn_i^T`` per contact, shape ``(m,)``: the normal velocity change per unit
        normal impulse at contact ``i`` alone."""
        return np.einsum("iv,vi->i", self.Jn, self.solve_mass(self.Jn.T))

    @cached_property
    def delassus(self) -> np.ndarray:
        """``Jbar M^-1 Jbar^T`` (the impulse-to-velocity map in contact coordinates)."""
        return self.Jbar @ self.Minv_JbarT

    @cached_property
    def _friction_blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """``E = blkdiag(1_k, ..., 1_k)`` (shape ``(m k, m)``) and ``diag(mu)``."""
        E = np.repeat(np.eye(self.contacts), self.directions, axis=0)  # np.kron(I_m, 1_k), the same 0/1 entries
        return E, np.diag(self.mu)

    @cached_property
    def anitescu_potra_matrix(self) -> np.ndarray:
        """``W`` of the Anitescu-Potra impact LCP (journal eqs. 31-33), size ``(k + 2) m``.

        Unknowns ``z = [lambda_n; lambda_D; gamma]``; right-hand side ``[Jbar v; 0]``.  The
        friction-cone rows ``mu_i lambda_n,i - 1^T lambda_D,i >= 0`` (eq. 33) are divided by
        ``max(1, mu_i)``: an equivalent LCP (the row's slack is only rescaled) that stays
        well conditioned for very large ``mu`` such as RAMone's ``1e5``.
        """
        m, mk = self.contacts, self.contacts * self.directions
        E, mu = self._friction_blocks
        row_scale = 1.0 / np.maximum(1.0, self.mu)[:, None]
        W = np.zeros((2 * m + mk, 2 * m + mk))
        W[: m + mk, : m + mk] = self.delassus
        W[m : m + mk, m + mk :] = E
        W[m + mk :, :m] = mu * row_scale
        W[m + mk :, m : m + mk] = -E.T * row_scale
        return W

    @cached_property
    def step_matrix(self) -> np.ndarray:
        """``W`` of the Routh step LCP (journal eq. 75b), size ``(k + 3) m``.

        Unknowns ``z = [beta; lambda_n; lambda_D; gamma]``; right-hand side
        ``[lambda_n_max; Jn v; J_D v; 0]``.
        """
        m = self.contacts
        size = m + self.anitescu_potra_matrix.shape[0]
        W = np.zeros((size, size))
        W[:m, m : 2 * m] = -np.eye(m)
        W[m : 2 * m, :m] = np.eye(m)
        W[m:, m:] = self.anitescu_potra_matrix
        return W

    @cached_property
    def step_rhs_map(self) -> np.ndarray:
        """``R`` with ``w = R [lambda_n_max; v]`` for the step LCP (eq. 75a)."""
        m, nv = self.contacts, self.dofs
        R = np.zeros((self.step_matrix.shape[0], m + nv))
        R[:m, :m] = np.eye(m)
        R[m : m + self.Jbar.shape[0], m:] = self.Jbar
        return R

    # ------------------------------------------------------------------ helpers
    def solve_mass(self, rhs: np.ndarray) -> np.ndarray:
        """``M^-1 rhs`` through the Cholesky factor (``rhs`` finite, as every caller's is: not checked again);
        with :attr:`constraints`, the constrained inverse ``N M_r^-1 N^T rhs``, whose columns satisfy ``G x = 0``.

        LAPACK's ``dpotrs`` directly: what ``cho_solve`` calls, without its per-call checks."""
        rhs = np.asarray(rhs, dtype=float)
        basis = self.free_basis
        if basis is not None:
            rhs = basis.T @ rhs
        if not rhs.size:
            solution = cho_solve((self._cholesky, True), rhs, check_finite=False)
        else:
            solution, info = dpotrs(self._cholesky, rhs, lower=1)
            if info != 0:
                raise ValueError(f"dpotrs rejected argument {-info} (M^-1 rhs with rhs of shape {rhs.shape})")
        return solution if basis is None else basis @ solution

    def constrained_velocity(self, v: np.ndarray) -> np.ndarray:
        """``v`` after the impulse ``G^T lambda_c`` that makes ``G v = 0`` (the constraints' own
        plastic impact, the M-orthogonal projection ``N M_r^-1 N^T M v``); ``v`` itself without
        :attr:`constraints`."""
        v = np.asarray(v, dtype=float)
        return v.copy() if self.free_basis is None else self.solve_mass(self.M @ v)

    def kinetic_energy(self, v: np.ndarray) -> np.ndarray | float:
        """``0.5 v^T M v`` (journal eq. 11); ``v`` of shape ``(..., nv)``."""
        v = np.asarray(v, dtype=float)
        return 0.5 * np.einsum("...i,ij,...j->...", v, self.M, v)

    def normal_velocities(self, v: np.ndarray) -> np.ndarray:
        """Contact normal velocities ``Jn v`` (positive = separating); shape ``(..., m)``."""
        return np.asarray(v, dtype=float) @ self.Jn.T

    def tangential_velocities(self, v: np.ndarray) -> np.ndarray:
        """Contact sliding velocities ``Jt v``; shape ``(..., m, 1 or 2)``."""
        return np.einsum("idv,...v->...id", self.Jt, np.asarray(v, dtype=float))

    def colliding(self, v: np.ndarray, tol: float = COLLISION_TOL) -> np.ndarray:
        """Whether any contact has ``Jn_i v < -tol`` (``v`` in the colliding set, eq. 28).

        A boolean array over ``v``'s leading dimensions (0-d for one velocity).
        """
        return approaching(self.normal_velocities(v), tol)

    def impulse_velocity_change(self, lambda_bar: np.ndarray) -> np.ndarray:
        """``M^-1 Jbar^T lambda_bar`` for impulses ``[lambda_n; lambda_D]`` of shape ``(..., m (k+1))``."""
        return lambda_bar @ self.Minv_JbarT.T

    def friction_impulse(self, lambda_D: np.ndarray) -> np.ndarray:
        """Tangential impulses ``D lambda_D`` per contact; ``(..., m k) -> (..., m, tangent_dim)``."""
        lambda_D = np.asarray(lambda_D, dtype=float)
        per_contact = lambda_D.reshape(*lambda_D.shape[:-1], self.contacts, self.directions)
        return per_contact @ self.D

    def in_friction_cone(self, lambda_n: np.ndarray, lambda_t: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether each tangential impulse lies in the linearized cone ``mu lambda_n conv(D)``.

        The cone is the polygon with vertices ``mu_i lambda_n,i d_j``; a point lies in it iff
        ``lambda_n >= 0`` and its support along every edge normal is within the polygon's.
        """
        lambda_n = np.asarray(lambda_n, dtype=float)
        lambda_t = np.asarray(lambda_t, dtype=float)
        scale = tol * (1.0 + np.max(np.abs(lambda_n), initial=0.0))
        if np.any(lambda_n < -scale):
            return False
        radius = self.mu * np.maximum(lambda_n, 0.0)
        if not self.spatial:
            return bool(np.all(np.abs(lambda_t[..., 0]) <= radius + scale))
        k = self.directions
        edge_normals = np.column_stack([np.cos((2 * np.arange(k) + 1) * np.pi / k), np.sin((2 * np.arange(k) + 1) * np.pi / k)])
        support = lambda_t @ edge_normals.T
        return bool(np.all(support <= radius[..., None] * np.cos(np.pi / k) + scale))

    def subset(self, contacts: list[int] | np.ndarray) -> ImpactProblem:
        """The same system with only the listed contacts."""
        index = np.asarray(contacts, dtype=int)
        return ImpactProblem(
            self.M,
            self.Jn[index],
            self.Jt[index],
            self.mu[index],
            self.directions if self.spatial else None,
            external_force=self.external_force,
            restitution=self.restitution[index],
            constraints=self.constraints,
        )

    def with_external_force(self, external_force: np.ndarray | None) -> ImpactProblem:
        """The same problem with ``external_force`` (see the class parameters)."""
        return self._with(external_force=external_force)

    def with_restitution(self, restitution: float | np.ndarray | None) -> ImpactProblem:
        """The same problem with the coefficients of ``restitution`` (see the class parameters)."""
        return self._with(restitution=restitution)

    def with_constraints(self, constraints: np.ndarray | None) -> ImpactProblem:
        """The same problem with the bilateral ``constraints`` (see the class parameters)."""
        return self._with(constraints=constraints)

    def with_friction_directions(self, friction_directions: int | None) -> ImpactProblem:
        """The same problem with ``friction_directions`` (see the class parameters)."""
        return self._with(friction_directions=friction_directions)

    def _with(self, **changes: Any) -> ImpactProblem:
        arguments: dict[str, Any] = {
            "friction_directions": self.directions if self.spatial else None,
            "external_force": self.external_force,
            "restitution": self.restitution,
            "constraints": self.constraints,
        }
        arguments.update(changes)
        return ImpactProblem(self.M, self.Jn, self.Jt, self.mu, **arguments)

    @property
    def elastic(self) -> bool:
        """Whether any contact has a positive coefficient of restitution."""
        return bool((self.restitution > 0.0).any())

    def validate_velocity(self, v: np.ndarray, name: str = "v_minus") -> np.ndarray:
        """Return ``v`` as a float array of shape ``(nv,)`` or raise ``ValueError`` naming it."""
        v = np.asarray(v, dtype=float)
        if v.shape != (self.dofs,):
            raise ValueError(f"{name} must have shape ({self.dofs},), got {v.shape}")
        if not np.isfinite(v).all():
            raise ValueError(f"{name} must be finite, but it contains NaN or inf")
        return v

    def __repr__(self) -> str:
        kind = "spatial" if self.spatial else "planar"
        basis = self.free_basis
        constrained = "" if basis is None else f", {self.dofs - basis.shape[1]} constrained"
        return f"ImpactProblem(nv={self.dofs}{constrained}, m={self.contacts}, {kind}, k={self.directions}, mu={self.mu.tolist()})"


#: Singular values of a constraint Jacobian below this fraction of its largest are rank-deficient.
CONSTRAINT_RANK_TOL = 1e-10


def free_basis(constraints: np.ndarray, nv: int) -> np.ndarray:
    """An orthonormal basis ``N`` (columns, SVD) of the velocities that bilateral ``constraints``
    ``G`` (shape ``(r, nv)``, r >= 1) allow, ``G N = 0``; no column when they fix every velocity."""
    G = np.asarray(constraints, dtype=float)
    if G.ndim != 2 or G.shape[1:] != (nv,) or G.shape[0] == 0:
        raise ValueError(f"constraints must have shape (r, {nv}) with r >= 1, got {G.shape}")
    _, singular, vt = np.linalg.svd(G)
    rank = int((singular > CONSTRAINT_RANK_TOL * max(singular[0], 1e-300)).sum())
    return vt[rank:].T


#: Relative margin on :func:`step_lcp_bounds` (round-off must not cut off the bounded solution).
BOUND_MARGIN = 1e-6


def step_lcp_bounds(problem: ImpactProblem, caps: np.ndarray, v: np.ndarray, driven: np.ndarray | None = None) -> np.ndarray:
    """Upper bounds on ``z = [beta; lambda_n; lambda_D; gamma]`` met by some solution of the step LCP (eq. 75).

    For the complete fallback of :func:`~bullet_setimpact.core.lcp_solve.solve_lcp`.  With caps
    ``c = lambda_n_max >= 0`` and ``D = Jbar M^-1 Jbar^T`` (the Delassus matrix):

    - ``lambda_n <= c``: row block 1 is ``c - lambda_n >= 0``;
    - ``lambda_D,ij <= mu_i c_i``: the cone row ``mu_i lambda_n,i - 1^T lambda_D,i >= 0``
      and ``lambda_D >= 0``;
    - every solution with ``beta_i`` above ``b_i = |Jn v|_i + sum_j |D_ij| U_j`` (``U`` the
      impulse bounds above) can be lowered to ``max(0, -(Jn v + D lambda)_i) <= b_i``: if
      ``beta_i > 0`` and ``c_i > 0``, complementarity gives ``lambda_n,i = c_i`` and then
      ``y_n,i = 0``, i.e. ``beta_i = -(Jn v + D lambda)_i``; if ``c_i = 0``, ``lambda_n,i = 0``
      and ``beta_i`` only appears in ``y_n,i >= 0`` (complementary to ``lambda_n,i = 0``) and
      in ``beta_i (c_i - lambda_n,i) = 0``, which hold for the lowered value too;
    - likewise ``gamma_i <= max_j |J_D v + D lambda|_ij``: if some ``lambda_D,ij > 0``,
      ``y_D,ij = 0`` fixes ``gamma_i = -(J_D v + D lambda)_ij``; if none, the cone row's
      slack is ``mu_i lambda_n,i``: positive forces ``gamma_i = 0``, zero leaves ``gamma_i``
      only in ``y_D,i >= 0`` (complementary to zeros), so its smallest feasible value
      ``max(0, -(J_D v + D lambda)_ij over j)`` may replace it.

    With restitution (:mod:`bullet_setimpact.laws.restitution`) ``v`` already holds the driven impulses ``d`` and
    the cone row is ``mu_i (lambda_n,i + d_i) - 1^T lambda_D,i >= 0``, so the friction bound
    becomes ``mu_i (c_i + d_i)``; the rest of the argument is unchanged.

    The step LCP always has a solution (journal Theorem 6), hence one within these bounds
    (times ``1 + BOUND_MARGIN``): an infeasible mixed-integer problem would be a solver
    failure, never an LCP without solution.
    """
    m, mk = problem.contacts, problem.contacts * problem.directions
    caps = np.maximum(np.asarray(caps, dtype=float), 0.0)
    friction_caps = caps if driven is None else caps + np.maximum(np.asarray(driven, dtype=float), 0.0)
    impulse = np.concatenate([caps, np.repeat(problem.mu * friction_caps, problem.directions)])
    velocity = np.abs(problem.Jbar @ v) + np.abs(problem.delassus) @ impulse
    beta = velocity[:m]
    gamma = velocity[m:].reshape(m, problem.directions).max(axis=1) if mk else np.zeros(m)
    return (1.0 + BOUND_MARGIN) * np.concatenate([beta, impulse, gamma])
