"""Figures in the style of the journal's outcome-set plots (Figs. 9-14), headless (Agg).

The journal's conventions, in the language of the Monte Carlo figure: the set-valued law's
sampled post-impact velocities as a grey cloud, the velocities single impacts pass through in
lighter grey, the Anitescu-Potra outcomes in blue and the sequential orderings as triangles,
all projected onto contact-frame velocities, with titles and legends in words.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from ..core.problem import ImpactProblem
from ..montecarlo.reference import FirstImpact
from ..montecarlo.results import RolloutResults
from ..montecarlo.scenario import load as load_scenario

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
            label = f"during the impact ({len(data.paths)} resolves)" if index == 0 else None
            ax.plot(*xy(trajectory), color="0.88", lw=0.6, zorder=1, label=label)
        ax.scatter(*xy(data.samples), s=4, color="0.6", lw=0, zorder=2, label=f"what the law allows ({len(data.samples)} samples)")
        ax.scatter(*xy(data.v_minus), s=50, marker="o", facecolor="white", edgecolor="k", zorder=4, label="before the impact")
        if data.anitescu_potra is not None and len(data.anitescu_potra):
            ax.scatter(*xy(data.anitescu_potra), s=70, marker="s", color="tab:blue", zorder=5, label="Anitescu-Potra (all at once)")
        for color, (name, velocity) in zip(SEQUENTIAL_COLORS, data.sequential.items(), strict=False):
            words = " then ".join(name.split("-"))
            ax.scatter(*xy(velocity), s=80, marker="^", color=color, edgecolor="k", zorder=6, label=f"sequential: {words}")
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


#: Colours of the first impacts' outcome classes, most frequent first.
CLASS_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
#: An outcome class whose first impacts all lie this close to their mean [m/s] is drawn as one point with its count.
SAME_POINT = 1e-3
#: Outcome classes in words.
VERBS = {"stick": "sticks", "slide": "slides", "lift off": "lifts off"}


def rollouts_figure(results: RolloutResults, path: str | None = None, dpi: int = 100, reference: FirstImpact | None = None) -> plt.Figure:
    """Monte Carlo summary in two panels, titled in words ("Rocking block: 64 landings under
    the set-valued law").

    Left, the first impact in the normal velocities of its two most frequent contacts: the
    rollouts' outcomes coloured by outcome class, with the count of each class in the legend
    and the count written beside points where several coincide.  With ``reference``
    (:func:`~bullet_setimpact.montecarlo.reference.first_impact`) also the whole outcome set
    as a light cloud, plain Bullet's one outcome, the Anitescu-Potra and sequential outcomes,
    and the scenario's sketch naming the contacts (its script's ``sketch(ax)``, if any).
    Right, the kinetic energy zoomed on rollout 0's impacts: every rollout in light grey,
    rollout 0 in black with its impact events, plain Bullet dashed.  Failed rollouts are
    counted in the title."""
    figure, (normal, energy) = plt.subplots(1, 2, figsize=(13.5, 5.6), width_ratios=(1.45, 1.0), constrained_layout=True)
    labels = None
    if reference is not None and len(reference.labels) >= 2:
        labels = striking_pair(dict(zip(reference.labels, -reference.problem.normal_velocities(reference.v_minus), strict=True)))
    points = first_impact_normals(results, labels)
    if points is not None:
        _first_impact_panel(normal, results, points, reference)
    else:
        _single_contact_panel(normal, results, reference)
    _energy_panel(energy, results, reference)
    failures = f"; {len(results.failures)} of {len(results)} rollouts failed" if results.failures else ""
    figure.suptitle(f"{_headline(results)}{failures}", fontsize=13)
    if path is not None:
        figure.savefig(path, dpi=dpi)
    return figure


def _headline(results: RolloutResults) -> str:
    """ "Rocking block: 64 landings under the set-valued law": the scenario's name in words, the
    rollouts named by its script's ``ROLLOUT_NOUN`` (default "rollouts"), the law in words."""
    name = str(results.config.get("scenario", ""))
    noun = "rollouts"
    with contextlib.suppress(ValueError):  # a scenario that is no longer where the run found it
        noun = getattr(load_scenario(name), "ROLLOUT_NOUN", noun)
    law = "the set-valued law" if results.law_description.startswith("RouthImpact") else results.law_description
    return f"{Path(name).stem.replace('_', ' ').capitalize()}: {len(results)} {noun} under {law}"


def _first_impact_panel(
    ax: plt.Axes, results: RolloutResults, points: tuple[tuple[str, str], np.ndarray, list[str]], reference: FirstImpact | None
) -> None:
    (label_x, label_y), xy, classes = points
    if reference is not None:
        index = [reference.labels.index(label_x), reference.labels.index(label_y)]

        def project(v: np.ndarray) -> np.ndarray:
            return np.atleast_2d(reference.problem.normal_velocities(np.atleast_2d(v)))[:, index]

        cloud = project(reference.outcome_set)
        ax.scatter(
            cloud[:, 0], cloud[:, 1], s=8, color="0.75", lw=0, zorder=1, label=f"every outcome the law allows ({len(cloud)} samples)"
        )
    counts = Counter(classes)
    for color, (kind, count) in zip(CLASS_COLORS * 4, counts.most_common(), strict=False):
        mine = xy[[c == kind for c in classes]]
        words = ", ".join(f"{contact} {VERBS[mode]}" for contact, mode in re.findall(r"(\S+):(stick|slide|lift off)", kind))
        label = f"{words or kind}: {count} rollout{'s' * (count != 1)}"
        ax.scatter(mine[:, 0], mine[:, 1], s=36, color=color, edgecolor="k", lw=0.5, zorder=4, label=label)
        if count > 1 and np.abs(mine - mine.mean(axis=0)).max() <= SAME_POINT:  # they hide one another: say how many
            ax.annotate(f"{count} here", tuple(mine.mean(axis=0)), xytext=(8, 6), textcoords="offset points", fontsize=9, fontweight="bold")
    if reference is not None:
        simultaneous = project(reference.anitescu_potra)
        style: dict[str, Any] = {"s": 90, "facecolor": "none", "zorder": 5}
        ax.scatter(
            simultaneous[:, 0],
            simultaneous[:, 1],
            marker="s",
            edgecolor="tab:blue",
            lw=1.8,
            label="Anitescu-Potra: all at once" + ("" if reference.anitescu_potra_complete else " (one outcome; too many to list)"),
            **style,
        )
        for marker, (order, velocity) in zip(("^", "v", "<", ">") * 8, reference.sequential.items(), strict=False):
            (x, y), words = project(velocity)[0], " then ".join(order.split("-"))
            ax.scatter([x], [y], marker=marker, edgecolor="tab:red", lw=1.5, label=f"sequential: {words}", **style)
        if reference.bullet is not None:
            bx, by = project(reference.bullet)[0]
            bullet = f"plain Bullet, no hook: its one outcome ({bx:.3f}, {by:.3f})"
            ax.scatter([bx], [by], s=260, marker="*", color="crimson", edgecolor="k", zorder=7, label=bullet)
            ax.annotate("plain Bullet", (bx, by), xytext=(10, -4), textcoords="offset points", color="crimson", fontsize=9)
        _sketch(ax, results)
        approach = -reference.problem.normal_velocities(reference.v_minus)[index]
        speeds = " and ".join(f"{label} strikes at {speed:.3f} m/s" for label, speed in zip((label_x, label_y), approach, strict=True))
        ax.set_title(f"the first impact, at {reference.time:.3f} s: {speeds}", fontsize=10)
    else:
        ax.set_title(f"the first impact of each rollout at {label_x} and {label_y}", fontsize=10)
    ax.set_xlabel(f"{label_x}'s separating velocity after the impact [m/s]")
    ax.set_ylabel(f"{label_y}'s separating velocity after the impact [m/s]")
    ax.axhline(0.0, color="0.6", lw=0.5, zorder=0)
    ax.axvline(0.0, color="0.6", lw=0.5, zorder=0)
    ax.grid(alpha=0.3)
    _widen_degenerate_axes(ax)
    ax.legend(fontsize=7.5, loc="upper right", framealpha=0.92)


def _single_contact_panel(ax: plt.Axes, results: RolloutResults, reference: FirstImpact | None) -> None:
    """First impacts at one contact: each rollout's post-impact normal velocity of its first
    contact against the rollout's index, and plain Bullet's as a vertical line."""
    rows = [(record.index, record.events[0].labels[0], record.events[0].normal_after[0]) for record in results.finished if record.events]
    if not rows:
        ax.set_title("no rollout had an impact", fontsize=10)
        return
    label = rows[0][1]
    index, velocity = np.array([(i, v) for i, lab, v in rows if lab == label]).T
    ax.scatter(velocity, index, s=30, color=CLASS_COLORS[0], edgecolor="k", lw=0.5, zorder=3, label=f"{len(index)} rollouts")
    if reference is not None and reference.bullet is not None and label in reference.labels:
        bullet = float(reference.problem.normal_velocities(reference.bullet)[reference.labels.index(label)])
        ax.axvline(bullet, color="crimson", ls="--", lw=1.4, label=f"plain Bullet, no hook: {bullet:.3f}")
    ax.set_xlabel(f"{label}'s separating velocity after the first impact [m/s]")
    ax.set_ylabel("rollout")
    ax.set_title(f"the first impact at {label}, one contact", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def _sketch(ax: plt.Axes, results: RolloutResults) -> None:
    """The scenario script's ``sketch(ax)`` in an inset at the upper middle of ``ax``, if it has one."""
    try:
        draw = getattr(load_scenario(str(results.config.get("scenario", ""))), "sketch", None)
    except ValueError:
        return
    if draw is not None:
        inset = ax.inset_axes((0.33, 0.6, 0.26, 0.38))
        draw(inset)


def _energy_panel(ax: plt.Axes, results: RolloutResults, reference: FirstImpact | None) -> None:
    record = results.records[0]
    for other in results.records[1:]:
        ax.plot(other.energy_time, other.energy, color="0.75", lw=0.7, zorder=1)
    ax.plot([], [], color="0.75", lw=0.7, label=f"the other {len(results.records) - 1} rollouts")
    ax.plot(record.energy_time, record.energy, color="k", lw=1.5, zorder=3, label=f"rollout {record.index}")
    for index, event in enumerate(record.events):
        ax.axvline(
            event.time, color="tab:red", lw=0.8, alpha=0.7, zorder=2, label=f"rollout {record.index}'s impacts" if index == 0 else None
        )
    if reference is not None and len(reference.bullet_energy):
        ax.plot(
            reference.bullet_energy_time, reference.bullet_energy, "--", color="crimson", lw=1.4, zorder=4, label="plain Bullet, no hook"
        )
    times = [event.time for event in record.events]
    if times:
        low = times[0] - 0.5 * max(times[-1] - times[0], 0.05)
        high = times[-1] + max(times[-1] - times[0], 0.05)
        ax.set_xlim(max(low, 0.0), min(high, float(record.energy_time[-1])))
        _fit_y_to_window(ax)
    ending = "" if record.failure is None else f", failed at {record.simulated_time:.3f} s"
    ax.set_title(f"kinetic energy around the impacts ({len(record.events)} in rollout {record.index}{ending})", fontsize=10)
    ax.set_xlabel("simulated time [s]")
    ax.set_ylabel("kinetic energy [J]")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


def _fit_y_to_window(ax: plt.Axes) -> None:
    """Scale the y axis to the data lines' values within the x limits, with a 5 % margin:
    matplotlib scales it to all of them, and the window's lines would lie flat at its bottom
    beside a rollout that gains energy after it (a compass gait lying flat after its fall)."""
    x_low, x_high = ax.get_xlim()
    shown = []
    for line in ax.get_lines():
        if line.get_transform() is not ax.transData:  # the impacts' vertical lines, in axes coordinates
            continue
        x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
        shown.append(y[(x >= x_low) & (x <= x_high)])
    values = np.concatenate(shown) if shown else np.zeros(0)
    if values.size:
        low, high = float(values.min()), float(values.max())
        margin = 0.05 * (high - low) if high > low else 0.05 * max(abs(high), 1e-6)
        ax.set_ylim(low - margin, high + margin)


def striking_pair(approach: Mapping[str, float], presence: Mapping[str, int] | None = None) -> tuple[str, str]:
    """The two contacts that strike fastest (``approach``: label to approach speed), in label
    order: a sphere falling onto two resting ones strikes at C and D, not at the resting A and B.
    With ``presence`` (label to the number of impacts it took part in), those present most
    often come first."""

    def rank(label: str) -> tuple[int, float, str]:
        return (-(presence or {}).get(label, 0), -approach[label], label)

    first, second = sorted(sorted(approach, key=rank)[:2])
    return first, second


def first_impact_normals(
    results: RolloutResults, labels: tuple[str, str] | None = None
) -> tuple[tuple[str, str], np.ndarray, list[str]] | None:
    """Two contact labels (``labels``, else those of the first impacts that take part in most
    and strike fastest in the mean, :func:`striking_pair`) and, per finished rollout whose first
    impact has both, their post-impact normal velocities, shape ``(k, 2)``, and the impact's
    outcome class; None if there are fewer than two labels."""
    if labels is None:
        approaches: dict[str, list[float]] = {}
        for record in results.finished:
            if record.events:
                event = record.events[0]
                for label, before in zip(event.labels, event.normal_before, strict=True):
                    approaches.setdefault(label, []).append(-float(before))
        if len(approaches) < 2:
            return None
        first, second = striking_pair(
            {label: float(np.mean(speeds)) for label, speeds in approaches.items()},
            {label: len(speeds) for label, speeds in approaches.items()},
        )
    else:
        first, second = labels
    rows, classes = [], []
    for record in results.finished:
        if record.events:
            event = record.events[0]
            velocity = {label: value for label, value in zip(event.labels, event.normal_after, strict=True)}
            if first in velocity and second in velocity:
                rows.append((velocity[first], velocity[second]))
                classes.append(event.outcome)
    return (first, second), np.array(rows).reshape(-1, 2), classes
