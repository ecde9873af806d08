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
:func:`read_constraints` as not modelled: the impact ignores them.  So are the constraints
whose target the user drives (``changeConstraint`` moving the child pivot or frame, as a
mocap body is dragged): their pivots' relative velocity is the target's, not zero, and an
impact that held them still would stop what they drag.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pybullet as p

from .configuration import Configuration
from .contacts import Contact
from .frames import inertial_frame, rotation_matrix
from .inventory import JOINT_NAMES

#: Constraint kinds an impact honours, with their number of velocity rows.
MODELLED = {p.JOINT_POINT2POINT: 3, p.JOINT_FIXED: 6}


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

    def pivots(self, client: int) -> list[tuple[tuple[int, int], np.ndarray, float]]:
        """The pivots now: ``(link, world position, sign)`` of the parent's (+1) and, unless the
        child is the world, the child's (-1)."""
        sides = [(self.parent, self.pivot_parent, 1.0)] + ([(self.child, self.pivot_child, -1.0)] if self.child is not None else [])
        found = []
        for link, pivot, sign in sides:
            position, orientation = inertial_frame(client, *link)
            found.append((link, np.asarray(position) + rotation_matrix(orientation) @ np.asarray(pivot), sign))
        return found


def read_constraints(client: int, driven: Collection[int] = ()) -> tuple[list[UserConstraint], list[str]]:
    """The client's user constraints an impact honours, and a description of each it does not;
    ``driven``: the constraints whose target the user moves (:attr:`.following.ClientWorld.driven`)."""
    modelled, ignored = [], []
    for index in range(p.getNumConstraints(physicsClientId=client)):
        uid = p.getConstraintUniqueId(index, physicsClientId=client)
        info = p.getConstraintInfo(uid, physicsClientId=client)
        parent_body, parent_link, child_body, child_link, kind = info[:5]
        if kind not in MODELLED or uid in driven:
            what = JOINT_NAMES.get(kind, str(kind)) + (", its target moved by changeConstraint" if uid in driven else "")
            ignored.append(f"constraint {uid} ({what}, bodies {parent_body} and {child_body})")
            continue
        child = None if child_body < 0 else (child_body, child_link)
        modelled.append(UserConstraint(uid, (parent_body, parent_link), child, kind, tuple(info[6]), tuple(info[7])))
    return modelled, ignored


def constraint_rows(constraints: Sequence[UserConstraint], configuration: Configuration) -> np.ndarray | None:
    """``G`` of the ``constraints``, or None without any: for each in order, the parent pivot's
    velocity less the child's, then for a fixed constraint the parent's angular velocity less
    the child's, in the configuration's layout.  ``G v = 0`` while they hold.  One point
    Jacobian call per link, for all its pivots."""
    if not constraints:
        return None
    client = configuration.model.client
    starts = np.cumsum([0] + [MODELLED[constraint.kind] for constraint in constraints]).tolist()
    G = np.zeros((starts[-1], configuration.model.nv))
    by_link: dict[tuple[int, int], list[tuple[int, np.ndarray, float]]] = {}
    for start, constraint in zip(starts, constraints, strict=False):
        for link, point, sign in constraint.pivots(client):
            by_link.setdefault(link, []).append((start, point, sign))
        if constraint.kind == p.JOINT_FIXED:
            G[start + 3 : start + 6] = configuration.angular_jacobian(*constraint.parent)
            if constraint.child is not None:
                G[start + 3 : start + 6] -= configuration.angular_jacobian(*constraint.child)
    for (body, index), entries in by_link.items():
        jacobians = configuration.point_jacobian(body, index, np.array([point for _, point, _ in entries]))
        for (start, _, sign), jacobian in zip(entries, jacobians, strict=True):
            G[start : start + 3] += sign * jacobian
    return G


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
