"""Bullet integrates joint damping explicitly: which bodies it makes unstable at the world's step.

PyBullet applies a joint's damping ``c`` (URDF ``<dynamics damping="..."/>``) as the torque
``-c qdot`` before each step (``PhysicsServerCommandProcessor::applyJointDamping``), and Bullet's
semi-implicit Euler integrates that torque explicitly: over one step ``dt`` (``fixedTimeStep``),
damping alone maps the velocity to ``(I - dt M^-1 C) v`` with ``C`` the diagonal of the joints'
damping (for the kuka below, to 2e-9 of Bullet's step, ``tests/test_bullet_damping.py``).  Each
generalized eigenvalue ``lambda`` of ``C x = lambda M x`` (real and >= 0: ``C`` is positive
semidefinite, ``M`` positive definite) scales its mode ``x`` by ``1 - dt lambda`` per step, so
for ``dt lambda > 2`` the mode grows, flipping sign every step.

``pybullet_data``'s kuka iiwa has 0.5 N m s on a last link of 6e-4 kg m^2: at 240 Hz that mode
grows 2.6x per step, and any velocity of its last joint beyond what its motor absorbs in a step
reaches Bullet's clamp of 100 rad/s within ten steps: with its motors off, its own fall does it;
with a little joint friction, Bullet's contact response does not, but a rigid-body impact law,
which hands the wrist the velocity it keeps when the arm is stopped, does.

PyBullet reports a joint's damping as the URDF set it (``getJointInfo``): a later
``changeDynamics(jointDamping=...)`` changes the physics but not that report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pybullet as p
import scipy.linalg

from .bodies import BodyModel
from .model import WorldModel

_T = TypeVar("_T")


@dataclass(frozen=True)
class DampingInstability:
    """A body whose joint damping grows a velocity mode at the world's time step."""

    body: int
    body_name: str
    #: The joint holding the largest share of the growing mode's damping (``c_i x_i^2``).
    joint: str
    #: That joint's damping as PyBullet reports it [N m s/rad, or N s/m for a prismatic joint].
    damping: float
    #: The step [s] the check used: that of one ``stepSimulation``, before which PyBullet
    #: applies the damping (``fixedTimeStep``: with ``numSubSteps`` too, one ``stepSimulation``
    #: scales the mode by ``1 - fixedTimeStep * lambda``, measured; the simulator's, which steps
    #: Bullet one substep at a time, ``fixedTimeStep / numSubSteps``).
    time_step: float
    #: ``|1 - dt lambda_max|``: the factor by which the mode grows every step (> 1).
    growth: float
    #: ``2 / lambda``: the largest stable step [s] with this damping.
    stable_time_step: float

    @property
    def stable_scale(self) -> float:
        """The factor (< 1) every joint damping of the body must be scaled below to be stable at this step."""
        return self.stable_time_step / self.time_step

    def message(self) -> str:
        """The warning's text: the body, the leading joint, the growth, and the two remedies (their
        bounds rounded down, so the printed values are stable)."""
        scale = _rounded_down(self.stable_scale)
        return (
            f"body {self.body} ({self.body_name!r}): Bullet integrates joint damping explicitly (the torque -c qdot), stable only "
            f"while dt * lambda_max(M^-1 C) < 2; with the damping its URDF sets ({self.damping:g} on joint {self.joint!r}, which "
            f"leads the fastest mode) a velocity of that mode grows {self.growth:.3f}x per step of {self.time_step:.4g} s, flipping "
            "sign, up to Bullet's clamp of 100 rad/s, once anything moves it faster than its motor absorbs in a step. Scale the "
            f"body's joint damping by {scale:.3g} or less ({_rounded_down(scale / 2.0):.3g} stops that mode in one step; "
            f"changeDynamics(body, joint, jointDamping=...)) or step {_rounded_down(self.stable_time_step):.3g} s or less "
            "(fixedTimeStep / numSubSteps: the simulator steps Bullet one substep at a time, each after the torque). "
            "PyBullet reports the URDF's damping "
            "even after changeDynamics: if you lowered it already, filter this warning"
        )


def _rounded_down(value: float, digits: int = 3) -> float:
    """``value > 0`` rounded down to ``digits`` significant digits (a bound printed from it holds)."""
    unit = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return math.floor(value / unit) * unit


def damping_growth(mass_matrix: np.ndarray, damping: np.ndarray, time_step: float) -> tuple[float, float, np.ndarray]:
    """``(growth, lambda_max, mode)`` of explicit damping: the largest generalized eigenvalue of
    ``diag(damping) x = lambda M x``, its ``M``-normalized mode, and ``|1 - dt lambda_max|``, which
    exceeds 1 exactly when the damping is unstable (the eigenvalues of ``I - dt M^-1 C`` are
    ``1 - dt lambda`` for ``lambda`` from ``lambda_min >= 0`` to ``lambda_max``)."""
    eigenvalues, modes = scipy.linalg.eigh(np.diag(damping), mass_matrix)
    largest = max(float(eigenvalues[-1]), 0.0)
    return abs(1.0 - time_step * largest), largest, modes[:, -1]


def unstable_damping(model: WorldModel, time_step: float | None = None) -> list[DampingInstability]:
    """The dynamic bodies of ``model`` whose joint damping (as ``getJointInfo`` reports it) grows
    a mode at the current configuration, stepped by ``stepSimulation`` at ``time_step`` (default:
    the client's ``fixedTimeStep``; see the module docstring)."""
    client = model.client
    damped: dict[int, np.ndarray] = {}
    for candidate in model.bodies:
        joint_damping = [float(p.getJointInfo(candidate.body, joint, physicsClientId=client)[6]) for joint in candidate.joints]
        if any(value > 0.0 for value in joint_damping):
            damped[candidate.body] = np.array(_per_velocity_entry(candidate, joint_damping, 0.0))
    if not damped:
        return []
    restricted = model.restrict(damped)
    mass_matrix = restricted.configuration().mass_matrix()
    if time_step is None:
        time_step = float(p.getPhysicsEngineParameters(physicsClientId=client)["fixedTimeStep"])
    found = []
    for body, damping in damped.items():
        block = restricted.block(body)
        growth, largest, mode = damping_growth(mass_matrix[block, block], damping, time_step)
        if growth <= 1.0:
            continue
        model_body = restricted.body(body)
        leading = int(np.argmax(damping * mode**2))  # a base entry has no damping: never the leader
        found.append(
            DampingInstability(
                body=body,
                body_name=model_body.name,
                joint=_per_velocity_entry(model_body, model_body.joint_names, "")[leading],
                damping=float(damping[leading]),
                time_step=time_step,
                growth=growth,
                stable_time_step=2.0 / largest,
            )
        )
    return found


def _per_velocity_entry(body: BodyModel, per_joint: Sequence[_T], base: _T) -> list[_T]:
    """``per_joint`` (one value per movable joint) repeated over each joint's velocity entries,
    after ``base`` for each of a floating base's 6 (the layout of :mod:`~.model`)."""
    dofs = body.joint_dofs or (1,) * len(body.joints)
    return [base] * (6 if body.floating else 0) + [value for value, count in zip(per_joint, dofs, strict=True) for _ in range(count)]
