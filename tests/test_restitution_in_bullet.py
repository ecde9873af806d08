"""Restitution under the hook: Bullet's combined restitution (the product of the two links'
``restitution``, as ``btManifoldResult::calculateCombinedRestitution``) reaches the law."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact import AnitescuPotraImpact, ImpactSimulator, RestitutionIgnoredWarning, RouthImpact, data_path

#: Time step of the bounce tests [s] (see the docstring of the apex test for the error bound).
DT = 1e-3
DROP = 0.5  # height of the sphere's lowest point above the ground [m]


def bounce(client: int, e_sphere: float, e_ground: float, law: object) -> tuple[ImpactSimulator, float]:
    """Drop ``sphere_with_restitution.urdf`` (radius 0.5 m, undamped) from ``DROP`` onto the box
    ground for 1.6 s; returns the simulator and the highest point after the first impact."""
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setTimeStep(DT, physicsClientId=client)
    ground = p.loadURDF(os.path.join(data_path(), "ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    ball = p.loadURDF(os.path.join(pybullet_data.getDataPath(), "sphere_with_restitution.urdf"), [0, 0, DROP + 0.5], physicsClientId=client)
    p.changeDynamics(ball, -1, restitution=e_sphere, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    p.changeDynamics(ground, -1, restitution=e_ground, physicsClientId=client)
    sim = ImpactSimulator(law, client=client, seed=0)
    apex = -np.inf
    for _ in range(int(1.6 / DT)):
        sim.step()
        if sim.events:
            apex = max(apex, p.getBasePositionAndOrientation(ball, physicsClientId=client)[0][2] - 0.5)
    return sim, apex


@pytest.mark.parametrize(("e_sphere", "e_ground"), [(0.3, 1.0), (0.5, 1.0), (0.8, 1.0), (1.0, 0.5)])
def test_a_sphere_bounces_to_e_squared_of_its_drop_height(client: int, e_sphere: float, e_ground: float) -> None:
    """Combined restitution ``e = e_sphere e_ground``.  One contact, no slip: Stronge's energetic
    coefficient equals Newton's, so the first impact gives ``v_z+ = -e v_z-`` exactly (checked
    to 1e-9) and the sphere rises to ``e^2 DROP`` in continuous time.

    Bullet's semi-implicit Euler (``v += g dt; z += v dt``) keeps ``v^2 + 2 g z`` up to a loss of
    exactly ``g^2 dt^2`` per step, i.e. ``g dt^2 / 2`` of height per step: over the fall
    (``sqrt(2 DROP / g)`` = 0.32 s = 320 steps at 1 ms) 1.6 mm, scaled by ``e^2`` at the
    apex, plus ``e`` times that on the rise.  For ``e >= 0.3`` the apex is therefore at most
    ``(0.09 + 0.3) 1.6 mm / (0.09 * 0.5 m)`` = 1.4 % low (less for larger ``e``); sampling the
    apex at 1 ms adds at most ``g dt^2 / 8`` (negligible).  The test allows 2 %."""
    e = e_sphere * e_ground
    sim, apex = bounce(client, e_sphere, e_ground, RouthImpact("auto", 50))
    first = sim.events[0]
    assert first.v_plus[2] == pytest.approx(-e * first.v_minus[2], rel=1e-9)
    assert apex == pytest.approx(e * e * DROP, rel=0.02)


def test_an_inelastic_law_warns_once_and_does_not_bounce(client: int) -> None:
    """Anitescu–Potra has no restitution: the sphere stops at its first impact (``v_z+ = 0``, so
    it never rises again by more than Bullet's contact slop), and a
    :class:`RestitutionIgnoredWarning` names the pair once however many impacts follow."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim, apex = bounce(client, 0.5, 1.0, AnitescuPotraImpact())
    ignored = [w for w in caught if issubclass(w.category, RestitutionIgnoredWarning)]
    assert len(ignored) == 1 and "combined restitution 0.5" in str(ignored[0].message)
    assert sim.events[0].v_plus[2] == pytest.approx(0.0, abs=1e-9)
    assert apex < 1e-3


def test_zero_restitution_builds_the_inelastic_problem(client: int) -> None:
    """With every restitution 0 (the default of a URDF without ``<restitution>``) the law gets
    a problem without restitution, so outcomes are those of the inelastic law."""
    sim, _ = bounce(client, 0.0, 1.0, RouthImpact("auto", 50))
    assert not sim.events[0].problem.elastic
    assert sim.events[0].v_plus[2] == pytest.approx(0.0, abs=1e-9)
