"""The user's constraints (``createConstraint``) as ideal bilateral constraints of an impact.

Closed kinematic loops (the minitaur's knees) and welds are user constraints in PyBullet,
outside the bodies' joint trees.  Bullet enforces them in its steps; an impact resolved
without them would leave the loop's links moving apart, and Bullet's next step would pull
them back into the ground: a stream of spurious impacts.  Here they hold through the impact
(:class:`~bullet_setimpact.core.problem.ImpactProblem`'s ``constraints``): the relative
velocity of their two pivots is zero, and for a fixed constraint the relative angular
velocity too.

PyBullet conventions (``getConstraintInfo``): the pivots and frames are in the parent's and
the child's centre-of-mass frames (``getLinkState`` fields 0 and 1, ``getBasePositionAndOrientation``
for a base); a child body of -1 is the world, its pivot in world coordinates.  A constraint's
``maxAppliedForce`` bounds its force during Bullet's steps; through an instantaneous impact it
holds whatever impulse that takes.  Gear, prismatic and other kinds are reported by
:func:`read_constraints` as not modelled: the impact ignores them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pybullet as p

from .configuration import Configuration
from .contacts import Contact
from .frames import inertial_frame, rotation_matrix

#: Constraint kinds an impact honours, with their number of velocity rows.
MODELLED = {p.JOINT_POINT2POINT: 3, p.JOINT_FIXED: 6}
#: PyBullet's name of each constraint kind, for messages.
KIND_NAMES = {
    p.JOINT_REVOLUTE: "revolute",
    p.JOINT_PRISMATIC: "prismatic",
    p.JOINT_SPHERICAL: "spherical",
    p.JOINT_PLANAR: "planar",
    p.JOINT_FIXED: "fixed",
    p.JOINT_POINT2POINT: "point2point",
    p.JOINT_GEAR: "gear",
}


@dataclass(frozen=True)
class UserConstraint:
    """One ``createConstraint`` constraint between a parent link and a child link (or the world).

    Attributes
    ----------
    uid : int
        PyBullet's constraint id.
    parent, child : tuple of int
        ``(body, link)``; ``child`` is None for the world.
    kind : int
        ``p.JOINT_POINT2POINT`` or ``p.JOINT_FIXED``.
    pivot_parent, pivot_child : tuple of float
        The pivot in the parent's and the child's centre-of-mass frames (world, for the world).
    """

    uid: int
    parent: tuple[int, int]
    child: tuple[int, int] | None
    kind: int
    pivot_parent: tuple[float, float, float]
    pivot_child: tuple[float, float, float]

    @property
    def bodies(self) -> tuple[int, ...]:
        """The bodies it joins (one for a loop within a body or a constraint to the world)."""
        return tuple(sorted({self.parent[0]} | ({self.child[0]} if self.child is not None else set())))

    def rows(self, configuration: Configuration) -> np.ndarray:
        """Its velocity Jacobian ``G`` (3 or 6 rows, the configuration's layout): the parent's pivot
        velocity less the child's, then, for a fixed constraint, the parent's angular velocity less
        the child's.  ``G v = 0`` while the constraint holds."""
        client = configuration.model.client
        rows = _point_rows(configuration, client, self.parent, self.pivot_parent)
        if self.child is not None:
            rows = rows - _point_rows(configuration, client, self.child, self.pivot_child)
        if self.kind != p.JOINT_FIXED:
            return rows
        angular = configuration.angular_jacobian(*self.parent)
        if self.child is not None:
            angular = angular - configuration.angular_jacobian(*self.child)
        return np.vstack([rows, angular])


def _point_rows(configuration: Configuration, client: int, link: tuple[int, int], pivot: tuple[float, float, float]) -> np.ndarray:
    """Jacobian ``(3, nv)`` of the material point at ``pivot`` (the link's centre-of-mass frame)."""
    position, orientation = inertial_frame(client, *link)
    point = np.asarray(position) + rotation_matrix(orientation) @ np.asarray(pivot)
    return configuration.point_jacobian(link[0], link[1], point)


def read_constraints(client: int) -> tuple[list[UserConstraint], list[str]]:
    """The client's user constraints an impact honours, and a description of each it does not."""
    modelled, ignored = [], []
    for index in range(p.getNumConstraints(physicsClientId=client)):
        uid = p.getConstraintUniqueId(index, physicsClientId=client)
        info = p.getConstraintInfo(uid, physicsClientId=client)
        parent_body, parent_link, child_body, child_link, kind = info[:5]
        if kind not in MODELLED:
            ignored.append(f"constraint {uid} ({KIND_NAMES.get(kind, str(kind))}, bodies {parent_body} and {child_body})")
            continue
        child = None if child_body < 0 else (child_body, child_link)
        modelled.append(UserConstraint(uid, (parent_body, parent_link), child, kind, tuple(info[6]), tuple(info[7])))
    return modelled, ignored


def constraint_rows(constraints: Iterable[UserConstraint], configuration: Configuration) -> np.ndarray | None:
    """``G`` of the ``constraints`` among the configuration's bodies (stacked rows), or None without any."""
    rows = [constraint.rows(configuration) for constraint in constraints]
    return np.vstack(rows) if rows else None


Impact = tuple[tuple[int, ...], list[Contact]]


def join_clusters(clusters: list[list[Contact]], constraints: Iterable[UserConstraint], dynamic: set[int]) -> list[Impact]:
    """Each contact cluster with its dynamic bodies, closed under the constraints: a body joined
    to one of a cluster's by a constraint (through any chain) is in its impact, and clusters so
    joined are one impact."""
    links = [set(constraint.bodies) & dynamic for constraint in constraints]
    groups: list[tuple[set[int], list[Contact]]] = []
    for cluster in clusters:
        bodies = {b for c in cluster for b in (c.body_a, c.body_b) if b in dynamic}
        grown = True
        while grown:
            grown = False
            for link in links:
                if link & bodies and not link <= bodies:
                    bodies |= link
                    grown = True
        merged = [group for group in groups if group[0] & bodies]
        for group in merged:
            groups.remove(group)
            bodies |= group[0]
        groups.append((bodies, [c for group in merged for c in group[1]] + cluster))
    return [(tuple(sorted(bodies)), contacts) for bodies, contacts in groups]
