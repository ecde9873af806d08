"""The outcome-set command: summary, saved set and the journal-style figure."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

from bullet_setimpact import AnitescuPotraImpact, planar
from bullet_setimpact.cli import main
from bullet_setimpact.viz.plotting import OutcomeFigureData, outcome_set_figure, panel_points


def test_outcome_set_command_saves_and_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The saved velocities reproduce the printed normal-velocity range, the coverage estimate is
    printed with its share of ``|v-|``, and the figure is a non-empty PNG of 3 panels x 4.2 in
    at 100 dpi."""
    out, plot = tmp_path / "cg.npz", tmp_path / "cg.png"
    assert main(["outcome-set", "compass_gait", "--samples", "2048", "--seed", "1", "--out", str(out), "--plot", str(plot)]) == 0
    text = capsys.readouterr().out
    assert "samples kept" in text and "LCPs / sample" in text and "sampler=mixed" in text
    assert re.search(r"coverage +\d\.\d{4} \(\d+\.\d\d% of \|v-\|; the distance between two halves", text), text
    with np.load(out) as data:
        velocities = data["velocities"]
        normal = planar.compass_gait().problem.normal_velocities(velocities)
        np.testing.assert_allclose(data["normal_velocities"], normal)
        assert list(data["contact_names"]) == ["A", "B"]
    assert f"max {normal.max(axis=0)[1]:+.4f}" in text
    image = matplotlib.image.imread(plot)
    assert image.shape[:2] == (420, 1260)
    assert image.std() > 0.01


def test_outcome_set_command_with_restitution(tmp_path: Path) -> None:
    """``--restitution 0.5`` on the rocking block (dropped flat: both corners approach with the
    same normal velocity ``u < 0``).  Every sample separates (``Jn v+ >= 0``) and keeps no more
    energy than ``v-`` had (the contacts return at most ``e^2`` of what they absorbed); with
    ``e > 0`` some stored energy is returned, so the block leaves the ground (some normal
    velocity is positive, where the inelastic law ends at rest on both corners in part of the
    set); the saved set records ``e`` per contact."""
    out = tmp_path / "rb.npz"
    assert main(["outcome-set", "rocking_block", "--samples", "1024", "--restitution", "0.5", "--out", str(out)]) == 0
    example = planar.rocking_block()
    u = example.problem.normal_velocities(example.v_minus)
    with np.load(out) as data:
        np.testing.assert_array_equal(data["restitution"], [0.5, 0.5])
        velocities = data["velocities"]
    normal = example.problem.normal_velocities(velocities)
    assert np.all(normal >= -1e-8)
    assert np.all(example.problem.kinetic_energy(velocities) <= example.problem.kinetic_energy(example.v_minus) * (1 + 1e-12))
    assert u[0] == pytest.approx(u[1]) and u[0] < 0
    assert normal.max() > 0.0


def test_figure_panels_show_the_samples() -> None:
    """Panel 1 plots (vn_A, vn_B), panels 2-3 each contact's (vt, vn): exactly the data."""
    example = planar.rocking_block()
    samples = np.array([[0.0, 0.0, 0.0], [0.05, 0.02, -0.05]])
    data = OutcomeFigureData(
        example.problem,
        example.v_minus,
        samples,
        example.contact_names,
        AnitescuPotraImpact().all_outcomes(example.problem, example.v_minus),
    )
    figure = outcome_set_figure(data)
    normal, tangential = example.problem.normal_velocities(samples), example.problem.tangential_velocities(samples)[:, :, 0]
    expected = [normal, np.column_stack([tangential[:, 0], normal[:, 0]]), np.column_stack([tangential[:, 1], normal[:, 1]])]
    for drawn, want, axis in zip(panel_points(data), expected, figure.axes, strict=True):
        np.testing.assert_allclose(drawn, want)
        np.testing.assert_allclose(axis.collections[0].get_offsets(), want)
        assert "[m/s]" in axis.get_xlabel() and "[m/s]" in axis.get_ylabel()
