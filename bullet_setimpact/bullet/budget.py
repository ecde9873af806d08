"""A distance budget: how long the contact set of a resting world cannot change.

After a full contact evaluation (:meth:`~.contacts.ContactFinder.contacts`) found no arrival,
every link pair has a *slack*: how far its features may move before the evaluation could
answer differently.  For a link pair in contact it is the smallest of ``tol - d`` over its
touching features (they stay in contact) and ``d - tol`` over its other box corners (none
enters contact); for a pair out of contact it is ``d - tol - SEED_MARGIN`` with ``d`` its
closest distance (the pair stays out of the seed band, see
:data:`~.contacts.SEED_MARGIN`), or ``LOOKAHEAD - tol - SEED_MARGIN`` beyond the lookahead.

A material point of a link moves by at most ``(|v_c| + |omega| r) dt`` in a step, where
``v_c`` and ``omega`` are the link's centre-of-mass and angular velocity and ``r`` bounds
the distance from the centre of mass to the link's collision geometry: Bullet's
semi-implicit Euler moves positions with the step's *end* velocity, exactly so for a rigid
body's base, and to first order in the step for a multibody's links (the Jacobian changes
along the step); :data:`SAFETY` covers that change, with the larger of the start and end
speeds.  The gap of two links' points changes by at most the sum of their displacements.
While every pair's slack exceeds what its two bodies have spent, the evaluation would find
the same contact features and no new one, so it is skipped.  Bullet pushing a point out of
contact (its speculative contacts) is not bounded here: the simulator checks
``getContactPoints`` every step (:func:`~.events.pushed_by_bullet`).
"""

from __future__ import annotations

import math

import numpy as np
import pybullet as p

from .contacts import SEED_MARGIN, Contact, ContactFinder, Pair, pair_key
from .frames import inertial_position

#: Factor on the per-step displacement bound (first order for multibody links, see module docstring).
SAFETY = 2.0


def link_radii(client: int, body: int) -> list[float]:
    """Bound on the distance from each link's centre of mass to its collision geometry [m],
    one per link with the base first: the farthest corner of the link's world AABB
    (which holds the geometry) from its centre of mass, at the current configuration (the
    link is rigid, so the bound holds at every configuration)."""
    radii = []
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        low, high = (np.asarray(corner) for corner in p.getAABB(body, link, physicsClientId=client))
        centre = inertial_position(client, body, link)
        radii.append(float(np.linalg.norm(np.maximum(np.abs(low - centre), np.abs(high - centre)))))
    return radii


class SpeedBound:
    """Largest material-point speed of each moving body [m/s], from one ``getBaseVelocity``
    and one ``getLinkStates`` call per body and the cached :func:`link_radii`."""

    def __init__(self, client: int, bodies: list[int]) -> None:
        self.client = client
        self._radii = {body: link_radii(client, body) for body in bodies}
        self._links = {body: list(range(len(radii) - 1)) for body, radii in self._radii.items()}

    def speeds(self) -> dict[int, float]:
        """Current bound of every body's point speeds."""
        found = {}
        for body, radii in self._radii.items():
            linear, angular = p.getBaseVelocity(body, physicsClientId=self.client)
            speed = math.hypot(*linear) + math.hypot(*angular) * radii[0]
            if self._links[body]:
                states = p.getLinkStates(body, self._links[body], computeLinkVelocity=1, physicsClientId=self.client)
                for state, radius in zip(states, radii[1:], strict=True):
                    speed = max(speed, math.hypot(*state[6]) + math.hypot(*state[7]) * radius)
            found[body] = speed
        return found


class DistanceBudget:
    """Slack of each body pair and the displacement each body has spent since (see module docstring).

    Parameters
    ----------
    slack : dict
        ``(body_a, body_b) -> slack [m]`` of every body pair the contact search considers.
    speeds : dict
        Point-speed bound of every moving body when the slack was measured (:class:`SpeedBound`).
    """

    def __init__(self, slack: dict[tuple[int, int], float], speeds: dict[int, float]) -> None:
        self.slack = slack
        self.speeds = speeds
        self.spent = dict.fromkeys(speeds, 0.0)

    def spend(self, speeds: dict[int, float], duration: float) -> bool:
        """Charge a step of ``duration`` ending at ``speeds``; True while every pair keeps positive slack."""
        for body, speed in speeds.items():
            self.spent[body] += SAFETY * max(speed, self.speeds[body]) * duration
        self.speeds = speeds
        return all(slack > self.spent.get(a, 0.0) + self.spent.get(b, 0.0) for (a, b), slack in self.slack.items())


def pair_slack(finder: ContactFinder, contacts: list[Contact], nearby: dict[Pair, float], lookahead: float) -> dict[tuple[int, int], float]:
    """Slack [m] of every body pair of ``finder`` (see module docstring) after a full evaluation
    whose ``contacts`` are all touching; ``nearby`` holds the closest distance of the link pairs
    within ``lookahead`` (:meth:`~.contacts.ContactFinder.pair_gaps`).

    The pair feature of a link pair in contact through its box corners is taken as covered by
    them: Bullet's manifold points of such a pair sit at those corners (and are merged with them).
    """
    tolerance = finder.tolerance
    slack = {pair: lookahead - tolerance - SEED_MARGIN for pair in finder.pairs}
    touching: dict[Pair, list[Contact]] = {}
    for contact in contacts:
        touching.setdefault(pair_key(contact.pair), []).append(contact)
    for link_pair, gap in nearby.items():
        if link_pair not in touching:
            body_pair = (link_pair[0][0], link_pair[1][0])
            slack[body_pair] = min(slack[body_pair], gap - tolerance - SEED_MARGIN)
    for link_pair, group in touching.items():
        features = {contact.feature for contact in group}
        room = min(tolerance - contact.gap for contact in group)
        corners = [gap - tolerance for feature, gap in finder.corner_gaps(link_pair).items() if feature not in features]
        body_pair = (link_pair[0][0], link_pair[1][0])
        slack[body_pair] = min(slack[body_pair], room, *corners)
    return slack
