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
the same contact features and no new one, so it is skipped.  When only the pairs measured by
their closest distance (those out of contact, and those in contact through their closest
point alone) have spent their slack, one ``getClosestPoints`` per body pair measures them
again (:meth:`DistanceBudget.remeasure`) instead of the full evaluation.  Bullet pushing a
point out of contact (its speculative contacts) is not bounded here: the simulator checks
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
    (:meth:`remeasure`) continues from the same account.  A link pair in contact only through
    its closest point (no box corner in contact: spheres, meshes, capsules) is measured again
    from its closest distance like the pairs out of contact: its feature stays in contact while
    that distance is within the tolerance.

    Parameters
    ----------
    tolerance : float
        The contact tolerance [m].
    touching : dict
        ``((body, link), (body, link)) -> slack [m]`` of the box corners of the link pairs in
        contact (``tol - d`` of those in contact, ``d - tol`` of the others).
    closest : set
        The link pairs in contact only through their closest point.
    lookahead : float
        Distance [m] beyond which the link pairs missing from the measurements are.
    pairs : list
        Every body pair ``(body_a, body_b)`` of the contact search.
    speeds : dict
        Point-speed bounds of every moving body's links when the slack was measured (:class:`SpeedBound`).
    """

    def __init__(
        self,
        tolerance: float,
        touching: dict[Pair, float],
        closest: set[Pair],
        lookahead: float,
        pairs: list[tuple[int, int]],
        speeds: dict[int, np.ndarray],
    ) -> None:
        self.touching = touching
        self.speeds = speeds
        self.spent = {body: np.zeros_like(value) for body, value in speeds.items()}
        self._tolerance = tolerance
        self._closest = closest
        self._pairs = pairs
        self._lookahead = lookahead
        self.nearby: dict[Pair, float] = {}
        self.bodies: dict[tuple[int, int], float] = {}

    def spend(self, speeds: dict[int, np.ndarray], duration: float) -> None:
        """Charge a step of ``duration`` ending at ``speeds``."""
        for body, speed in speeds.items():
            self.spent[body] += SAFETY * duration * np.maximum(speed, self.speeds[body])
        self.speeds = speeds

    def touching_holds(self) -> bool:
        """True while no box corner of a link pair in contact can have entered or left contact."""
        return all(slack > self._spent(a) + self._spent(b) for (a, b), slack in self.touching.items())

    def others_hold(self) -> bool:
        """True while no link pair out of contact can have come within the seed band
        (:data:`~.contacts.SEED_MARGIN`) and no closest-point contact can have left the tolerance."""
        most = self._most()
        if any(slack <= most.get(a, 0.0) + most.get(b, 0.0) for (a, b), slack in self.bodies.items()):
            return False
        return all(slack > self._spent(a) + self._spent(b) for (a, b), slack in self.nearby.items())

    def remeasure(self, nearby: dict[Pair, float]) -> bool:
        """Measure the link pairs out of contact and the closest-point contacts anew from the
        closest distances ``nearby`` (:meth:`~.contacts.ContactFinder.pair_gaps` within the
        lookahead); True when the former are beyond the seed band and the latter within the
        tolerance."""
        if any(nearby.get(pair, np.inf) > self._tolerance for pair in self._closest):
            return False
        band = self._tolerance + SEED_MARGIN
        most = self._most()
        self.nearby = {
            (a, b): (self._tolerance - gap if (a, b) in self._closest else gap - band) + self._spent(a) + self._spent(b)
            for (a, b), gap in nearby.items()
            if (a, b) not in self.touching or (a, b) in self._closest
        }
        self.bodies = {(a, b): self._lookahead - band + most.get(a, 0.0) + most.get(b, 0.0) for a, b in self._pairs}
        return self.others_hold()

    def _most(self) -> dict[int, float]:
        return {body: float(spent.max()) for body, spent in self.spent.items()}

    def _spent(self, link: tuple[int, int]) -> float:
        spent = self.spent.get(link[0])
        return 0.0 if spent is None else float(spent[link[1] + 1])


def budget(
    finder: ContactFinder, contacts: list[Contact], nearby: dict[Pair, float], lookahead: float, speeds: dict[int, np.ndarray]
) -> DistanceBudget | None:
    """The budget after a full evaluation whose ``contacts`` are all touching (see module
    docstring), or None when it has no slack; ``nearby`` holds the closest distance of the
    link pairs within ``lookahead`` (:meth:`~.contacts.ContactFinder.pair_gaps`), the others
    are beyond it.

    The pair feature of a link pair in contact through its box corners is taken as covered by
    them: Bullet's manifold points of such a pair sit at those corners (and are merged with them).
    """
    tolerance = finder.tolerance
    groups: dict[Pair, list[Contact]] = {}
    for contact in contacts:
        groups.setdefault(pair_key(contact.pair), []).append(contact)
    touching = {}
    closest = set()
    for link_pair, group in groups.items():
        gaps: dict[Feature, float] = {}
        for contact in group:  # a feature stays in contact while its nearest point does
            gaps[contact.feature] = min(gaps.get(contact.feature, np.inf), contact.gap)
        corners = [gap - tolerance for feature, gap in finder.corner_gaps(link_pair).items() if feature not in gaps]
        if set(gaps) == {("pair", link_pair)}:
            closest.add(link_pair)
            touching[link_pair] = min(corners, default=np.inf)
        else:
            touching[link_pair] = min([tolerance - gap for gap in gaps.values()] + corners)
    result = DistanceBudget(tolerance, touching, closest, lookahead, finder.pairs, speeds)
    return result if result.touching_holds() and result.remeasure(nearby) else None
