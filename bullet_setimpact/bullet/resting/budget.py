"""The ledger of the resting-contact certificates: accounts, spending and motion bounds.

The terms (slack, account, spent, most, headroom, ...) are defined in the glossary of
:mod:`.certificates`, which also lists the invariants checked against this ledger.

Slack, per link pair, after a full evaluation that found no arrival:

- in contact through features: the least of ``tol - d`` over its touching features (they stay
  in contact) and ``d - tol`` over its other box corners (none enters contact);
- out of contact at closest distance ``d``: ``d - tol - SEED_MARGIN`` (it stays out of the seed
  band). A moving link against a static box or plane, not box against box, within
  ``SEED_MARGIN`` of the band, gets ``min(d, box corner gaps) - tol``; two boxes within the seed
  band get their sharp distance less ``tol`` (:meth:`DistanceBudget._out_of_contact`);
- beyond the lookahead: ``LOOKAHEAD - tol - SEED_MARGIN``, per body pair, spent by the links
  not measured against every link of the other body.

Spending. Between the configurations at a step's start and end, a material point of a link
moves by at most a bound from the base's and the joints' own displacements
(:meth:`MotionBound.displacements`): exact, whatever the motion within the step, and the claim
below concerns the configurations at the steps' ends only. The gap of two links' points changes
by at most the sum of their displacements.

The claim. While every pair's slack exceeds what its two links have spent (for the pairs beyond
the lookahead, the most any of their links has spent), the full evaluation would find
the same contact features and no new one. What is spent is measured again, not given up:

- pairs measured by their closest distance: one ``getClosestPoints`` per spent link pair, or per
  body pair when a pair beyond the lookahead may have come near (:meth:`DistanceBudget.remeasure`).
  If the new slack of a pair out of contact would be spent within :data:`SWEPT_STEPS` steps
  (a swinging leg), its body pair is *swept*: its accounts out of contact are dropped, and the
  full evaluation's own seed query for the body pair is made every step instead
  (:meth:`DistanceBudget.swept_clear`);
- a pair in contact through box corners alone: evaluated again on its own, kept while the same
  corners touch (:meth:`DistanceBudget.touching_holds`). If its new slack would be spent within
  :data:`RENEWED_STEPS` steps, it is measured every step (:meth:`DistanceBudget.measured_hold`)
  until its links calm down;
- a closest-point contact has no account: Bullet's manifold, read after every step anyway, bounds
  its gap (:meth:`DistanceBudget.watched_hold`).

Checking every account costs O(1) while no link of the bodies it concerns has spent more than
the headroom of the last one-by-one check (a resting box under a swinging arm keeps its
headroom). Bullet pushing a point out of contact is not bounded here: the certificate
:class:`~.certificates.NoSpeculativePush` checks for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple

import numpy as np
import pybullet as p

from ..contacts import SEED_MARGIN, Contact, ContactFinder, Feature, Pair, PointKey, pair_key, point_keys
from ..frames import rotation_angle
from ..state import BodyState, Snapshot
from .corner_watch import CornerWatch

#: A link pair measured again (:meth:`DistanceBudget.touching_holds`) gets a new account when
#: its new slack outlasts this many steps at the last step's spending; otherwise it is evaluated
#: every step (:meth:`DistanceBudget.measured_hold`).
RENEWED_STEPS = 4.0
#: A link pair out of contact whose new slack would be spent within this many steps at the last
#: step's spending gets its body pair swept (:meth:`DistanceBudget._sweep_if_fleeting`).
SWEPT_STEPS = 8.0
#: A body pair whose account beyond the lookahead is spent is measured again out to this many
#: lookaheads (:meth:`DistanceBudget._measure_far`).
FAR_REACH = 4.0
#: [m] Margin on a sharp box-box distance (:meth:`DistanceBudget._out_of_contact`) for the round-off
#: between its arithmetic and the corner completion's.
SHARP_MARGIN = 1e-9


def _reach(low: np.ndarray, high: np.ndarray, point: np.ndarray) -> float:
    """Largest distance from ``point`` to the box ``[low, high]`` (attained at a corner)."""
    return float(np.linalg.norm(np.maximum(np.abs(low - point), np.abs(high - point))))


class _Slides(NamedTuple):
    """A body's prismatic joints, which lengthen the distances ``D`` to the links below them (the
    last columns of the body's terms in :class:`MotionBound`: 1 where the link is at or below the slide)."""

    columns: list[int]  # their positions among the body's movable joints
    rest: list[float]  # their positions when the reaches were read
    above: list[list[int]]  # per slide, the columns of the turning joints above it

    def extensions(self, state: BodyState, turn: float, rates: list[float]) -> list[float]:
        """Per slide, what its extension from ``rest`` (at the joint positions of ``state``) adds to
        the bound of each link below it: the extension times the base's ``turn`` and the ``rates``
        of the turning joints above."""
        return [
            abs(state.joint_position(column)[0] - rest) * (turn + sum([rates[joint] for joint in above]))  # a slide has one DoF
            for column, rest, above in zip(self.columns, self.rest, self.above, strict=True)
        ]


class MotionBound:
    """Largest material-point speed [m/s] and displacement [m] of each link of the moving bodies,
    from :class:`~.state.Snapshot` objects (no PyBullet call).

    A point ``x`` of link ``i`` moves at ``v_b + w_b x (x - c_b) + sum_j qdot_j a_j x (x - o_j)``
    (revolute and spherical joints ``j`` on the path from the base to ``i``, ``o_j`` the
    joint's origin; a prismatic joint adds ``qdot_j a_j``), so its speed is at most
    ``|v_b| + |w_b| D_b(i) + sum_j |qdot_j| D_j(i)``, with ``D`` bounds on the distances from
    the base's centre of mass and from each joint origin to the points of ``i``: along the
    path, each link ``k`` adds its *reach* ``rho_k``, the farthest point of its geometry (its
    world AABB's corners) or of its children's joint origins from its own joint origin.  The
    reaches are distances within one rigid link, read once at construction.

    Between two configurations the same sum bounds its displacement, with the base's shift
    ``|dc_b|``, its rotation angle and each joint's ``|dq_j|`` (a spherical joint's rotation
    angle) in place of the rates: move the base, then turn each joint in turn from the base
    out; each move carries the point along a segment or an arc of radius at most its ``D``.

    A prismatic joint moves its child's origin: the distances from the joints above it to the
    links below grow by its extension from where the reaches were read (at the configuration
    the rates or the first move turn at), which the bounds add.

    Of the bodies with a fixed base (``fixed``), the links that no movable joint moves are
    :attr:`still`: at rest while the base is.
    """

    def __init__(self, client: int, bodies: dict[int, tuple[int, ...]], fixed: Collection[int] = ()) -> None:
        #: Per body with prismatic joints: what they add to the bounds (filled by :meth:`_distances`).
        self._slides: dict[int, _Slides] = {}
        #: Per body: ``[1, D_b, C, S]``, the speed bound per link (base first) is this matrix times
        #: ``[|v_b|, |w_b|, |qdot_1|, ..., e_1, ...]`` (``e`` the slides' :meth:`_Slides.extensions`).
        self._terms = {body: self._distances(client, body, joints) for body, joints in bodies.items()}
        #: The links ``(body, link)`` of fixed bases that no joint moves: they do not move while
        #: their base is at rest (Bullet moves a fixed base whose velocity the user set).
        self.still = frozenset(
            (body, index - 1) for body in fixed if body in self._terms for index, row in enumerate(self._terms[body]) if not row[2:].any()
        )
        #: Per body without movable joints: ``D_b`` of each link, the bound on Python floats
        #: (``|v_b| + |w_b| D_b``: one product a link, where NumPy's call costs microseconds).
        self._base_reaches = {body: terms[:, 1].tolist() for body, terms in self._terms.items() if terms.shape[1] == 2}

    def _distances(self, client: int, body: int, joints: tuple[int, ...]) -> np.ndarray:
        count = p.getNumJoints(body, physicsClientId=client)
        info = [p.getJointInfo(body, joint, physicsClientId=client) for joint in range(count)]
        parent = [int(row[16]) for row in info]
        centre = np.array(p.getBasePositionAndOrientation(body, physicsClientId=client)[0])
        origins = [
            np.array(p.getLinkState(body, joint, computeForwardKinematics=True, physicsClientId=client)[4]) for joint in range(count)
        ]
        reach = []
        for link in range(-1, count):
            here = centre if link == -1 else origins[link]
            low, high = (np.asarray(corner) for corner in p.getAABB(body, link, physicsClientId=client))
            children = [float(np.linalg.norm(origins[child] - here)) for child in range(count) if parent[child] == link]
            reach.append(max([_reach(low, high, here), *children]))
        column = {joint: position for position, joint in enumerate(joints)}
        slides = [joint for joint in joints if info[joint][2] == p.JOINT_PRISMATIC]
        base = np.zeros(count + 1)
        coefficients = np.zeros((count + 1, len(joints)))
        below = np.zeros((count + 1, len(slides)))  # S: link i at or below prismatic joint k
        above: list[list[int]] = [[] for _ in slides]  # the turning joints above prismatic joint k
        base[0] = reach[0]
        for link in range(count):
            path = []  # the link and its ancestors, nearest first
            ancestor = link
            while ancestor != -1:
                path.append(ancestor)
                ancestor = parent[ancestor]
            distance = 0.0
            for joint in path:  # D_j(link): the reaches from joint j's link down to this link
                distance += reach[joint + 1]
                if joint in column:
                    prismatic = info[joint][2] == p.JOINT_PRISMATIC
                    coefficients[link + 1, column[joint]] = 1.0 if prismatic else distance
            base[link + 1] = reach[0] + distance
            for index, slide in enumerate(slides):
                if slide in path:
                    below[link + 1, index] = 1.0
                    if slide == link:
                        for joint in path[1:]:
                            if joint in column and info[joint][2] != p.JOINT_PRISMATIC:
                                above[index].append(column[joint])
        if slides:
            rest = [p.getJointState(body, joint, physicsClientId=client)[0] for joint in slides]
            self._slides[body] = _Slides([column[joint] for joint in slides], rest, above)
        return np.column_stack([np.ones(count + 1), base, coefficients, below])

    def displacements(self, start: Snapshot, end: Snapshot) -> dict[int, list[float]]:
        """Bound of the displacements of each body's links (the base first) from ``start`` to
        ``end`` (snapshots of the same bodies), as Python floats."""
        found = {}
        for before, after in zip(start.bodies, end.bodies, strict=True):
            terms = self._terms.get(after.body)
            if terms is None:
                continue
            shift, turn = math.dist(before.pose[0], after.pose[0]), rotation_angle(before.pose[1], after.pose[1])
            found[after.body] = self._bound(terms, shift, turn, after.joint_moves(before), before)
        return found

    def _bound(self, terms: np.ndarray, linear: float, angular: float, joints: list[float], state: BodyState) -> list[float]:
        """``terms`` times the base's and joints' rates (or moves), with the slides' lengthening at
        the joint positions of ``state``; for a body without movable joints, on Python floats."""
        reaches = self._base_reaches.get(state.body)
        if reaches is not None:
            return [linear + reach * angular for reach in reaches]
        slides = self._slides.get(state.body)
        extensions = [] if slides is None else slides.extensions(state, angular, joints)
        return terms.dot([linear, angular, *joints, *extensions]).tolist()

    def speeds(self, snapshot: Snapshot) -> dict[int, list[float]]:
        """Bound of the point speeds of each body's links (the base first) in ``snapshot``, as
        Python floats (the budget compares them one at a time)."""
        found = {}
        for state in snapshot.bodies:
            terms = self._terms.get(state.body)
            if terms is None:
                continue
            linear, angular = math.hypot(*state.velocity[0]), math.hypot(*state.velocity[1])
            found[state.body] = self._bound(terms, linear, angular, state.joint_speeds, state)
        return found


class _Check(NamedTuple):
    """A one-by-one check of accounts (:meth:`DistanceBudget._check`)."""

    static: float  # least left of the accounts with a static side
    moving: float  # ... and of those of two moving links
    spent: list  # the accounts with nothing left
    at: dict[int, float]  # the spending bound of each moving body of the accounts, at the check


class _Measured(NamedTuple):
    """A link pair checked every step (:meth:`DistanceBudget.measured_hold`)."""

    corners: set[Feature]  # the box corners that must touch
    watch: CornerWatch | None  # None where a watch does not apply
    slack: float  # its slack when last measured


#: A body and some of its links, as indices of :attr:`DistanceBudget.spent` (0 the base).
Side = tuple[int, tuple[int, ...]]


def _bodies(key: Pair | tuple[Side, Side]) -> tuple[int, int]:
    """The body pair of a link pair, or of the two sides of an account beyond the lookahead."""
    return key[0][0], key[1][0]


def _any_moves(links: Collection[tuple[int, int]], speeds: dict[int, list[float]]) -> bool:
    """Whether the speed bound of one of ``links`` is not zero."""
    return any(speeds[body][link + 1] > 0.0 for body, link in links if body in speeds)


class DistanceBudget:
    """Slack of each link pair and the displacement each link has spent since (see module docstring).

    Slacks are kept as thresholds on the cumulative spending, so a pair measured again later
    (:meth:`remeasure`) continues from the same account.  A link pair in contact only through
    its closest point (no box corner in contact: spheres, meshes, capsules) is measured again
    from its closest distance like the pairs out of contact: its feature stays in contact while
    that distance is within the tolerance.

    Parameters
    ----------
    finder : ContactFinder
        The simulator's contact evaluation: its tolerance, body pairs and queries.
    touching : dict
        ``((body, link), (body, link)) -> slack [m]`` of the box corners of the link pairs in
        contact (``tol - d`` of those in contact, ``d - tol`` of the others).
    closest : set
        The link pairs in contact only through their closest point.
    lookahead : float
        Distance [m] beyond which the link pairs missing from the measurements are.
    speeds : dict
        Point-speed bounds of every moving body's links when the budget opens (:class:`MotionBound`):
        the links to charge, and whether a still link moves.
    corner_contacts : dict, optional
        The touching box corners (vertex features) of each link pair in contact through box
        corners alone, for measuring it again when its account is spent (:meth:`_touch_again`).
    still : collection, optional
        Links ``(body, link)`` of moving bodies that never move (:attr:`MotionBound.still`).
    """

    def __init__(
        self,
        finder: ContactFinder,
        touching: dict[Pair, float],
        closest: set[Pair],
        lookahead: float,
        speeds: dict[int, list[float]],
        corner_contacts: dict[Pair, set[Feature]] | None = None,
        still: Collection[tuple[int, int]] = frozenset(),
    ) -> None:
        self.touching = touching
        #: Links at rest with their fixed base (:attr:`MotionBound.still`): an account against them
        #: has a static side.  Only the user sets a fixed base moving (Bullet then moves it), which
        #: changes velocities: the simulator drops the budget, and the next one opens without them.
        self._still = frozenset() if _any_moves(still, speeds) else frozenset(still)
        #: The same link pairs as PyBullet's contact points name them (:func:`~.events.pushed_by_bullet`).
        self.touching_keys = frozenset(key for pair in touching for key in point_keys(pair))
        self._corner_contacts = {} if corner_contacts is None else corner_contacts
        #: The link pairs checked every step instead of by an account (:meth:`measured_hold`);
        #: their accounts in :attr:`touching` are infinite.
        self._measured: dict[Pair, _Measured] = {}
        #: What each link has spent, up to the steps still ``_pending`` (charged to
        #: :attr:`most` only, and to each link when an account is checked one by one).
        self.spent = {body: [0.0] * len(value) for body, value in speeds.items()}
        self._pending: list[dict[int, list[float]]] = []
        self._finder = finder
        self._tolerance = finder.tolerance
        self._closest = closest
        #: The closest-point contacts checked from Bullet's manifold (:meth:`watched_hold`) instead
        #: of by an account, with their number of moving sides; the same keyed as PyBullet's
        #: contact points name them (``bodyA, bodyB, linkA, linkB``, either way round); each link's
        #: displacement in the last step; and the :attr:`most` up to which the last check of the
        #: watched pairs keeps them all in contact.
        self._watched = {(a, b): sides for a, b in closest if not self._box_box(a, b) and (sides := (a[0] in speeds) + (b[0] in speeds))}
        self._watched_keys = {key: pair for pair in self._watched for key in point_keys(pair)}
        self._last_step: dict[int, list[float]] = {}
        self._watched_until = 0.0
        self._lookahead = lookahead
        self.nearby: dict[Pair, float] = {}
        #: The box pairs accounted by their sharp distance (:meth:`_out_of_contact`), keyed as
        #: PyBullet's contact points name them (either way round).
        self._sharp: dict[PointKey, Pair] = {}
        self.bodies: dict[tuple[Side, Side], float] = {}
        #: Body pairs (in the order of :attr:`~.contacts.ContactFinder.pairs`) whose link pairs out
        #: of contact have no account, checked by :meth:`swept_clear` every step instead.
        self._swept: set[tuple[int, int]] = set()
        #: The watched contacts of the swept body pairs, checked by the seed query instead.
        self._swept_watched: dict[tuple[int, int], list[Pair]] = {}
        #: Whether this step's query of the swept body pairs found a link pair within the seed band.
        self._seeded = False
        #: While no contact touches, the measured link pairs out of contact within the seed band,
        #: each with the spending of its two links up to which it surely stays inside it.
        self._banded: dict[Pair, float] = {}
        #: Spending bound of every moving link (the most any link was charged in a step, summed
        #: over the steps), and of every link of each moving body.
        self.most = 0.0
        self._body_most = dict.fromkeys(speeds, 0.0)
        #: The last one-by-one checks that found no account spent, of the touching accounts and
        #: of the others (None: check again), and the spent accounts the last check of the others
        #: found (for :meth:`remeasure`).
        self._touching_check: _Check | None = None
        self._others_check: _Check | None = None
        self._spent_bodies: list[tuple[Side, Side]] = []
        self._spent_nearby: list[Pair] = []

    def spend(self, displacements: dict[int, list[float]]) -> None:
        """Charge a step: each link its displacement bound (:meth:`MotionBound.displacements`),
        :attr:`most` the largest of any link, each body's the largest of its links.

        The links are charged when an account is checked one by one (:meth:`_charge_links`);
        the last step's charge of one link is :meth:`_step_charge`."""
        self._seeded = False
        largest = 0.0
        for body, row in displacements.items():
            peak = max(row)
            self._body_most[body] += peak
            largest = max(largest, peak)
        self.most += largest
        self._last_step = displacements
        self._pending.append(displacements)

    def _charge_links(self) -> None:
        """Charge the pending steps to each link, added one step at a time (on Python floats: a
        check comes every few steps while a robot moves, and a resting world's hundreds of
        pending steps come once in hundreds)."""
        for displacements in self._pending:
            for body, spent in self.spent.items():
                self.spent[body] = [total + charge for total, charge in zip(spent, displacements[body], strict=True)]
        self._pending.clear()

    def _holds_since(self, check: _Check | None) -> bool:
        """Whether every account of ``check`` still holds because no link of their bodies has spent
        more since than the least left then (half of it, for accounts of two moving links)."""
        if check is None:
            return False
        most = self._body_most
        since = 0.0
        for body, at in check.at.items():  # a loop: one or two bodies, checked every step
            since = max(since, most[body] - at)
        return since < check.static and 2.0 * since < check.moving

    def _check(self, accounts: dict, spent_of: Callable[[Any], float]) -> _Check:
        """One-by-one check of ``accounts`` (``(side_a, side_b) -> slack``, a side's spending
        ``spent_of(side)``): the least left of those with a static side and of those of two
        moving sides (:meth:`_mover`), and the spent ones."""
        static = moving = math.inf
        spent = []
        movers: set[int | None] = set()
        for pair, slack in accounts.items():
            a, b = pair
            spent_a, spent_b = spent_of(a), spent_of(b)
            if slack <= spent_a + spent_b:
                spent.append(pair)
            left = slack - spent_a - spent_b
            mover_a, mover_b = self._mover(a), self._mover(b)
            movers.update((mover_a, mover_b))
            if mover_a is not None and mover_b is not None:
                moving = min(moving, left)
            else:
                static = min(static, left)
        most = self._body_most
        return _Check(static, moving, spent, {body: most[body] for body in movers if body is not None})

    def _mover(self, side: tuple[int, int] | Side) -> int | None:
        """The moving body of a link ``(body, link)`` or of a :data:`Side`; None for a static body
        or a link that never moves."""
        body = side[0]
        return None if body not in self.spent or side in self._still else body

    def watched_hold(self, manifold: Sequence[tuple]) -> bool:
        """True while every closest-point contact not of two boxes is within the tolerance: they
        have no account, but a bound that the last check of them set (:meth:`_watch`); past it
        they are checked from Bullet's contact points ``manifold`` read after the step, else by
        one ``getClosestPoints`` each.

        Bullet detects collisions at the start of its step, before it moves the bodies, and puts
        a point at a link pair's closest distance into the pair's manifold whenever that distance
        is below its contact breaking threshold (0.02 m by default, far above the tolerance), by
        the same algorithm as ``getClosestPoints`` for every pair but box-box (see
        :meth:`_out_of_contact`).  So the pair's largest manifold distance bounds its closest
        distance at the step's start (older points keep their distance along their own normal;
        taking the largest only weakens the bound), and what the step charged its links
        (:meth:`_step_charge`) bounds the change to the step's end.
        """
        if self.most <= self._watched_until:
            return True
        keys = self._watched_keys
        largest: dict[Pair, float] = {}
        for point in manifold:
            pair = keys.get(point[1:5])
            if pair is not None and not point[8] <= largest.get(pair, -math.inf):
                largest[pair] = point[8]
        tolerance = self._tolerance
        bounds = {pair: largest.get(pair, math.inf) + self._pair_charge(pair) for pair in self._watched}
        unconfirmed = [pair for pair, bound in bounds.items() if not bound <= tolerance]
        if unconfirmed:
            bounds.update(self._finder.link_gaps(unconfirmed, tolerance))
            if any(not bounds[pair] <= tolerance for pair in unconfirmed):
                return False
        self._watch(bounds)
        return True

    def sharp_pairs_clear(self, manifold: Sequence[tuple]) -> bool:
        """True while Bullet's manifold ``manifold`` (read after the step) holds no point within the
        tolerance of a box pair accounted by its sharp distance (:meth:`_out_of_contact`): such a
        point, persisting from an earlier contact along its old normal, would be a contact of the
        full evaluation."""
        if not self._sharp:
            return True
        sharp, tolerance = self._sharp, self._tolerance
        return not any(point[8] <= tolerance and point[1:5] in sharp for point in manifold)

    def _pair_charge(self, pair: Pair) -> float:
        """What the last step charges the two links of ``pair`` together (:meth:`_step_charge`)."""
        return self._step_charge(pair[0]) + self._step_charge(pair[1])

    def _step_charge(self, link: tuple[int, int]) -> float:
        """What the last step charges ``link`` (as :meth:`_charge_links` does; 0 for a static
        link), on Python floats: a NumPy operation on two scalars costs microseconds."""
        row = self._last_step.get(link[0])
        return 0.0 if row is None else row[link[1] + 1]

    def _watch(self, gaps: dict[Pair, float]) -> None:
        """Keep the watched pairs, each at most ``gaps[pair]`` within the tolerance now, until
        :attr:`most` has grown by the least ``(tolerance - gap) / moving sides``."""
        left = [(self._tolerance - gaps[pair]) / sides for pair, sides in self._watched.items()]
        self._watched_until = self.most + min(left, default=math.inf)

    def touching_holds(self) -> bool:
        """True while no box corner of a link pair in contact can have entered or left contact
        (spent pairs touching through box corners alone are measured again, :meth:`_touch_again`)."""
        if self._holds_since(self._touching_check):
            return True
        check = self._check(self.touching, self._spent)
        if check.spent and self._touch_again(check.spent):
            check = self._check(self.touching, self._spent)
        self._touching_check = None if check.spent else check
        return not check.spent

    def _touch_again(self, spent: list[Pair]) -> bool:
        """Measure the ``spent`` link pairs in contact again when each touches through box corners
        alone: True while the evaluation of the pair (:meth:`~.contacts.ContactFinder.pair_contacts`)
        finds the same corners and nothing else (a manifold point of Bullet's away from them, as
        of a box sliding, is another feature).  Each pair's account is renewed from its corner
        gaps (:meth:`_renew`); a pair whose new slack would be spent within :data:`RENEWED_STEPS`
        steps (feet creeping over the ground: the total-displacement bound charges their lateral
        motion against a slack of 0.1 mm) is checked every step instead (:meth:`measured_hold`)."""
        if not all(pair in self._corner_contacts for pair in spent):
            return False
        for pair in spent:
            if self._pair_features(pair) != self._corner_contacts[pair]:
                return False
            slack = self._renew(pair)
            if slack is not None:
                contacts = self._corner_contacts[pair]
                self._measured[pair] = _Measured(
                    contacts, CornerWatch.start(self._finder, pair, contacts, set(self.spent), self.most), slack
                )
                self.touching[pair] = math.inf
        return True

    def _renew(self, pair: Pair) -> float | None:
        """Give a link pair touching through box corners alone a new account from its corner gaps
        (closed form, :meth:`~.contacts.ContactFinder.corner_gaps`) when the slack outlasts
        :data:`RENEWED_STEPS` steps at the last step's spending; else return the slack."""
        contacts = self._corner_contacts[pair]
        gaps = self._finder.corner_gaps(pair)
        slack = corner_slack(self._tolerance, {feature: gap for feature, gap in gaps.items() if feature in contacts}, gaps)
        if slack <= RENEWED_STEPS * self._pair_charge(pair):
            return slack
        self.touching[pair] = slack + self._spent(pair[0]) + self._spent(pair[1])
        return None

    def measured_hold(self, manifold: Sequence[tuple]) -> bool:
        """True while the evaluation of each link pair checked every step (:meth:`_touch_again`)
        would find the same box corners in contact and nothing else: the full evaluation would
        then find the contact set it found, as it does for the pairs under an account.  A
        :class:`~.corner_watch.CornerWatch` answers from one pose read; where it does not apply
        or cannot tell, the pair is evaluated (:meth:`~.contacts.ContactFinder.corner_pair_features`).
        ``manifold``: Bullet's contact points read after the step (every pair).

        A pair whose links have slowed down so that its last measured slack would outlast
        :data:`RENEWED_STEPS` steps of the last step's spending gets an account again (a body
        that came to rest then costs O(1) a step, not a check)."""
        calmed = []
        for pair, measured in self._measured.items():
            verdict = None if measured.watch is None else measured.watch.holds(self.most, manifold)
            if verdict is None:
                verdict = self._pair_features(pair) == measured.corners
            if not verdict:
                return False
            if RENEWED_STEPS * self._pair_charge(pair) < measured.slack:
                calmed.append(pair)
        for pair in calmed:
            slack = self._renew(pair)
            if slack is None:
                del self._measured[pair]
                self._touching_check = None  # the new account is checked one by one next step
            else:
                self._measured[pair] = self._measured[pair]._replace(slack=slack)
        return True

    def _pair_features(self, pair: Pair) -> set[Feature]:
        """The contact features the evaluation of one link pair touching through box corners finds now."""
        return self._finder.corner_pair_features(pair)

    def others_hold(self) -> bool:
        """True while no link pair out of contact can have come within the seed band
        (:data:`~.contacts.SEED_MARGIN`; within the tolerance for the pairs of
        :meth:`_out_of_contact`), no closest-point contact can have left the tolerance, and the
        pairs within the band while no contact touches surely stay inside it (see
        :attr:`in_seed_band`): O(1) while the last one-by-one check's headroom lasts
        (:meth:`_holds_since`)."""
        spent = self._spent
        unsure = [pair for pair, inside in self._banded.items() if spent(pair[0]) + spent(pair[1]) > inside]
        if unsure:  # measured again by remeasure(), as spent accounts are
            self._spent_bodies, self._spent_nearby, self._others_check = [], unsure, None
            return False
        return self._holds_since(self._others_check) or self._check_others()

    def _check_others(self) -> bool:
        """:meth:`others_hold` checking every account out of contact one by one (after they changed)."""
        bodies = self._check(self.bodies, self._unmeasured_spent)
        nearby = self._check(self.nearby, self._spent)
        self._spent_bodies, self._spent_nearby = bodies.spent, nearby.spent
        if bodies.spent or nearby.spent:
            self._others_check = None
            return False
        self._others_check = _Check(min(bodies.static, nearby.static), min(bodies.moving, nearby.moving), [], {**bodies.at, **nearby.at})
        return True

    def measure(self, nearby: dict[Pair, float]) -> bool:
        """Measure the link pairs out of contact and the closest-point contacts anew from the
        closest distances ``nearby`` (:meth:`~.contacts.ContactFinder.pair_gaps` within the
        lookahead); True when the former are beyond the seed band and the latter within the
        tolerance."""
        if any(nearby.get(pair, np.inf) > self._tolerance for pair in self._closest):
            return False
        self._watch(nearby)
        self._sharp, self._banded = {}, {}
        self.nearby = {pair: self._threshold(pair, gap) for pair, gap in nearby.items() if self._accounted(pair)}
        self.bodies = self._beyond(nearby, self._finder.pairs, self._lookahead)
        return self._check_others()

    def _accounted(self, pair: Pair) -> bool:
        """Whether a measured link pair gets an account in :attr:`nearby`: out of contact, or a
        closest-point contact not watched from Bullet's manifold."""
        return (pair not in self.touching or pair in self._closest) and pair not in self._watched

    def _beyond(self, measured: dict[Pair, float], body_pairs: list[tuple[int, int]], reach: float) -> dict[tuple[Side, Side], float]:
        """The account of each of ``body_pairs``' link pairs beyond ``reach`` (those missing from
        ``measured``, every link pair within ``reach``): ``reach - tol - SEED_MARGIN``, to be spent
        by the most any of its links with such a partner has spent (:meth:`_unmeasured_spent`).
        A link measured against every link of the other body (a foot near the ground) does not spend it."""
        links = self._finder.links
        partners: dict[tuple[int, int, int], int] = {}  # (link's body, link, other body) -> measured partners
        for a, b in measured:
            partners[(*a, b[0])] = partners.get((*a, b[0]), 0) + 1
            partners[(*b, a[0])] = partners.get((*b, a[0]), 0) + 1
        band = self._tolerance + SEED_MARGIN
        accounts = {}
        for body_a, body_b in body_pairs:
            sides = []
            for body, other in ((body_a, body_b), (body_b, body_a)):
                unmeasured = tuple(link + 1 for link in links[body] if partners.get((body, link, other), 0) < len(links[other]))
                sides.append((body, unmeasured))
            accounts[sides[0], sides[1]] = reach - band + self._unmeasured_spent(sides[0]) + self._unmeasured_spent(sides[1])
        return accounts

    def _unmeasured_spent(self, side: Side) -> float:
        """The most any of ``side``'s links (``(body, indices)``, index 0 the base) has spent (0 for a static body)."""
        body, indices = side
        if body not in self.spent or not indices:
            return 0.0
        if self._pending:
            self._charge_links()
        spent = self.spent[body]
        return max([spent[index] for index in indices])

    def remeasure(self) -> bool:
        """Measure again what :meth:`others_hold` just found spent: the spent link pairs (one
        ``getClosestPoints`` each, :meth:`~.contacts.ContactFinder.link_gaps`), or the body pairs
        whose account beyond the lookahead is spent (:meth:`_measure_far`)."""
        if self._spent_bodies:
            return self._measure_far([(a[0], b[0]) for a, b in self._spent_bodies])
        spent = self._spent_nearby
        gaps = self._finder.link_gaps(spent, self._lookahead)
        if any(gaps.get(pair, np.inf) > self._tolerance for pair in spent if pair in self._closest):
            return False
        self.nearby.update((pair, self._threshold(pair, gaps.get(pair, self._lookahead))) for pair in spent)
        return self._sweep_if_fleeting([pair for pair in spent if pair not in self._closest]) and self._check_others()

    def _measure_far(self, body_pairs: list[tuple[int, int]]) -> bool:
        """Measure ``body_pairs`` again, every link pair within :data:`FAR_REACH` lookaheads (one
        ``getClosestPoints`` per body pair): each gets an account of its own, and the body pair one
        for the link pairs beyond that reach (an arm high above the floor keeps it for long)."""
        reach = FAR_REACH * self._lookahead
        gaps = self._finder.pair_gaps(reach, pairs=body_pairs)
        if any(gap > self._tolerance for pair, gap in gaps.items() if pair in self._closest):
            return False
        self.nearby.update((pair, self._threshold(pair, gap)) for pair, gap in gaps.items() if self._accounted(pair))
        self.bodies = {sides: slack for sides, slack in self.bodies.items() if _bodies(sides) not in body_pairs}
        self.bodies.update(self._beyond(gaps, body_pairs, reach))
        return self._check_others()

    def _sweep_if_fleeting(self, measured: list[Pair]) -> bool:
        """Sweep the body pair of each just ``measured`` link pair out of contact whose new account
        would be spent within :data:`SWEPT_STEPS` steps at the last step's spending (a swinging
        foot): one seed query a step (:meth:`swept_clear`) costs less than measuring its spent
        accounts again every step or two.  True when the body pairs swept anew are clear now (the
        other swept ones were checked this step already)."""
        fleeting = {
            _bodies(pair)
            for pair in measured
            if self.nearby[pair] - self._spent(pair[0]) - self._spent(pair[1]) <= SWEPT_STEPS * self._pair_charge(pair)
        } - self._swept
        if not fleeting:
            return True
        self._swept |= fleeting
        self._drop_swept_accounts()
        return self._clear(fleeting)

    def _drop_swept_accounts(self) -> None:
        """Drop the accounts of the swept body pairs' link pairs out of contact, those beyond the
        lookahead included, and stop watching their closest-point contacts from Bullet's
        manifold: :meth:`swept_clear` covers them all."""
        swept, closest = self._swept, self._closest
        self.nearby = {pair: slack for pair, slack in self.nearby.items() if _bodies(pair) not in swept or pair in closest}
        self._banded = {pair: inside for pair, inside in self._banded.items() if pair in self.nearby}
        self.bodies = {sides: slack for sides, slack in self.bodies.items() if _bodies(sides) not in swept}
        for pair in [pair for pair in self._watched if _bodies(pair) in swept]:
            del self._watched[pair]
            self._swept_watched.setdefault(_bodies(pair), []).append(pair)
        self._watched_keys = {key: pair for key, pair in self._watched_keys.items() if pair in self._watched}

    def swept_clear(self) -> bool:
        """True while no link pair of a swept body pair out of contact can be a contact of the full
        evaluation: the query with which it seeds its contacts
        (:meth:`~.contacts.ContactFinder.seed_gaps`), once per swept body pair, finds them beyond
        the seed band or with slack left (:meth:`_clear`)."""
        return self._clear(self._swept)

    def _clear(self, swept: set[tuple[int, int]]) -> bool:
        """Whether the seed query of each of the ``swept`` body pairs finds its watched contacts
        within the tolerance, and no other link pair but those in contact, or out of contact with
        slack left (:meth:`_out_of_contact`: a foot just above the ground, its corners and closest
        point beyond the tolerance)."""
        touching, tolerance = self.touching, self._tolerance
        for bodies in swept:
            gaps = self._finder.seed_gaps(*bodies)
            self._seeded = self._seeded or bool(gaps)
            if not all(gaps.get(pair, math.inf) <= tolerance for pair in self._swept_watched.get(bodies, ())):
                return False
            for pair, gap in gaps.items():
                if pair not in touching and not self._out_of_contact(pair, gap) > 0.0:
                    return False
        return True

    @property
    def in_seed_band(self) -> bool:
        """Whether a link pair is within the seed band after a step the certificates held over: a
        contact touches, the query of a swept body pair found one, or a measured pair is surely
        still inside it (:meth:`_threshold`, checked by :meth:`others_hold`).  Otherwise every
        pair is beyond it: while no contact touches, the accounts keep the others out.

        The full evaluation runs Bullet's collision detection exactly then, and that detection
        changes Bullet's later steps (:meth:`~bullet_setimpact.bullet.simulator.ImpactSimulator._detect`):
        a skipped step runs it too when this holds."""
        return bool(self.touching) or self._seeded or bool(self._banded)

    def _threshold(self, pair: Pair, gap: float) -> float:
        """The account of a link pair at closest distance ``gap``: a closest-point contact
        stays within the tolerance, another pair out of contact (:meth:`_out_of_contact`).

        While no contact touches, a pair beyond the seed band must stay beyond it, and one
        within it is kept in :attr:`_banded` until its links have spent what would take it
        out (see :attr:`in_seed_band`)."""
        a, b = pair
        spent = self._spent(a) + self._spent(b)
        band = self._tolerance + SEED_MARGIN
        self._banded.pop(pair, None)
        if pair in self._closest:
            slack = self._tolerance - gap
        elif self.touching or gap <= band:
            slack = self._out_of_contact(pair, gap)
            if not self.touching:
                self._banded[pair] = band - gap + spent
        else:
            slack = gap - band
        return slack + spent

    def _out_of_contact(self, pair: Pair, gap: float) -> float:
        """How far a link pair out of contact at closest distance ``gap`` may close before the
        full evaluation could find a contact of it.

        Bullet's manifold finds box-box contacts with its box-box detector on sharp boxes, but
        ``getClosestPoints`` runs GJK on rounded ones (:data:`~.contacts.SEED_MARGIN`); every
        other pair goes through the same algorithm for both queries (the two create-function
        tables of ``btDefaultCollisionConfiguration`` differ only in box-box).  A persistent
        manifold point keeps the normal it was found with; against the flat faces of a static
        box or plane its distance along that normal is the height of a point of the moving
        link above the face, never below the closest distance.  So a pair of a moving link and
        a static box or plane, not box against box, stays out of contact while its closest
        distance and the box corners of either link (the evaluation's other source, measured
        sharp) stay beyond the tolerance; any other pair must stay out of the seed band.  That
        adds at most ``SEED_MARGIN`` to the slack, so it is measured only for pairs within
        ``SEED_MARGIN`` of the band (a link resting just above the face); a farther one (a
        swinging foot) spends either soon, and its corner gaps would be measured at every step.

        Two boxes within the seed band (jenga blocks side by side, a box by a wall) are measured
        sharp instead (:meth:`~.contacts.ContactFinder.box_gap`): while that distance stays beyond
        the tolerance no corner of either enters it, their rounded closest distance (never below
        the sharp one) stays beyond it too, and a manifold point Bullet keeps from an earlier
        contact is caught by :meth:`sharp_pairs_clear`.
        """
        a, b = pair
        band = self._tolerance + SEED_MARGIN
        if gap <= band and self._box_box(a, b):
            sharp = self._finder.box_gap(pair)
            if sharp is not None and sharp > self._tolerance + SHARP_MARGIN:
                self._sharp.update(dict.fromkeys(point_keys(pair), pair))
                return sharp - self._tolerance - SHARP_MARGIN
        if gap > band + SEED_MARGIN or (a[0] in self.spent) == (b[0] in self.spent):  # far, or two moving links
            return gap - band
        static = b if a[0] in self.spent else a
        if not self._finder.geometries(*static) <= {p.GEOM_BOX, p.GEOM_PLANE} or self._box_box(a, b):
            return gap - band
        return min(gap, min(self._finder.corner_gaps(pair, near=gap).values(), default=np.inf)) - self._tolerance

    def _box_box(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        """Whether both links have a box (Bullet's manifold measures them sharp, ``getClosestPoints`` rounded)."""
        return p.GEOM_BOX in self._finder.geometries(*a) and p.GEOM_BOX in self._finder.geometries(*b)

    def _spent(self, link: tuple[int, int]) -> float:
        if self._pending:
            self._charge_links()
        spent = self.spent.get(link[0])
        return 0.0 if spent is None else spent[link[1] + 1]


def corner_slack(tolerance: float, touching: dict[Feature, float], corners: dict[Feature, float]) -> float:
    """How far a link pair in contact may close or open before a ``touching`` feature (feature ->
    gap) leaves the tolerance or another of its box ``corners`` (feature -> gap) enters it."""
    others = [gap - tolerance for feature, gap in corners.items() if feature not in touching]
    return min([tolerance - gap for gap in touching.values()] + others, default=np.inf)


def budget(
    finder: ContactFinder,
    contacts: list[Contact],
    nearby: dict[Pair, float],
    lookahead: float,
    speeds: dict[int, list[float]],
    still: Collection[tuple[int, int]] = frozenset(),
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
    corner_contacts = {}
    for link_pair, group in groups.items():
        gaps: dict[Feature, float] = {}
        for contact in group:  # a feature stays in contact while its nearest point does
            gaps[contact.feature] = min(gaps.get(contact.feature, np.inf), contact.gap)
        corners = finder.corner_gaps(link_pair)
        if set(gaps) == {("pair", link_pair)}:
            closest.add(link_pair)
            touching[link_pair] = corner_slack(tolerance, {}, corners)
        else:
            touching[link_pair] = corner_slack(tolerance, gaps, corners)
            if all(feature[0] == "vertex" for feature in gaps):
                corner_contacts[link_pair] = set(gaps)
    result = DistanceBudget(finder, touching, closest, lookahead, speeds, corner_contacts, still)
    return result if result.touching_holds() and result.measure(nearby) else None
