"""ImpactProblem: validation, friction directions and the LCPs of journal eqs. (31) and (75)."""

from __future__ import annotations

import numpy as np
import pytest

from bullet_setimpact import ImpactProblem
from bullet_setimpact.core.problem import friction_basis


def _planar_point_mass() -> ImpactProblem:
    """A unit point mass in the plane touching a floor: ``Jn = [0, 1]``, ``Jt = [1, 0]``."""
    return ImpactProblem(np.eye(2), np.array([[0.0, 1.0]]), np.array([[[1.0, 0.0]]]), 0.5)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"M": np.array([[1.0, 0.5], [0.0, 1.0]])}, "M must be symmetric"),
        ({"M": np.array([[1.0, 0.0], [0.0, -1.0]])}, "M must be positive definite"),
        ({"M": np.array([[1.0, np.nan], [np.nan, 1.0]])}, "M must be finite"),
        ({"M": np.eye(3)}, r"Jn has 2 columns but M is 3 x 3: both must have one column per generalized velocity"),
        ({"Jn": np.zeros((0, 2)), "Jt": np.zeros((0, 1, 2))}, "m = 0"),
        ({"Jn": np.array([[0.0, np.inf]])}, "Jn must be finite"),
        ({"Jt": np.zeros((1, 3, 2))}, "Jt must have shape"),
        ({"Jt": np.zeros((2, 1, 2))}, "Jt must have shape"),
        ({"Jt": np.zeros((1, 2))}, "Jt must be a 3-D array"),
        ({"mu": -0.1}, "mu must be >= 0"),
        ({"mu": np.array([0.1, 0.2])}, "mu must be a scalar or have shape"),
        ({"mu": np.nan}, "mu must be finite"),
    ],
)
def test_validation_names_the_argument(kwargs: dict, argument: str) -> None:
    """Each bad input raises ValueError whose message names the argument and the expectation."""
    base = {"M": np.eye(2), "Jn": np.array([[0.0, 1.0]]), "Jt": np.array([[[1.0, 0.0]]]), "mu": 0.5}
    base.update(kwargs)
    with pytest.raises(ValueError, match=argument):
        ImpactProblem(**base)


def test_friction_directions_validation() -> None:
    with pytest.raises(ValueError, match="friction_directions must be 2"):
        friction_basis(1, 4)
    with pytest.raises(ValueError, match="even integer >= 4"):
        friction_basis(2, 5)


def test_spatial_friction_directions_are_unit_and_paired() -> None:
    """The default spatial cone uses 8 unit directions every 45 degrees, in +/- pairs."""
    D = friction_basis(2)
    assert D.shape == (8, 2)
    np.testing.assert_allclose(np.linalg.norm(D, axis=1), 1.0)
    np.testing.assert_allclose(D[:4], -D[4:], atol=1e-15)


def test_step_lcp_blocks_follow_eq_75() -> None:
    """W of eq. (75b) (transposes restored) for the planar point mass, mu = 0.5, k = 2.

    ``Jbar = [Jn; Jt; -Jt] = [[0,1],[1,0],[-1,0]]``, ``M = I`` so ``Jbar Jbar^T`` is
    ``[[1,0,0],[0,1,-1],[0,-1,1]]``; ``E = [1; 1]``; the friction-cone row ``[mu, -1, -1]``
    is divided by ``max(1, mu) = 1``.  ``z = [beta, lambda_n, lambda_D+, lambda_D-, gamma]``.
    """
    W = _planar_point_mass().step_matrix
    expected = np.array(
        [
            [0, -1, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [0, 0, 1, -1, 1],
            [0, 0, -1, 1, 1],
            [0, 0.5, -1, -1, 0],
        ],
        dtype=float,
    )
    np.testing.assert_array_equal(W, expected)
    np.testing.assert_array_equal(_planar_point_mass().anitescu_potra_matrix, expected[1:, 1:])


def test_large_mu_friction_row_is_rescaled() -> None:
    """With mu = 1e5 the cone row ``mu lambda_n - sum lambda_D >= 0`` is divided by mu (same LCP)."""
    problem = ImpactProblem(np.eye(2), np.array([[0.0, 1.0]]), np.array([[[1.0, 0.0]]]), 1e5)
    np.testing.assert_allclose(problem.anitescu_potra_matrix[-1], [1.0, -1e-5, -1e-5, 0.0])


def test_helpers() -> None:
    """Energy ``0.5 v^T M v``, normal/tangential velocities and the colliding test (eq. 28)."""
    problem = _planar_point_mass()
    v = np.array([0.3, -0.4])
    assert problem.kinetic_energy(v) == pytest.approx(0.125)
    np.testing.assert_allclose(problem.normal_velocities(v), [-0.4])
    np.testing.assert_allclose(problem.tangential_velocities(v), [[0.3]])
    assert problem.colliding(v)
    assert not problem.colliding(np.array([0.3, -1e-9]))
    np.testing.assert_allclose(problem.kinetic_energy(np.array([v, 2 * v])), [0.125, 0.5])


def test_friction_cone_membership() -> None:
    """Planar: ``|lambda_t| <= mu lambda_n``.  Spatial k = 4: the square with vertices ``mu lambda_n d_j``,
    whose edge midpoints sit at ``mu lambda_n cos(45 deg)`` along the diagonals."""
    planar = _planar_point_mass()
    assert planar.in_friction_cone(np.array([1.0]), np.array([[0.5]]))
    assert not planar.in_friction_cone(np.array([1.0]), np.array([[0.51]]))
    assert not planar.in_friction_cone(np.array([-0.1]), np.array([[0.0]]))
    spatial = ImpactProblem(np.eye(3), np.array([[0.0, 0.0, 1.0]]), np.array([[[1.0, 0, 0], [0, 1.0, 0]]]), 1.0, 4)
    assert spatial.in_friction_cone(np.array([1.0]), np.array([[1.0, 0.0]]))
    assert spatial.in_friction_cone(np.array([1.0]), np.array([[0.5, 0.5]]))
    assert not spatial.in_friction_cone(np.array([1.0]), np.array([[0.51, 0.51]]))


def test_velocity_validation() -> None:
    problem = _planar_point_mass()
    with pytest.raises(ValueError, match=r"v_minus must have shape \(2,\)"):
        problem.validate_velocity(np.zeros(3))
    with pytest.raises(ValueError, match="v_minus must be finite"):
        problem.validate_velocity(np.array([np.nan, 0.0]))
