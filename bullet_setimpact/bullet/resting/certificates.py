"""Resting-contact certificates: invariants that let a resting step skip the contact evaluation.

After a full contact evaluation found no arrival, :class:`RestingContact` opens a
:class:`~.budget.DistanceBudget` (the ledger of accounts below). After every Bullet step it
checks each :class:`Certificate` in turn. Each certificate states one invariant. Together they
prove that the full evaluation would find the contact set it last found: no feature arrived,
none left. While all hold, the simulator skips the evaluation, but for Bullet's collision
detection, run as the evaluation would when a link pair is within the seed band
(:meth:`RestingContact.holds`; the last certificate reads what it found). The first one that
fails drops the budget, and the next full evaluation opens a new one.

Glossary
--------
feature
    What the contact evaluation names a contact by: a box corner of a link pair (a vertex),
    or the pair's closest point (:mod:`~bullet_setimpact.bullet.contacts`); a point Bullet
    found beside a pair's touching points is a feature of its own (a gained point).
tolerance
    The contact tolerance: a feature whose gap is at most it is in contact.
seed band
    Closest distances in ``(tolerance, tolerance + SEED_MARGIN]``: a pair there is evaluated in
    full, since GJK's rounded boxes and Bullet's sharp ones may disagree that close.
lookahead
    The distance beyond which body pairs are not measured link pair by link pair.
slack
    How far a link pair's features may move before the evaluation could answer differently.
spent
    A bound on how far any point of a link has moved since the budget opened. Each step adds the
    bound of its displacement between the step's start and end configurations
    (:meth:`~.budget.MotionBound.displacements`).
most
    The same sum taken with the largest bound of any link: it bounds every link's spent. Each
    moving body has its own, taken over its links.
pending
    Steps already added to ``most`` but not yet to each link's spent; they are charged at the
    next one-by-one check of the accounts.
account
    A link pair's slack, kept as a threshold on what its two links have spent. It holds while
    ``spent(a) + spent(b) < threshold``. A pair measured again keeps its account.
headroom
    The least ``threshold - spent`` that the last one-by-one check found. Until the ``most`` of
    one of the bodies checked has grown by it (by half of it for two moving links), no account
    can be spent: an O(1) check. The touching accounts and the others are checked apart.
watched
    A closest-point contact (a sphere, mesh or capsule resting on the ground) without an
    account: Bullet's contact manifold bounds its gap each step.
measured
    A link pair touching through box corners alone whose renewed slack would be spent within a
    few steps (feet creeping): it is checked every step, by a
    :class:`~.corner_watch.CornerWatch` or by evaluating the pair alone.
calmed
    A measured pair whose links slowed down enough for an account to outlast a few steps: it
    gets the account back.
sharp
    Two boxes within the seed band, accounted by their exact box-box distance rather than by
    GJK's rounded one.
swept
    A body pair whose accounts out of contact would be spent every few steps (a swinging leg
    over the ground): instead of accounts, the query that seeds the full evaluation is made for
    it every step, and must find no link pair within the seed band but those in contact (or
    out of contact with slack left), and its closest-point contacts within the tolerance.
banded
    While no contact touches, a link pair measured within the seed band: the full evaluation
    would run Bullet's collision detection, so a skipped step does too while the pair surely
    stays inside (past that it is measured again).  The other pairs then stay out of the band.

The certificates are checked in the order :class:`RestingContact` lists them, cheapest first;
the first that fails ends the check. They share the ledger: a certificate may renew an account
or measure a pair again, and those that follow read the renewed ledger.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence

import pybullet as p

from ..contacts import Contact, ContactFinder, Feature, Pair, Touched
from ..events import BulletPoints, pushed_by_bullet
from ..state import Snapshot
from .budget import DistanceBudget, MotionBound, budget


class AfterStep:
    """What the certificates read after one Bullet step. Bullet's contact points (``manifold``)
    are read at most once for the step (:class:`~..events.BulletPoints`), and only when asked for."""

    def __init__(self, points: BulletPoints, touching: Collection[Feature], touching_keys: Collection[tuple]) -> None:
        self.client = points.client
        self.points = points
        #: The features in contact at the last full evaluation.
        self.touching = touching
        #: Their link pairs, as PyBullet's contact points name them.
        self.touching_keys = touching_keys

    @property
    def manifold(self) -> Sequence[tuple]:
        """``getContactPoints()`` after the step."""
        return self.points.manifold


class Certificate(ABC):
    """One invariant of a resting world, checked after every step the budget covers.

    Contract: :meth:`holds` returns True only if, over the step just taken, no feature of the
    full contact evaluation can have changed in the way this certificate covers. It may
    update the ledger (renew accounts, measure pairs again), never the world.
    """

    @abstractmethod
    def holds(self, after: AfterStep) -> bool:
        """Whether the invariant held over the step just taken."""


class CornerAccounts(Certificate):
    """No box corner of a link pair in contact entered or left contact.

    Each such pair's account is its corner slack. A spent pair touching through box corners
    alone is evaluated again on its own, and kept while the same corners touch
    (:meth:`~.budget.DistanceBudget.touching_holds`)."""

    def __init__(self, ledger: DistanceBudget) -> None:
        self.ledger = ledger

    def holds(self, after: AfterStep) -> bool:
        return self.ledger.touching_holds()


class NoSpeculativePush(Certificate):
    """Bullet pushed no point of a link pair out of contact. Its speculative contacts respond
    before penetration; such a push is an impact the accounts do not bound
    (:func:`~bullet_setimpact.bullet.events.pushed_by_bullet`)."""

    def __init__(self, finder: ContactFinder, dynamic: Collection[int]) -> None:
        self.finder = finder
        self.dynamic = dynamic

    def holds(self, after: AfterStep) -> bool:
        finder = self.finder
        return not pushed_by_bullet(
            after.client, finder, self.dynamic, finder.tolerance, after.touching, after.touching_keys, after.manifold
        )


class WatchedContacts(Certificate):
    """Every watched closest-point contact is still within the tolerance, by Bullet's manifold
    or else by one ``getClosestPoints`` each (:meth:`~.budget.DistanceBudget.watched_hold`)."""

    def __init__(self, ledger: DistanceBudget) -> None:
        self.ledger = ledger

    def holds(self, after: AfterStep) -> bool:
        return self.ledger.watched_hold(after.manifold)


class SharpPairsClear(Certificate):
    """Bullet's manifold holds no point within the tolerance for a sharp box pair: a point kept
    from an earlier contact along its old normal would be a contact of the full evaluation
    (:meth:`~.budget.DistanceBudget.sharp_pairs_clear`)."""

    def __init__(self, ledger: DistanceBudget) -> None:
        self.ledger = ledger

    def holds(self, after: AfterStep) -> bool:
        return self.ledger.sharp_pairs_clear(after.manifold)


class SweptPairsClear(Certificate):
    """No link pair of a swept body pair came within the seed band, but those in contact or out
    of contact with slack left; its closest-point contacts are still within the tolerance: one
    seed query per swept body pair (:meth:`~.budget.DistanceBudget.swept_clear`)."""

    def __init__(self, ledger: DistanceBudget) -> None:
        self.ledger = ledger

    def holds(self, after: AfterStep) -> bool:
        return self.ledger.swept_clear()


class OutOfContactAccounts(Certificate):
    """No link pair out of contact came within the seed band (within the tolerance, for the
    pairs against a static box or plane), and no closest-point contact left the tolerance.
    Spent accounts are measured again before the certificate fails
    (:meth:`~.budget.DistanceBudget.others_hold`, :meth:`~.budget.DistanceBudget.remeasure`)."""

    def __init__(self, ledger: DistanceBudget) -> None:
        self.ledger = ledger

    def holds(self, after: AfterStep) -> bool:
        return self.ledger.others_hold() or self.ledger.remeasure()


class MeasuredPairs(Certificate):
    """Every measured pair still touches through the same box corners and nothing else
    (:meth:`~.budget.DistanceBudget.measured_hold`). Calmed pairs get an account back."""

    def __init__(self, ledger: DistanceBudget) -> None:
        self.ledger = ledger

    def holds(self, after: AfterStep) -> bool:
        return self.ledger.measured_hold(after.manifold)


class NoPointGained(Certificate):
    """No link pair touching through Bullet's points alone gained a point beside them (a capsule
    resting on one end, its other end landing), which no account bounds: read from Bullet's
    manifold as the collision detection of the skipped step left it, as the full evaluation
    reads it (:meth:`~.contacts.ContactFinder.manifold_touch`), and checked after that detection
    (:meth:`RestingContact.holds`).  Where the pairs touch is the simulator's record
    (``touched``, :meth:`~.contacts.ContactFinder.touched_points`), which the full evaluation
    renews at every step: once every pair holds, this certificate renews it in place the same
    way, so the evaluation that follows a skipped stretch tells points apart as the reference
    path would."""

    def __init__(self, finder: ContactFinder, touched: Touched) -> None:
        self.finder = finder
        self.touched = touched

    def holds(self, after: AfterStep) -> bool:
        now = {}
        for pair, points in self.touched.items():
            touch = self.finder.manifold_touch(pair, points)
            if touch is None:
                return False
            now[pair] = touch
        self.touched.update(now)
        return True


class RestingContact:
    """Opens, checks and drops the distance budget of one simulator's resting world.

    A budget that skipped no step makes the next one wait ``backoff`` quiet steps, doubling up
    to ``max_backoff``, so a world that never rests does not pay for a budget every step.

    Parameters
    ----------
    finder : ContactFinder
        The simulator's contact evaluation.
    motion_bound : MotionBound
        Point-speed and displacement bounds of every moving body's links.
    dynamic : collection of int
        The bodies the simulator tracks.
    snapshot : callable
        Reads the tracked bodies' state now.
    lookahead : float
        Distance [m] beyond which body pairs are not measured pair by pair.
    max_backoff : int
        Most quiet steps between two attempts to open a budget.
    """

    def __init__(
        self,
        finder: ContactFinder,
        motion_bound: MotionBound,
        dynamic: Collection[int],
        snapshot: Callable[[], Snapshot],
        lookahead: float,
        max_backoff: int,
    ) -> None:
        self.finder = finder
        self.motion_bound = motion_bound
        self.dynamic = dynamic
        self.snapshot = snapshot
        self.lookahead = lookahead
        self.max_backoff = max_backoff
        self.ledger: DistanceBudget | None = None
        #: The state the open budget last read (the configuration the next step starts from).
        self._configuration: Snapshot | None = None
        self.certificates: tuple[Certificate, ...] = ()
        #: The certificate checked after the collision detection (:meth:`holds`).
        self.gained: NoPointGained | None = None
        #: Whether the last :meth:`holds` ran Bullet's collision detection.
        self.detected = False
        #: Steps the open budget has skipped, the back-off and the quiet steps left to wait.
        self._age = self._backoff = self._wait = 0

    def open(self, contacts: list[Contact], nearby: Mapping[Pair, float], touched: Touched) -> Snapshot | None:
        """Open a budget after a full evaluation found ``contacts`` (all touching, no arrival),
        with ``nearby`` the closest distances within the lookahead and ``touched`` the simulator's
        record of where its pairs touch (renewed in place, :class:`NoPointGained`). Returns the
        state it read now, or None while backing off."""
        if self._wait > 0:
            self._wait -= 1
            return None
        end = self.snapshot()
        self.ledger = budget(self.finder, contacts, dict(nearby), self.lookahead, self.motion_bound.speeds(end), self.motion_bound.still)
        self._configuration = end
        self._age = 0
        if self.ledger is None:
            self._failed()
            return end
        ledger = self.ledger
        self.certificates = (
            CornerAccounts(ledger),
            NoSpeculativePush(self.finder, self.dynamic),
            WatchedContacts(ledger),
            SharpPairsClear(ledger),
            SweptPairsClear(ledger),
            OutOfContactAccounts(ledger),
            MeasuredPairs(ledger),
        )
        self.gained = NoPointGained(self.finder, touched)
        return end

    def holds(self, touching: Collection[Feature], points: BulletPoints) -> Snapshot | None:
        """After a Bullet step from the touching set ``touching`` (``points``: Bullet's contact
        points after it): the state now when every certificate holds (the step may skip the
        evaluation), else None (the budget is dropped).  The step started from the state the
        last call (or :meth:`open`) read: the simulator drops the budget when the user moves a body.

        When the certificates before it hold and a link pair is within the seed band, Bullet's
        collision detection runs as the full evaluation would run it (whose detection changes
        Bullet's later steps, :meth:`~bullet_setimpact.bullet.simulator.ImpactSimulator._detect`),
        and :class:`NoPointGained` reads what it found (:attr:`detected` says it ran)."""
        self.detected = False
        ledger = self.ledger
        if ledger is None:
            return None
        end = self.snapshot()
        assert self._configuration is not None  # read with the ledger
        ledger.spend(self.motion_bound.displacements(self._configuration, end))
        self._configuration = end
        after = AfterStep(points, touching, ledger.touching_keys)
        if all(certificate.holds(after) for certificate in self.certificates):
            if not ledger.in_seed_band:
                self._age += 1
                return end
            p.performCollisionDetection(after.client)
            self.detected = True
            assert self.gained is not None  # made with the certificates
            if self.gained.holds(after):
                self._age += 1
                return end
        self._failed()
        return None

    def drop(self) -> None:
        """Forget the budget without backing off (an event, or the user moved a body)."""
        self.ledger = None
        self.certificates = ()
        self.gained = None

    def _failed(self) -> None:
        """Drop the budget; back off from opening the next if this one skipped no step."""
        self._backoff = min(max(1, 2 * self._backoff), self.max_backoff) if self._age == 0 else 0
        self._wait = self._backoff
        self.drop()
