"""Check a user's own impact law against the contract every shipped law obeys.

Like gymnasium's ``check_env``: :func:`check_law` resolves random impacts with the law and
raises :class:`~bullet_setimpact.errors.LawContractError` naming the first violated rule.
The rules (journal Sec. 2.2 and Theorems 2 and 7; :mod:`bullet_setimpact.laws.base`):

- the path starts at ``v_minus`` and no increment adds kinetic energy;
- Newton's law of impact, eq. (30): ``M (v+ - v-) = Jn^T Lambda_n + Jt^T Lambda_t``, up to
  the bilateral constraints' workless impulse ``G^T lambda_c`` when the problem has
  constraints, whose velocity ``G v`` the impact keeps (one case in three has them);
- every impulse lies in the (linearized) friction cone;
- a terminated outcome is non-colliding; an unterminated one says why;
- the same seed gives the same outcome.

The test suite runs the same :func:`check_outcome` over its own random impacts.
"""

from __future__ import annotations

import numpy as np

from .core.problem import ImpactProblem
from .errors import LawContractError
from .laws.base import ImpactLaw, ImpactResult
from .validation import positive_int

#: Relative tolerance of the energy check (a gain above it is a violation).
ENERGY_TOL = 1e-12
#: Relative tolerance of the Newton's-law and friction-cone checks.
CONTRACT_TOL = 1e-8


def random_impact(seed: int, dofs: int, contacts: int, spatial: bool, constrained: bool = False) -> tuple[ImpactProblem, np.ndarray]:
    """A random impact: SPD ``M``, Jacobian rows scaled to unit effective mass, mu in [0, 2]
    (zero at about one contact in five), a random external force, and a pre-impact velocity
    with at least one contact colliding.  ``constrained`` (``dofs >= 2``) adds ``1 .. dofs - 1``
    random bilateral constraints, one of them repeated (a redundant row), and a pre-impact
    velocity that satisfies them, colliding unless the constraints hold every contact still."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(dofs, dofs))
    M = a @ a.T + 0.3 * np.eye(dofs)
    Jn = rng.normal(size=(contacts, dofs))
    Jn /= np.sqrt(np.einsum("iv,iv->i", Jn, np.linalg.solve(M, Jn.T).T))[:, None]
    Jt = rng.normal(size=(contacts, 2 if spatial else 1, dofs))
    mu = rng.uniform(0.0, 2.0, size=contacts) * (rng.random(contacts) < 0.8)
    v = rng.normal(size=dofs)
    normal = Jn @ v
    if normal.min() >= -1e-3:
        row = Jn[normal.argmin()]
        v -= (normal.min() + 1.0) * row / (row @ row)
    problem = ImpactProblem(M, Jn, Jt, mu, external_force=rng.normal(size=dofs))
    if not constrained:
        return problem, v
    G = rng.normal(size=(int(rng.integers(1, dofs)), dofs))
    problem = problem.with_constraints(np.vstack([G, G[:1]]))
    v = problem.constrained_velocity(v)
    normal = problem.normal_velocities(v)
    row = int(normal.argmin())
    push = problem.solve_mass(Jn[row])  # a velocity change the constraints allow
    if normal[row] >= -1e-3 and Jn[row] @ push > 1e-9:
        v -= (normal[row] + 1.0) * push / (Jn[row] @ push)
    return problem, v


def check_outcome(problem: ImpactProblem, v_minus: np.ndarray, result: ImpactResult) -> None:
    """Raise :class:`LawContractError` naming the first rule ``result`` breaks (see the module docstring)."""
    if not np.array_equal(result.path[0], v_minus):
        raise LawContractError("path[0] is not v_minus")
    energies = np.atleast_1d(problem.kinetic_energy(result.path))
    gains = np.diff(energies)
    if np.any(gains > ENERGY_TOL * energies[0] + 1e-15):
        step = int(np.argmax(gains))
        raise LawContractError(f"kinetic energy rises at increment {step + 1}: {energies[step]:.6g} -> {energies[step + 1]:.6g}")
    generalized = problem.Jn.T @ result.normal_impulse + np.einsum("idv,id->v", problem.Jt, result.friction_impulse)
    change = result.v_plus - v_minus
    momentum = problem.M @ change
    if problem.free_basis is not None:  # the constraint impulses G^T lambda_c are free: compare along N
        momentum, generalized = problem.free_basis.T @ momentum, problem.free_basis.T @ generalized
        assert problem.constraints is not None
        drift = problem.constraints @ change
        scale = (1.0 + np.abs(v_minus).max()) * (1.0 + np.abs(problem.constraints).max())
        if not np.allclose(drift, 0.0, rtol=0.0, atol=CONTRACT_TOL * scale):
            raise LawContractError(f"the impact changed the constrained velocity G v by {np.abs(drift).max():.3g}")
    if not np.allclose(momentum, generalized, rtol=0.0, atol=CONTRACT_TOL * (1.0 + np.abs(generalized).max())):
        raise LawContractError(
            f"Newton's law of impact, eq. (30), fails: M (v+ - v-) - J^T Lambda has norm {np.linalg.norm(momentum - generalized):.3g}"
        )
    if not problem.in_friction_cone(result.normal_impulse, result.friction_impulse, tol=CONTRACT_TOL):
        raise LawContractError("an impulse lies outside the friction cone (or a normal impulse is negative)")
    if result.terminated and np.any(problem.colliding(result.v_plus)):
        raise LawContractError(f"terminated=True but contacts {np.flatnonzero(problem.colliding(result.v_plus)).tolist()} still collide")
    if not result.terminated and not result.message:
        raise LawContractError("terminated=False without a message saying why")


def check_law(law: ImpactLaw, *, cases: int = 50, seed: int = 0) -> None:
    """Resolve ``cases`` random impacts (1..12 DoF, 1..5 contacts, planar and spatial) with
    ``law`` and check each outcome against the contract; also resolve each twice with the
    same seed and require identical outcomes.

    Raises
    ------
    LawContractError
        Naming the law, the case (seed, DoF, contacts) and the broken rule; an exception
        raised by the law is chained as the cause.
    """
    if not isinstance(law, ImpactLaw):
        raise ValueError(f"law must be an ImpactLaw instance, got {type(law).__name__}")
    cases = positive_int("cases", cases)
    draws = np.random.default_rng(seed)
    for case in range(cases):
        case_seed = int(draws.integers(2**32))
        dofs, contacts, spatial = int(draws.integers(1, 13)), int(draws.integers(1, 6)), bool(draws.integers(2))
        where = f"{law!r} on case {case} (seed {case_seed}, {dofs} DoF, {contacts} contacts, {'spatial' if spatial else 'planar'})"
        problem, v_minus = random_impact(case_seed, dofs, contacts, spatial, constrained=case % 3 == 2 and dofs >= 2)
        try:
            result = law.resolve(problem, v_minus, rng=case_seed, unfinished="return")  # check_outcome reads terminated
            check_outcome(problem, v_minus, result)
            again = law.resolve(problem, v_minus, rng=case_seed, unfinished="return")
        except LawContractError as error:
            raise LawContractError(f"{where}: {error}") from None
        except Exception as error:
            raise LawContractError(f"{where}: the law raised {type(error).__name__}: {error}") from error
        if not np.array_equal(result.v_plus, again.v_plus):
            raise LawContractError(f"{where}: the same seed gave different outcomes")
