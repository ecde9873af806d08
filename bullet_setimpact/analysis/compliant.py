"""A compliant impact at a fixed configuration: bilinear springs and regularized Coulomb friction.

The reference for validating Stronge-type restitution (:mod:`bullet_setimpact.laws.restitution`)
the way the journal validates its inelastic law against compliant contact (Sec. 6.1, Fig. 12,
eqs. 88-90), with the journal's Kelvin-Voigt damper replaced by Stronge's bilinear spring.

**Model.**  Each contact ``i`` carries a penetration ``delta_i`` (``d delta_i / dt = -Jn_i v``)
and pushes with a normal force ``f_i >= 0`` that follows the bilinear spring of Stronge's
energetic coefficient ``e_i``:

- *loading* (``delta_i`` at its running maximum ``delta_max,i``): ``f_i = k_i max(delta_i, 0)``;
- *unloading* (``delta_i < delta_max,i``): ``f_i = (k_i / e_i^2) max(delta_i - r_i, 0)`` with the
  residual ``r_i = (1 - e_i^2) delta_max,i`` (the stiffer line through ``(delta_max, k delta_max)``;
  ``f_i = 0`` when ``e_i = 0``).

One loading from 0 to ``delta_max`` stores ``k delta_max^2 / 2``; unloading returns the area under
the stiffer line, ``(k delta_max / 2) (delta_max - r) = e^2 k delta_max^2 / 2``: exactly Stronge's
``W_restitution = -e^2 W_compression``.  A contact driven back into compression after a partial
unloading climbs the unloading line (elastic, everything it gives back it takes back) and loads
further only past ``delta_max``: the re-compression rule of the restitution law.  There is no
damping.  Friction follows the journal's eqs. (89)-(90):
``f_t,i = -mu_i f_i Unit_eps(Jt_i v)``, ``Unit_eps(r) = r / max(|r|, eps)``.

**Fixed configuration.**  ``M dv/dt = Jn^T f + Jt^T f_t`` with ``M``, ``J`` frozen at the impact
configuration and no gravity: the limit of stiff springs, where the bodies move by
``O(|v| sqrt(m / k))`` during the impact.  In that limit only the stiffness *ratios* matter:
scaling every ``k_i`` by ``c`` scales ``delta`` and time by ``c^-1/2`` and leaves every velocity,
hence ``v+``, unchanged.

**Integration.**  :func:`scipy.integrate.solve_ivp` (Radau: the sticking friction of eq. 90 is
stiff) on the state ``(v, delta, Lambda_n)`` with terminal events at the mode switches (loading
-> unloading when ``Jn_i v`` rises through 0; unloading -> loading when ``delta_i`` rises through
``delta_max,i``), so the force law is smooth inside each segment except where an unloading spring
empties (a kink Radau's error control brackets).  The impact ends when every spring is empty
(``f = 0``) and no contact approaches (``Jn v >= 0``); after that nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from ..core.problem import ImpactProblem

#: Relative tolerance of the ODE solver.
RTOL = 1e-10
#: ``eps`` of eq. (90) relative to ``|Jn v-|``: the sliding speed below which friction is viscous.
FRICTION_SMOOTHING = 1e-8
#: Horizon of one impact, in multiples of the slowest contact's loading half-period.
HORIZON_PERIODS = 400.0
#: Points recorded per accepted solver step in ``impulse_history``.
HISTORY_POINTS = 8
#: Most mode switches before the simulation is declared non-terminating.
MAX_SWITCHES = 10_000


@dataclass(frozen=True)
class CompliantImpact:
    """The end of a compliant impact.

    Attributes
    ----------
    velocity : ndarray, shape (nv,)
        ``v+``.
    normal_impulse : ndarray, shape (m,)
        ``int f_i dt`` per contact.
    max_compression : ndarray, shape (m,)
        ``delta_max,i`` (the largest penetration).
    reloadings : ndarray of int, shape (m,)
        How many times each contact went from unloading back to loading (re-compression past
        ``delta_max``).
    recompressions : ndarray of int, shape (m,)
        How many times each contact, unloading, was driven back into compression (``Jn_i v``
        fell through 0 while ``f_i > 0``).
    impulse_history : ndarray, shape (n, m)
        ``int_0^t f dt`` at the solver's accepted steps (the first row 0, the last
        ``normal_impulse``): the rates at which the contacts accrued impulse.
    """

    velocity: np.ndarray
    normal_impulse: np.ndarray
    max_compression: np.ndarray
    reloadings: np.ndarray
    recompressions: np.ndarray
    impulse_history: np.ndarray


def spring_forces(
    delta: np.ndarray, loading: np.ndarray, delta_max: np.ndarray, stiffness: np.ndarray, restitution: np.ndarray
) -> np.ndarray:
    """Normal forces of the bilinear springs (module docstring), shape ``(m,)``."""
    residual = (1.0 - restitution**2) * delta_max
    with np.errstate(divide="ignore", invalid="ignore"):
        unloading = np.where(restitution > 0.0, stiffness / restitution**2 * np.maximum(delta - residual, 0.0), 0.0)
    return np.where(loading, stiffness * np.maximum(delta, 0.0), unloading)


def _unit(r: np.ndarray, eps: float) -> np.ndarray:
    """Eq. (90) per contact: ``r / max(|r|, eps)`` over the last axis."""
    return r / np.maximum(np.linalg.norm(r, axis=-1, keepdims=True), eps)


def compliant_impact(problem: ImpactProblem, v_minus: np.ndarray, stiffness: np.ndarray) -> CompliantImpact:
    """Resolve ``problem`` at ``v_minus`` with bilinear springs of loading stiffnesses ``stiffness``
    and Stronge coefficients ``problem.restitution`` (module docstring).

    Parameters
    ----------
    problem : ImpactProblem
    v_minus : array_like, shape (nv,)
    stiffness : array_like, shape (m,)
        Loading stiffnesses ``k_i > 0`` (only their ratios matter).

    Raises
    ------
    ValueError
        A stiffness not positive and finite, or of the wrong shape.
    RuntimeError
        The ODE solver failed, or the impact had not ended after :data:`HORIZON_PERIODS`
        half-periods or :data:`MAX_SWITCHES` mode switches.
    """
    v0 = problem.validate_velocity(v_minus)
    m, nv = problem.contacts, problem.dofs
    k = np.asarray(stiffness, dtype=float)
    if k.shape != (m,) or not np.all(np.isfinite(k) & (k > 0.0)):
        raise ValueError(f"stiffness must be {m} positive finite numbers, got {np.asarray(stiffness).tolist()}")
    e = problem.restitution
    speed = float(np.max(np.abs(problem.normal_velocities(v0)), initial=0.0))
    if speed == 0.0:
        raise ValueError("v_minus moves no contact along its normal: there is no impact to resolve")
    eps = FRICTION_SMOOTHING * speed
    jt = problem.Jt  # (m, d, nv)
    inverse_mass = np.diag(problem.Jn @ problem.solve_mass(problem.Jn.T))
    half_period = np.pi / np.sqrt(k * np.min(e[e > 0.0] ** 2, initial=1.0) * inverse_mass)
    horizon = HORIZON_PERIODS * float(np.max(half_period))
    depth = speed * half_period  # the scale of delta: a contact loaded at ``speed`` for a half-period

    loading = problem.normal_velocities(v0) <= 0.0
    delta_max = np.zeros(m)
    reloadings = np.zeros(m, dtype=int)
    recompressions = np.zeros(m, dtype=int)

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        v, delta = y[:nv], y[nv : nv + m]
        f = spring_forces(delta, loading, delta_max, k, e)
        friction = -(problem.mu * f)[:, None] * _unit(np.einsum("idv,v->id", jt, v), eps)
        force = problem.Jn.T @ f + np.einsum("idv,id->v", jt, friction)
        return np.concatenate([problem.solve_mass(force), -problem.Jn @ v, f])

    def event(i: int) -> object:
        def crossing(_t: float, y: np.ndarray) -> float:
            v, delta = y[:nv], y[nv : nv + m]
            return float(problem.Jn[i] @ v) if loading[i] else float(delta[i] - delta_max[i] - RTOL * depth[i])

        crossing.terminal = True  # type: ignore[attr-defined]
        crossing.direction = 1.0  # type: ignore[attr-defined]
        return crossing

    def recompression(i: int) -> object:
        def crossing(_t: float, y: np.ndarray) -> float:
            v, delta = y[:nv], y[nv : nv + m]
            engaged = spring_forces(delta, loading, delta_max, k, e)[i] > 0.0
            return float(problem.Jn[i] @ v) if engaged and not loading[i] else 1.0

        crossing.direction = -1.0  # type: ignore[attr-defined]
        return crossing

    events = [event(i) for i in range(m)] + [recompression(i) for i in range(m)]
    scale = np.concatenate([np.full(nv, speed), depth, speed / inverse_mass])
    y, t = np.concatenate([v0, np.zeros(2 * m)]), 0.0
    history = [y[None, nv + m :]]
    for _ in range(MAX_SWITCHES):
        sol = solve_ivp(rhs, (t, horizon), y, method="Radau", events=events, rtol=RTOL, atol=RTOL * scale, dense_output=True)
        if sol.status < 0:
            raise RuntimeError(f"compliant impact: the ODE solver failed at t={sol.t[-1]:g}: {sol.message}")
        recompressions += np.array([len(times) for times in sol.t_events[m:]])
        times = (sol.t[:-1, None] + np.diff(sol.t)[:, None] * np.arange(1, HISTORY_POINTS + 1) / HISTORY_POINTS).ravel()
        history.append(sol.sol(times)[nv + m :].T)
        if sol.status == 0:
            break
        switched = [i for i in range(m) if len(sol.t_events[i])]
        t, y = float(sol.t_events[switched[0]][0]), sol.y_events[switched[0]][0]
        for i in switched:
            if not loading[i]:
                reloadings[i] += 1
            else:
                delta_max[i] = y[nv + i]
            loading[i] = not loading[i]
    else:
        raise RuntimeError(f"compliant impact: more than {MAX_SWITCHES} mode switches")
    y = sol.y[:, -1]
    v, delta = y[:nv], y[nv : nv + m]
    if np.any(spring_forces(delta, loading, delta_max, k, e) > 0.0) or np.any(problem.Jn @ v < -RTOL * speed):
        raise RuntimeError(f"compliant impact: not over after {HORIZON_PERIODS:g} half-periods (t={horizon:g})")
    return CompliantImpact(
        v, y[nv + m :], np.maximum(delta_max, np.where(loading, delta, 0.0)), reloadings, recompressions, np.concatenate(history)
    )
