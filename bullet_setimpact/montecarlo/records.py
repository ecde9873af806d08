"""What one rollout produced: one record per rollout, one per impact, as plain arrays.

:class:`EventRecord` summarizes an impact, :class:`RolloutRecord` a rollout (finished, or
failed with the reason and the events before the failure), with (de)serialization to flat
arrays for ``np.savez``.  The analysis of a whole run is :mod:`bullet_setimpact.montecarlo.results`;
nothing here runs a simulation (that is :mod:`bullet_setimpact.montecarlo.rollouts`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._files import atomic_write
from ..bullet.simulator import ImpactEvent
from .scenario import Scenario

#: Post-impact normal speed above which a contact "lifts off" [m/s].
LIFT_THRESHOLD = 1e-3
#: Post-impact sliding speed above which a contact "slides" (else it "sticks") [m/s].
SLIDE_THRESHOLD = 1e-3


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class EventRecord:
    """One impact of a rollout, as plain arrays (see :class:`ImpactEvent`).

    ``labels`` name the contacts (the scenario's :meth:`~Scenario.contact_labels`) and
    ``definitions`` say what each label is (body, link, point in the link frame); ``normal_before`` /
    ``normal_after`` and ``slip_after`` are each contact's normal velocity before and after
    and sliding speed after [m/s]; ``classes`` are "stick", "slide" or "lift off" per contact
    (thresholds :data:`LIFT_THRESHOLD`, :data:`SLIDE_THRESHOLD`).
    """

    time: float
    labels: tuple[str, ...]
    coordinates: tuple[str, ...]
    v_minus: np.ndarray
    v_plus: np.ndarray
    normal_before: np.ndarray
    normal_after: np.ndarray
    slip_after: np.ndarray
    energy_before: float
    energy_after: float
    steps: int
    law: str
    definitions: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"EventRecord(time={self.time:.4f}, law={self.law!r}, outcome={self.outcome!r})"

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(classify(n, s) for n, s in zip(self.normal_after, self.slip_after, strict=True))

    @property
    def outcome(self) -> str:
        """The event's outcome class, e.g. ``"A:lift off B:stick"`` (contacts sorted by label)."""
        return " ".join(f"{label}:{kind}" for label, kind in sorted(zip(self.labels, self.classes, strict=True)))


#: The scalars of a :class:`RolloutRecord` stored in its JSON ``meta`` entry.
RECORD_SCALARS = ("index", "wall_time", "stepping_wall_time", "simulated_time", "seed", "failure")


def classify(normal_velocity: float, slip_speed: float) -> str:
    """A contact's post-impact mode from its normal velocity and sliding speed."""
    if normal_velocity > LIFT_THRESHOLD:
        return "lift off"
    return "slide" if slip_speed > SLIDE_THRESHOLD else "stick"


def event_record(event: ImpactEvent, scenario: Scenario) -> EventRecord:
    """Summarize an :class:`ImpactEvent` with the scenario's contact names."""
    problem = event.problem
    return EventRecord(
        time=event.time,
        labels=scenario.contact_labels(event.contacts),
        definitions=tuple(scenario.contact_definition(contact) for contact in event.contacts),
        coordinates=event.coordinates,
        v_minus=event.v_minus,
        v_plus=event.v_plus,
        normal_before=problem.normal_velocities(event.v_minus),
        normal_after=problem.normal_velocities(event.v_plus),
        slip_after=np.linalg.norm(problem.tangential_velocities(event.v_plus), axis=-1),
        energy_before=event.energy_before,
        energy_after=event.energy_after,
        steps=event.result.steps,
        law=event.law,
    )


@dataclass(frozen=True)
class RolloutRecord:
    """Everything one rollout produced.

    Attributes
    ----------
    index : int
    events : tuple of EventRecord
    final : dict of str to ndarray
        The scenario's final-state summary (:meth:`Scenario.observe`).
    energy_time, energy : ndarray
        Kinetic energy of the scenario's bodies through the rollout [s, J] (decimated).
    wall_time : float
        Wall-clock seconds the rollout took, build included.
    stepping_wall_time : float
        Of those, wall-clock seconds spent stepping the simulation.
    simulated_time : float
        Simulated seconds reached (less than the duration if the rollout failed).
    seed : int
        The run's root seed: the rollout's stream is ``SeedSequence(seed).spawn(n)[index]``.
    failure : str or None
        Why the rollout stopped early (``"ImpactFailure: ..."``), None if it finished;
        ``events`` then hold the impacts before the failure.
    """

    index: int
    events: tuple[EventRecord, ...]
    final: dict[str, np.ndarray]
    energy_time: np.ndarray
    energy: np.ndarray
    wall_time: float
    stepping_wall_time: float
    simulated_time: float = 0.0
    seed: int = 0
    failure: str | None = None

    def __repr__(self) -> str:
        status = "finished" if self.failure is None else f"failed at t={self.simulated_time:.4f} s: {self.failure}"
        return f"RolloutRecord(index={self.index}, seed={self.seed}, events={len(self.events)}, {status})"

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Flat arrays for ``np.savez`` (scalars and strings in a JSON ``meta`` entry)."""
        arrays: dict[str, np.ndarray] = {"energy_time": self.energy_time, "energy": self.energy}
        meta: dict[str, Any] = {key: getattr(self, key) for key in RECORD_SCALARS} | {"events": []}
        for i, event in enumerate(self.events):
            for key in ("v_minus", "v_plus", "normal_before", "normal_after", "slip_after"):
                arrays[f"event{i}.{key}"] = getattr(event, key)
            meta["events"].append(
                {
                    key: getattr(event, key)
                    for key in ("time", "labels", "definitions", "coordinates", "energy_before", "energy_after", "steps", "law")
                }
            )
        for key, value in self.final.items():
            arrays[f"final.{key}"] = value
        arrays["meta"] = np.array(json.dumps(meta))
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> RolloutRecord:
        meta = json.loads(str(arrays["meta"]))
        events = []
        for i, scalars in enumerate(meta["events"]):
            vectors = {
                key: np.asarray(arrays[f"event{i}.{key}"]) for key in ("v_minus", "v_plus", "normal_before", "normal_after", "slip_after")
            }
            events.append(
                EventRecord(
                    time=float(scalars["time"]),
                    labels=tuple(scalars["labels"]),
                    definitions=tuple(scalars.get("definitions", ())),
                    coordinates=tuple(scalars["coordinates"]),
                    energy_before=float(scalars["energy_before"]),
                    energy_after=float(scalars["energy_after"]),
                    steps=int(scalars["steps"]),
                    law=str(scalars["law"]),
                    **vectors,
                )
            )
        final = {key[len("final.") :]: np.asarray(value) for key, value in arrays.items() if key.startswith("final.")}
        return cls(
            events=tuple(events),
            final=final,
            energy_time=np.asarray(arrays["energy_time"]),
            energy=np.asarray(arrays["energy"]),
            **{key: meta[key] for key in RECORD_SCALARS},
        )


def atomic_savez(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """``np.savez`` of ``arrays`` to ``path``, atomically (:func:`files.atomic_write`)."""
    atomic_write(path, lambda stream: np.savez(stream, **arrays))  # type: ignore[arg-type]  # keys are array names


def atomic_write_text(path: Path, text: str) -> None:
    """``text`` to ``path``, atomically."""
    atomic_write(path, lambda stream: stream.write(text.encode()))
