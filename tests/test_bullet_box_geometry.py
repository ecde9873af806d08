"""Sharp box distances (``bullet/box_geometry.py``) against analytic cases and an independent
minimization."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.spatial.transform import Rotation

from bullet_setimpact.bullet.box_geometry import box_separation

IDENTITY = np.eye(3)


def test_parallel_boxes_face_to_face_are_their_gap_apart() -> None:
    """Two unit cubes (half extents 0.5), axis-aligned, centres 1.003 apart along x: their facing
    faces are 1.003 - 0.5 - 0.5 = 0.003 apart, and so are the boxes."""
    half = np.full(3, 0.5)
    assert box_separation(np.zeros(3), IDENTITY, half, np.array([1.003, 0.2, -0.1]), IDENTITY, half) == pytest.approx(0.003, abs=1e-12)


def test_crossed_edges_are_their_offset_apart() -> None:
    """Edge against edge, the case corners alone miss.  Box A (half extents 0.5), turned 45 deg
    about x, has its lowest edge along x at depth ``-0.5 sqrt 2``; box B, turned 45 deg about y
    and placed below, has its highest edge along y.  With B's centre at ``z = -sqrt 2 - d`` the
    two edges cross at right angles ``d`` apart, and every corner is farther: the distance is
    ``d``."""
    half = np.full(3, 0.5)
    d = 0.002
    rotation_a = Rotation.from_euler("x", 45, degrees=True).as_matrix()
    rotation_b = Rotation.from_euler("y", 45, degrees=True).as_matrix()
    centre_b = np.array([0.0, 0.0, -math.sqrt(2.0) - d])
    assert box_separation(np.zeros(3), rotation_a, half, centre_b, rotation_b, half) == pytest.approx(d, abs=1e-12)


def test_overlapping_boxes_give_zero() -> None:
    """Boxes that overlap with no corner inside the other (a long thin bar crossing a cube
    through two opposite faces, and two crossed bars) and boxes with a corner inside give 0."""
    cube, bar = np.full(3, 0.5), np.array([2.0, 0.1, 0.1])
    assert box_separation(np.zeros(3), IDENTITY, cube, np.zeros(3), IDENTITY, bar) == 0.0
    crossed = Rotation.from_euler("z", 90, degrees=True).as_matrix()
    assert box_separation(np.zeros(3), IDENTITY, bar, np.zeros(3), crossed, bar) == 0.0
    assert box_separation(np.zeros(3), IDENTITY, cube, np.array([0.9, 0.9, 0.9]), IDENTITY, cube) == 0.0


def _minimized_distance(centre_a: np.ndarray, rotation_a: np.ndarray, half_a: np.ndarray, centre_b, rotation_b, half_b) -> float:
    """The distance of two boxes as a bound-constrained least-squares problem over a point of
    each (box coordinates ``u``, ``v``): ``min |c_a + R_a u - c_b - R_b v|``, solved by L-BFGS-B
    from several starts (convex, so every start should agree)."""

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        offset = centre_a + rotation_a @ x[:3] - centre_b - rotation_b @ x[3:]
        return float(offset @ offset), np.concatenate([2.0 * rotation_a.T @ offset, -2.0 * rotation_b.T @ offset])

    bounds = [(-h, h) for h in half_a] + [(-h, h) for h in half_b]
    best = math.inf
    for start in (np.zeros(6), np.concatenate([half_a, -half_b]) * 0.5, np.concatenate([-half_a, half_b]) * 0.5):
        result = minimize(
            objective, start, jac=True, bounds=bounds, method="L-BFGS-B", options={"ftol": 1e-30, "gtol": 1e-14, "maxiter": 10000}
        )
        best = min(best, float(result.fun))
    return math.sqrt(max(best, 0.0))


def test_random_separated_boxes_match_an_independent_minimization() -> None:
    """200 random pairs of boxes (half extents 0.02-0.3 m, random orientations, centres placed so
    the pair is 0-5 cm apart or overlapping): ``box_separation`` equals the minimized distance
    within 1e-7 m where that is positive, and is 0 where the minimization finds them touching."""
    rng = np.random.default_rng(1)
    for trial in range(200):
        half_a, half_b = rng.uniform(0.02, 0.3, 3), rng.uniform(0.02, 0.3, 3)
        rotation_a, rotation_b = (
            Rotation.random(random_state=rng.integers(2**31)).as_matrix(),
            Rotation.random(random_state=rng.integers(2**31)).as_matrix(),
        )
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        centre_b = direction * rng.uniform(0.5, 1.2) * (np.linalg.norm(half_a) + np.linalg.norm(half_b))
        exact = box_separation(np.zeros(3), rotation_a, half_a, centre_b, rotation_b, half_b)
        reference = _minimized_distance(np.zeros(3), rotation_a, half_a, centre_b, rotation_b, half_b)
        if reference > 1e-6:
            assert exact == pytest.approx(reference, abs=1e-7), f"trial {trial}"
        else:
            assert exact <= 1e-6, f"trial {trial}: the boxes touch, box_separation says {exact}"
