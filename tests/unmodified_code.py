"""User code written for plain PyBullet: it never imports the package under test.

``bullet`` is the ``pybullet`` module itself (module-level calls, client 0, no
``physicsClientId`` anywhere) or a ``pybullet_utils.bullet_client.BulletClient``; the same
functions serve both, as PyBullet's own examples are written.  tests/test_hooks.py runs them
inside ``hook(...)``.
"""

from __future__ import annotations

from typing import Any

import pybullet
import pybullet_data


def make_world(bullet: Any, tilt: float) -> int:
    """A 10 m box ground (top face z = 0) and pybullet_data's R2D2 0.6 m up, turned by ``tilt``
    about x and y; returns the robot's body id."""
    ground = bullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=[5.0, 5.0, 0.5])
    bullet.createMultiBody(0.0, ground, basePosition=[0.0, 0.0, -0.5])
    bullet.setGravity(0.0, 0.0, -9.81)
    orientation = bullet.getQuaternionFromEuler([tilt, tilt, 0.0])
    return bullet.loadURDF(f"{pybullet_data.getDataPath()}/r2d2.urdf", [0.0, 0.0, 0.6], orientation)


def run(bullet: Any, steps: int) -> None:
    """The user's loop: ``steps`` calls of ``stepSimulation()``."""
    for _ in range(steps):
        bullet.stepSimulation()


def state(bullet: Any, body: int) -> list[float]:
    """Base position, orientation and velocities of ``body``, flattened."""
    position, orientation = bullet.getBasePositionAndOrientation(body)
    linear, angular = bullet.getBaseVelocity(body)
    return [*position, *orientation, *linear, *angular]
