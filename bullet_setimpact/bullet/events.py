"""Impact-event detection and time localization, as ``scipy.integrate.solve_ivp`` does events.

Detection (:func:`arrivals`, :func:`pushed_by_bullet`) looks at the world after a trial
step; localization (:func:`localize`) finds the time the arriving gap reaches its target.

An impact event is a gap function crossing into contact: ``g(t) = min gap of the
candidate link pairs - target``, with ``g(0) > 0`` at the start of the interval.  Like
``solve_ivp``'s ``find_active_events``/``solve_event_equation`` pair, detection is a mask
over the pairs and localization a bracketed root find (``brentq``) on ``g``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np
import pybullet as p
from scipy.optimize import brentq

from .configuration import Configuration
from .contacts import Contact, ContactFinder, Feature, PointKey, feature_pair, point_keys
from .frames import cross, inertial_position, link_velocity
from .model import WorldModel

#: A link's centre of mass, linear and angular velocity, world frame.
LinkMotion = tuple[Sequence[float], Sequence[float], Sequence[float]]


class LinkVelocities:
    """The links' velocities at one instant, each read once: Bullet's (:func:`~.frames.link_velocity`),
    but the model's (``J v``) for the links of the bodies in ``models`` (each body's own model,
    :meth:`~.model.WorldModel.restrict`): those with a joint axis that is not a unit vector, whose
    velocity Bullet reports along the axis as given (:attr:`.bodies.BodyModel.skewed_axes`)."""

    def __init__(self, client: int, models: Mapping[int, WorldModel] | None = None) -> None:
        self.client = client
        self._models = models or {}
        self._links: dict[tuple[int, int], LinkMotion] = {}
        self._bodies: dict[int, tuple[Configuration, np.ndarray]] = {}

    def __call__(self, body: int, link: int) -> LinkMotion:
        if (body, link) not in self._links:
            model = self._models.get(body)
            self._links[body, link] = (
                link_velocity(self.client, body, link) if model is None or link == -1 else self._modelled(model, body, link)
            )
        return self._links[body, link]

    def _modelled(self, model: WorldModel, body: int, link: int) -> LinkMotion:
        if body not in self._bodies:
            self._bodies[body] = (model.configuration(), model.velocity())
        configuration, velocity = self._bodies[body]
        com = inertial_position(self.client, body, link)
        linear = configuration.point_jacobian(body, link, com) @ velocity
        angular = configuration.angular_jacobian(body, link) @ velocity
        return com.tolist(), linear.tolist(), angular.tolist()


def normal_velocity(contact: Contact, links: LinkVelocities) -> float:
    """Separating velocity ``n . (v_A(p_A) - v_B(p_B))`` of a contact's material points [m/s].

    ``links``: the links' velocities at this instant, shared by its contacts.  On Python floats:
    the operations of numpy's vector arithmetic and short dot product."""
    a = _point_velocity(links, contact.body_a, contact.link_a, contact.position_a.tolist())
    b = _point_velocity(links, contact.body_b, contact.link_b, contact.position_b.tolist())
    n = contact.normal.tolist()
    return n[0] * (a[0] - b[0]) + n[1] * (a[1] - b[1]) + n[2] * (a[2] - b[2])


def _point_velocity(links: LinkVelocities, body: int, link: int, point: list[float]) -> tuple[float, float, float]:
    """World velocity ``v + omega x (p - com)`` of the material point of a link at ``point``."""
    com, linear, angular = links(body, link)
    turning = cross(angular, (point[0] - com[0], point[1] - com[1], point[2] - com[2]))
    return linear[0] + turning[0], linear[1] + turning[1], linear[2] + turning[2]


def arrivals(
    client: int, contacts: list[Contact], touching: Collection[Feature], threshold: float, models: Mapping[int, WorldModel] | None = None
) -> tuple[list[Contact], list[Feature]]:
    """Contacts approaching faster than ``threshold`` that were not touching, and the features
    among them that crossed into contact (gap <= 0); ``models``: as :class:`LinkVelocities`'."""
    links = LinkVelocities(client, models)
    approaching = [c for c in contacts if c.feature not in touching and normal_velocity(c, links) < -threshold]
    return approaching, [c.feature for c in approaching if c.gap <= 0.0]


def contact_points(client: int) -> tuple:
    """PyBullet's ``getContactPoints()``: every manifold point of every pair.

    ``-1, -1, -2, -2`` are its defaults (any body, any link).  They are given by position so
    that the client can be too: PyBullet parses keyword arguments measurably slower."""
    return p.getContactPoints(-1, -1, -2, -2, client)


class BulletPoints:
    """Bullet's contact points after one Bullet step, read at most once, when first asked for:
    the detection and the resting-contact certificates of a step share them."""

    def __init__(self, client: int) -> None:
        self.client = client
        self._manifold: Sequence[tuple] | None = None

    @property
    def manifold(self) -> Sequence[tuple]:
        """``getContactPoints()`` after the step (:func:`contact_points`)."""
        if self._manifold is None:
            self._manifold = contact_points(self.client)
        return self._manifold


def pushed_by_bullet(
    client: int,
    finder: ContactFinder,
    dynamic: Collection[int],
    tolerance: float,
    touching: Collection[Feature],
    touching_keys: Collection[PointKey] | None = None,
    points: Sequence[tuple] | None = None,
) -> dict[Feature, list[tuple]]:
    """Features Bullet pushed in the last step while they were out of contact, each with its
    pushed points, mapped to the nearest box corner of the pair (or to the pair itself):
    manifold points with a normal impulse and a gap beyond the tolerance (Bullet's speculative
    contacts respond before penetration, e.g. a tilted box corner 1 mm above the floor), and any
    pushed point of a link pair that was not touching at all (Bullet stops a wheel or a mesh
    landing within the step, so after it the point neither penetrates nor approaches).
    ``touching_keys``: the link pairs of ``touching`` as PyBullet's points name them
    (:func:`~.contacts.point_keys`), when the caller knows them; ``points``: PyBullet's
    ``getContactPoints()`` after the step, when the caller has read it.  Read before Bullet
    detects again, a point holds the step's start: ``stepSimulation`` detects before it
    integrates (:func:`absorbed_impacts`)."""
    pushed: dict[Feature, list[tuple]] = {}
    if touching_keys is None:
        touching_keys = {key for feature in touching for key in point_keys(feature_pair(feature))}
    for point in contact_points(client) if points is None else points:
        if point[9] <= 0.0 or (point[8] <= tolerance and point[1:5] in touching_keys):
            continue
        if point[1] not in dynamic and point[2] not in dynamic:
            continue
        feature = finder.nearest_feature((point[1], point[3]), (point[2], point[4]), np.array(point[5]), np.array(point[6]))
        if feature not in touching:
            pushed.setdefault(feature, []).append(point)
    return pushed


def absorbed_impacts(
    pushed: Mapping[Feature, list[tuple]],
    end_gaps: Mapping[Feature, float],
    model: WorldModel,
    start: np.ndarray,
    duration: float,
    threshold: float,
) -> dict[Feature, float]:
    """The features among ``pushed`` (:func:`pushed_by_bullet`, the points of a Bullet step of
    ``duration`` read before Bullet detects again) whose impact Bullet's speculative contact
    absorbed in that step, each with the gap its free flight would have closed to (``<= 0``).

    A feature's impact was absorbed when one of its points, at the step's start, approached
    faster than ``threshold``, so fast that its own approach would have taken it into contact
    within the step (``d + v dt <= 0``, ``d`` Bullet's distance at the start), and when Bullet's
    impulses at the feature are what stopped it: without them it would have ended the step in
    contact (``g - dt w lambda <= 0``, ``g`` its gap now from ``end_gaps``, ``w = n J M^-1 J^T``
    over its points), as every such feature that ended it in contact did (Bullet stopped it at
    the surface, not at the time its free flight met it).  A corner held out of contact against
    the step's forces (bearing load beside a touching foot) does not approach at the start; one
    whose approach its body's other contacts turned (Bullet's impulse at it about zero) was not
    stopped by Bullet.  ``start``:
    the model's velocity at the start; it, ``M`` and the Jacobians are taken at the configuration
    now, at Bullet's points (where the links were at the start): first order in ``duration``."""
    configuration = model.configuration()
    found: dict[Feature, float] = {}
    mass_matrix: np.ndarray | None = None
    for feature, points in pushed.items():
        rows = np.array([_normal_row(model, configuration, point) for point in points])
        speeds = rows @ start
        closing = [float(point[8] + speed * duration) for point, speed in zip(points, speeds.tolist(), strict=True) if speed < -threshold]
        if not closing or min(closing) > 0.0:
            continue
        if mass_matrix is None:
            mass_matrix = configuration.mass_matrix()
        impulses = np.array([point[9] * duration for point in points])  # normalForce is Bullet's impulse over its step
        # M dv = J^T lambda; least squares, as M of a model with massless links may be singular
        pushed_off = float(np.max(rows @ np.linalg.lstsq(mass_matrix, rows.T @ impulses, rcond=None)[0]))
        if end_gaps[feature] - duration * pushed_off <= 0.0:
            found[feature] = min(closing)
    return found


def _normal_row(model: WorldModel, configuration: Configuration, point: tuple) -> np.ndarray:
    """``n (J_A - J_B)`` of a Bullet contact point at ``configuration`` (of ``model``): its separating
    velocity's row, a link of a body the model leaves out taken as still."""
    jacobians = [
        configuration.point_jacobian(body, link, np.array(position)) if body in model.body_ids else np.zeros((3, model.nv))
        for body, link, position in ((point[1], point[3], point[5]), (point[2], point[4], point[6]))
    ]
    return np.array(point[7]) @ (jacobians[0] - jacobians[1])


class _Landed(Exception):  # noqa: N818 (a signal that ends the root find, not an error)
    """Raised inside the root find when the gap has landed in its band: ``tau`` is the answer."""

    def __init__(self, tau: float) -> None:
        super().__init__(tau)
        self.tau = tau


def localize(
    gap_after: Callable[[float], float],
    duration: float,
    target: float,
    start_gap: float,
    end_gap: float,
    accuracy: float,
    within: float | None = None,
) -> float:
    """Time ``tau`` in ``(0, duration]`` at which ``gap_after(tau)`` reaches ``target``.

    ``gap_after(tau)`` simulates ``tau`` seconds from the interval's start and returns the
    smallest gap of the crossing pairs; ``start_gap > target`` and ``end_gap`` are its
    values at 0 and ``duration``, already known to the caller (so the root finder does not
    pay two more simulations for them).  When ``end_gap`` is still above ``target`` (the
    pair ended within the tolerance band) the event is at the end.

    The root find (``brentq``) stops as soon as a gap lands within ``accuracy / 2`` of
    ``target``: every evaluation is a Bullet re-simulation, and Brent's first (secant) step
    from the two known ends usually lands there already, within ``g dt^2 / 8`` of the
    target under gravity alone.  Otherwise ``xtol`` asks for the same band at the mean
    approach speed, as a bound on the bracket.  The returned ``tau`` is the last one
    evaluated whenever a gap landed, so the world is already there.

    A re-simulation may hold the pair out where the step that found it did not (Bullet's
    speculative contact, on a point its collision detection put in the manifold since): the gap
    then stays at the surface, above ``target``, and the root find closes on the step's end.
    With ``within`` (the contact tolerance), that end is replaced by the first time the gap is
    within it, bisected to ``xtol`` (:func:`_first_within`; the world is then where the last
    simulation left it, not necessarily there).
    """
    if end_gap >= target:
        return duration
    known = {0.0: start_gap, duration: end_gap}
    speed = max(start_gap - end_gap, 0.0) / duration
    band = 0.5 * accuracy
    xtol = min(duration / 64.0, max(1e-12, band / max(speed, 1e-9)))
    gaps: dict[float, float] = {}  # the gaps simulated, by time

    # SciPy's brentq wraps the function in one that refers to itself: a reference cycle that
    # would hold gap_after, and through it the caller's simulator and its world, until the
    # garbage collector runs.  The function it gets reaches gap_after only during the call.
    evaluate = [gap_after]

    def distance_to_target(tau: float) -> float:
        if tau in known:
            return known[tau] - target
        gaps[tau] = evaluate[0](tau)
        distance = gaps[tau] - target
        if abs(distance) <= band:
            raise _Landed(tau)
        return distance

    try:
        try:
            tau = float(brentq(distance_to_target, 0.0, duration, xtol=xtol, rtol=4 * np.finfo(float).eps))
        except _Landed as landed:
            return landed.tau
        if within is None or duration - tau > xtol or not gaps or min(gaps.values()) <= target:
            return tau
        return _first_within(evaluate[0], gaps, duration, within, xtol)
    finally:
        evaluate.clear()


def _first_within(gap_after: Callable[[float], float], gaps: dict[float, float], duration: float, within: float, xtol: float) -> float:
    """The first time, to ``xtol``, at which the gap is at most ``within``: bisected between the
    first simulated time with such a gap (``gaps``: gap by time simulated; the step's end if
    none) and the last simulated time before it with a larger gap (the start if none)."""
    high = min((tau for tau, gap in gaps.items() if gap <= within), default=duration)
    low = max((tau for tau, gap in gaps.items() if tau < high and gap > within), default=0.0)
    while high - low > xtol:
        middle = 0.5 * (low + high)
        if gap_after(middle) > within:
            low = middle
        else:
            high = middle
    return high
