"""Figures in the style of the journal's outcome-set plots (Figs. 9-14), headless (Agg).

Conventions of the journal: sampled post-impact velocities of the set-valued model in dark
gray, the velocities they pass through during the impact in light gray, the Anitescu-Potra
outcomes in blue and the two sequential orderings in red and yellow, all projected onto
contact-frame velocities.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from ..core.problem import ImpactProblem
from ..montecarlo.results import RolloutResults

SEQUENTIAL_COLORS = ("tab:red", "gold", "tab:orange", "tab:brown")


@dataclass
class OutcomeFigureData:
    """Everything an outcome-set figure draws (generalized velocities, rows are samples)."""

    problem: ImpactProblem
    v_minus: np.ndarray
    samples: np.ndarray
    contact_names: Sequence[str]
    anitescu_potra: np.ndarray | None = None
    sequential: dict[str, np.ndarray] = field(default_factory=dict)
    paths: list[np.ndarray] = field(default_factory=list)
    title: str = ""


def _panels(data: OutcomeFigureData) -> list[tuple[str, tuple[int, str], tuple[int, str]]]:
    """Axes of each panel: pairs of (contact, 'n' or 't'): normal plane, then each contact's frame."""
    m = data.problem.contacts
    panels = []
    for first in range(0, min(m, 4) - 1, 2):
        panels.append(("normal velocities", (first, "n"), (first + 1, "n")))
    for contact in range(min(m, 2)):
        panels.append((f"contact {data.contact_names[contact]}", (contact, "t"), (contact, "n")))
    return panels


def _component(problem: ImpactProblem, v: np.ndarray, axis: tuple[int, str]) -> np.ndarray:
    contact, kind = axis
    v = np.atleast_2d(v)
    if kind == "n":
        return problem.normal_velocities(v)[:, contact]
    return problem.tangential_velocities(v)[:, contact, 0]


def outcome_set_figure(data: OutcomeFigureData, path: str | None = None, dpi: int = 100) -> plt.Figure:
    """Draw the post-impact set in contact velocity coordinates; save to ``path`` if given."""
    panels = _panels(data)
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), squeeze=False, constrained_layout=True)
    for ax, (title, x_axis, y_axis) in zip(axes[0], panels, strict=True):

        def xy(v: np.ndarray, x_axis: tuple[int, str] = x_axis, y_axis: tuple[int, str] = y_axis) -> tuple[np.ndarray, np.ndarray]:
            return _component(data.problem, v, x_axis), _component(data.problem, v, y_axis)

        for index, trajectory in enumerate(data.paths):
            ax.plot(*xy(trajectory), color="0.82", lw=0.6, zorder=1, label="during impact (Routh)" if index == 0 else None)
        ax.scatter(*xy(data.samples), s=3, color="0.25", lw=0, zorder=2, label=f"post-impact set ({len(data.samples)} samples)")
        ax.scatter(*xy(data.v_minus), s=50, marker="o", facecolor="white", edgecolor="k", zorder=4, label="pre-impact")
        if data.anitescu_potra is not None and len(data.anitescu_potra):
            ax.scatter(*xy(data.anitescu_potra), s=70, marker="s", color="tab:blue", zorder=5, label="Anitescu-Potra")
        for color, (name, velocity) in zip(SEQUENTIAL_COLORS, data.sequential.items(), strict=False):
            ax.scatter(*xy(velocity), s=80, marker="^", color=color, edgecolor="k", zorder=6, label=f"sequential, order {name}")
        names = {"n": "normal", "t": "tangential"}
        ax.set_xlabel(f"{names[x_axis[1]]} velocity at {data.contact_names[x_axis[0]]} [m/s]")
        ax.set_ylabel(f"{names[y_axis[1]]} velocity at {data.contact_names[y_axis[0]]} [m/s]")
        ax.set_title(title)
        ax.axhline(0.0, color="0.6", lw=0.5, zorder=0)
        ax.axvline(0.0, color="0.6", lw=0.5, zorder=0)
        ax.grid(alpha=0.3)
        _widen_degenerate_axes(ax)
    axes[0, 0].legend(loc="best", fontsize=7, framealpha=0.9)
    if data.title:
        figure.suptitle(data.title)
    if path is not None:
        figure.savefig(path, dpi=dpi)
    return figure


def _widen_degenerate_axes(ax: plt.Axes) -> None:
    """Give an axis whose data span is round-off (e.g. zero slip by symmetry) the other axis's span."""
    x_low, x_high = ax.get_xlim()
    y_low, y_high = ax.get_ylim()
    span = max(x_high - x_low, y_high - y_low)
    if x_high - x_low < 1e-6 * span:
        centre = 0.5 * (x_low + x_high)
        ax.set_xlim(centre - span / 2, centre + span / 2)
    if y_high - y_low < 1e-6 * span:
        centre = 0.5 * (y_low + y_high)
        ax.set_ylim(centre - span / 2, centre + span / 2)


def panel_points(data: OutcomeFigureData) -> list[np.ndarray]:
    """The (x, y) sample coordinates drawn in each panel, shape ``(S, 2)`` each (for checks)."""
    return [
        np.column_stack([_component(data.problem, data.samples, x_axis), _component(data.problem, data.samples, y_axis)])
        for _, x_axis, y_axis in _panels(data)
    ]


def rollouts_figure(results: RolloutResults, path: str | None = None, dpi: int = 100) -> plt.Figure:
    """Monte Carlo summary: outcome classes of the first impact (failed rollouts in red, by
    exception), the first impacts' post-impact normal velocities of the two most frequent
    contacts (the title says which of how many, the legend defines them), and rollout 0's
    kinetic energy.  The title names the law with its parameters."""
    figure, (classes, normal, energy) = plt.subplots(1, 3, figsize=(15, 4.6), constrained_layout=True)
    counts = results.outcome_counts().most_common()
    failed = Counter(failure.reason.split(":", 1)[0] for failure in results.failures).most_common()
    bars = [(outcome, count, "0.35") for outcome, count in counts] + [(f"failed: {kind}", count, "tab:red") for kind, count in failed]
    classes.barh(range(len(bars)), [count for _, count, _ in bars], color=[color for _, _, color in bars])
    classes.set_yticks(range(len(bars)), [label for label, _, _ in bars], fontsize=7)
    classes.invert_yaxis()
    classes.set_xlabel("rollouts")
    classes.set_title(f"outcome of the first impact ({len(results)} rollouts)", fontsize=10)
    points = first_impact_normals(results)
    legend = results.contact_legend()
    if points is not None:
        (label_x, label_y), xy = points
        normal.scatter(xy[:, 0], xy[:, 1], s=12, color="0.25", label="post-impact (one per rollout)")
        for label in (label_x, label_y):
            normal.plot([], [], " ", label=f"{label} = {legend.get(label, label)}")
        normal.set_xlabel(f"normal velocity at {label_x} [m/s]")
        normal.set_ylabel(f"normal velocity at {label_y} [m/s]")
        normal.axhline(0.0, color="0.6", lw=0.5)
        normal.axvline(0.0, color="0.6", lw=0.5)
        normal.legend(fontsize=6, loc="best")
        _widen_degenerate_axes(normal)
        shown = f"{label_x} and {label_y}" + (f" (2 most frequent of {len(legend)} contacts)" if len(legend) > 2 else "")
        normal.set_title(f"first impact: normal velocities at {shown}", fontsize=10)
    else:
        normal.set_title("first impact: fewer than two contacts, nothing to plot", fontsize=10)
    normal.grid(alpha=0.3)
    record = results.records[0]
    energy.plot(record.energy_time, record.energy, color="k", lw=1.2, label="kinetic energy")
    for index, event in enumerate(record.events):
        energy.axvline(event.time, color="tab:red", lw=0.8, alpha=0.7, label="impact event" if index == 0 else None)
    energy.set_xlabel("simulated time [s]")
    energy.set_ylabel("kinetic energy [J]")
    ending = "" if record.failure is None else f", failed at {record.simulated_time:.3f} s"
    energy.set_title(f"rollout {record.index}: {len(record.events)} impact{'' if len(record.events) == 1 else 's'}{ending}", fontsize=10)
    energy.legend(fontsize=8)
    energy.grid(alpha=0.3)
    failures = f"; {len(results.failures)} of {len(results)} rollouts failed" if results.failures else ""
    figure.suptitle(f"{results.config.get('scenario', '')}: Monte Carlo under {results.law_description}{failures}", fontsize=11)
    if path is not None:
        figure.savefig(path, dpi=dpi)
    return figure


def first_impact_normals(results: RolloutResults) -> tuple[tuple[str, str], np.ndarray] | None:
    """The two most frequent contact labels and, per finished rollout whose first impact has
    both, their post-impact normal velocities, shape ``(k, 2)``; None if fewer than two labels."""
    frequency: dict[str, int] = {}
    for record in results.finished:
        for label in record.events[0].labels if record.events else ():
            frequency[label] = frequency.get(label, 0) + 1
    if len(frequency) < 2:
        return None
    first, second = sorted(frequency, key=lambda label: (-frequency[label], label))[:2]
    rows = []
    for record in results.finished:
        if record.events:
            event = record.events[0]
            velocity = {label: value for label, value in zip(event.labels, event.normal_after, strict=True)}
            if first in velocity and second in velocity:
                rows.append((velocity[first], velocity[second]))
    return (first, second), np.array(rows).reshape(-1, 2)
