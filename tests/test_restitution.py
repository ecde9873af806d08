"""Stronge-type energetic restitution in the set-valued Routh law (laws/restitution.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bullet_setimpact import ImpactProblem, RouthImpact, planar
from bullet_setimpact.errors import UnfinishedImpactWarning
from bullet_setimpact.laws.propagative import PropagativeImpact
from bullet_setimpact.laws.restitution import elastic_step_solver, finished, integrate_elastic

from .test_diagnostics import billiards


@pytest.mark.parametrize("e", [0.0, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_single_frictionless_contact_reverses_e_times_the_normal_velocity(e: float, seed: int) -> None:
    """One frictionless contact: compression absorbs ``W_c = v_n^2 / (2 a)`` (``a = Jn M^-1 Jn^T``,
    the normal velocity falls linearly in the impulse to 0); restitution returns ``e^2 W_c``, so
    ``v_n+^2 / (2 a) = e^2 W_c`` and ``v_n+ = -e v_n-`` (Stronge's and Newton's coefficients agree
    for one frictionless contact).  The tangential velocity is untouched (``Jt M^-1 Jn^T = 0``
    here: M diagonal, orthogonal rows)."""
    problem = ImpactProblem(np.diag([2.0, 3.0]), [[0.0, 1.0]], [[[1.0, 0.0]]], 0.0, restitution=e)
    v_minus = np.array([0.3, -1.2])
    law = RouthImpact("auto", 50)
    outcome = law.resolve(problem, v_minus, rng=seed)
    assert outcome.terminated
    np.testing.assert_allclose(outcome.v_plus, [0.3, 1.2 * e], atol=1e-12)
    samples = law.outcome_set(problem, v_minus, 64, rng=seed)
    np.testing.assert_allclose(samples, np.tile([0.3, 1.2 * e], (64, 1)), atol=1e-12)


def _rod(theta: float, mu: float, e: float) -> ImpactProblem:
    """A uniform rod (mass 1, length 1, inertia 1/12) inclined at ``theta`` to a rough half-space,
    touching it with its lower end ``r = -(cos theta, sin theta) / 2`` from the centre of mass;
    ``v = (v_x, v_y, omega)``; the contact point moves at ``(v_x - omega r_y, v_y + omega r_x)``."""
    r = -0.5 * np.array([np.cos(theta), np.sin(theta)])
    return ImpactProblem(np.diag([1.0, 1.0, 1.0 / 12.0]), [[0.0, 1.0, r[0]]], [[[1.0, 0.0, -r[1]]]], mu, restitution=e)


def _rod_by_impulse_ode(problem: ImpactProblem, v_minus: np.ndarray, e: float, dp: float = 1e-5) -> np.ndarray:
    """Stronge's single-contact impact integrated in the normal impulse ``p`` (written here, not
    with the package's solver): ``dv/dp = M^-1 (Jn + f Jt)`` with ``f = -mu sign(v_t)`` while
    slipping; when ``v_t`` reaches 0 the contact sticks (``f = -(Jt M^-1 Jn)/(Jt M^-1 Jt)``) if
    ``|f| <= mu``, else slip reverses.  Compression ends at ``v_n = 0``; restitution runs until the
    normal work ``int v_n dp`` of the restitution phase is ``e^2`` times the compression phase's."""
    Minv = np.linalg.inv(problem.M)
    jn, jt, mu = problem.Jn[0], problem.Jt[0, 0], problem.mu[0]
    stick = -(jt @ Minv @ jn) / (jt @ Minv @ jt)
    v = v_minus.copy()
    compression = restitution = 0.0
    while True:
        vt = jt @ v
        sliding = abs(vt) >= 1e-9
        f = -mu * np.sign(vt) if sliding else (stick if abs(stick) <= mu else mu * np.sign(stick))
        step = Minv @ (jn + f * jt) * dp
        if sliding and np.sign(jt @ (v + step)) * np.sign(vt) < 0:  # land exactly on v_t = 0
            step *= -vt / (jt @ step)
        vn0 = jn @ v
        v = v + step
        vn1 = jn @ v
        work = (vn0 + vn1) / 2 * (jn @ step) / (jn @ Minv @ (jn + f * jt))
        if vn0 < 0:
            compression += work
        else:
            restitution += work
            if restitution >= -(e**2) * compression:
                return v


@pytest.mark.parametrize("e", [0.3, 0.7])
def test_slender_rod_with_slip_reversal_matches_the_impulse_ode(e: float) -> None:
    """Stronge's slender rod striking a rough half-space at 45 degrees while its end slides
    slowly forward: friction stops the slip during compression and, since sticking needs
    ``|f| = |Jt M^-1 Jn / Jt M^-1 Jt| = 0.6 > mu = 0.5``, slip reverses.  The Routh law with one
    contact (no branching; fine fixed steps) must reproduce the fine impulse-ODE solution
    written in the test (to 1% of ``|v-|``, the step discretization), lose energy, and the ODE
    must indeed reverse slip (checked here, so the case is the one named)."""
    theta, mu = np.pi / 4, 0.5
    problem = _rod(theta, mu, e)
    v_minus = np.array([0.1, -1.0, 0.0])
    expected = _rod_by_impulse_ode(problem, v_minus, e)
    assert (problem.Jt[0, 0] @ expected) < 0.0 < (problem.Jt[0, 0] @ v_minus)  # slip reversed
    outcome = RouthImpact(0.002, 5000).resolve(problem, v_minus, rng=0)
    assert outcome.terminated
    np.testing.assert_allclose(outcome.v_plus, expected, atol=0.01 * np.linalg.norm(v_minus))
    assert problem.kinetic_energy(outcome.v_plus) < problem.kinetic_energy(v_minus)


@pytest.mark.parametrize("name", ["rocking_block", "box_wall", "compass_gait"])
def test_zero_restitution_is_the_inelastic_law_sample_by_sample(name: str) -> None:
    """``restitution = 0`` given explicitly (per contact) leaves the law on the inelastic
    Algorithm 1, so seeded outcome sets and resolves equal the default problem's bit for bit."""
    example = planar.example(name)
    p = example.problem
    zero = ImpactProblem(p.M, p.Jn, p.Jt, p.mu, restitution=np.zeros(p.contacts))
    law = RouthImpact("auto", 50)
    np.testing.assert_array_equal(law.outcome_set(zero, example.v_minus, 300, rng=4), law.outcome_set(p, example.v_minus, 300, rng=4))
    np.testing.assert_array_equal(law.resolve(zero, example.v_minus, rng=9).path, law.resolve(p, example.v_minus, rng=9).path)


@settings(max_examples=60, deadline=None)
@given(
    e=st.sampled_from([0.3, 0.7, 1.0]),
    step=st.floats(1e-9, 1e6),
    max_steps=st.integers(1, 60),
    mass=st.floats(0.01, 100.0),
    speed=st.floats(0.01, 100.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_one_contact_always_finishes_at_minus_e(e: float, step: float, max_steps: int, mass: float, speed: float, seed: int) -> None:
    """One frictionless contact (mass ``mass``, approaching at ``speed``) rebounds at ``v+ = -e v-``
    (Stronge's coefficient, equal to Newton's for one frictionless contact: compression absorbs
    ``m v-^2 / 2``, restitution returns ``e^2`` of it) to 1e-9 relative, whatever ``h`` and
    ``N``: steps too small to finish within ``N`` are continued and released, never left
    unfinished (any :class:`UnfinishedImpactWarning` fails the test)."""
    problem = ImpactProblem(np.array([[mass]]), np.ones((1, 1)), np.zeros((1, 1, 1)), 0.0, restitution=e)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnfinishedImpactWarning)
        result = RouthImpact(step, max_steps).resolve(problem, np.array([-speed]), rng=seed)
    assert result.terminated
    assert result.v_plus[0] == pytest.approx(e * speed, rel=1e-9, abs=1e-12)


def test_a_slow_elastic_impact_is_continued_to_its_end() -> None:
    """``RouthImpact(0.05, 200)`` on one frictionless unit-mass contact, ``e = 1``, ``v- = -1.2``:
    compression and restitution each need ``1.2`` N s, about 48 steps of mean cap 0.025 each
    way, so the 200 steps may or may not do; with a mass of 3 (3.6 N s each way, about 288 steps
    in all) they cannot, and the continuation and release steps finish at ``+1.2`` exactly."""
    problem = ImpactProblem(np.array([[3.0]]), np.ones((1, 1)), np.zeros((1, 1, 1)), 0.0, restitution=1.0)
    result = RouthImpact(0.05, 200).resolve(problem, np.array([-1.2]), rng=0)
    assert result.terminated and result.info["final_steps"] > 0
    assert result.v_plus[0] == pytest.approx(1.2, rel=1e-12)


def test_an_inelastic_contact_beside_a_restituting_one_follows_eq_75() -> None:
    """Wall | B | mass 2 | A | mass 1 (unit masses, frictionless, ``q = (x1, x2)``, ``Jn_A = (1, -1)``,
    ``Jn_B = (0, 1)``), ``e_A = 0.5``, ``e_B = 0``, ``v- = (-1, 0.2)``: A closes at 1.2 while
    mass 2 leaves the wall at 0.2.  Caps (0.3, 1), then (1, 1) twice.

    1. A is cap-limited: ``lambda_A = 0.3`` takes mass 2 to ``0.2 - 0.3 < 0``; B, inelastic, is
       complementary as in eq. (75) and stops it at 0: ``lambda_B = 0.1``, ``v = (-0.7, 0)``.
       A's work ``0.3 (-1.2 - 0.7) / 2 = -0.285``.
    2. Both complementary with cap 1: ``lambda_A = lambda_B = 0.7`` stop everything, ``v = (0, 0)``;
       A's work ``0.7 (-0.7 + 0) / 2 = -0.245``.  A stored ``e_A^2 (0.285 + 0.245) = 0.1325``.
    3. A driven at cap 1, B complementary holds mass 2 (``lambda_B = lambda_A``): A's work
       ``d^2 / 2`` reaches 0.1325 at ``d = 0.5 sqrt(1.06) = 0.51478``: ``v+ = (0.51478, 0)``.

    Had B been switched off while separating (cap 0 until it compresses), step 1 would leave
    mass 2 at -0.1 and A would store ``e_A^2 0.48``: ``v1+ = 0.5 sqrt(0.96) = 0.48990``."""
    problem = ImpactProblem(np.eye(2), np.array([[1.0, -1.0], [0.0, 1.0]]), np.zeros((2, 1, 2)), 0.0, restitution=[0.5, 0.0])
    caps = np.array([[[0.3, 1.0], [1.0, 1.0], [1.0, 1.0]]])
    solver = elastic_step_solver(problem, batched=False)
    two = integrate_elastic(problem, solver, np.array([[-1.0, 0.2]]), caps[:, :2], np.random.default_rng(0), record_path=True)
    np.testing.assert_allclose(two.path[1][0], [-0.7, 0.0], atol=1e-12)
    np.testing.assert_allclose(two.path[2][0], [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(two.energy_left[0], [0.25 * 0.53, 0.0], rtol=1e-12)
    run = integrate_elastic(problem, solver, np.array([[-1.0, 0.2]]), caps, np.random.default_rng(0))
    assert finished(problem, run)[0]
    np.testing.assert_allclose(run.velocity[0], [0.5 * np.sqrt(1.06), 0.0], atol=1e-12)
    np.testing.assert_allclose(run.impulse[0, :2], [1.0 + 0.5 * np.sqrt(1.06), 0.8 + 0.5 * np.sqrt(1.06)], atol=1e-12)


def _cradle() -> ImpactProblem:
    """Four unit balls on a line, frictionless, ``e = 1``; contact ``i`` between balls ``i`` and
    ``i + 1`` with gap rate ``x'_{i+1} - x'_i``."""
    Jn = np.zeros((3, 4))
    for i in range(3):
        Jn[i, i], Jn[i, i + 1] = -1.0, 1.0
    return ImpactProblem(np.eye(4), Jn, np.zeros((3, 1, 4)), 0.0, restitution=1.0)


def _sequential_caps(sequence: list[int], contacts: int, cap: float) -> np.ndarray:
    """Caps of a cap sequence in which one contact at a time compresses (one step) and
    restitutes (one step) while the others get 0: shape ``(1, 2 len(sequence), contacts)``."""
    caps = np.zeros((1, 2 * len(sequence), contacts))
    for k, contact in enumerate(sequence):
        caps[0, 2 * k : 2 * k + 2, contact] = cap
    return caps


def test_newtons_cradle_transfer_is_in_the_set_and_every_sample_conserves_energy() -> None:
    """Frictionless, equal masses, ``e = 1``: the classical transfer ``[1, 0, 0, 0] -> [0, 0, 0, 1]``
    is the outcome of the cap sequence ``0, 1, 2`` (one contact at a time: each compression stops
    that pair's approach and its restitution returns all of it, an exchange of velocities), a
    member of the set by definition (caps in ``h U[0, 1]^m`` with their limits).  Every sampled
    outcome conserves momentum (``sum v = 1``) and, with ``e = 1`` and no friction, kinetic energy
    ``1/2`` (``dKE = sum dW`` each step and every stored joule is returned)."""
    problem = _cradle()
    v_minus = np.array([1.0, 0.0, 0.0, 0.0])
    caps = _sequential_caps([0, 1, 2], 3, 10.0)
    run = integrate_elastic(problem, elastic_step_solver(problem, batched=False), v_minus[None], caps, np.random.default_rng(0))
    assert finished(problem, run)[0]
    np.testing.assert_allclose(run.velocity[0], [0.0, 0.0, 0.0, 1.0], atol=1e-12)
    samples = RouthImpact("auto", 400).outcome_set(problem, v_minus, 500, rng=1)
    assert len(samples) == 500
    np.testing.assert_allclose(problem.kinetic_energy(samples), 0.5, atol=1e-9)
    np.testing.assert_allclose(samples.sum(axis=1), 1.0, atol=1e-9)
    assert not problem.colliding(samples).any()


@pytest.mark.parametrize("order", ["argmin", "argmax"])
@pytest.mark.parametrize("theta_deg", [40.0, 60.0, 100.0])
def test_billiards_propagative_orderings_lie_in_the_set(order: str, theta_deg: float) -> None:
    """Seghete-Murphey billiards (their Fig. 4, ball pair a-b touching) with ``e = 1``: each
    propagative reflection ``Gamma(u)`` is one frictionless contact's elastic impact, i.e. that
    contact compressing and restituting fully while the others take no impulse, so the Routh law's
    cap sequence following the reflection sequence (others' caps 0) reaches the propagative
    outcome: it lies in the set."""
    base, v_minus = billiards(theta_deg, third_contact=True)
    problem = ImpactProblem(base.M, base.Jn, base.Jt, 0.0, restitution=1.0)
    reference = PropagativeImpact(1.0, order).resolve(base, v_minus, rng=0)
    sequence = list(reference.info["sequence"])
    caps = _sequential_caps(sequence, problem.contacts, 10.0)
    run = integrate_elastic(problem, elastic_step_solver(problem, batched=False), v_minus[None], caps, np.random.default_rng(0))
    assert finished(problem, run)[0]
    np.testing.assert_allclose(run.velocity[0], reference.v_plus, atol=1e-9)


def test_restituting_samples_never_gain_energy_on_the_frictional_examples() -> None:
    """With friction and ``e <= 1`` the contacts return at most what they stored (``Q >= 0``)
    and friction dissipates (maximal dissipation, eq. 75), so no sample gains kinetic energy."""
    example = planar.example("rocking_block")
    p = example.problem
    for e in (0.5, 1.0):
        problem = ImpactProblem(p.M, p.Jn, p.Jt, p.mu, restitution=e)
        samples = RouthImpact("auto", 200).outcome_set(problem, example.v_minus, 500, rng=2)
        assert len(samples) > 0
        assert np.max(problem.kinetic_energy(samples)) <= problem.kinetic_energy(example.v_minus) * (1 + 1e-12)


@pytest.mark.parametrize(
    ("restitution", "message"),
    [
        (-0.1, "restitution must lie in"),
        (1.5, "restitution must lie in"),
        ([0.1, 0.2], "restitution must be a scalar or have shape"),
        (np.nan, "restitution must be finite"),
    ],
)
def test_bad_restitution_gets_a_clear_error(restitution: object, message: str) -> None:
    """One contact: restitution outside [0, 1], of the wrong shape, or NaN is rejected by name."""
    with pytest.raises(ValueError, match=message):
        ImpactProblem(np.eye(2), [[0.0, 1.0]], [[[1.0, 0.0]]], 0.0, restitution=restitution)  # type: ignore[arg-type]


def test_restitution_survives_subset_and_friction_direction_override() -> None:
    """Derived problems keep each contact's coefficient."""
    example = planar.example("rocking_block")
    p = example.problem
    problem = ImpactProblem(p.M, p.Jn, p.Jt, p.mu, restitution=[0.2, 0.6])
    assert problem.subset([1]).restitution.tolist() == [0.6]
    assert problem.with_external_force(None).restitution.tolist() == [0.2, 0.6]
