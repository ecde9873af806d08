"""Johnson, Burden & Koditschek's plastic reset (``PlasticImpact``): identities, mode selection,
the rocking block and the point-into-a-hill examples of their Sec. 4.3, and the comparison with
the set-valued model on the journal's rocking block."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bullet_setimpact import ImpactProblem, RouthImpact, SamplesDroppedWarning, planar
from bullet_setimpact.errors import UnfinishedImpactWarning
from bullet_setimpact.laws.plastic import MAX_MODE_CONTACTS, ConstrainedInverse, PlasticImpact
from bullet_setimpact.laws.propagative import PropagativeImpact

G = 9.81


def _spd(rng: np.random.Generator, n: int) -> np.ndarray:
    a = rng.normal(size=(n, n))
    return a @ a.T + 0.5 * np.eye(n)


def _rows(problem: ImpactProblem, mode: tuple[int, ...]) -> np.ndarray:
    """``A_J``: normal rows, plus tangent rows of frictional contacts (written out here)."""
    rows = []
    for k in mode:
        rows.append(problem.Jn[k])
        if problem.mu[k] > 0:
            rows.extend(problem.Jt[k])
    return np.array(rows).reshape(-1, problem.dofs)


# ----------------------------------------------------------------------------- identities
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nv=st.integers(1, 8), data=st.data())
def test_constrained_inverse_is_the_block_inverse_and_meets_identities_10_11(seed: int, nv: int, data) -> None:
    """Johnson et al. define ``[[M_dag, A_dag^T], [A_dag, Lambda]]`` as the inverse of
    ``[[M, A^T], [A, 0]]`` (eq. 9); for invertible ``M`` the closed forms (14)-(16) must equal
    that inverse (computed here by ``np.linalg.inv``) and satisfy (10)
    ``A_dag A^T = A A_dag^T = I``, ``M_dag A^T = A M_dag = 0`` and (11)
    ``M_dag M + A_dag^T A = I``, ``A_dag M + Lambda A = 0``; the reset (23) equals
    ``M_dag M v``."""
    r = data.draw(st.integers(1, nv))
    rng = np.random.default_rng(seed)
    M = _spd(rng, nv)
    A = rng.normal(size=(r, nv))  # full row rank with probability 1
    problem = ImpactProblem(M, np.ones((1, nv)), np.zeros((1, 1, nv)), 0.0)
    inverse = ConstrainedInverse(problem, A)
    assert inverse.full_rank
    block = np.linalg.inv(np.block([[M, A.T], [A, np.zeros((r, r))]]))
    scale = 1.0 + np.abs(block).max()
    np.testing.assert_allclose(inverse.M_dagger, block[:nv, :nv], atol=1e-8 * scale)
    np.testing.assert_allclose(inverse.A_dagger_T, block[:nv, nv:], atol=1e-8 * scale)
    np.testing.assert_allclose(inverse.A_dagger, block[nv:, :nv], atol=1e-8 * scale)
    np.testing.assert_allclose(inverse.Lambda, block[nv:, nv:], atol=1e-8 * scale)
    tol = 1e-8 * scale * (1.0 + np.abs(M).max() + np.abs(A).max())
    np.testing.assert_allclose(inverse.A_dagger @ A.T, np.eye(r), atol=tol)
    np.testing.assert_allclose(A @ inverse.A_dagger_T, np.eye(r), atol=tol)
    np.testing.assert_allclose(inverse.M_dagger @ A.T, 0.0, atol=tol)
    np.testing.assert_allclose(A @ inverse.M_dagger, 0.0, atol=tol)
    np.testing.assert_allclose(inverse.M_dagger @ M + inverse.A_dagger_T @ A, np.eye(nv), atol=tol)
    np.testing.assert_allclose(inverse.A_dagger @ M + inverse.Lambda @ A, 0.0, atol=tol)
    v = rng.normal(size=nv)
    np.testing.assert_allclose(inverse.reset(v), inverse.M_dagger @ M @ v, atol=tol * (1 + np.abs(v).max()))


def _random_impact(seed: int, m: int, frictional: bool) -> tuple[ImpactProblem, np.ndarray]:
    """Planar contacts on ``nv = 2m + 1`` dofs (so every ``A_J`` has independent rows), with a
    colliding ``v``."""
    rng = np.random.default_rng(seed)
    nv = 2 * m + 1
    mu = rng.uniform(0.1, 2.0, size=m) * (rng.random(m) < 0.7) if frictional else 0.0
    problem = ImpactProblem(_spd(rng, nv), rng.normal(size=(m, nv)), rng.normal(size=(m, 1, nv)), mu)
    v = rng.normal(size=nv)
    v -= (problem.Jn[0] @ v + 1.0) * problem.Jn[0] / (problem.Jn[0] @ problem.Jn[0])  # Jn_0 v = -1
    return problem, v


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 4), frictional=st.booleans())
def test_plastic_reset_stops_the_mode_is_idempotent_and_loses_the_predicted_energy(seed: int, m: int, frictional: bool) -> None:
    """After the reset into the selected mode ``J`` (eq. 23): ``A_J v+ = 0``; resetting ``v+``
    again changes nothing (``(I - A_dag^T A)`` is a projection); the energy lost is
    ``0.5 (A v)^T (A M^-1 A^T)^-1 (A v) >= 0`` (Pythagoras in the kinetic metric, computed
    here with ``np.linalg.solve``); and Newton's law ``M (v+ - v-) = A_J^T lambda`` holds."""
    problem, v = _random_impact(seed, m, frictional)
    result = PlasticImpact().resolve(problem, v, unfinished="return")  # terminated is checked below
    mode = result.info["mode"]
    if mode is None:  # friction can leave no or several modes; that case is tested below
        assert not result.terminated and result.message
        return
    A = _rows(problem, mode)
    scale = 1.0 + np.abs(v).max()
    np.testing.assert_allclose(A @ result.v_plus, 0.0, atol=1e-9 * scale)
    np.testing.assert_allclose(ConstrainedInverse(problem, A).reset(result.v_plus), result.v_plus, atol=1e-9 * scale)
    Av = A @ v
    predicted = 0.5 * Av @ np.linalg.solve(A @ np.linalg.solve(problem.M, A.T), Av) if len(A) else 0.0
    assert predicted >= 0.0
    assert result.energy_lost == pytest.approx(predicted, rel=1e-8, abs=1e-10 * result.energy_before)
    generalized = problem.Jn.T @ result.normal_impulse + np.einsum("idv,id->v", problem.Jt, result.friction_impulse)
    np.testing.assert_allclose(problem.M @ (result.v_plus - v), generalized, atol=1e-8 * (1 + np.abs(generalized).max()))


def _iv_modes_by_hand(problem: ImpactProblem, v: np.ndarray) -> list[tuple[int, ...]]:
    """Brute-force IV complementarity (eq. 50), independent of the package: for each
    ``J`` of the scope (contacts with ``Jn v <= 0``) and each ``k``, the impulse (26) into
    ``K = J u {k}`` is ``-(A M^-1 A^T)^-1 A v`` (our sign: positive pushes), and ``U_k >= 0``
    is ``lambda_n >= 0`` and ``|lambda_t| <= mu lambda_n`` (planar)."""
    scope = [k for k in range(problem.contacts) if problem.Jn[k] @ v <= 1e-8]
    found = []
    for size in range(len(scope) + 1):
        for J in itertools.combinations(scope, size):
            ok = True
            for k in scope:
                K = tuple(sorted(set(J) | {k}))
                A = _rows(problem, K)
                impulse = -np.linalg.solve(A @ np.linalg.solve(problem.M, A.T), A @ v)
                start = sum(1 + (problem.mu[j] > 0) for j in K if j < k)
                lam_n = impulse[start]
                lam_t = impulse[start + 1] if problem.mu[k] > 0 else 0.0
                tol = 1e-9 * np.abs(impulse).max()
                admissible = lam_n >= -tol and abs(lam_t) <= problem.mu[k] * lam_n + tol
                ok &= admissible == (k in J)
            if ok:
                found.append(J)
    return found


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 4), frictional=st.booleans())
def test_mode_selection_matches_a_brute_force_iv_predicate(seed: int, m: int, frictional: bool) -> None:
    """``info["iv_modes"]`` lists exactly the sets satisfying eq. (50), recomputed by hand; and
    for frictionless contacts the mode is unique and ``v+`` is the classical plastic LCP
    outcome (Johnson et al. Theorem 2: every dropped contact separates, ``Jn_k v+ > 0``)."""
    problem, v = _random_impact(seed, m, frictional)
    result = PlasticImpact().resolve(problem, v, unfinished="return")  # terminated is checked below
    assert list(result.info["iv_modes"]) == _iv_modes_by_hand(problem, v)
    if not frictional:
        assert result.info["mode"] is not None
        dropped = [k for k in result.info["scope"] if k not in result.info["mode"]]
        assert np.all(problem.Jn[dropped] @ result.v_plus > 0.0)
        assert np.all(result.normal_impulse >= -1e-9)
        # A contact separating before the impact is outside the scope (eq. 33); only such a
        # contact may collide afterwards, which the law reports (their footnote 18).
        assert not np.any(problem.Jn[list(result.info["scope"])] @ result.v_plus < -1e-8)
        assert result.terminated or "footnote 18" in result.message


def test_several_iv_modes_are_reported_not_picked() -> None:
    """A frictional impact (4 dofs, independent rows) with two IV solutions, ``{0}`` and
    ``{1}``, by the brute force above (unchanged under +-5 % in mu and 0.03 in v, so not a
    tolerance artefact): the law must not pick one.  It returns ``v+ = v-``, ``terminated=False``, a
    message naming both, and each candidate's reset (23) in ``info["candidates"]``."""
    M = np.diag([2.0, 1.0, 2.0, 1.0])
    Jn = np.array([[1.0, -1.0, 1.0, -1.0], [0.0, -1.0, 1.0, 1.0]])
    Jt = np.array([[[-1.0, -1.0, -1.0, 1.0]], [[0.0, -1.0, -1.0, 0.0]]])
    problem = ImpactProblem(M, Jn, Jt, [1.0, 0.5])
    v = np.array([-1.0, 1.0, -1.0, -1.0])
    expected = _iv_modes_by_hand(problem, v)
    assert len(expected) == 2
    with pytest.warns(UnfinishedImpactWarning, match="2 solutions"):
        result = PlasticImpact().resolve(problem, v)
    assert result.info["mode"] is None and list(result.info["iv_modes"]) == expected
    assert not result.terminated and "2 solutions" in result.message
    np.testing.assert_array_equal(result.v_plus, v)
    for mode in expected:
        np.testing.assert_allclose(_rows(problem, mode) @ result.info["candidates"][mode], 0.0, atol=1e-12)


# ------------------------------------------------------------------ Johnson et al. Sec. 4.3
W, H, MASS = 0.05, 0.10, 5.0  # Johnson et al. Fig. 8
INERTIA = MASS * (W**2 + H**2) / 12.0
#: NOTES.md: zdot* = dt g w^2 / (h^2 - w^2 + 4 I / m) = 7.3575e-4 / 0.0116667 = 0.0630643 m/s.
ZDOT_STAR = 0.03 * G * W**2 / (H**2 - W**2 + 4.0 * INERTIA / MASS)


def _pivoting_block(zdot: float, mu: float) -> tuple[ImpactProblem, np.ndarray]:
    """The block rotating about its left corner A (at rest) as corner B lands.

    Rotation rate ``omega < 0`` about A, ``r_A = (-w/2, -h/2)``: ``v_com = -omega x r_A =
    (-omega h/2, omega w/2)``, so the centre of mass falls at ``zdot = -omega w / 2``."""
    problem = planar.rocking_block(width=W, height=H, mass=MASS, mu=mu).problem
    omega = -2.0 * zdot / W
    v = np.array([-omega * H / 2.0, omega * W / 2.0, omega])
    np.testing.assert_allclose(problem.normal_velocities(v), [0.0, -2.0 * zdot], atol=1e-14 * (1 + zdot))
    np.testing.assert_allclose(problem.tangential_velocities(v)[0], 0.0, atol=1e-14 * (1 + zdot))
    return problem, v


@pytest.mark.parametrize("zdot", [1e-4, 1e-3, 0.01, 0.0631, 0.5, 10.0])
def test_rocking_block_iv_keeps_only_the_striking_corner_and_scales_the_rate_by_0_7(zdot: float) -> None:
    """Johnson et al. eqs. (100)-(101) (sign corrected in NOTES.md): in mode {A, B} the pivot's
    impulse is ``zdot (m (w^2 - h^2)/2 - 2 I)/w^2 = -11.67 zdot < 0`` for h = 10 cm, w = 5 cm,
    so A leaves at every speed (Lemma 10) and CP_IV = {B}.  The block then pivots on B: the
    angular momentum about B, ``(I + m (h^2 - w^2)/4) omega``, is conserved into
    ``(I + m (h^2 + w^2)/4) omega+``, so ``omega+/omega = (2h^2 - w^2)/(2(w^2 + h^2)) =
    175/250 = 0.7``.  B sticks (needs ``mu >= |lambda_t/lambda_n|``, below 1 here)."""
    problem, v = _pivoting_block(zdot, mu=1.0)
    result = PlasticImpact().resolve(problem, v)
    assert result.info["mode"] == (1,)
    assert result.info["iv_modes"] == ((1,),)
    assert result.v_plus[2] / v[2] == pytest.approx((2 * H**2 - W**2) / (2 * (W**2 + H**2)), rel=1e-12)
    assert result.v_plus[2] / v[2] == pytest.approx(0.7, rel=1e-12)
    np.testing.assert_allclose(problem.normal_velocities(result.v_plus)[1], 0.0, atol=1e-12 * zdot)
    np.testing.assert_allclose(problem.tangential_velocities(result.v_plus)[1], 0.0, atol=1e-12 * zdot)
    assert problem.normal_velocities(result.v_plus)[0] > 0.0  # A lifts off


def test_pseudo_impulse_threshold_matches_the_corrected_formula() -> None:
    """With ``delta_t = 0.03`` and gravity ``f = (0, -m g, 0)``, eq. (102) corrected: in mode
    {A, B} corner A's impulse plus pseudo-impulse is ``-c zdot + delta_t m g / 2``, with
    ``c = (m (h^2 - w^2)/2 + 2 I)/w^2 = 11.667 kg``, so the block comes to rest iff
    ``zdot <= zdot* = 0.063064 m/s`` (6.3 cm/s, NOTES.md).  With ``mu = 1e4`` the friction
    check moves it by ``m h / (2 w c mu) = 4e-5`` relative (see the next test), far inside the
    +-1 % tested.  Without the pseudo-impulse the block keeps pivoting at either speed."""
    assert pytest.approx(0.0630643, rel=1e-5) == ZDOT_STAR
    gravity = np.array([0.0, -MASS * G, 0.0])
    law = PlasticImpact(pseudo_impulse_dt=0.03)
    problem, v = _pivoting_block(0.99 * ZDOT_STAR, mu=1e4)
    problem = problem.with_external_force(gravity)
    rest = law.resolve(problem, v)
    assert rest.info["mode"] == (0, 1) and rest.info["iv_modes"] == ((1,),)
    np.testing.assert_allclose(rest.v_plus, 0.0, atol=1e-14)
    c = (MASS * (H**2 - W**2) / 2 + 2 * INERTIA) / W**2
    assert rest.normal_impulse[0] == pytest.approx(-c * 0.99 * ZDOT_STAR, rel=1e-9)  # P alone pulls (eq. 100)
    assert PlasticImpact().resolve(problem, v).info["mode"] == (1,)
    problem, v = _pivoting_block(1.01 * ZDOT_STAR, mu=1e4)
    pivot = law.resolve(problem.with_external_force(gravity), v)
    assert pivot.info["mode"] == (1,)
    assert pivot.v_plus[2] / v[2] == pytest.approx(0.7, rel=1e-12)


def test_pseudo_impulse_threshold_with_finite_friction_follows_the_minimum_norm_split() -> None:
    """Documented deviation: both corners sticking is a rank-deficient mode, and the law
    shares the horizontal impulse ``m zdot h/w`` (the block's horizontal momentum) equally,
    ``m zdot h/(2w) = 5 zdot`` per corner.  A stays only if ``mu c (zdot* - zdot) >= 5 zdot``,
    i.e. ``zdot <= zdot* c mu/(c mu + 5)``; for ``mu = 1``: ``11.667/16.667 = 0.7``, so the
    threshold is ``0.7 zdot* = 4.41 cm/s``."""
    gravity = np.array([0.0, -MASS * G, 0.0])
    law = PlasticImpact(pseudo_impulse_dt=0.03)
    for factor, mode in ((0.69, (0, 1)), (0.71, (1,))):
        problem, v = _pivoting_block(factor * ZDOT_STAR, mu=1.0)
        result = law.resolve(problem.with_external_force(gravity), v)
        assert result.info["mode"] == mode
    assert result.info["rank_deficient_modes"] == ((0, 1),)


THETA = np.deg2rad(30.0)


def _hill(mass: float = 2.0) -> ImpactProblem:
    """Johnson et al. Fig. 7: a frictionless point mass on the ground G (normal +y) meets a
    hill H of slope theta (normal ``(-sin theta, cos theta)``)."""
    Jn = np.array([[0.0, 1.0], [-np.sin(THETA), np.cos(THETA)]])
    Jt = np.array([[[1.0, 0.0]], [[np.cos(THETA), np.sin(THETA)]]])
    return ImpactProblem(mass * np.eye(2), Jn, Jt, 0.0)


@pytest.mark.parametrize("speed", [1e-3, 0.1, 3.0])
def test_point_into_a_hill_keeps_only_the_hill(speed: float) -> None:
    """Without the pseudo-impulse: in mode {H} the hill's impulse ``m v sin theta`` gives
    ``v+ = (v, 0) + v sin theta (-sin theta, cos theta) = v cos theta (cos theta, sin theta)``;
    in mode {G, H} (rest) the ground would need ``lambda_G = -m v cot theta < 0``, so G
    leaves at every speed (their Lemma 10)."""
    result = PlasticImpact().resolve(_hill(), np.array([speed, 0.0]))
    assert result.info["mode"] == (1,)
    np.testing.assert_allclose(result.v_plus, speed * np.cos(THETA) * np.array([np.cos(THETA), np.sin(THETA)]), rtol=1e-12)
    assert result.normal_impulse[1] == pytest.approx(2.0 * speed * np.sin(THETA), rel=1e-12)


@pytest.mark.parametrize(("factor", "rests"), [(0.5, True), (0.99, True), (1.01, False), (2.0, False)])
def test_point_into_a_hill_rests_below_g_dt_tan_theta(factor: float, rests: bool) -> None:
    """With the pseudo-impulse (gravity ``(0, -m g)``, ``delta_t = 0.03``), mode {G, H} adds
    ``m g delta_t`` to the ground's impulse: ``-m v cot theta + m g delta_t >= 0`` iff
    ``v <= g delta_t tan theta = 9.81 * 0.03 * tan 30 deg = 0.16991 m/s``; then both contacts
    stay and the point stops.  The mass cancels (their Sec. 4.3)."""
    mass = 2.0
    speed = factor * G * 0.03 * np.tan(THETA)
    law = PlasticImpact(pseudo_impulse_dt=0.03)
    result = law.resolve(_hill(mass).with_external_force(np.array([0.0, -mass * G])), np.array([speed, 0.0]))
    if rests:
        assert result.info["mode"] == (0, 1)
        np.testing.assert_allclose(result.v_plus, 0.0, atol=1e-15)
    else:
        assert result.info["mode"] == (1,)
        np.testing.assert_allclose(result.v_plus, speed * np.cos(THETA) * np.array([np.cos(THETA), np.sin(THETA)]), rtol=1e-12)


# ---------------------------------------------------- against the set-valued model (journal)
def _frictionally_admissible(problem: ImpactProblem, result) -> bool:
    """Coulomb at the outcome: each impulse in the friction cone, and a contact that took a
    normal impulse and still slides has its friction on the cone's edge, opposing the slip."""
    if not problem.in_friction_cone(result.normal_impulse, result.friction_impulse):
        return False
    slip = problem.tangential_velocities(result.v_plus)[:, 0]
    for k in range(problem.contacts):
        sliding = result.normal_impulse[k] > 1e-12 and abs(slip[k]) > 1e-9
        if sliding and not np.isclose(result.friction_impulse[k, 0], -np.sign(slip[k]) * problem.mu[k] * result.normal_impulse[k]):
            return False
    return True


def _routh_set(example: planar.Example, v: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplesDroppedWarning)
        return RouthImpact(example.step, example.max_steps).outcome_set(example.problem, v, 2**13, rng=0)


PLASTIC_LAWS = [PlasticImpact(), PropagativeImpact(restitution=0.0, ignore_friction=True)]


@pytest.mark.parametrize("law", PLASTIC_LAWS, ids=["plastic", "propagative-R0"])
def test_plastic_outcomes_lie_in_the_outcome_set_on_the_journal_rocking_block(law) -> None:
    """The journal's block lands flat, ``v- = (0, -0.4429, 0)``.  Both plastic laws stop both
    corners: Johnson et al. keep {A, B} (each impulse ``m v/2 > 0``, no tangential need), and
    the frictionless projection (11) with ``Jn v+ = 0`` at both corners gives ``v+ = 0``.  Rest
    is the simultaneous Anitescu-Potra outcome, in the set-valued model's set (journal Fig. 9);
    so each lies within 2 % of ``|v-|`` of ``RouthImpact.outcome_set``."""
    example = planar.rocking_block()
    result = law.resolve(example.problem, example.v_minus)
    np.testing.assert_allclose(result.v_plus, 0.0, atol=1e-12)
    assert _frictionally_admissible(example.problem, result)
    outcomes = _routh_set(example, example.v_minus)
    assert np.linalg.norm(outcomes - result.v_plus, axis=1).min() <= 0.02 * np.linalg.norm(example.v_minus)


def test_a_pivot_strike_separates_the_frictionless_law_from_the_set_valued_model() -> None:
    """The journal's block (w = 1, h = 2, mu = 1) pivoting on A as B lands at 0.4 m/s
    (``omega = -0.4``, ``v- = (0.4, -0.2, -0.4)``).  PlasticImpact sticks B: ``omega+ = 0.7
    omega`` (factor as above with w = 1, h = 2), ``v+ = (0.28, 0.14, -0.28)``, needing
    ``|lambda_t/lambda_n| = 0.12/0.34 < mu``; admissible, and in the outcome set (A never
    collides, so Routh's model is B's single frictional impact).  The frictionless
    projection (11) stops only B's normal motion and lets B slide at 0.3 m/s with no friction
    although ``lambda_n > 0``: not Coulomb-admissible for ``mu = 1``, and it differs from
    the set by far more than 2 % (the propagative law ignores friction)."""
    example = planar.rocking_block()
    v = np.array([0.4, -0.2, -0.4])
    outcomes = _routh_set(example, v)
    sticking = PlasticImpact().resolve(example.problem, v)
    np.testing.assert_allclose(sticking.v_plus, [0.28, 0.14, -0.28], atol=1e-12)
    assert _frictionally_admissible(example.problem, sticking)
    assert np.linalg.norm(outcomes - sticking.v_plus, axis=1).min() <= 0.02 * np.linalg.norm(v)
    frictionless = PropagativeImpact(restitution=0.0, ignore_friction=True).resolve(example.problem, v)
    assert _slip_of_b(example.problem, frictionless.v_plus) == pytest.approx(0.3)
    assert not _frictionally_admissible(example.problem, frictionless)
    assert np.linalg.norm(outcomes - frictionless.v_plus, axis=1).min() > 0.2 * np.linalg.norm(v)


def _slip_of_b(problem: ImpactProblem, v: np.ndarray) -> float:
    """Sliding velocity of corner B."""
    return float(problem.tangential_velocities(v)[1, 0])


# ------------------------------------------------------------------------------ bad input
def test_bad_input_gets_a_clear_error() -> None:
    """Negative or non-finite ``pseudo_impulse_dt``; ``delta_t > 0`` without a force; a force
    of the wrong shape; more touching contacts than the enumeration limit."""
    with pytest.raises(ValueError, match="pseudo_impulse_dt"):
        PlasticImpact(pseudo_impulse_dt=-0.1)
    with pytest.raises(ValueError, match="pseudo_impulse_dt"):
        PlasticImpact(pseudo_impulse_dt=float("nan"))
    problem = _hill()
    with pytest.raises(ValueError, match="external_force"):
        PlasticImpact(pseudo_impulse_dt=0.03).resolve(problem, np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match=r"external_force must have shape \(2,\)"):
        problem.with_external_force(np.zeros(3))
    m = MAX_MODE_CONTACTS + 1
    crowded = ImpactProblem(np.eye(2), np.tile([0.0, 1.0], (m, 1)), np.tile([1.0, 0.0], (m, 1, 1)), 0.0)
    with pytest.raises(ValueError, match="MAX_MODE_CONTACTS = 10"):
        PlasticImpact().resolve(crowded, np.array([0.0, -1.0]))
