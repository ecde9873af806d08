"""Cheap snapshots of a PyBullet world's positions and velocities, to roll a step back.

``p.saveState`` serializes the whole world, which costs several Bullet steps: too slow to
take before every step.  A :class:`Snapshot` reads only base poses, base velocities and
joint states (a few calls per body).  It restores them with the ``reset*`` functions.

It does not restore forces applied with ``applyExternalForce`` (Bullet clears them after
each step).  It does not restore Bullet's contact warm-starting cache either.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import NamedTuple

import pybullet as p

from .frames import rotation_angle
from .inventory import reset_joint_states


class BodyState(NamedTuple):
    """One body's state, kept as the tuples PyBullet returned (compared as they are)."""

    body: int
    joints: tuple[int, ...]
    pose: tuple[tuple[float, ...], tuple[float, ...]]  # (position, orientation)
    velocity: tuple[tuple[float, ...], tuple[float, ...]]  # (linear, angular)
    #: ``getJointStatesMultiDof`` rows ``((q...), (qdot...), reaction, (torque...))``, or for a body
    #: of single-DoF joints ``getJointStates`` rows ``(q, qdot, reaction, torque)``
    joint_states: tuple[tuple, ...]
    single_dof: bool = False

    @property
    def joint_positions(self) -> tuple[tuple[float, ...], ...]:
        return self._joint_field(0)

    @property
    def joint_velocities(self) -> tuple[tuple[float, ...], ...]:
        return self._joint_field(1)

    @property
    def joint_torques(self) -> tuple[tuple[float, ...], ...]:
        """The torque each joint's motor applied in the last Bullet step (``getJointStates``'
        fourth field; zero for a motor switched off, and under ``TORQUE_CONTROL``)."""
        return self._joint_field(3)

    def joint_position(self, column: int) -> tuple[float, ...]:
        """The position of the joint in column ``column`` of :attr:`joints`, as ``getJointStatesMultiDof`` gives it."""
        row = self.joint_states[column]
        return (row[0],) if self.single_dof else row[0]

    def _joint_field(self, index: int) -> tuple[tuple[float, ...], ...]:
        """Field ``index`` of every joint row, as ``getJointStatesMultiDof`` gives it (a tuple per joint)."""
        if self.single_dof:
            return tuple((row[index],) for row in self.joint_states)
        return tuple(row[index] for row in self.joint_states)

    def finite(self) -> bool:
        """Whether every position and velocity is finite.  A NaN or inf makes their sum
        non-finite; only then (or on overflow) is each value looked at."""
        pose, velocity = self.pose, self.velocity
        total = sum(pose[0]) + sum(pose[1]) + sum(velocity[0]) + sum(velocity[1])
        if self.single_dof:
            total += sum(row[0] + row[1] for row in self.joint_states)
        else:
            total += sum(sum(row[0]) + sum(row[1]) for row in self.joint_states)
        if math.isfinite(total):
            return True
        values = [*pose[0], *pose[1], *velocity[0], *velocity[1]]
        values += [x for group in (*self.joint_positions, *self.joint_velocities) for x in group]
        return all(math.isfinite(x) for x in values)

    @property
    def joint_speeds(self) -> list[float]:
        """``|qdot|`` of each joint (a spherical joint's angular speed)."""
        if self.single_dof:
            return [abs(row[1]) for row in self.joint_states]
        return [math.hypot(*row[1]) for row in self.joint_states]

    def joint_moves(self, start: BodyState) -> list[float]:
        """``|q - q_start|`` of each joint since ``start`` (a spherical joint's rotation angle)."""
        if not self.joints:
            return []
        if self.single_dof and start.single_dof:
            return [abs(row[0] - first[0]) for row, first in zip(self.joint_states, start.joint_states, strict=True)]
        return [
            abs(now[0] - then[0]) if len(now) == 1 else rotation_angle(then, now)
            for now, then in zip(self.joint_positions, start.joint_positions, strict=True)
        ]


def _read(client: int, body: int, joints: tuple[int, ...], single_dof: bool) -> BodyState:
    """A body's pose, velocity and joint states.

    The simulator reads every body after each step, so this read is kept lean.  A body of
    single-DoF joints is read with ``getJointStates``: PyBullet builds its flat rows faster
    than ``getJointStatesMultiDof``'s.  The client is passed by position, because PyBullet
    parses keyword arguments measurably slower."""
    if not joints:
        joint_states = ()
    elif single_dof:
        joint_states = p.getJointStates(body, joints, client)
    else:
        joint_states = p.getJointStatesMultiDof(body, joints, client)
    return BodyState(body, joints, p.getBasePositionAndOrientation(body, client), p.getBaseVelocity(body, client), joint_states, single_dof)


@dataclass(frozen=True)
class Snapshot:
    """Positions and velocities of a set of bodies at one instant."""

    client: int
    bodies: tuple[BodyState, ...]

    @classmethod
    def take(cls, client: int, bodies: dict[int, tuple[int, ...]], single_dof: Collection[int] = ()) -> Snapshot:
        """Read the state of ``bodies`` (body id -> indices of its non-fixed joints); ``single_dof``:
        the bodies known to have no spherical joint (read faster, see :func:`_read`)."""
        # a list comprehension: read after every step, it is cheaper than a generator
        return cls(client, tuple([_read(client, body, joints, body in single_dof) for body, joints in bodies.items()]))

    def restore(self) -> None:
        """Write the snapshot back (positions and velocities)."""
        for state in self.bodies:
            p.resetBasePositionAndOrientation(state.body, *state.pose, physicsClientId=self.client)
            p.resetBaseVelocity(state.body, *state.velocity, physicsClientId=self.client)
            reset_joint_states(self.client, state.body, state.joints, state.joint_positions, state.joint_velocities)

    def nonfinite(self) -> list[int]:
        """Bodies whose position or velocity holds NaN or inf."""
        return [state.body for state in self.bodies if not state.finite()]

    def same_positions(self, other: Snapshot) -> bool:
        """Whether ``other`` holds exactly the same positions (nobody reset them in between)."""
        return all(
            (mine.body, mine.pose, mine.joint_positions) == (theirs.body, theirs.pose, theirs.joint_positions)
            for mine, theirs in zip(self.bodies, other.bodies, strict=True)
        )

    def same_velocities(self, other: Snapshot, tol: float = 0.0) -> bool:
        """Whether ``other`` holds the same velocities (e.g. nobody reset them in between)."""
        for mine, theirs in zip(self.bodies, other.bodies, strict=True):
            if mine.body != theirs.body:
                return False
            pairs = list(zip(mine.velocity, theirs.velocity, strict=True))
            pairs += list(zip(mine.joint_velocities, theirs.joint_velocities, strict=True))
            for a, b in pairs:
                if a != b and any(abs(x - y) > tol for x, y in zip(a, b, strict=True)):
                    return False
        return True
