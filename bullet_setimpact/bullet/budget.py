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
While every pair's slack exceeds what its two links have spent (for the pairs beyond the
lookahead, the most any link of the two bodies has spent), the evaluation would find
the same contact features and no new one, so it is skipped.  Bullet pushing a point out of
contact (its speculative contacts) is not bounded here: the simulator checks
``getContactPoints`` every step (:func:`~.events.pushed_by_bullet`).
"""

from __future__ import annotations

import math

import numpy as np
import pybullet as p

from .contacts import SEED_MARGIN, Contact, ContactFinder, Feature, Pair, pair_key
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
    """Largest material-point speed of each link of the moving bodies [m/s], from one
    ``getBaseVelocity`` and one ``getLinkStates`` call per body and the cached :func:`link_radii`."""

    def __init__(self, client: int, bodies: list[int]) -> None:
        self.client = client
        self._radii = {body: link_radii(client, body) for body in bodies}
        self._links = {body: list(range(len(radii) - 1)) for body, radii in self._radii.items()}

    def speeds(self) -> dict[int, np.ndarray]:
        """Current bound of the point speeds of each body's links (the base first)."""
        found = {}
        for body, radii in self._radii.items():
            linear, angular = p.getBaseVelocity(body, physicsClientId=self.client)
            speeds = [math.hypot(*linear) + math.hypot(*angular) * radii[0]]
            if self._links[body]:
                states = p.getLinkStates(body, self._links[body], computeLinkVelocity=1, physicsClientId=self.client)
                speeds += [math.hypot(*state[6]) + math.hypot(*state[7]) * radius for state, radius in zip(states, radii[1:], strict=True)]
            found[body] = np.array(speeds)
        return found


class DistanceBudget:
    """Slack of each link pair and the displacement each link has spent since (see module docstring).

    Slacks are kept as thresholds on the cumulative spending, so a pair measured again later
    (:meth:`remeasure`) continues from the same account.

    Parameters
    ----------
    tolerance : float
        The contact tolerance [m].
    touching : dict
        ``((body, link), (body, link)) -> slack [m]`` of the link pairs in contact.
    nearby : dict
        Closest distance [m] of the other link pairs within the lookahead.
    lookahead : float
        Distance [m] beyond which the other link pairs are.
    pairs : list
        Every body pair ``(body_a, body_b)`` of the contact search.
    speeds : dict
        Point-speed bounds of every moving body's links when the slack was measured (:class:`SpeedBound`).
    """

    def __init__(
        self,
        tolerance: float,
        touching: dict[Pair, float],
        nearby: dict[Pair, float],
        lookahead: float,
        pairs: list[tuple[int, int]],
        speeds: dict[int, np.ndarray],
    ) -> None:
        self.touching = touching
        self.speeds = speeds
        self.spent = {body: np.zeros_like(value) for body, value in speeds.items()}
        self._band = tolerance + SEED_MARGIN
        self._pairs = pairs
        self._lookahead = lookahead
        self.nearby: dict[Pair, float] = {}
        self.bodies: dict[tuple[int, int], float] = {}
        self.remeasure(nearby)

    def spend(self, speeds: dict[int, np.ndarray], duration: float) -> None:
        """Charge a step of ``duration`` ending at ``speeds``."""
        for body, speed in speeds.items():
            self.spent[body] += SAFETY * duration * np.maximum(speed, self.speeds[body])
        self.speeds = speeds

    def touching_holds(self) -> bool:
        """True while no link pair in contact can have changed its contact features."""
        return all(slack > self._spent(a) + self._spent(b) for (a, b), slack in self.touching.items())

    def others_hold(self) -> bool:
        """True while no other link pair can have come within the seed band (:data:`~.contacts.SEED_MARGIN`)."""
        most = self._most()
        if any(slack <= most.get(a, 0.0) + most.get(b, 0.0) for (a, b), slack in self.bodies.items()):
            return False
        return all(slack > self._spent(a) + self._spent(b) for (a, b), slack in self.nearby.items())

    def remeasure(self, nearby: dict[Pair, float]) -> bool:
        """Measure the link pairs out of contact anew from their closest distances ``nearby``
        (:meth:`~.contacts.ContactFinder.pair_gaps` within the lookahead); True when all of
        them are beyond the seed band."""
        most = self._most()
        self.nearby = {
            (a, b): gap - self._band + self._spent(a) + self._spent(b) for (a, b), gap in nearby.items() if (a, b) not in self.touching
        }
        self.bodies = {(a, b): self._lookahead - self._band + most.get(a, 0.0) + most.get(b, 0.0) for a, b in self._pairs}
        return self.others_hold()

    def _most(self) -> dict[int, float]:
        return {body: float(spent.max()) for body, spent in self.spent.items()}

    def _spent(self, link: tuple[int, int]) -> float:
        spent = self.spent.get(link[0])
        return 0.0 if spent is None else float(spent[link[1] + 1])


def budget(
    finder: ContactFinder, contacts: list[Contact], nearby: dict[Pair, float], lookahead: float, speeds: dict[int, np.ndarray]
) -> DistanceBudget:
    """The budget after a full evaluation whose ``contacts`` are all touching (see module
    docstring); ``nearby`` holds the closest distance of the link pairs within ``lookahead``
    (:meth:`~.contacts.ContactFinder.pair_gaps`), the others are beyond it.

    The pair feature of a link pair in contact through its box corners is taken as covered by
    them: Bullet's manifold points of such a pair sit at those corners (and are merged with them).
    """
    tolerance = finder.tolerance
    groups: dict[Pair, list[Contact]] = {}
    for contact in contacts:
        groups.setdefault(pair_key(contact.pair), []).append(contact)
    touching = {}
    for link_pair, group in groups.items():
        gaps: dict[Feature, float] = {}
        for contact in group:  # a feature stays in contact while its nearest point does
            gaps[contact.feature] = min(gaps.get(contact.feature, np.inf), contact.gap)
        corners = [gap - tolerance for feature, gap in finder.corner_gaps(link_pair).items() if feature not in gaps]
        touching[link_pair] = min([tolerance - gap for gap in gaps.values()] + corners)
    return DistanceBudget(tolerance, touching, nearby, lookahead, finder.pairs, speeds)
