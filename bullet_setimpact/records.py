"""What a Monte Carlo run produced, and its analysis: one record per rollout, one per impact.

:class:`EventRecord` summarizes an impact as plain arrays, :class:`RolloutRecord` a rollout
(with (de)serialization to flat arrays), and :class:`RolloutResults` a run: outcome counts,
per-contact modes, a text report, a DataFrame, and one-file save/load.  Nothing here runs
a simulation (that is :mod:`bullet_setimpact.rollouts`).
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .bullet.simulator import ImpactEvent
from .files import atomic_write
from .scenario import Scenario

#: Post-impact normal speed above which a contact "lifts off" [m/s].
LIFT_THRESHOLD = 1e-3
#: Post-impact sliding speed above which a contact "slides" (else it "sticks") [m/s].
SLIDE_THRESHOLD = 1e-3


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class EventRecord:
    """One impact of a rollout, as plain arrays (see :class:`ImpactEvent`).

    ``labels`` name the contacts (the scenario's ``label_contact``), ``normal_before`` /
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

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(classify(n, s) for n, s in zip(self.normal_after, self.slip_after, strict=True))

    @property
    def outcome(self) -> str:
        """The event's outcome class, e.g. ``"A:lift off B:stick"`` (contacts sorted by label)."""
        return " ".join(f"{label}:{kind}" for label, kind in sorted(zip(self.labels, self.classes, strict=True)))


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
        labels=tuple(scenario.contact_label(contact) for contact in event.contacts),
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
        Seconds the rollout took, build included.
    simulation_time : float
        Of those, seconds spent stepping the simulation.
    """

    index: int
    events: tuple[EventRecord, ...]
    final: dict[str, np.ndarray]
    energy_time: np.ndarray
    energy: np.ndarray
    wall_time: float
    simulation_time: float

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Flat arrays for ``np.savez`` (scalars and strings in a JSON ``meta`` entry)."""
        arrays: dict[str, np.ndarray] = {"energy_time": self.energy_time, "energy": self.energy}
        meta: dict[str, Any] = {"index": self.index, "wall_time": self.wall_time, "simulation_time": self.simulation_time, "events": []}
        for i, event in enumerate(self.events):
            for key in ("v_minus", "v_plus", "normal_before", "normal_after", "slip_after"):
                arrays[f"event{i}.{key}"] = getattr(event, key)
            meta["events"].append(
                {key: getattr(event, key) for key in ("time", "labels", "coordinates", "energy_before", "energy_after", "steps", "law")}
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
            meta["index"],
            tuple(events),
            final,
            np.asarray(arrays["energy_time"]),
            np.asarray(arrays["energy"]),
            meta["wall_time"],
            meta["simulation_time"],
        )


@dataclass
class RolloutResults:
    """The records of a Monte Carlo run, in rollout order, and how it was made.

    Attributes
    ----------
    records : list of RolloutRecord
    config : dict
        Scenario, parameters, law, seed, rollouts, duration and versions.
    """

    records: list[RolloutRecord]
    config: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def events(self) -> list[tuple[int, EventRecord]]:
        """Every event as ``(rollout index, EventRecord)``."""
        return [(record.index, event) for record in self.records for event in record.events]

    def outcome_counts(self, first_only: bool = True) -> Counter[str]:
        """How often each outcome class occurred: of each rollout's first impact, or of all impacts."""
        counts: Counter[str] = Counter()
        for record in self.records:
            for event in record.events[:1] if first_only else record.events:
                counts[event.outcome] += 1
        return counts

    def contact_modes(self) -> dict[str, Counter[str]]:
        """Per contact label, how often it ended each impact sticking, sliding or lifting off."""
        modes: dict[str, Counter[str]] = {}
        for _, event in self.events:
            for label, kind in zip(event.labels, event.classes, strict=True):
                modes.setdefault(label, Counter())[kind] += 1
        return modes

    def report(self) -> str:
        """A short text summary (the CLI prints it)."""
        counts = [len(record.events) for record in self.records]
        law = self.config.get("law") or "scenario default"
        lines = [
            f"{self.config.get('scenario', '?')}: {len(self.records)} rollouts, law {law}, seed {self.config.get('seed', '?')}",
            f"  impacts: {sum(counts)} in all, {np.mean(counts):.1f} per rollout",
            f"  outcome classes of the first impact (lift off: vn > {LIFT_THRESHOLD} m/s; slide: |vt| > {SLIDE_THRESHOLD} m/s):",
        ]
        for outcome, count in self.outcome_counts().most_common():
            lines.append(f"    {count:6d}  {outcome}")
        lines.append(f"  wall time per rollout: median {np.median([r.wall_time for r in self.records]):.3f} s")
        return "\n".join(lines)

    def save(self, path: str | Path) -> None:
        """Write ``path`` (.npz, every record) and ``path`` with suffix .json (the config)."""
        path = Path(path)
        arrays: dict[str, np.ndarray] = {}
        for record in self.records:
            arrays.update({f"r{record.index}/{key}": value for key, value in record.to_arrays().items()})
        atomic_savez(path, arrays)
        atomic_write_text(path.with_suffix(".json"), json.dumps(self.config, indent=2, default=str))

    @classmethod
    def load(cls, path: str | Path) -> RolloutResults:
        """Read results written by :meth:`save`.

        Raises
        ------
        FileNotFoundError
            If ``path`` does not exist.
        ValueError
            Naming ``path`` if it (or its ``.json`` sidecar) is not a results file.
        """
        path = Path(path)
        grouped: dict[int, dict[str, np.ndarray]] = {}
        try:
            with np.load(path, allow_pickle=False) as data:
                for key in data.files:
                    prefix, name = key.split("/", 1)
                    grouped.setdefault(int(prefix[1:]), {})[name] = data[key]
            config = json.loads(path.with_suffix(".json").read_text()) if path.with_suffix(".json").exists() else {}
            return cls([RolloutRecord.from_arrays(grouped[index]) for index in sorted(grouped)], config)
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            raise ValueError(f"{path} is not a RolloutResults file written by save() ({type(exc).__name__}: {exc})") from None

    def to_dataframe(self) -> Any:
        """One row per (rollout, impact, contact), as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("RolloutResults.to_dataframe needs pandas: pip install pandas") from exc
        rows = []
        for index, event in self.events:
            for label, vn0, vn1, slip, kind in zip(
                event.labels, event.normal_before, event.normal_after, event.slip_after, event.classes, strict=True
            ):
                rows.append(
                    {
                        "rollout": index,
                        "time": event.time,
                        "contact": label,
                        "normal_before": vn0,
                        "normal_after": vn1,
                        "slip_after": slip,
                        "mode": kind,
                        "energy_before": event.energy_before,
                        "energy_after": event.energy_after,
                        "law": event.law,
                    }
                )
        return pd.DataFrame(rows)


def atomic_savez(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """``np.savez`` of ``arrays`` to ``path``, atomically (:func:`files.atomic_write`)."""
    atomic_write(path, lambda stream: np.savez(stream, **arrays))  # type: ignore[arg-type]  # keys are array names


def atomic_write_text(path: Path, text: str) -> None:
    """``text`` to ``path``, atomically."""
    atomic_write(path, lambda stream: stream.write(text.encode()))
