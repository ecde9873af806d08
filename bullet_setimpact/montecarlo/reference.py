"""A scenario's first impact, seen three ways: the set-valued law's whole set, the classical
laws' points, and plain Bullet's single outcome (what the Monte Carlo figure contrasts).

:func:`first_impact` simulates the scenario twice in a fresh ``p.DIRECT`` world:

1. under the hook, until its first impact event: the event's :class:`ImpactProblem` and
   ``v-``, and from them the outcome set (:meth:`RouthImpact.outcome_set`, default sampler),
   the Anitescu-Potra outcomes (journal eqs. 31-33) and one sequential outcome per order of
   the contacts (journal Sec. 2.2.2);
2. without the hook (``p.stepSimulation`` alone): Bullet's own response to the same drop.
   Its outcome is the velocity after the first step that ends the approach, the step after
   which no contact of the event approaches faster than :data:`APPROACH_LEFT` of the largest
   approach speed seen (Bullet resolves a contact in the step that finds it).  Velocities
   are read in the event's coordinates and projected with the event's Jacobians: the plain
   run meets the ground a step later than the hooked one localizes the impact, so its
   configuration differs by that step's motion (about a millimetre for the dropped block).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from ..core.problem import ImpactProblem
from ..laws import AnitescuPotraImpact, RouthImpact, SequentialImpact
from ..laws.base import ImpactLaw, contact_orders
from .scenario import make

#: Plain Bullet has ended the approach once every contact's approach speed is below this share
#: of the largest seen.
APPROACH_LEFT = 0.1
#: Seconds of plain Bullet simulated after the hooked run's first event (for the energy trace).
AFTER_EVENT = 0.5
#: Samples of the outcome set drawn for the figure.
SET_SAMPLES = 4096
#: Linear programs the enumeration of the Anitescu-Potra outcomes may take (about 1.5 ms each):
#: beyond, the figure shows the one outcome its law resolves (a sphere landing on two resting
#: spheres, five spatial contacts, needs some 44,000).
ANITESCU_POTRA_PROGRAMS = 2000


@dataclass(frozen=True)
class FirstImpact:
    """A scenario's first impact (module docstring); velocities are generalized, rows are outcomes.

    Attributes
    ----------
    labels : tuple of str
        The contacts' labels (the scenario's names, e.g. ``("A", "B")``).
    problem : ImpactProblem
    v_minus : ndarray, shape (nv,)
    time : float
        When the hooked run's first impact happened [s].
    outcome_set : ndarray, shape (S, nv)
        The set-valued law's outcomes (:data:`SET_SAMPLES` default samples).
    anitescu_potra : ndarray, shape (k, nv)
        Every Anitescu-Potra outcome, or, when more than :data:`ANITESCU_POTRA_PROGRAMS`
        linear programs would find them, the one its law resolves (``anitescu_potra_complete``).
    sequential : dict of str to ndarray, shape (nv,)
        One outcome per contact order, keyed by the labels joined with "-" ("A-B").
    bullet : ndarray, shape (nv,), or None
        Plain Bullet's outcome; None if its approach did not end within the window.
    bullet_energy_time, bullet_energy : ndarray
        Plain Bullet's kinetic energy of the impacting bodies [s, J].
    """

    labels: tuple[str, ...]
    problem: ImpactProblem
    v_minus: np.ndarray
    time: float
    outcome_set: np.ndarray
    anitescu_potra: np.ndarray
    anitescu_potra_complete: bool
    sequential: dict[str, np.ndarray]
    bullet: np.ndarray | None
    bullet_energy_time: np.ndarray
    bullet_energy: np.ndarray


def first_impact(
    name: str | Path,
    law: str | ImpactLaw | None = None,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    duration: float | None = None,
) -> FirstImpact | None:
    """The first impact of scenario ``name`` (module docstring); None if none happens within
    ``duration`` (default: the scenario's).  ``law`` as in :func:`~.scenario.make`; the set is
    drawn with it if it is a :class:`RouthImpact`, else with ``RouthImpact``'s simulation default."""
    client = p.connect(p.DIRECT)
    try:
        hooked = make(name, client, law=law, seed=seed, params=params, duration=duration)
        event = None
        for _ in range(hooked.steps):
            produced = hooked.simulator.step()
            if produced:
                event = produced[0]
                break
        if event is None:
            return None
        labels = hooked.scenario.contact_labels(event.contacts)
        set_law = hooked.simulator.law if isinstance(hooked.simulator.law, RouthImpact) else RouthImpact.simulation_default()
        p.resetSimulation(physicsClientId=client)
        plain = make(name, client, law=law, seed=seed, params=params, duration=duration)
        bullet, energy_time, energy = _plain_bullet(client, plain.simulator.world.restrict(list(event.bodies)), event, plain.time_step)
    finally:
        p.disconnect(client)
    problem, v_minus = event.problem, event.v_minus
    orders = contact_orders(problem.contacts, 24) or [list(range(problem.contacts))]
    sequential = {
        "-".join(labels[i] for i in order): SequentialImpact(order).resolve(problem, v_minus, unfinished="return").v_plus
        for order in orders
    }
    simultaneous = AnitescuPotraImpact()
    try:
        anitescu_potra, complete = simultaneous.all_outcomes(problem, v_minus, ANITESCU_POTRA_PROGRAMS), True
    except ValueError:  # too many to enumerate
        anitescu_potra, complete = simultaneous.resolve(problem, v_minus, unfinished="return").v_plus[None, :], False
    return FirstImpact(
        labels=labels,
        problem=problem,
        v_minus=v_minus,
        time=float(event.time),
        outcome_set=set_law.outcome_set(problem, v_minus, SET_SAMPLES, rng=seed),
        anitescu_potra=anitescu_potra,
        anitescu_potra_complete=complete,
        sequential=sequential,
        bullet=bullet,
        bullet_energy_time=energy_time,
        bullet_energy=energy,
    )


def _plain_bullet(client: int, model: Any, event: Any, time_step: float) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Step plain Bullet to :data:`AFTER_EVENT` past ``event.time``: its outcome (module
    docstring) and the kinetic-energy trace of ``model``'s bodies."""
    outcome, fastest = None, 0.0
    times, energies = [], []
    for step in range(int(np.ceil((event.time + AFTER_EVENT) / time_step))):
        p.stepSimulation(physicsClientId=client)
        v = model.velocity()
        times.append((step + 1) * time_step)
        energies.append(0.5 * v @ model.configuration().mass_matrix() @ v)
        approach = float(np.max(-event.problem.normal_velocities(v), initial=0.0))
        if outcome is None and fastest > 0.0 and approach < APPROACH_LEFT * fastest:
            outcome = v
        fastest = max(fastest, approach)
    return outcome, np.array(times), np.array(energies)
