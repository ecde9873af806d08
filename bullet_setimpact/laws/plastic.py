"""Johnson, Burden & Koditschek's plastic hybrid reset with IV complementarity mode selection.

The contacts kept after the impact (the *mode* ``J``) are chosen by impulse-velocity
complementarity (their eqs. 46-50): ``(k in J) <=> U_k(P_{J u {k}}) >= 0`` for every
contact ``k`` in the scope (touching, non-separating contacts, eq. 33), where ``P_K`` is the
plastic impulse into mode ``K`` (eqs. 25-26) and ``U_k`` says it pushes (``lambda_n >= 0``)
and lies in contact ``k``'s friction cone.  The velocity then jumps by the plastic reset of
``J`` (eq. 23).  Their pseudo-impulse (eqs. 55-58) only changes which mode is chosen.

Sign convention.  Johnson et al. point the contact normal into the ground, so their impulse
is ``P = -Lambda A v`` and ``U = -1`` on the normal.  Here (as in :class:`ImpactProblem`)
``Jn v > 0`` separates and a pushing impulse is positive: ``lambda = Lambda A v``.
"""

from __future__ import annotations

from functools import cached_property
from itertools import combinations

import numpy as np

from ..core.problem import COLLISION_TOL, ImpactProblem
from .base import ImpactLaw, LawOutcome

#: Largest number of contacts in the scope whose ``2^s`` modes are enumerated.
MAX_MODE_CONTACTS = 10
#: Singular values of ``A M^-1 A^T`` below this fraction of the largest count as zero.
RANK_RTOL = 1e-10
#: Relative tolerance of ``U_k >= 0`` (fraction of the problem's impulse scale).
CONE_TOL = 1e-9


class ConstrainedInverse:
    """The inverse of Johnson et al.'s constrained inertia matrix (9), for invertible M.

    ``[[M, A^T], [A, 0]]^-1 = [[M_dagger, A_dagger^T], [A_dagger, Lambda]]`` with (eqs. 14-16)::

        M_dagger  = M^-1 - M^-1 A^T (A M^-1 A^T)^-1 A M^-1
        A_dagger^T = M^-1 A^T (A M^-1 A^T)^-1
        Lambda    = -(A M^-1 A^T)^-1

    When the rows of ``A`` are dependent (their Assumption A2 fails, e.g. two corners of a
    planar block both sticking), ``(A M^-1 A^T)^-1`` is replaced by the pseudo-inverse: the
    reset (23) is unchanged, and the impulse (26) becomes the minimum-norm one of the many
    that produce it.  ``rank`` then falls below ``A.shape[0]``.

    Parameters
    ----------
    problem : ImpactProblem
        Supplies ``M^-1`` (through its Cholesky factor).
    A : array_like, shape (r, nv)
        Constraint rows.
    """

    def __init__(self, problem: ImpactProblem, A: np.ndarray) -> None:
        A = np.asarray(A, dtype=float)
        if A.ndim != 2 or A.shape[1] != problem.dofs:
            raise ValueError(f"A must have shape (r, {problem.dofs}), got {np.shape(A)}")
        self.A = A
        self._problem = problem
        self.Minv_AT = problem.solve_mass(A.T).reshape(problem.dofs, A.shape[0])
        eigenvalues, eigenvectors = np.linalg.eigh(A @ self.Minv_AT)
        kept = eigenvalues > RANK_RTOL * eigenvalues.max(initial=0.0)
        #: Number of independent rows of ``A``.
        self.rank = int(kept.sum())
        #: ``Lambda = -(A M^-1 A^T)^-1`` (eq. 16), shape (r, r).
        self.Lambda = -(eigenvectors[:, kept] / eigenvalues[kept]) @ eigenvectors[:, kept].T

    @property
    def full_rank(self) -> bool:
        """Whether the rows of ``A`` are independent (Lemma 8 applies exactly)."""
        return self.rank == self.A.shape[0]

    @cached_property
    def A_dagger_T(self) -> np.ndarray:
        """``A_dagger^T = M^-1 A^T (A M^-1 A^T)^-1`` (eq. 15), shape (nv, r)."""
        return -self.Minv_AT @ self.Lambda

    @property
    def A_dagger(self) -> np.ndarray:
        """``A_dagger`` (eq. 15 transposed), shape (r, nv)."""
        return self.A_dagger_T.T

    @cached_property
    def M_dagger(self) -> np.ndarray:
        """``M_dagger = M^-1 - A_dagger^T A M^-1`` (eq. 14), shape (nv, nv)."""
        Minv = self._problem.solve_mass(np.eye(self._problem.dofs))
        return Minv - self.A_dagger_T @ self.Minv_AT.T

    def impulse(self, v: np.ndarray) -> np.ndarray:
        """Contact impulse into this mode, ``lambda = Lambda A v = -(A M^-1 A^T)^-1 A v`` (eq. 26)."""
        return self.Lambda @ (self.A @ v)

    def reset(self, v: np.ndarray) -> np.ndarray:
        """Post-impact velocity ``(I - A_dagger^T A) v`` (eq. 23)."""
        return v - self.A_dagger_T @ (self.A @ v)


class PlasticImpact(ImpactLaw):
    """Plastic impact with IV complementarity mode selection (Johnson, Burden & Koditschek).

    Parameters
    ----------
    pseudo_impulse_dt : float
        ``delta_t >= 0`` of the pseudo-impulse (eqs. 55-58); 0 disables it.  With
        ``delta_t > 0`` the mode is ``CP_PIV`` (eq. 58): a contact is also kept when the
        impulse into ``K`` plus the pseudo-impulse ``-A_K_dagger f delta_t`` is admissible.
        The velocity reset never includes the pseudo-impulse.
        The pseudo-impulse reads the generalized non-contact force ``f = Upsilon - C qdot - N``
        at the impact (gravity, actuation) from ``problem.external_force``
        (:attr:`needs_external_force`; the simulator fills it in).

    Notes
    -----
    Each contact ``k`` contributes its normal row ``Jn_k`` and, if ``mu_k > 0``, its tangent
    rows ``Jt_k`` (it sticks); frictionless contacts contribute the normal row only
    (Johnson et al. Assumption A12).  ``U_k(lambda) >= 0`` means ``lambda_n,k >= 0`` and
    the tangential impulse in the problem's linearized friction cone
    (:meth:`ImpactProblem.in_friction_cone`; exact for planar contacts).

    With ``delta_t > 0`` a contact kept only thanks to the pseudo-impulse may receive a
    pulling impulse (``lambda_n < 0``): the reset (23) applies ``P`` alone, and it is
    ``P + P~`` (eq. 57) that pushes.  E.g. the rocking block brought to rest keeps its pivot
    corner with ``lambda_n = zdot (m (w^2 - h^2) / 2 - 2 I) / w^2 < 0`` (for the block's mass
    ``m``, width ``w``, height ``h`` and inertia ``I``; derived in ``tests/test_plastic.py``).

    When a mode's rows are dependent (both corners of a planar block sticking), the impulse
    is the minimum-norm one (:class:`ConstrainedInverse`), which shares the tangential
    impulse equally; Johnson et al. drop one redundant tangential row instead (their
    footnote 21).  The normal impulses agree, but the friction check can differ: the rocking
    block's rest threshold becomes ``zdot* c mu / (c mu + m h / (2 w))``, ``c`` the factor
    of ``zdot`` in ``-lambda_n`` above, which tends to their ``zdot*`` as ``mu -> inf``.

    The mode is found by checking the predicate (50) (or 58) on every subset of the scope
    (their Sec. 4.4), so the scope may hold at most ``MAX_MODE_CONTACTS = 10`` contacts.
    If no subset or several satisfy it, ``resolve`` returns ``v_plus = v_minus`` with
    ``terminated=False``, a ``message``, and the candidates in ``info``; it never picks one.

    ``info`` holds ``mode`` (tuple of contact indices, None if not unique), ``scope``,
    ``iv_modes`` (every solution of eq. 50), ``piv_modes`` (of eq. 58, when
    ``delta_t > 0``), ``candidates`` (dict: each candidate mode's reset velocity) and
    ``rank_deficient_modes`` (modes whose rows were dependent; see
    :class:`ConstrainedInverse`).
    """

    name = "plastic"

    def __init__(self, pseudo_impulse_dt: float = 0.0) -> None:
        try:
            dt = float(pseudo_impulse_dt)
        except (TypeError, ValueError):
            raise ValueError(f"pseudo_impulse_dt must be a number >= 0, got {pseudo_impulse_dt!r}") from None
        if not np.isfinite(dt) or dt < 0.0:
            raise ValueError(f"pseudo_impulse_dt must be a finite number >= 0, got {pseudo_impulse_dt!r}")
        self.pseudo_impulse_dt = dt

    @property
    def needs_external_force(self) -> bool:
        """The pseudo-impulse (``pseudo_impulse_dt > 0``) needs ``problem.external_force``."""
        return self.pseudo_impulse_dt > 0.0

    def _resolve(self, problem: ImpactProblem, v_minus: np.ndarray, rng: np.random.Generator) -> LawOutcome:
        m, tangents = problem.contacts, problem.Jt.shape[1]
        normal = np.zeros(m)
        friction = np.zeros((m, tangents))
        pseudo_velocity = self._pseudo_velocity(problem)
        if not problem.colliding(v_minus):
            return LawOutcome(np.array([v_minus]), normal, friction, True, info={"mode": None, "scope": ()})
        scope = tuple(int(k) for k in np.flatnonzero(problem.normal_velocities(v_minus) <= COLLISION_TOL))
        if len(scope) > MAX_MODE_CONTACTS:
            raise ValueError(
                f"PlasticImpact enumerates the 2^s modes of the s touching contacts; s = {len(scope)} exceeds "
                f"MAX_MODE_CONTACTS = {MAX_MODE_CONTACTS}"
            )
        modes = _ModeTable(problem, v_minus, pseudo_velocity)
        iv_modes = modes.solutions(scope, required=(), pseudo=False)
        info: dict = {"mode": None, "scope": scope, "iv_modes": iv_modes}
        chosen, equation = iv_modes, "IV complementarity (eq. 50)"
        if pseudo_velocity is not None and len(iv_modes) == 1:
            chosen = info["piv_modes"] = modes.solutions(scope, required=iv_modes[0], pseudo=True)
            equation = "PIV complementarity (eq. 58)"
        elif pseudo_velocity is not None:
            equation = "IV complementarity (eq. 50), which PIV (eq. 58) needs unique,"
        info["candidates"] = {mode: modes.inverse(mode).reset(v_minus) for mode in chosen}
        info["rank_deficient_modes"] = modes.rank_deficient()
        if len(chosen) != 1:
            message = f"{equation} has {len(chosen)} solutions {list(chosen)}: no mode is selected"
            return LawOutcome(np.array([v_minus]), normal, friction, False, message, info)
        mode = info["mode"] = chosen[0]
        inverse = modes.inverse(mode)
        v_plus = inverse.reset(v_minus)
        impulse = inverse.impulse(v_minus)
        for contact, rows in modes.layout(mode):
            normal[contact] = impulse[rows[0]]
            friction[contact, : len(rows) - 1] = impulse[rows[1:]]
        return LawOutcome(np.array([v_minus, v_plus]), normal, friction, *_termination(problem, v_plus, scope), info)

    def _pseudo_velocity(self, problem: ImpactProblem) -> np.ndarray | None:
        """``delta_t M^-1 f``, the velocity the pseudo-impulse would cancel (eqs. 55-57), or None."""
        if self.pseudo_impulse_dt == 0.0:
            return None
        if problem.external_force is None:
            raise ValueError(
                "pseudo_impulse_dt > 0 needs the generalized external force f (gravity and actuation): "
                "build the problem with ImpactProblem(..., external_force=f)"
            )
        return self.pseudo_impulse_dt * problem.solve_mass(problem.external_force)


class _ModeTable:
    """Impulses (eq. 26) of every mode ``K`` of one impact, computed once each."""

    def __init__(self, problem: ImpactProblem, v: np.ndarray, pseudo_velocity: np.ndarray | None) -> None:
        self.problem = problem
        self.v = v
        self.pseudo_velocity = pseudo_velocity
        self._inverses: dict[tuple[int, ...], ConstrainedInverse] = {}
        self._admissible: dict[tuple[tuple[int, ...], int, bool], bool] = {}
        # The largest impulse that stops one contact alone: the scale of U_k's tolerance.
        effective = np.diag(problem.delassus)[: problem.contacts]
        stopping = np.divide(np.abs(problem.normal_velocities(v)), effective, out=np.zeros_like(effective), where=effective > 0.0)
        self.scale = float(stopping.max())

    def layout(self, mode: tuple[int, ...]) -> list[tuple[int, np.ndarray]]:
        """Per contact of ``mode``, the positions of its rows (normal first) in ``A_mode``."""
        out, start = [], 0
        for contact in mode:
            count = 1 + (self.problem.Jt.shape[1] if self.problem.mu[contact] > 0.0 else 0)
            out.append((contact, np.arange(start, start + count)))
            start += count
        return out

    def inverse(self, mode: tuple[int, ...]) -> ConstrainedInverse:
        """The constrained inverse of ``A_mode``: normal rows, plus tangent rows where ``mu > 0``."""
        if mode not in self._inverses:
            rows = []
            for contact in mode:
                rows.append(self.problem.Jn[contact][None, :])
                if self.problem.mu[contact] > 0.0:
                    rows.append(self.problem.Jt[contact])
            A = np.vstack(rows) if rows else np.zeros((0, self.problem.dofs))
            self._inverses[mode] = ConstrainedInverse(self.problem, A)
        return self._inverses[mode]

    def rank_deficient(self) -> tuple[tuple[int, ...], ...]:
        """The modes evaluated so far whose constraint rows were dependent."""
        return tuple(mode for mode, inverse in self._inverses.items() if not inverse.full_rank)

    def admissible(self, mode: tuple[int, ...], contact: int, pseudo: bool) -> bool:
        """``U_contact(P_mode) >= 0`` (or of ``P_mode + P~_mode`` when ``pseudo``), eqs. 50 and 58."""
        key = (mode, contact, pseudo)
        if key not in self._admissible:
            inverse = self.inverse(mode)
            velocity = self.v + self.pseudo_velocity if pseudo else self.v
            impulse = inverse.impulse(velocity) / self.scale
            rows = dict(self.layout(mode))[contact]
            m = self.problem.contacts
            lambda_n = np.zeros(m)
            lambda_t = np.zeros((m, self.problem.Jt.shape[1]))
            lambda_n[contact] = impulse[rows[0]]
            lambda_t[contact, : len(rows) - 1] = impulse[rows[1:]]
            self._admissible[key] = bool(lambda_n[contact] >= -CONE_TOL) and self.problem.in_friction_cone(lambda_n, lambda_t, tol=CONE_TOL)
        return self._admissible[key]

    def solutions(self, scope: tuple[int, ...], required: tuple[int, ...], pseudo: bool) -> tuple[tuple[int, ...], ...]:
        """Every ``J`` with ``required <= J <= scope`` satisfying IV (eq. 50) or, if ``pseudo``, PIV (eq. 58)."""
        optional = [k for k in scope if k not in required]
        found = []
        for size in range(len(optional) + 1):
            for extra in combinations(optional, size):
                J = tuple(sorted((*required, *extra)))
                if all(self._keeps(J, k, pseudo) == (k in J) for k in scope):
                    found.append(J)
        return tuple(found)

    def _keeps(self, J: tuple[int, ...], k: int, pseudo: bool) -> bool:
        K = tuple(sorted(set(J) | {k}))
        return self.admissible(K, k, False) or (pseudo and self.admissible(K, k, True))


def _termination(problem: ImpactProblem, v_plus: np.ndarray, scope: tuple[int, ...]) -> tuple[bool, str]:
    """``(terminated, message)``: why contacts may still collide after the reset."""
    still = np.flatnonzero(problem.normal_velocities(v_plus) < -COLLISION_TOL).tolist()
    dropped = [k for k in still if k in scope]
    if dropped:
        return False, (
            f"contacts {dropped} were dropped from the mode and still collide: their sticking impulse leaves the "
            "friction cone, and Johnson et al. remove such a contact (Assumption A12, meant for massless links)"
        )
    if still:
        return False, (
            f"contacts {still} separated before the impact (outside the scope, eq. 33) and collide after the "
            "reset: a new impact (Johnson et al., footnote 18)"
        )
    return True, ""
