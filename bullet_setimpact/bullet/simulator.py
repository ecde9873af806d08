"""``ImpactSimulator``: a drop-in for ``p.stepSimulation()`` that hands every impact to a law.

Each call of :meth:`ImpactSimulator.step` advances one Bullet time step, in stages that
share one per-step context (:class:`_Step`); a world stepped in ``numSubSteps`` substeps is
advanced substep by substep, each through the same stages (:meth:`ImpactSimulator.step`):

0. begin: model the world anew if the user's code changed it (:mod:`.following`), take the
   step commands (torques, external forces) to issue again in every partial Bullet step, and
   snapshot the world (:class:`~bullet_setimpact.bullet.state.Snapshot`);
1. detect: let Bullet take a trial step; an impact arrives when a link pair came into contact
   (gap <= ``contact_tolerance``) approaching faster than ``impact_velocity_threshold``, or
   Bullet pushed a point that was not in contact (its speculative-contact response) and the
   point is in contact after the trial, or Bullet's push stopped it short of contact when its
   own approach would have taken it in (:func:`.events.absorbed_impacts`);
2. localize: roll back and find the contact time by root finding on the gap (:mod:`.events`),
   so Bullet never applies its own impact impulse;
3. resolve: at the event, collect the active contact set once (every point within the
   tolerance, resting contacts included); for each cluster with a contact that arrived, build
   the impact problem (``M(q)``, the contact Jacobians, restitution, external force) and, if
   an arrived contact approaches in it, resolve it with the law (every contact of the cluster),
   check the outcome and write ``v+`` back;
4. finish the rest of the step the same way.  Resting contact after the impact is
   Bullet's job.  More than ``max_events_per_step`` events in one step (chattering, Zeno)
   are reported with an :class:`~bullet_setimpact.errors.EventCapWarning` and Bullet
   finishes that step.

Resting contact costs little more than Bullet's step: after a full contact evaluation that
found nothing arriving, the resting-contact certificates (:mod:`.resting.certificates`) bound
how far the bodies can move before the evaluation could answer differently, and while they
hold only Bullet's step, a speed bound and the check of Bullet's points are paid.
"""

from __future__ import annotations

import functools
import logging
import math
import weakref
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pybullet as p

from .._threads import blas_controller, one_blas_thread
from ..core.problem import ImpactProblem, free_basis, friction_basis
from ..errors import (
    ConstraintIgnoredWarning,
    EventCapWarning,
    ImpactFailure,
    JointAxisWarning,
    RestitutionIgnoredWarning,
    SetImpactError,
    UnstableDampingWarning,
    warn,
)
from ..laws import get_law
from ..laws.anitescu_potra import AnitescuPotraImpact
from ..laws.base import ImpactResult, as_generator
from ..laws.checked import CheckedLaw
from ..validation import positive_int, positive_number
from . import following
from .assembly import clusters, combined_restitution, contact_problem
from .configuration import Configuration
from .constraints import UserConstraint, constraint_rows, join_clusters, read_constraints
from .contacts import SEED_MARGIN, Contact, ContactFinder, Feature, Touched
from .damping import unstable_damping
from .events import BulletPoints, absorbed_impacts, arrivals, localize, pushed_by_bullet
from .inventory import check_client
from .model import WorldModel
from .motors import MotorHold
from .resting.budget import MotionBound
from .resting.certificates import RestingContact
from .state import Snapshot

logger = logging.getLogger("bullet_setimpact")

#: Impacts are localized where the arriving gap reaches this fraction of the tolerance
#: (inside contact; outside for Bullet's speculative contacts).
TARGET_FRACTION = 0.1
#: Distance [m] within which a link pair may reach contact in one step: beyond it nothing
#: is snapshotted (free flight costs one ``getClosestPoints`` per body pair).  A point
#: faster than ``LOOKAHEAD / dt`` (24 m/s at 240 Hz) could arrive unannounced; it is then
#: resolved at the step's end with a logged warning.
LOOKAHEAD = 0.1
#: Most quiet steps between two attempts to open a distance budget (:mod:`.resting.certificates`).
MAX_BACKOFF = 64
#: PyBullet's error reduction parameters, by their ``setPhysicsEngineParameter`` names: ``erp``
#: (joints and limits, ``btContactSolverInfo::m_erp``), ``contactERP`` (contacts, ``m_erp2``,
#: which ``PhysicsServerCommandProcessor`` sets to 0.08) and ``frictionERP`` (friction anchors,
#: set to 0.2).  PyBullet cannot report them back (``getPhysicsEngineParameters`` has no ERP).
PYBULLET_ERP = {"erp": 0.2, "contactERP": 0.08, "frictionERP": 0.2}
#: Bullet's own ``stepSimulation``, bound before :mod:`bullet_setimpact.hooks` can replace
#: ``pybullet.stepSimulation``: the simulator's steps never enter the hook.
bullet_step_simulation = p.stepSimulation
#: PyBullet's own ``setPhysicsEngineParameter``: the partial steps' parameters are not the user's.
set_engine_parameters = following.ORIGINALS["setPhysicsEngineParameter"]


@dataclass(frozen=True)
class ImpactEvent:
    """One resolved impact.

    Attributes
    ----------
    time : float
        Simulated time of the impact [s] (since the simulator was created).
    contacts : tuple of Contact
        The active contact set (bodies, links, points, normals, gaps, friction).
    bodies : tuple of int
        Dynamic bodies involved, in the order of the velocity vectors.
    coordinates : tuple of str
        Names of the velocity entries.
    v_minus, v_plus : ndarray, shape (nv,)
        Generalized velocity of those bodies before and after.  With user constraints among
        them (``problem.constraints``), the law resolved ``problem.constrained_velocity(v_minus)``:
        the constraints hold through the impact (:mod:`.constraints`).
    v_written : ndarray, shape (nv,)
        The velocity PyBullet reported right after ``v_plus`` was written back.
    result : ImpactResult
        The law's full result (impulses, steps, path).
    problem : ImpactProblem
        The impact problem handed to the law.
    energy_before, energy_after : float
        Kinetic energy [J] of ``v_minus`` and ``v_plus``.  ``result.energy_before`` is that of
        the velocity the law resolved: less than ``energy_before`` by what the user constraints'
        own impulse took, equal without constraints.
    max_penetration : float
        Largest penetration among the contacts at the event [m] (``max(0, -min gap)``).
    law : str
        Name of the law that produced ``v_plus`` (the fallback's when it was used).
    failure : str
        Why the simulator's law was not used (empty when it was).
    diagnostics : dict
        Order-independence diagnostics when the simulator was asked for them.
    client : int
        The PyBullet client of the world the impact happened in.
    """

    time: float
    contacts: tuple[Contact, ...]
    bodies: tuple[int, ...]
    coordinates: tuple[str, ...]
    v_minus: np.ndarray
    v_plus: np.ndarray
    v_written: np.ndarray
    result: ImpactResult
    problem: ImpactProblem
    energy_before: float
    energy_after: float
    max_penetration: float
    law: str
    failure: str = ""
    diagnostics: dict[str, Any] = field(default_factory=dict)
    client: int = 0

    def velocities(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        """``(v_minus, v_plus)`` of one body's block."""
        index = [i for i, name in enumerate(self.coordinates) if name.startswith(f"{body}:")]
        return self.v_minus[index], self.v_plus[index]


@dataclass
class _Step:
    """What the stages of one :meth:`ImpactSimulator.step` share.

    Attributes
    ----------
    start : float
        Simulated time at the step's start [s].
    dt : float
        The step's length [s].
    commands : list
        The step commands to issue again in each part (:data:`.following.STEP_COMMANDS`).
    snapshot : Snapshot or None
        The tracked bodies' state at ``start + done`` (None in free flight).
    done : float
        Time advanced so far [s].
    events : list of ImpactEvent
        The events resolved so far.
    spent : bool
        Whether a Bullet step since the commands were issued used them up.
    split : bool
        Whether a Bullet step of this step ran: the next one is a part of a split step, whose
        joint motors are held (:mod:`.motors`).
    end : Snapshot or None
        The state after the last trial, when the resting-contact certificates read it.
    origin : Snapshot or None
        The state the step's first trial started from: its motors' targets (:mod:`.motors`).
    """

    start: float
    dt: float
    commands: list[tuple]
    snapshot: Snapshot | None = None
    done: float = 0.0
    events: list[ImpactEvent] = field(default_factory=list)
    spent: bool = False
    split: bool = False
    end: Snapshot | None = None
    origin: Snapshot | None = None

    @property
    def remaining(self) -> float:
        return self.dt - self.done

    @property
    def finished(self) -> bool:
        return not self.remaining > 1e-9 * self.dt

    @property
    def quiet(self) -> bool:
        """No event yet in this step."""
        return not self.events

    def advance(self, tau: float, events: list[ImpactEvent], snapshot: Callable[[], Snapshot]) -> None:
        """Record ``tau`` seconds more and their ``events``; the rest of the step starts from the
        state ``snapshot()`` reads now."""
        self.done += tau
        self.events += events
        if not self.finished:
            self.snapshot = snapshot()


@dataclass(frozen=True)
class _Arrival:
    """What a trial step found arriving: the features, whether Bullet pushed any before contact,
    their gaps after the trial (where Bullet absorbed the impact, its free flight's,
    :func:`.events.absorbed_impacts`), and the features touching before it and where their link
    pairs touched (:meth:`.contacts.ContactFinder.distinguished`)."""

    features: list[Feature]
    pushed: bool
    end_gaps: dict[Feature, float]
    touching: Collection[Feature]
    touched: Touched


class ImpactSimulator:
    """Drop-in replacement for ``p.stepSimulation()`` that resolves impacts with ``law``.

    Parameters
    ----------
    law : str or object with ``resolve(problem, v_minus, rng) -> ImpactResult``
        Any impact law, or the name of one (:func:`~bullet_setimpact.laws.get_law`, a key
        of :data:`bullet_setimpact.LAWS`); it never sees PyBullet.
    client : int or BulletClient
        PyBullet client id, or a ``pybullet_utils`` ``BulletClient`` (its id is used).
    seed : None, int or SeedSequence
        Seed of the simulator's random generator (passed to the law at each event).
    contact_tolerance : float
        Points with gap <= this are in contact [m] (default 1e-4).
    impact_velocity_threshold : float
        Approach speed above which a new contact is an impact [m/s] (default 1e-3);
        slower arrivals are left to Bullet's resting-contact solver.
    bodies : iterable of int, optional
        Bodies whose impacts are intercepted (default: all).
    max_events_per_step : int
        Events resolved within one Bullet step before Bullet finishes it (default 16): within
        each substep, in a world stepped in substeps.
    on_failure : {"raise", "fallback"}
        When a law fails (``LCPError``, no termination, energy gain): raise
        :class:`ImpactFailure`, or apply the checked Anitescu-Potra outcome instead.
    diagnostics : bool
        Attach order-independence diagnostics to every event.
    friction_directions : int, optional
        Linearized friction directions of spatial contacts (default 8).
    erp : dict, optional
        The world's error reduction parameters, as given to ``setPhysicsEngineParameter``
        (keys ``erp``, ``contactERP``, ``frictionERP``; the others keep
        :data:`PYBULLET_ERP`, PyBullet's defaults).  PyBullet cannot report them, and the
        simulator sets them: those the user's code sets while a simulator lives
        (``setPhysicsEngineParameter``, ``setDefaultContactERP``) are seen and kept
        (:mod:`.following`); pass those the world set before.  A partial step of ``tau``
        (localizing or finishing a step with an impact) runs with each scaled by ``tau / dt``:
        Bullet corrects a penetration ``d`` with the velocity ``ERP d / tau``, so unscaled a
        partial step of ``dt / 400`` would push a resting contact out 400 times as fast as a whole step's
        ``ERP d / dt``, velocity the next impact would see as its ``v-``.
    resting_budget : bool
        Skip the contact evaluation of the steps that the resting-contact certificates prove
        cannot change the contact set (:mod:`~bullet_setimpact.bullet.resting`; default True).
        False evaluates every step: the reference path, with the same events, slower at rest.

    Notes
    -----
    The simulator follows the world (:mod:`.following`): bodies loaded or removed,
    ``resetSimulation`` and ``restoreState``, constraints, ``changeDynamics``, the time step,
    gravity and the error reduction parameters the user sets are seen as they are made, and
    the next step models the world anew.  Time and events carry on.  With ``bodies``, the
    bodies of that list still present are tracked.  Torques of ``TORQUE_CONTROL`` motors and
    external forces issued before a step act in every part of a step the simulator splits,
    as in Bullet's whole step; the law sees the free multibody during the instantaneous impact.

    A world stepped in ``numSubSteps = K > 1`` substeps is advanced as Bullet would, in ``K``
    substeps of ``fixedTimeStep / K``, but each one is a step of the simulator's own, so an
    impact inside a step goes to the law too (Bullet's substeps would resolve it).  The
    simulator sets ``numSubSteps = 0`` and the substep's time step for them, and the user's
    values back after the step.  Bullet's substeps share what the step's commands set: its
    torques and forces, issued again before every substep, and its motors, whose impulse caps
    PyBullet fixed at ``force * fixedTimeStep`` when they were commanded.  Without an impact,
    the substeps are Bullet's, bit for bit (``tests/test_substeps.py``), with two exceptions:
    joint damping, which PyBullet applies before each ``stepSimulation`` (from the velocity at
    every substep here, at the step's start in Bullet's substeps), and a force applied away
    from the body's origin, whose torque PyBullet computes from the body's pose when it is
    issued (at every substep here, at the step's start in Bullet's).

    Warns
    -----
    UnstableDampingWarning
        At construction, and at the first step after the world changed, for each
        tracked body whose joint damping Bullet's explicit integration makes unstable at that
        time step and the current configuration (:mod:`~bullet_setimpact.bullet.damping`): an
        impact that moves such a joint would be followed by Bullet spinning it up to its
        velocity clamp.
    """

    def __init__(
        self,
        law: Any,
        client: Any = 0,
        seed: int | np.random.SeedSequence | None = None,
        contact_tolerance: float = 1e-4,
        impact_velocity_threshold: float = 1e-3,
        bodies: Any = None,
        max_events_per_step: int = 16,
        on_failure: str = "raise",
        diagnostics: bool = False,
        friction_directions: int | None = None,
        erp: Mapping[str, float] | None = None,
        resting_budget: bool = True,
    ) -> None:
        if isinstance(law, str):
            law = get_law(law)
        if isinstance(law, type):
            raise ValueError(f"law must be an impact law instance, got the class {law.__name__}; create one, e.g. {law.__name__}(...)")
        if not callable(getattr(law, "resolve", None)):
            raise ValueError(f"law must have a resolve(problem, v_minus, rng) method, got {type(law).__name__}")
        if on_failure not in ("raise", "fallback"):
            raise ValueError(f"on_failure must be 'raise' or 'fallback', got {on_failure!r}")
        self.client = check_client(client)
        self.contact_tolerance = positive_number("contact_tolerance", contact_tolerance)
        self.impact_velocity_threshold = positive_number("impact_velocity_threshold", impact_velocity_threshold)
        self.max_events_per_step = positive_int("max_events_per_step", max_events_per_step)
        self.law = law
        self.checked = CheckedLaw(law, AnitescuPotraImpact() if on_failure == "fallback" else None)
        self._restitution_warned: set[tuple[int, ...]] = set()
        self._constraints_warned: set[str] = set()
        self.rng = as_generator(seed, "seed")
        if friction_directions is not None:
            friction_basis(2, friction_directions)  # spatial contacts: an even integer >= 4
        self.on_failure = on_failure
        self.diagnostics = diagnostics
        self.friction_directions = friction_directions
        self.erp = _error_reduction(erp)
        if not isinstance(resting_budget, bool):
            raise ValueError(f"resting_budget must be True or False, got {resting_budget!r}")
        self.resting_budget = resting_budget
        blas_controller()  # find the BLAS libraries now (a slow scan), not at the first impact (one_blas_thread)
        self._requested = None if bodies is None else _body_ids(bodies)
        #: Every event so far.
        self.events: list[ImpactEvent] = []
        #: Simulated time since construction [s].
        self.time = 0.0
        #: Steps in which the event cap was hit.
        self.capped_steps = 0
        #: Steps that skipped the contact evaluation under the resting-contact certificates.
        self.budget_steps = 0
        self._given_erp = dict(erp or {})
        #: The bodies (by id and name) whose unknown active motors were reported (:mod:`.motors`).
        self._motors_warned: set[str] = set()
        self._follow()
        self._version = -1  # no model yet
        self._build()

    def _follow(self) -> None:
        """Register with :mod:`.following` until :meth:`close` or the simulator's end."""
        record = following.follow(self.client)
        assert record is not None
        self._record = record
        self._following = weakref.finalize(self, following.unfollow, record)

    def close(self) -> None:
        """Stop following the world (the hook does it on exit).  A later :meth:`step` follows it
        again and models it anew, since what changed in between was not seen."""
        self._following()  # unfollow, once

    def _build(self) -> None:
        """Model the world as it is now: its bodies, their shapes and friction, the time step and
        the error reduction parameters the user set (:mod:`.following`)."""
        record = self._record
        seen = {name: value for name, (value, version) in record.erp.items() if version > self._version}
        if self._version < 0:  # at construction: those set while a simulator lived, then erp=
            self.erp = _error_reduction({**seen, **self._given_erp})
        elif record.reset_version > self._version:  # a new dynamics world: PyBullet's defaults, then those set since
            self.erp = _error_reduction(seen)
        else:
            self.erp.update(seen)
        #: Model of every body of the client (static ones included, without DoF).
        self.world = WorldModel(self.client)
        requested = self._requested
        if requested is not None and self._version >= 0:  # the world changed since: the bodies of the list still present
            requested = [body for body in requested if body in self.world.body_ids]
        tracked = self.world if requested is None else self.world.restrict(requested)
        self._dynamic = {body.body: body.joints for body in tracked.bodies}
        self._single_dof = frozenset(body.body for body in tracked.bodies if not body.spherical)  # read faster (Snapshot.take)
        #: Bodies with links, whose forward kinematics every Bullet step is followed by (:meth:`_bullet_step`).
        self._articulated = tuple(body.body for body in self.world.bodies if body.num_links > 0)
        #: The bases of fixed-base tracked bodies: with the static bodies, the links that never move.
        self._fixed_bases = frozenset((body.body, -1) for body in tracked.bodies if not body.floating)
        self._tracked = tracked
        parameters = p.getPhysicsEngineParameters(physicsClientId=self.client)
        #: The world's time step and its substeps (``fixedTimeStep``, ``numSubSteps``), read at each build.
        self._world_step = float(parameters["fixedTimeStep"])
        self._substeps = max(int(parameters["numSubSteps"]), 1)
        #: The Bullet step the simulator takes: a substep (as Bullet computes it), every step's length and the damping check's.
        self._dt = self._world_step / self._substeps
        #: The tracked bodies' joint motors, held through split steps (:mod:`.motors`).
        self._motors = MotorHold(self.client, record, tracked.bodies, self._substeps, self._motors_warned)
        #: Models of the body sets impacts involved (the layout is static, see WorldModel.restrict).
        self._models: dict[tuple[int, ...], WorldModel] = {}
        #: The model of each tracked body with a joint axis that is not a unit vector: the arrival
        #: test takes their links' velocities from it (:class:`.events.LinkVelocities`).
        self._skewed = {body.body: self._model((body.body,)) for body in tracked.bodies if body.skewed_axes}
        self._check_damping()
        self._check_axes()
        self._read_constraints()
        probe = self.finder.probe if self._version >= 0 and record.reset_version <= self._version else None  # reset deletes it
        opaque = following.shape_data_unsafe(self.client, self.world.body_ids)
        self.finder: ContactFinder = ContactFinder(self.client, list(self._dynamic), self.contact_tolerance, opaque, probe)
        self._touching: set | None = None
        #: Where the link pairs touching through Bullet's points touched (:meth:`.contacts.ContactFinder.touched_points`).
        self._touched: Touched = {}
        self._last: Snapshot | None = None
        #: The client's state version when :attr:`_last` was read (:meth:`_finish`).
        self._state_version = 0
        self._near = True
        #: Bullet's time step as the simulator last set it (the world's between steps), and the
        #: scale of the error reduction parameters (1: as the user's code set them).
        self._current_step = self._world_step
        self._erp_scale = 1.0
        moving = [body for body in self.world.body_ids if body not in self.world.static_bodies]
        # the certificates need every moving body's speed and the state checks of the tracked ones
        self._resting = (
            RestingContact(
                self.finder,
                MotionBound(
                    self.client,
                    {body: self._dynamic[body] for body in moving},
                    {body for body in moving if not self.world.body(body).floating},
                ),
                self._dynamic,
                functools.partial(Snapshot.take, self.client, self._dynamic, self._single_dof),  # not self's method: no cycle
                LOOKAHEAD,
                MAX_BACKOFF,
            )
            if self.resting_budget and set(moving) <= set(self._dynamic)
            else None
        )
        self._version = record.version

    # ------------------------------------------------------------------ stepping
    def step(self) -> list[ImpactEvent]:
        """Advance one Bullet time step (``fixedTimeStep``) and return its impact events: in a
        world stepped in substeps, one step of the simulator per substep (class docstring)."""
        self._follow_world()
        commands = self._record.take_commands()
        events: list[ImpactEvent] = []
        try:
            if self._substeps > 1:  # Bullet steps one substep at a time (its motors' caps stay the world step's)
                self._set_time_step(self._dt, substeps=0)
            for substep in range(self._substeps):
                if substep and self._motors.holding:  # the user's motors again, at the caps they were commanded with
                    self._set_time_step(self._world_step)
                    self._motors.restore(self._world_step)
                events += self._substep(commands, spent=substep > 0)
        finally:
            self._set_time_step(self._world_step, self._substeps if self._substeps > 1 else None)
            self._motors.restore(self._world_step)
        return events

    def _substep(self, commands: list[tuple], spent: bool) -> list[ImpactEvent]:
        """Advance one Bullet step of :attr:`_dt` through the stages (module docstring); ``spent``:
        the user's ``commands`` were used up by an earlier substep."""
        step = self._begin(commands, spent)
        while not step.finished:
            if len(step.events) >= self.max_events_per_step:
                self._cap(step)
                break
            arrival = self._detect(step)
            if arrival is None:  # nothing arrived: Bullet's trial step stands
                break
            tau = self._localize(step, arrival)
            events = self._resolve(step.start + step.done + tau, arrival)
            if tau == 0.0 and not events:  # nothing to resolve: let Bullet take the rest
                self._bullet_step(step, step.remaining)
                self._remember(self.finder.contacts())
                break
            step.advance(tau, events, self._snapshot)
        return self._finish(step)

    def _follow_world(self) -> None:
        """Model the world anew if the user's code changed it since the last step (:mod:`.following`)."""
        if not self._following.alive:  # closed: changes made since were not seen
            self._follow()
            self._version = 0
        if self._record.version != self._version:
            if not self._record.connected:  # its id may serve another connection since
                raise ValueError(
                    f"PyBullet client {self.client} is not connected (disconnected since this ImpactSimulator was "
                    "created); expected a connected client"
                )
            self._build()
        elif self._record.constraints_version != self._constraints_version:
            self._read_constraints()

    def _begin(self, commands: list[tuple], spent: bool) -> _Step:
        """The step's context: its commands, and the state at its start, where the impacts of
        contacts the user's code set colliding (first step, velocities reset) are resolved.

        The state the last step left holds when no call of the user's code moved a body since
        (:attr:`.following.ClientWorld.state_version`): it is not read again, unless Bullet's
        step left a NaN or inf in it (then read, and reported).  After such a call the state is
        read, and the resting-contact certificates are dropped if a position changed or a
        static body was moved."""
        record = self._record
        step = _Step(self.time, self._dt, commands, spent=spent)
        if self._last is not None and record.state_version == self._state_version and not self._last.nonfinite():
            step.snapshot = step.origin = self._last
            return step
        step.snapshot = self._checked_snapshot()
        if (
            step.snapshot is None
            or self._last is None
            or not step.snapshot.same_positions(self._last)
            or any(record.posed.get(body, 0) > self._state_version for body in self.world.static_bodies)
        ):
            self._drop_budget()  # the user moved a body (or nothing was near): measure again
        if step.snapshot is not None and (self._touching is None or self._last is None or not step.snapshot.same_velocities(self._last)):
            # first step, or the user changed velocities: contacts may be colliding now
            step.events += self._resolve(self.time)
            step.snapshot = self._snapshot()
        step.origin = step.snapshot
        return step

    def _finish(self, step: _Step) -> list[ImpactEvent]:
        """Close the step: the time, and the state the next step starts from unless the user's code moves a body."""
        self.time += step.dt
        self._last = (step.end or self._snapshot()) if self._near else None
        self._state_version = self._record.state_version
        return step.events

    def _check_damping(self) -> None:
        """Warn of the tracked bodies whose joint damping is unstable at the world's time step
        (:mod:`.damping`), at the user's line (:func:`~bullet_setimpact.errors.warn`): called at
        each :meth:`_build`."""
        for instability in unstable_damping(self._tracked, self._dt):
            warn(instability.message(), UnstableDampingWarning)

    def _check_axes(self) -> None:
        """Warn of the tracked bodies with a joint axis that is not a unit vector
        (:attr:`.bodies.BodyModel.skewed_axes`), as :meth:`_check_damping` does."""
        for body in self._tracked.bodies:
            if skewed := body.skewed_axes:
                joints = ", ".join(f"{name} ({length:.4g})" for name, length in skewed)
                warn(
                    f"body {body.body} ({body.name!r}) has joints whose axis is not a unit vector: {joints}. Bullet turns "
                    "them about the unit axis but takes their velocity along the axis as given, so the link velocities it "
                    "reports scale their rates by that length; impacts use the unit axis "
                    "(as calculateJacobian does). Normalize the axes in the model file",
                    JointAxisWarning,
                )

    def _read_constraints(self) -> None:
        """Read the user constraints impacts honour (:mod:`.constraints`), warning once of each
        one they do not model, at the user's line (as :meth:`_check_damping`)."""
        self._constraints_version = self._record.constraints_version
        constraints, ignored = read_constraints(self.client, self._record.driven)
        #: The user constraints impacts honour.
        self._constraints: list[UserConstraint] = constraints
        for description in ignored:
            if description not in self._constraints_warned:
                self._constraints_warned.add(description)
                warn(
                    f"{description} is not modelled in impacts: they treat its links as free, and Bullet enforces it "
                    "in its steps only (impacts honour point2point and fixed constraints whose target is not driven)",
                    ConstraintIgnoredWarning,
                )

    def _snapshot(self) -> Snapshot:
        """The tracked bodies' state now."""
        return Snapshot.take(self.client, self._dynamic, self._single_dof)

    def _checked_snapshot(self) -> Snapshot | None:
        """A snapshot when something is within :data:`LOOKAHEAD` (else None, free flight), after
        checking that no position or velocity is NaN or inf (only the bases in free flight)."""
        if self._near:
            snapshot = self._snapshot()
            bad = snapshot.nonfinite()
        else:
            snapshot = None
            bad = [
                body
                for body in self._dynamic
                if not all(math.isfinite(x) for part in p.getBaseVelocity(body, physicsClientId=self.client) for x in part)
            ]
        if bad:
            raise ValueError(
                f"bodies {bad} have NaN or inf positions or velocities at t = {self.time:.6f} s "
                "(set with resetBaseVelocity or resetJointState?)"
            )
        return snapshot

    # ------------------------------------------------------------------ detect
    def _detect(self, step: _Step) -> _Arrival | None:
        """Let Bullet take the rest of the step as a trial, and return what arrived in it, or
        None when nothing did (the trial stands).

        A point arrives when its feature (a vertex, a link pair's closest point, or a point Bullet
        found beside a pair's touching ones, :meth:`.contacts.ContactFinder.distinguished`) was not
        in contact at the start and is now, approaching faster than the threshold; a link point
        out of contact that Bullet pushed (speculative contact) also counts once it is in
        contact, and so does one Bullet stopped short of contact when its own approach would have
        taken it in: an impact Bullet absorbed, localized on its free flight, before the push
        (:meth:`_absorbed`).  One that Bullet held out of contact against the step's forces (a
        corner bearing load beside a foot's touching ones) has not arrived.  When nothing was
        within :data:`LOOKAHEAD`, nothing is measured (free flight).  A quiet step (no event
        before it in this step) that finds nothing arriving opens the resting-contact
        certificates (:mod:`.resting.certificates`); the rest of a step with events does not
        pay for them.  The full evaluation reads Bullet's manifold detected again at the
        configuration now, as :meth:`_resolve` does; the points of the step itself, whose
        impulses tell what Bullet pushed, are read before.

        That detection is made whenever a link pair is within the seed band.  It updates the
        contact manifolds Bullet carries into its next steps, which change with it at round-off
        level (after a rollback most visibly).  A step the certificates skip therefore makes it
        too when a pair is within the band (:attr:`.resting.budget.DistanceBudget.in_seed_band`):
        with and without the certificates, Bullet gets the same calls, and the trajectories are
        the same bit for bit.
        """
        touching = self._touching if self._touching is not None else set()
        step.end = None
        self._bullet_step(step, step.remaining)
        points = BulletPoints(self.client)  # Bullet's contact points after the trial, read at most once
        if self._within_budget(step, touching, points):  # with the detection the full evaluation makes (see above)
            self.budget_steps += 1
            return None
        detected = self._resting is not None and self._resting.detected
        nearby = self.finder.pair_gaps(LOOKAHEAD)
        self._near = bool(nearby)
        pushed = self._pushed_by_bullet(touching, points) if nearby else {}  # from the step's own points, before they are detected again
        if not nearby or (min(nearby.values()) > self.contact_tolerance + SEED_MARGIN and not pushed):
            self._remember([])
            if nearby and step.quiet:  # approaching through the lookahead: budget the distance left
                self._start_budget(step, [], nearby)
            return None
        if not detected:
            p.performCollisionDetection(self.client)
        contacts = self.finder.contacts()
        candidates = self.finder.distinguished(contacts, touching, self._touched)
        approaching, arrived = arrivals(self.client, candidates, touching, self.impact_velocity_threshold, self._skewed)
        gaps = self.finder.feature_gaps(arrived + [feature for feature in pushed if feature not in arrived], LOOKAHEAD)
        absorbed = self._absorbed(step, pushed, gaps)
        gaps.update(absorbed)  # a point whose impact Bullet absorbed is localized on its free flight
        pushed = {feature: points for feature, points in pushed.items() if gaps[feature] <= self.contact_tolerance}
        features = arrived + [feature for feature in pushed if feature not in arrived]
        if not features:  # newcomers still above the surface are caught when they cross it
            arriving = {contact.feature for contact in approaching}
            self._remember([contact for contact in candidates if contact.feature not in arriving])
            if step.quiet and not approaching:
                self._start_budget(step, contacts, nearby)
            return None
        return _Arrival(features, bool(pushed), gaps, touching, self._touched)

    def _within_budget(self, step: _Step, touching: set, points: BulletPoints) -> bool:
        """Whether every resting-contact certificate held over the trial step just taken, so the
        full evaluation would find the contact set ``touching`` again (:mod:`.resting.certificates`)."""
        if self._resting is None:
            return False
        step.end = self._resting.holds(touching, points)
        return step.end is not None

    def _start_budget(self, step: _Step, contacts: list[Contact], nearby: dict) -> None:
        """Open the certificates on the current contact set (every contact touching)."""
        if self._resting is not None:
            step.end = self._resting.open(contacts, nearby, self._touched) or step.end

    def _remember(self, contacts: list[Contact]) -> None:
        """Make ``contacts`` (all within the tolerance) the touching set: their features, a point
        arrived beside a pair's touching ones counted in its pair's, and where the pairs touching
        through Bullet's points touch, but for pairs of two links that never move (an arm's fixed
        base on its table), which gain no point."""
        self._touching = {contact.feature for contact in contacts if contact.feature[0] != "point"}
        static, fixed = self.world.static_bodies, self._fixed_bases
        moving = [contact for contact in contacts if not all(link[0] in static or link in fixed for link in contact.pair)]
        self._touched = self.finder.touched_points(moving)

    def _drop_budget(self) -> None:
        if self._resting is not None:
            self._resting.drop()

    def _pushed_by_bullet(self, touching: set, points: BulletPoints) -> dict[Feature, list[tuple]]:
        return pushed_by_bullet(self.client, self.finder, self._dynamic, self.contact_tolerance, touching, None, points.manifold)

    def _absorbed(self, step: _Step, pushed: dict[Feature, list[tuple]], gaps: dict[Feature, float]) -> dict[Feature, float]:
        """The features of ``pushed`` whose impact Bullet's speculative contacts absorbed in the
        trial, before contact, each with the gap its free flight closes to
        (:func:`.events.absorbed_impacts`; ``gaps``: the features' gaps now)."""
        if not pushed or step.snapshot is None:  # nothing within the lookahead at the start: no manifold either
            return {}
        bodies = tuple(sorted({body for points in pushed.values() for point in points for body in point[1:3] if body in self._dynamic}))
        model = self._model(bodies)
        return absorbed_impacts(pushed, gaps, model, model.velocity(step.snapshot), step.remaining, self.impact_velocity_threshold)

    # ------------------------------------------------------------------ localize
    def _localize(self, step: _Step, arrival: _Arrival) -> float:
        """The time ``tau`` after ``step.done`` of the arrival's impact, with the world there.

        Localized just inside contact, so Bullet's manifold holds the new points as resting
        contacts afterwards; a speculative contact (Bullet pushes before penetration) can only
        be caught just outside.  A feature already there when the step began (a point Bullet
        pushed at a gap of about 0) cannot be localized; the others are, or the impact is at the
        step's start when none is left.  In free flight (no snapshot: the contact arrived from
        beyond :data:`LOOKAHEAD` within one step) it is resolved at the step's end."""
        if step.snapshot is None:
            logger.warning(
                "a contact arrived from beyond %.3f m within one step at t = %.6f s; resolved at the step's end",
                LOOKAHEAD,
                step.start + step.dt,
            )
            return step.remaining
        snapshot = step.snapshot
        # gaps measured to the lookahead (not clamped near contact): the root find's first
        # secant step is only as good as the two ends' gaps
        far = LOOKAHEAD
        target = TARGET_FRACTION * self.contact_tolerance * (1.0 if arrival.pushed else -1.0)
        self._simulate_from(step, snapshot, 0.0)
        start_gaps = self.finder.feature_gaps(arrival.features, far)
        features = [feature for feature in arrival.features if start_gaps[feature] > target]
        evaluated = [0.0]  # the time the world is at: the last evaluation's

        def gap_after(tau: float) -> float:
            evaluated[0] = tau
            return self._feature_gaps_at(step, tau, features, far)

        accuracy = TARGET_FRACTION * self.contact_tolerance
        if features:
            start_gap = min(min(start_gaps[feature] for feature in features), far)
            end_gap = max(min(arrival.end_gaps[feature] for feature in features), -far)
            tau = localize(gap_after, step.remaining, target, start_gap, end_gap, accuracy, self.contact_tolerance)
        else:
            tau = 0.0
        if evaluated[0] != tau:  # brentq's last evaluation is usually the root: the world is there
            self._simulate_from(step, snapshot, tau)
        return tau

    def _feature_gaps_at(self, step: _Step, tau: float, features: list, far: float) -> float:
        """Smallest gap of ``features`` after simulating ``tau`` from the step's snapshot."""
        assert step.snapshot is not None
        self._simulate_from(step, step.snapshot, tau)
        return min(self.finder.feature_gaps(features, far).values(), default=far)

    def _simulate_from(self, step: _Step, snapshot: Snapshot, tau: float) -> None:
        """Restore ``snapshot`` and let Bullet simulate ``tau`` seconds from it."""
        snapshot.restore()
        if tau > 0.0:
            self._bullet_step(step, tau)

    def _bullet_step(self, step: _Step, duration: float) -> None:
        """Let Bullet simulate ``duration``, under the step's commands: PyBullet clears torques and
        external forces after each step, so every part of a split step issues them again, and
        holds the joint motors at the whole step's targets with the part's share of their caps
        (:mod:`.motors`; :meth:`step` issues the user's motor commands again after it).

        Then every body with links has its forward kinematics computed. ``getLinkState`` with
        ``computeForwardKinematics`` refreshes caches that Bullet's next step reads, so a pose
        query between two steps changes what Bullet computes next (in chaotic worlds, such as a
        gripper pushing an object, visibly). Refreshed after every step, those caches no longer
        depend on how many queries the simulator made: with or without the resting-contact
        certificates, Bullet takes the same steps."""
        self._set_time_step(duration)
        if step.spent:
            for function, args, kwargs in step.commands:
                function(*args, **kwargs)
        if step.split and step.origin is not None:
            self._motors.hold(step.origin, self._dt)
        step.spent = step.split = True
        client = self.client
        bullet_step_simulation(client)
        for body in self._articulated:
            p.getLinkState(body, 0, 0, 1, client)  # by position: PyBullet parses keyword arguments more slowly

    def _set_time_step(self, duration: float, substeps: int | None = None) -> None:
        """Bullet's time step, with the error reduction parameters scaled by ``duration`` over the
        simulator's step (see the class docstring's ``erp``; a whole step, or the world's step of
        substeps, sets them back), and ``numSubSteps`` set to ``substeps`` when given.  Only what
        changes is set: a world whose steps are never split keeps the parameters its code set."""
        scale = duration / self._dt if duration < self._dt else 1.0
        changes: dict[str, float] = {} if duration == self._current_step else {"fixedTimeStep": duration}
        if substeps is not None:
            changes["numSubSteps"] = substeps
        if scale != self._erp_scale:
            changes.update({name: value * scale for name, value in self.erp.items()})
            self._erp_scale = scale
        if changes:
            set_engine_parameters(physicsClientId=self.client, **changes)
        self._current_step = duration

    def _cap(self, step: _Step) -> None:
        self.capped_steps += 1
        warn(
            f"more than {self.max_events_per_step} impact events in one step at t = {self.time:.6f} s: "
            "Bullet finished the step (raise max_events_per_step or the velocity threshold)",
            EventCapWarning,
        )
        self._drop_budget()
        self._bullet_step(step, step.remaining)
        self._remember(self.finder.contacts())

    # ------------------------------------------------------------------ resolve
    def _resolve(self, time: float, arrival: _Arrival | None = None) -> list[ImpactEvent]:
        """Resolve the impacts at the current configuration, one event per colliding cluster, on
        one BLAS thread (:mod:`~bullet_setimpact._threads`: an event's products are small).  The
        contact set is evaluated once; it becomes the touching set.  ``arrival``: what brought the
        impact, whose touching features tell the newcomers (:meth:`_event`), Bullet's points that
        arrived beside touching ones told apart as in :meth:`_detect`; None at the start of a
        step, where any contact may be colliding (the first step, velocities the user set).

        Bullet's collision detection runs first: ``stepSimulation`` detects collisions before it
        integrates, so the manifold a step leaves holds points at the step's start, each one
        step's displacement from the geometry now (a stale copy beside an exact box corner, with
        a stale gap).  Detecting again puts them on the geometry of the event and keeps their
        impulses.  Events are resolved with and without the certificates alike, so both paths
        make this detection (what it changes in Bullet's later steps: :meth:`_detect`)."""
        self._drop_budget()
        p.performCollisionDetection(self.client)
        contacts = self.finder.contacts()
        touching = None
        if arrival is not None:
            touching = arrival.touching
            contacts = self.finder.distinguished(contacts, touching, arrival.touched)
        self._remember(contacts)
        modelled = set(self._dynamic) | self.world.static_bodies
        contacts = [c for c in contacts if c.body_a in modelled and c.body_b in modelled]
        events = []
        dynamic = set(self._dynamic)
        with one_blas_thread():
            for bodies, cluster in join_clusters(clusters(contacts, dynamic), self._constraints, dynamic):
                event = self._event(time, bodies, cluster, touching)
                if event is not None:
                    self.events.append(event)
                    events.append(event)
        return events

    def _event(
        self, time: float, bodies: tuple[int, ...], cluster: list[Contact], touching: Collection[Feature] | None
    ) -> ImpactEvent | None:
        """The event of one contact cluster among ``bodies``, its outcome written back; None when
        no contact of it that was not ``touching`` approaches faster than the threshold (None:
        any contact).  The impact then resolves every contact of the cluster, touching ones
        included; an arrival that separates needs no impulse, and contacts that were touching,
        however Bullet's steps left them, are Bullet's between impacts.  The velocity tested is
        the law's: the user constraints among the bodies hold through an impact
        (:mod:`.constraints`), and the law resolves the velocity they leave (Bullet's soft
        constraints let a closed loop drift, so a link's own velocity may approach while the
        constrained one separates).  A newcomer merged into a touching contact's row
        (:func:`~.assembly.contact_problem`) leaves the test to every contact."""
        if touching is not None and all(contact.feature in touching for contact in cluster):
            return None  # no newcomer: nothing arrived here (a body resting beside the impact)
        model = self._model(bodies)
        given = cluster
        problem, cluster = self._problem(time, bodies, model.configuration(), cluster)
        v_minus = model.velocity()
        if not np.isfinite(v_minus).all():
            raise ValueError(
                f"the velocity of bodies {bodies} is not finite (NaN or inf) at t = {time:.6f} s; "
                "was it set with resetBaseVelocity or resetJointState?"
            )
        if problem is None:
            return None
        v_constrained = problem.constrained_velocity(v_minus)
        colliding = problem.normal_velocities(v_constrained) < -self.impact_velocity_threshold
        if touching is not None:
            new = np.array([contact.feature not in touching for contact in cluster])
            if new.sum() == sum(contact.feature not in touching for contact in given):  # every newcomer has its row
                colliding &= new
        if not colliding.any():
            return None
        outcome = self.checked.check(problem, v_constrained, rng=self.rng)
        if outcome.failure:
            logger.warning("%s; applied the %s fallback", outcome.failure, outcome.law)
        result = outcome.result
        model.set_velocity(result.v_plus)
        written = model.velocity()
        if not (np.abs(written - result.v_plus) <= 1e-9 * (1.0 + np.abs(result.v_plus).max())).all():  # allclose(rtol=0)
            raise ImpactFailure(f"PyBullet did not take the written velocity (max error {np.abs(written - result.v_plus).max():.2e})")
        event = ImpactEvent(
            time=time,
            contacts=tuple(cluster),
            bodies=bodies,
            coordinates=tuple(f"{body.body}:{name}" for body in model.bodies for name in body.coordinates),
            v_minus=v_minus,
            v_plus=result.v_plus,
            v_written=written,
            result=result,
            problem=problem,
            energy_before=float(problem.kinetic_energy(v_minus)),
            energy_after=result.energy_after,
            max_penetration=max(0.0, -min(c.gap for c in cluster)),
            law=outcome.law,
            failure=outcome.failure,
            diagnostics=self._diagnostics(problem, v_constrained) if self.diagnostics else {},
            client=self.client,
        )
        logger.debug("impact at t=%.6f s: %d contacts, KE %.4g -> %.4g J", time, len(cluster), event.energy_before, event.energy_after)
        return event

    def _model(self, bodies: tuple[int, ...]) -> WorldModel:
        """The model of ``bodies`` (:meth:`.model.WorldModel.restrict`), made once per world model."""
        if bodies not in self._models:
            self._models[bodies] = self.world.restrict(bodies)
        return self._models[bodies]

    def _problem(
        self, time: float, bodies: tuple[int, ...], configuration: Configuration, cluster: list[Contact]
    ) -> tuple[ImpactProblem | None, list[Contact]]:
        """The impact problem of a cluster, as the law receives it: ``M(q)``, the contact
        Jacobians and friction, Bullet's combined restitution when the law honours it, the user
        constraints among the configuration's bodies, and the external force when the law reads
        one (``needs_external_force``).  Returns it (None without contacts left, or when the
        constraints hold every body of the cluster still) and the contacts kept, or raises
        :class:`ImpactFailure`."""
        try:
            present = set(bodies) | self.world.static_bodies
            rows = constraint_rows([c for c in self._constraints if set(c.bodies) <= present], configuration)
            nv = configuration.model.nv
            if rows is not None and len(rows) >= nv and not free_basis(rows, nv).shape[1]:  # fewer rows leave some velocity free
                return None, []  # the constraints hold every body of the impact still (welded to the world)
            problem, cluster = contact_problem(cluster, configuration, self.friction_directions, self._restitution(cluster), rows)
        except (SetImpactError, ValueError, np.linalg.LinAlgError) as exc:
            raise ImpactFailure(
                f"the impact problem of {len(cluster)} contacts between bodies {bodies} at t = {time:.6f} s "
                f"could not be built ({type(exc).__name__}: {exc}); nothing was written back"
            ) from exc
        if problem is not None and self.checked.needs_external_force:
            problem = problem.with_external_force(configuration.external_force())
        return problem, cluster

    def _restitution(self, contacts: list[Contact]) -> np.ndarray | None:
        """The contacts' combined restitution if the law honours it; otherwise None, with a
        :class:`RestitutionIgnoredWarning` once per body pair whose restitution is positive."""
        restitution = combined_restitution(self.client, contacts)
        if self.checked.honours_restitution:
            return restitution
        for contact, value in zip(contacts, restitution, strict=True):
            pair = tuple(sorted((contact.body_a, contact.body_b)))
            if value > 0.0 and pair not in self._restitution_warned:
                self._restitution_warned.add(pair)
                warn(
                    f"bodies {pair[0]} and {pair[1]} have combined restitution {value:.3g}, but {self.checked.name} does not use "
                    "Bullet's per-pair restitution: an inelastic law does not bounce, and propagative applies its own "
                    "global restitution (RouthImpact honours Bullet's)",
                    RestitutionIgnoredWarning,
                )
        return None

    def _diagnostics(self, problem: ImpactProblem, v_minus: np.ndarray) -> dict[str, Any]:
        from ..analysis.diagnostics import normal_coupling, order_independent

        verdict = order_independent(problem, v_minus)
        return {"normal_coupling": normal_coupling(problem), "order_independent": verdict}


def _body_ids(bodies: Any) -> list[int]:
    """``bodies`` as a list of body ids, or a ``ValueError`` naming what was given."""
    try:
        ids = list(bodies)
    except TypeError:
        raise ValueError(f"bodies must be an iterable of body ids (e.g. [robot]), got {bodies!r}") from None
    if not all(isinstance(body, (int, np.integer)) and not isinstance(body, bool) for body in ids):
        raise ValueError(f"bodies must hold body ids (integers), got {ids!r}")
    return [int(body) for body in ids]


def _error_reduction(values: Mapping[str, float] | None) -> dict[str, float]:
    """:data:`PYBULLET_ERP` updated with ``values``, each checked (a finite number >= 0)."""
    merged = dict(PYBULLET_ERP)
    for name, value in (values or {}).items():
        if name not in PYBULLET_ERP:
            raise ValueError(f"erp has the key {name!r}; expected some of {sorted(PYBULLET_ERP)} (setPhysicsEngineParameter's names)")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not 0.0 <= float(value) < math.inf:
            raise ValueError(f"erp[{name!r}] must be a finite number >= 0, got {value!r}")
        merged[name] = float(value)
    return merged
