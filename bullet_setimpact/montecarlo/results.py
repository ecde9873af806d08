"""A Monte Carlo run's results and their analysis: outcome counts, contact modes, failures,
a text report, a DataFrame, and one-file save/load (:class:`RolloutResults`)."""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .records import LIFT_THRESHOLD, SLIDE_THRESHOLD, EventRecord, RolloutRecord, atomic_savez, atomic_write_text

#: Outcome classes and failure reasons listed by :meth:`RolloutResults.report` (the rest are summed).
REPORT_LINES = 8


@dataclass(frozen=True)
class RolloutFailure:
    """A rollout that stopped early: its ``index``, the run's root ``seed`` (the rollout's
    stream is ``SeedSequence(seed).spawn(n)[index]``), the simulated ``time`` [s] it reached,
    the ``reason`` and the ``events`` before the failure."""

    index: int
    seed: int
    time: float
    reason: str
    events: tuple[EventRecord, ...]

    def __repr__(self) -> str:
        return (
            f"RolloutFailure(index={self.index}, seed={self.seed}, time={self.time:.4f}, events={len(self.events)}, reason={self.reason!r})"
        )


@dataclass
class RolloutResults:
    """The records of a Monte Carlo run, in rollout order, and how it was made.

    Attributes
    ----------
    records : list of RolloutRecord
        Every rollout, finished or failed (``record.failure``).
    config : dict
        Scenario, parameters, law (and ``law_description``, the law actually used), seed,
        rollouts, duration [s] (the scenario's own when none was asked for) and versions.
    resumed : int
        How many of the records a resumed run read back from its results directory
        instead of running them.

    The analysis (:meth:`outcome_counts`, :meth:`contact_modes`, :attr:`events`) covers the
    finished rollouts; :attr:`failures` lists the others.
    """

    records: list[RolloutRecord]
    config: dict[str, Any] = field(default_factory=dict)
    resumed: int = 0

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        counts = self.outcome_counts().most_common(3)
        outcomes = ", ".join(f"{outcome!r}: {count}" for outcome, count in counts)
        more = ", ..." if len(self.outcome_counts()) > 3 else ""
        return (
            f"RolloutResults(scenario={self.config.get('scenario')!r}, law={self.law_description!r}, seed={self.config.get('seed')!r}, "
            f"rollouts={len(self.records)}, failed={len(self.failures)}, first-impact outcomes={{{outcomes}{more}}})"
        )

    @property
    def law_description(self) -> str:
        """The law the run used, with its parameters (e.g. ``"RouthImpact(step=0.3, max_steps=10)"``)."""
        return str(self.config.get("law_description") or self.config.get("law") or "the scenario's law")

    @property
    def finished(self) -> list[RolloutRecord]:
        """The rollouts that ran their whole duration."""
        return [record for record in self.records if record.failure is None]

    @property
    def failures(self) -> list[RolloutFailure]:
        """The rollouts that stopped early, with index, seed, time, reason and events before."""
        return [
            RolloutFailure(record.index, record.seed, record.simulated_time, record.failure, record.events)
            for record in self.records
            if record.failure is not None
        ]

    @property
    def events(self) -> list[tuple[int, EventRecord]]:
        """Every event of the finished rollouts as ``(rollout index, EventRecord)``."""
        return [(record.index, event) for record in self.finished for event in record.events]

    def rebound_ratios(self) -> np.ndarray:
        """``-vn+ / vn-`` of every contact that struck (``vn- < -LIFT_THRESHOLD``) at the first
        impact of each finished rollout: the restitution seen (0 for an inelastic stop; a lift
        off driven by other contacts also shows as a positive ratio)."""
        ratios = [
            -event.normal_after[struck] / event.normal_before[struck]
            for record in self.finished
            for event in record.events[:1]
            for struck in [event.normal_before < -LIFT_THRESHOLD]
        ]
        return np.concatenate(ratios) if ratios else np.zeros(0)

    def outcome_counts(self, first_only: bool = True) -> Counter[str]:
        """How often each outcome class occurred in the finished rollouts: of each rollout's
        first impact, or of all impacts."""
        counts: Counter[str] = Counter()
        for record in self.finished:
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

    def contact_legend(self) -> dict[str, str]:
        """What each contact label means (body, link, point in the link frame), first seen first."""
        legend: dict[str, str] = {}
        for record in self.records:
            for event in record.events:
                for label, definition in zip(event.labels, event.definitions, strict=False):
                    legend.setdefault(label, definition)
        return legend

    def failure_reasons(self) -> Counter[str]:
        """How often each failure reason occurred."""
        return Counter(failure.reason for failure in self.failures)

    def report(self) -> str:
        """A short text summary (the CLI prints it): at most about 25 lines."""
        finished = self.finished
        counts = [len(record.events) for record in finished]
        lines = [
            f"{self.config.get('scenario', '?')}: {len(self.records)} rollouts, seed {self.config.get('seed', '?')}",
            f"  law            {self.law_description}",
            f"  finished       {len(finished)}; failed {len(self.records) - len(finished)}",
        ]
        if self.resumed:
            lines.append(f"  resumed        {self.resumed} rollouts read back from disk, {len(self.records) - self.resumed} run now")
        if finished and not sum(counts):
            lines.append("  impacts        none: no contact arrived faster than the simulator's impact_velocity_threshold")
        elif finished:
            lines.append(f"  impacts        {sum(counts)} in all, {np.mean(counts):.1f} per finished rollout")
            lines.append(f"  outcome of the first impact (lift off: vn > {LIFT_THRESHOLD} m/s; slide: |vt| > {SLIDE_THRESHOLD} m/s):")
            lines += _top(self.outcome_counts(), "outcome classes")
            rebound = self.rebound_ratios()
            if len(rebound):
                median, low, high = (_ratio(value) for value in (np.median(rebound), rebound.min(), rebound.max()))
                lines.append(f"  rebound        -vn+/vn- of the contacts that struck: median {median} (min {low}, max {high})")
            if len(finished) > 1 and all(_same_trajectory(finished[0], record) for record in finished[1:]):
                lines.append("  identical      every rollout ended exactly the same (nothing random was drawn): one would do")
        legend = self.contact_legend()
        if legend:
            lines.append("  contacts:")
            lines += [f"    {label:<8} {definition}" for label, definition in list(legend.items())[:REPORT_LINES]]
            if len(legend) > REPORT_LINES:
                lines.append(f"    ... {len(legend) - REPORT_LINES} more (results.contact_legend())")
        failures = self.failures
        if failures:
            shown = ", ".join(str(failure.index) for failure in failures[:REPORT_LINES]) + (", ..." if len(failures) > REPORT_LINES else "")
            lines.append(f"  failed rollouts ({shown}; results.failures lists them), by reason:")
            lines += _top(self.failure_reasons(), "reasons")
        wall = [record.wall_time for record in self.records]
        lines.append(f"  wall time      median {np.median(wall):.3f} s per rollout (wall clock, build included)")
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
        if path.is_dir():
            raise ValueError(
                f"{path} is a directory, not a file written by save(); a results directory of monte_carlo(out=...) is read "
                "back by calling monte_carlo again with the same arguments (the rollouts on disk are loaded, none rerun)"
            )
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
        """One row per (rollout, impact, contact) of the finished rollouts, as a pandas
        DataFrame (pandas must be installed)."""
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


def _same_trajectory(first: RolloutRecord, other: RolloutRecord) -> bool:
    """Whether two rollouts have the same energy history and final state, bit for bit."""
    return (
        np.array_equal(first.energy, other.energy)
        and first.final.keys() == other.final.keys()
        and all(np.array_equal(first.final[key], other.final[key]) for key in first.final)
    )


def _ratio(value: float) -> str:
    """A ratio to 3 decimals; rounding noise (``-3e-16``) shows as ``0.000``, not ``-0.000``."""
    return f"{round(float(value), 3) + 0.0:.3f}"


def _top(counts: Counter[str], what: str) -> list[str]:
    """The :data:`REPORT_LINES` most common entries of ``counts``, then one line for the rest."""
    common = counts.most_common()
    lines = [f"    {count:6d}  {name}" for name, count in common[:REPORT_LINES]]
    rest = common[REPORT_LINES:]
    if rest:
        lines.append(f"    {sum(count for _, count in rest):6d}  in {len(rest)} other {what}")
    return lines
