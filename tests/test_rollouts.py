"""Monte Carlo rollouts: reproducibility across executors, resume after kills, results I/O, CLI."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures.process import _ExecutorManagerThread
from pathlib import Path

import numpy as np
import pytest

from bullet_setimpact.cli import main
from bullet_setimpact.laws import RouthImpact
from bullet_setimpact.laws.base import LawOutcome
from bullet_setimpact.montecarlo.pool import execute
from bullet_setimpact.montecarlo.rollouts import RolloutResults, monte_carlo
from bullet_setimpact.viz.plotting import first_impact_normals, rollouts_figure

SCENARIO = "rocking_block"
FAST = {"duration": 0.15}  # the drop and the first impact, nothing more


def _same(a: RolloutResults, b: RolloutResults) -> None:
    """Bit-identical records: every event's velocities and every final state."""
    assert len(a) == len(b)
    for left, right in zip(a.records, b.records, strict=True):
        assert left.index == right.index
        assert len(left.events) == len(right.events)
        for x, y in zip(left.events, right.events, strict=True):
            np.testing.assert_array_equal(x.v_minus, y.v_minus)
            np.testing.assert_array_equal(x.v_plus, y.v_plus)
            assert x.time == y.time
        assert left.final.keys() == right.final.keys()
        for key in left.final:
            np.testing.assert_array_equal(left.final[key], right.final[key])


def test_same_seed_same_results_on_every_executor() -> None:
    """Serial, a 2-process pool and a 2-worker Dask LocalCluster give identical records,
    because rollout i depends only on SeedSequence(seed).spawn(n)[i]."""
    distributed = pytest.importorskip("dask.distributed")
    serial = monte_carlo(SCENARIO, 6, seed=3, executor="serial", params=FAST)
    pooled = monte_carlo(SCENARIO, 6, seed=3, workers=2, params=FAST)
    _same(serial, pooled)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        dask = monte_carlo(SCENARIO, 6, seed=3, executor=client.get_executor(), params=FAST)
    _same(serial, dask)
    other = monte_carlo(SCENARIO, 6, seed=4, executor="serial", params=FAST)
    assert any(not np.array_equal(x.events[0].v_plus, y.events[0].v_plus) for x, y in zip(serial.records, other.records, strict=True))


def _run_in_subprocess(out: Path, rollouts: int, workers: int) -> subprocess.Popen:
    where = "executor='serial'" if workers == 1 else f"workers={workers}"
    code = (
        "from bullet_setimpact.montecarlo.rollouts import monte_carlo\n"
        f"monte_carlo({SCENARIO!r}, {rollouts}, seed=1, out={str(out)!r}, params={FAST!r}, {where})\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for_files(out: Path, count: int, process: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while len(list(out.glob("rollout_*.npz"))) < count:
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else "process ended early"
        assert time.monotonic() < deadline, "no rollouts were written"
        time.sleep(0.05)


@pytest.mark.subprocess
def test_resume_after_sigkill_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """Kill the whole run with SIGKILL after a few rollouts are on disk; the same call then
    finishes the rest and matches an uninterrupted run exactly, one file per rollout."""
    out = tmp_path / "run"
    process = _run_in_subprocess(out, 12, workers=1)
    _wait_for_files(out, 3, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    on_disk = len(list(out.glob("rollout_*.npz")))
    assert on_disk < 12
    resumed = monte_carlo(SCENARIO, 12, seed=1, out=out, params=FAST, executor="serial")
    fresh = monte_carlo(SCENARIO, 12, seed=1, params=FAST, executor="serial")
    _same(resumed, fresh)
    assert resumed.resumed == on_disk and fresh.resumed == 0
    assert f"{on_disk} rollouts read back from disk, {12 - on_disk} run now" in resumed.report()
    assert sorted(path.name for path in out.glob("rollout_*.npz")) == [f"rollout_{i:06d}.npz" for i in range(12)]
    assert not list(out.glob(".*partial"))


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(child) for child in text]
    return found


@pytest.mark.subprocess
def test_a_killed_worker_is_replaced(tmp_path: Path) -> None:
    """SIGKILL one worker of the pool mid-run: the pool is rebuilt, the run completes, and the
    results equal the serial ones."""
    out = tmp_path / "run"
    process = _run_in_subprocess(out, 16, workers=2)
    _wait_for_files(out, 2, process)
    workers = _pool_workers(process.pid)
    assert workers, "no worker processes found"
    os.kill(workers[0], signal.SIGKILL)
    assert process.wait(timeout=180) == 0, process.stderr.read().decode() if process.stderr else ""
    resumed = monte_carlo(SCENARIO, 16, seed=1, out=out, params=FAST, executor="serial")
    _same(resumed, monte_carlo(SCENARIO, 16, seed=1, params=FAST, executor="serial"))


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:  # gone before the open (FileNotFoundError) or between the open and the read (ESRCH)
        return False


def _wait_until_gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    """The ``pids`` still alive after waiting up to ``timeout`` s for all of them to end."""
    deadline = time.monotonic() + timeout
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if _alive(pid)]


def _pool_workers(pid: int) -> list[int]:
    return [child for child in _children(pid) if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes()]


def _mark_and_sleep(job: tuple[str, int]) -> int:
    """A pool task: leave a file named after the task, then sleep 0.5 s."""
    directory, index = job
    (Path(directory) / str(index)).touch()
    time.sleep(0.5)
    return index


def test_closing_the_results_early_stops_the_pool_at_once(tmp_path: Path) -> None:
    """A caller that stops reading (an exception or Ctrl-C in its loop, or ``close()``) must not
    leave the pool running the queued tasks: 20 tasks of 0.5 s on 2 workers, closed after the
    first 2 results.  Run to the end they would take 5 s; 3 s after the close, at most the 2
    done, the 2 in flight and the pool's 3 pre-queued (2 workers + 1) may have started, and
    the workers are gone.  Before the fix all 20 ran, during the interpreter's exit."""
    results = execute(_mark_and_sleep, [(str(tmp_path), index) for index in range(20)], None, 2)
    received = [next(results), next(results)]
    workers = _pool_workers(os.getpid())
    assert len(workers) == 2
    results.close()
    assert _wait_until_gone(workers) == []
    time.sleep(3.0)
    assert len(received) == 2 and len(list(tmp_path.iterdir())) <= 7


def _square(value: int) -> int:
    return value * value


def test_a_finished_pool_is_joined_before_execute_returns() -> None:
    """When every task is done, the pool's manager thread has ended by the time ``execute``'s
    generator is exhausted.  Left running (``shutdown(wait=False)``, as before), its teardown
    raced Python 3.11's exit handler, which wakes every live pool's thread through a pipe the
    thread may just have closed: ``Exception ignored in: <module 'threading'> ... OSError:
    [Errno 9] Bad file descriptor`` after the CLI's summary, in 2 of 40 runs of ``run slab_drop
    --law anitescu-potra --param height=0.05`` (0 of 80 with the pool joined).  With
    ``wait=False`` the thread was still alive at this check in 20 of 20 tries."""
    assert sorted(execute(_square, list(range(6)), None, 2)) == [value * value for value in range(6)]
    managers = [thread for thread in threading.enumerate() if isinstance(thread, _ExecutorManagerThread)]
    assert not [thread for thread in managers if thread.is_alive()]


@pytest.mark.subprocess
def test_sigterm_stops_the_cli_and_its_workers_and_the_run_resumes(tmp_path: Path) -> None:
    """``kill`` (SIGTERM) of ``bullet-setimpact run`` on a 2-worker pool: it says so and exits
    with 128 + 15 = 143 at once, its workers end with it, and resuming into the same
    directory gives exactly the uninterrupted run.  Before the fix the main process died
    and its workers stayed blocked on the pool's pipes, re-parented to init."""
    out = tmp_path / "run"
    argv = ["run", SCENARIO, "--rollouts", "40", "--seed", "1", "--workers", "2", "--out", str(out), "--param", "duration=0.15"]
    process = subprocess.Popen([sys.executable, "-m", "bullet_setimpact.cli", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_for_files(out, 2, process)
    workers = _pool_workers(process.pid)
    assert workers, "no worker processes found"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 143
    assert "bullet-setimpact: terminated" in (process.stderr.read().decode() if process.stderr else "")
    assert _wait_until_gone(workers) == []
    on_disk = len(list(out.glob("rollout_*.npz")))
    resumed = monte_carlo(SCENARIO, 40, seed=1, out=out, params=FAST, executor="serial")
    assert resumed.resumed == on_disk < 40
    _same(resumed, monte_carlo(SCENARIO, 40, seed=1, params=FAST, executor="serial"))


@pytest.mark.subprocess
def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    """SIGKILL leaves no cleanup to the parent: its pool workers must notice on their own
    (within :data:`~bullet_setimpact.montecarlo.pool.PARENT_POLL` s) and end, not wait forever on the
    pool's pipes."""
    out = tmp_path / "run"
    process = _run_in_subprocess(out, 40, workers=2)
    _wait_for_files(out, 2, process)
    workers = _pool_workers(process.pid)
    assert workers, "no worker processes found"
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert _wait_until_gone(workers) == []


def test_corrupted_file_is_redone_and_foreign_directories_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = monte_carlo(SCENARIO, 4, seed=2, out=out, params=FAST, executor="serial")
    broken = out / "rollout_000002.npz"
    broken.write_bytes(broken.read_bytes()[:100])  # truncated: not a valid archive
    again = monte_carlo(SCENARIO, 4, seed=2, out=out, params=FAST, executor="serial")
    _same(first, again)
    with pytest.raises(ValueError, match=r"different run .*seed"):
        monte_carlo(SCENARIO, 4, seed=9, out=out, params=FAST, executor="serial")
    with pytest.raises(ValueError, match=r"different run .*params"):
        monte_carlo(SCENARIO, 4, seed=2, out=out, params={"duration": 0.2}, executor="serial")
    (out / "run.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"unreadable run\.json"):
        monte_carlo(SCENARIO, 4, seed=2, out=out, params=FAST, executor="serial")


def test_results_round_trip_and_summary(tmp_path: Path) -> None:
    results = monte_carlo(SCENARIO, 3, seed=0, executor="serial", params=FAST)
    results.save(tmp_path / "results.npz")
    loaded = RolloutResults.load(tmp_path / "results.npz")
    _same(results, loaded)
    assert loaded.config["scenario"] == SCENARIO and loaded.config["seed"] == 0
    # no duration or law was asked for: the sidecar records the scenario's own (duration from FAST)
    assert loaded.config["duration"] == FAST["duration"]
    assert loaded.config["law_description"].startswith("RouthImpact(")
    assert sum(results.outcome_counts().values()) == 3
    assert "outcome of the first impact" in results.report()
    assert "identical" not in results.report()  # Routh draws a different outcome per rollout (a continuum)
    # rebound ratios are printed to 3 decimals: a contact that stopped shows 0.000, not its
    # rounding noise (-vn+ of order 1e-17 m/s here) in exponent notation
    assert re.search(r"rebound .*: median \d\.\d{3} \(min \d\.\d{3}, max \d\.\d{3}\)$", results.report(), re.MULTILINE)


def test_a_run_without_impacts_says_so() -> None:
    """The block released 1 m up and stopped after 0.1 s is still falling (it would need
    sqrt(2 / 9.81) = 0.45 s to land): no impact, and the report says so instead of heading an
    empty table of first-impact outcomes."""
    report = monte_carlo(SCENARIO, 2, seed=0, executor="serial", params={"height": 1.0, "duration": 0.1}).report()
    assert "impacts        none" in report
    assert "outcome of the first impact" not in report


def test_a_deterministic_run_says_its_rollouts_are_identical() -> None:
    """Anitescu-Potra draws nothing random and the scenario starts the same every time: every
    rollout is the same, bit for bit, and the report says one would do."""
    results = monte_carlo(SCENARIO, 2, seed=0, law="anitescu-potra", executor="serial", params=FAST)
    assert "every rollout ended exactly the same" in results.report()


def test_rocking_block_monte_carlo_outcome_classes() -> None:
    """64 rollouts: the set-valued law gives at least two outcome classes for the first impact,
    pivoting on either corner among them (journal Fig. 9); Anitescu-Potra gives one (rest)."""
    routh = monte_carlo(SCENARIO, 64, seed=0, workers=2, params=FAST).outcome_counts()
    assert len(routh) >= 2
    assert routh["A:lift off B:stick"] > 0 and routh["A:stick B:lift off"] > 0
    simultaneous = monte_carlo(SCENARIO, 64, seed=0, law="anitescu-potra", workers=2, params=FAST).outcome_counts()
    assert dict(simultaneous) == {"A:stick B:stick": 64}


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="unknown scenario 'no_such'"):
        monte_carlo("no_such", 2)
    with pytest.raises(ValueError, match="rollouts must be an integer >= 1"):
        monte_carlo(SCENARIO, 0)
    with pytest.raises(ValueError, match="has no parameter 'hieght'"):
        monte_carlo(SCENARIO, 2, params={"hieght": 0.1})
    with pytest.raises(ValueError, match="parameter 'height' must be a float"):
        monte_carlo(SCENARIO, 2, params={"height": "tall"})
    with pytest.raises(ValueError, match="unknown law 'newton'"):
        monte_carlo(SCENARIO, 1, law="newton", executor="serial", params=FAST)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "no_such"], "unknown scenario 'no_such'"),
        (["run", SCENARIO, "--param", "height=tall"], "parameter 'height' must be a float"),
        (["run", SCENARIO, "--param", "height"], "--param expects key=value"),
        (["render", "no_such", "--out", "x.gif"], "unknown scenario 'no_such'"),
        (["render", SCENARIO, "--out", "x.jpg"], "--out must end in .gif or .png"),
        (["outcome-set", "no_such"], "unknown example 'no_such'"),
        (["run", SCENARIO, "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1"], "cannot reach the Dask scheduler"),
    ],
)
def test_cli_errors_exit_non_zero_without_traceback(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert message in error
    assert "Traceback" not in error


def test_cli_rejects_zero_workers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", SCENARIO, "--workers", "0"])
    assert exit_info.value.code == 2
    assert "expected a positive integer, got 0" in capsys.readouterr().err


def test_figures_are_written_and_show_the_data(tmp_path: Path) -> None:
    """The Monte Carlo figure is a non-empty PNG of the expected size (13.5 x 5.6 in at 100 dpi)
    whose outcome-class scatters hold exactly the first impacts' post-impact normal velocities,
    one class each, the counts in the legend; titled in words."""
    import matplotlib.image

    results = monte_carlo(SCENARIO, 8, seed=0, executor="serial", params=FAST)
    path = tmp_path / "mc.png"
    figure = rollouts_figure(results, str(path), dpi=100)
    image = matplotlib.image.imread(path)
    assert image.shape[:2] == (560, 1350)
    assert image.std() > 0.01
    labels_and_points = first_impact_normals(results)
    assert labels_and_points is not None
    (_, _), expected, classes = labels_and_points
    drawn = np.concatenate([np.asarray(collection.get_offsets()) for collection in figure.axes[0].collections])
    np.testing.assert_array_equal(drawn[np.lexsort(drawn.T)], expected[np.lexsort(expected.T)])
    assert len(expected) == 8 and len(classes) == 8
    legend = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    assert sum(int(re.search(r": (\d+) rollouts?$", text).group(1)) for text in legend) == 8  # type: ignore[union-attr]
    assert figure._suptitle.get_text().startswith("Rocking block: 8 landings under the set-valued law")


def test_cli_run_and_render(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "run",
                SCENARIO,
                "--rollouts",
                "4",
                "--workers",
                "1",
                "--param",
                "duration=0.15",
                "--out",
                str(tmp_path / "out"),
                "--plot",
                str(tmp_path / "mc.png"),
            ]
        )
        == 0
    )
    assert "4 rollouts" in capsys.readouterr().out
    assert (tmp_path / "mc.png").stat().st_size > 10_000
    assert (
        main(["render", SCENARIO, "--out", str(tmp_path / "drop.gif"), "--duration", "0.5", "--frames", "4", "--param", "height=0.3"]) == 0
    )
    from PIL import Image

    # 120 steps of 1/240 s: regular frames every 30 steps (0.125 s, stored as 12 cs) at steps
    # 0, 30, 60, 90; the block falls 0.3 m, landing at sqrt(2 h / g) = 0.247 s, in step 59 or
    # 60, and the 0.03 s = 7 steps after it are all shown (slow motion x30): 8 frames, one of
    # which (step 60) is a regular one, so 4 + 8 - 1 = 11 frames.  Every frame has its own
    # time overlay, so Pillow merges none.
    with Image.open(tmp_path / "drop.gif") as gif:
        assert gif.size == (640, 480)
        total = 0
        for frame in range(gif.n_frames):
            gif.seek(frame)
            total += gif.info["duration"]
        assert gif.n_frames == 11 and total == 11 * 120
    assert main(["list"]) == 0
    assert SCENARIO in capsys.readouterr().out


class FlakyLaw(RouthImpact):
    """Routh's law that, by design, gives up (``terminated=False``) on about half of the
    impacts: it draws one uniform number from the rollout's stream per impact and fails
    below 1/2.  The simulator rejects such an outcome with ``ImpactFailure``."""

    name = "flaky"

    @classmethod
    def simulation_default(cls) -> FlakyLaw:
        return cls(0.3, 10)

    def _resolve(self, problem, v_minus, rng):  # type: ignore[no-untyped-def]
        if rng.random() < 0.5:
            return LawOutcome(np.array([v_minus]), np.zeros(problem.contacts), np.zeros((problem.contacts, 2)), False, "flaky by design")
        return super()._resolve(problem, v_minus, rng)


def test_failed_rollouts_are_recorded_reported_and_not_redone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a law that fails on some impacts the run finishes: failed rollouts are recorded
    (index, seed, reason, the events before), reported in the summary and the figure, and a
    resumed run redoes neither finished nor recorded rollouts; ``retry_failed`` redoes
    exactly the recorded ones (and, the streams being the same, they fail again)."""
    import bullet_setimpact.montecarlo.rollouts as rollouts_module

    out = tmp_path / "run"
    results = monte_carlo(SCENARIO, 8, seed=0, law=FlakyLaw(0.3, 10), executor="serial", out=out, params=FAST)
    failed = [failure.index for failure in results.failures]
    assert 0 < len(failed) < 8, "seed 0 gives both outcomes (deterministic: one stream per rollout)"
    assert [record.index for record in results.finished] == sorted(set(range(8)) - set(failed))
    for failure in results.failures:
        assert failure.seed == 0 and "flaky by design" in failure.reason and "ImpactFailure" in failure.reason
        assert failure.time < FAST["duration"]
    report = results.report()
    assert f"failed {len(failed)}" in report and "flaky by design" in report
    assert f"{len(failed)} of 8 rollouts failed" in rollouts_figure(results)._suptitle.get_text()
    assert "failed=" in repr(results) and len(repr(results).splitlines()) == 1

    calls: list[int] = []
    original = rollouts_module.run_rollout
    monkeypatch.setattr(rollouts_module, "run_rollout", lambda task: calls.append(task.index) or original(task))
    resumed = monte_carlo(SCENARIO, 8, seed=0, law=FlakyLaw(0.3, 10), executor="serial", out=out, params=FAST)
    assert calls == []
    assert [failure.index for failure in resumed.failures] == failed
    monte_carlo(SCENARIO, 8, seed=0, law=FlakyLaw(0.3, 10), executor="serial", out=out, params=FAST, retry_failed=True)
    assert calls == failed

    fallback = monte_carlo(SCENARIO, 8, seed=0, law=FlakyLaw(0.3, 10), executor="serial", params=FAST, on_failure="fallback")
    assert fallback.failures == [] and any(event.law == "anitescu-potra" for _, event in fallback.events)


def test_on_failure_raise_names_the_rollout_and_seed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``on_failure="raise"`` (and ``--on-failure raise``) stops at the first failed rollout,
    in index order when serial, naming it and the seed."""
    from bullet_setimpact.errors import ImpactFailure
    from bullet_setimpact.laws import LAWS

    first = monte_carlo(SCENARIO, 8, seed=0, law=FlakyLaw(0.3, 10), executor="serial", params=FAST).failures[0].index
    with pytest.raises(ImpactFailure, match=rf"rollout {first} \(seed 0\)"):
        monte_carlo(SCENARIO, 8, seed=0, law=FlakyLaw(0.3, 10), executor="serial", params=FAST, on_failure="raise")
    monkeypatch.setitem(LAWS, "flaky", FlakyLaw)
    argv = ["run", SCENARIO, "--rollouts", "8", "--workers", "1", "--law", "flaky", "--param", "duration=0.15", "--on-failure", "raise"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert f"rollout {first} (seed 0)" in error and "Traceback" not in error


def test_print_of_a_thousand_rollouts_is_short() -> None:
    """``print(results)`` of 1,000 rollouts (records copied from 2 real ones) is one line."""
    results = monte_carlo(SCENARIO, 2, seed=0, executor="serial", params=FAST)
    many = RolloutResults([results.records[i % 2] for i in range(1000)], results.config)
    assert len(repr(many).splitlines()) < 20 and len(repr(many)) < 400
    assert len(many.report().splitlines()) < 30


def test_result_files_follow_the_umask(tmp_path: Path) -> None:
    """Result files get 0666 less the umask, like ``open()``: 0644 under umask 022, 0660 under 007."""
    for mask, expected in ((0o022, 0o644), (0o007, 0o660)):
        previous = os.umask(mask)
        try:
            out = tmp_path / f"run{mask:o}"
            monte_carlo(SCENARIO, 1, seed=0, executor="serial", out=out, params=FAST)
        finally:
            os.umask(previous)
        for path in out.iterdir():
            assert path.stat().st_mode & 0o777 == expected, path


def test_user_scenario_script_by_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A copy of a shipped script under another name runs by path, from Python and the CLI,
    with the same parameter checks and the same numbers as the shipped one."""
    from bullet_setimpact.montecarlo.scenario import SCENARIO_DIR

    script = tmp_path / "my_block.py"
    script.write_text((SCENARIO_DIR / f"{SCENARIO}.py").read_text())
    mine = monte_carlo(str(script), 2, seed=0, executor="serial", params=FAST)
    _same(mine, monte_carlo(SCENARIO, 2, seed=0, executor="serial", params=FAST))
    with pytest.raises(ValueError, match="has no parameter 'hieght'"):
        monte_carlo(str(script), 2, params={"hieght": 0.1})
    with pytest.raises(ValueError, match="does not exist"):
        monte_carlo(str(tmp_path / "missing.py"), 2)
    assert main(["run", str(script), "--rollouts", "2", "--workers", "1", "--param", "duration=0.15"]) == 0
    assert "2 rollouts" in capsys.readouterr().out


@pytest.mark.subprocess
def test_scenario_script_takes_the_cli_arguments(tmp_path: Path) -> None:
    """``python scenarios/x.py --help`` prints the help and the parameters without simulating,
    its usage and help naming ``python scenarios/x.py`` and no scenario argument (the script is the
    scenario: a name given anyway is an unrecognized argument); ``--rollouts 2 --param ...``
    runs two rollouts."""
    from bullet_setimpact.montecarlo.scenario import SCENARIO_DIR

    script = str(SCENARIO_DIR / f"{SCENARIO}.py")
    shown = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "--on-failure" in shown.stdout and "drop height of the bottom face [m]" in shown.stdout
    assert "rollouts," not in shown.stdout
    assert f"usage: python {script}" in shown.stdout and "positional arguments" not in shown.stdout  # (argparse wraps long usages)
    assert "NAME" not in shown.stdout  # nor does its help speak of one
    stray = subprocess.run([sys.executable, script, "quadruped_landing"], capture_output=True, text=True, timeout=120)
    assert stray.returncode == 2 and f"python {script}: error: unrecognized arguments: quadruped_landing" in stray.stderr
    ran = subprocess.run(
        [sys.executable, script, "--rollouts", "2", "--param", "duration=0.15"], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0 and "rocking_block: 2 rollouts" in ran.stdout.replace(script, "rocking_block")


@pytest.mark.subprocess
def test_pool_runs_from_stdin_without_a_main_guard() -> None:
    """The README's ``monte_carlo`` call fed to ``python -`` (no file, no ``__main__`` guard)
    runs on a 2-worker pool and prints the same first-impact outcome counts as a serial run."""
    call = f"monte_carlo({SCENARIO!r}, 4, workers=2, params={FAST!r})"
    code = f"from bullet_setimpact.montecarlo.rollouts import monte_carlo\nprint(dict({call}.outcome_counts()))\n"
    done = subprocess.run([sys.executable, "-"], input=code, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == str(dict(monte_carlo(SCENARIO, 4, executor="serial", params=FAST).outcome_counts()))


@pytest.mark.subprocess
def test_spawn_pool_that_cannot_start_stops_at_once_naming_the_fix() -> None:
    """With the ``spawn`` start method (macOS, Windows), workers re-import the main script;
    from ``python -`` they cannot (there is no file), so the first pool breaks before any
    result: the run stops with one line naming the guard and ``workers=1``, no restarts."""
    code = (
        "import bullet_setimpact.montecarlo.pool as pool\n"
        "pool.start_method = lambda: 'spawn'\n"
        "from bullet_setimpact.montecarlo.rollouts import monte_carlo\n"
        f"monte_carlo({SCENARIO!r}, 4, workers=2, params={FAST!r})\n"
    )
    done = subprocess.run([sys.executable, "-"], input=code, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: the rollout pool could not start") and "__main__" in last and "workers=1" in last
    assert "restarting the pool" not in done.stderr


def test_first_impact_reference_contrasts_the_set_with_plain_bullet() -> None:
    """The rocking block's first impact, as the Monte Carlo figure shows it.  The block lands flat,
    so both corners approach at the same speed; the journal's set (Fig. 9: rest, a pivot on
    either corner, scaled-down pivots) has one corner at rest in every member, and holds the
    Anitescu-Potra rest point and both sequential pivots.  Plain Bullet, run without the hook
    on the same drop, gives one symmetric outcome (mirror symmetry) with no corner approaching."""
    from bullet_setimpact.montecarlo.reference import first_impact

    reference = first_impact(SCENARIO, params=FAST)
    assert reference is not None and reference.labels == ("A", "B")
    approach = reference.problem.normal_velocities(reference.v_minus)
    assert approach[0] == pytest.approx(approach[1], rel=1e-9) and approach[0] < -0.3
    members = reference.problem.normal_velocities(reference.outcome_set)
    assert np.all(members.min(axis=1) <= 1e-8) and np.all(members >= -1e-8)
    np.testing.assert_allclose(reference.problem.normal_velocities(reference.anitescu_potra), 0.0, atol=1e-9)
    pivots = np.array([reference.problem.normal_velocities(v) for v in reference.sequential.values()])
    assert sorted(reference.sequential) == ["A-B", "B-A"]
    assert np.all(pivots.min(axis=1) <= 1e-8) and np.all(pivots.max(axis=1) > 0.05)
    assert reference.bullet is not None
    bullet = reference.problem.normal_velocities(reference.bullet)
    assert bullet[0] == pytest.approx(bullet[1], abs=1e-6) and np.all(bullet >= -1e-6)
    assert len(reference.bullet_energy) == len(reference.bullet_energy_time) > 0


def test_a_first_impact_too_large_to_enumerate_shows_one_anitescu_potra_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Anitescu-Potra outcome takes a search of linear programs (``all_outcomes``); a
    sphere landing on two resting spheres needs some 44,000 (a minute).  Past the figure's
    bound the reference holds the one outcome the law resolves, and says so.  The rocking block
    needs a handful; a bound of one program stands in for a large impact."""
    from bullet_setimpact.laws import AnitescuPotraImpact
    from bullet_setimpact.montecarlo import reference as reference_module

    monkeypatch.setattr(reference_module, "ANITESCU_POTRA_PROGRAMS", 1)
    reference = reference_module.first_impact(SCENARIO, params=FAST)
    assert reference is not None and not reference.anitescu_potra_complete
    resolved = AnitescuPotraImpact().resolve(reference.problem, reference.v_minus).v_plus
    np.testing.assert_array_equal(reference.anitescu_potra, resolved[None, :])


def test_the_figure_plots_the_two_contacts_that_strike_fastest() -> None:
    """A sphere falling onto two resting ones (the sphere stack) strikes at C and D; the
    resting A and B (on the ground) and E (between them) take part in the impact at rest.  The
    figure's axes are the two that strike fastest, in label order, among the contacts present
    in most first impacts."""
    from bullet_setimpact.viz.plotting import striking_pair

    assert striking_pair({"A": 0.0, "B": 0.0, "C": 0.866, "D": 0.866, "E": 0.0}) == ("C", "D")
    assert striking_pair({"A": 0.42, "B": 0.42}) == ("A", "B")
    assert striking_pair({"A": 0.1, "B": 0.2, "C": 0.9}, {"A": 8, "B": 8, "C": 1}) == ("A", "B")
    results = monte_carlo("sphere_stack", 2, seed=0, executor="serial", params={"duration": 0.02})
    points = first_impact_normals(results)
    assert points is not None and points[0] == ("C", "D")


def test_the_energy_panel_is_scaled_to_its_window() -> None:
    """The energy panel zooms on rollout 0's impacts; a rollout that gains energy after the
    window (a compass gait lying flat, where its point-mass model's mass matrix is singular,
    reached 136 J for a step at 0.196 s against the window's 0.2 J) would set a y range on
    which the window's lines lie flat at its bottom.  The y range is that of the lines' values within the
    window, with a 5 % margin; the impacts' vertical lines (in axes coordinates) do not count."""
    import matplotlib.pyplot as plt

    from bullet_setimpact.viz.plotting import _fit_y_to_window

    figure, axes = plt.subplots()
    time = np.linspace(0.0, 0.5, 121)
    axes.plot(time, np.where(time < 0.19, 0.2 * time / 0.19, 136.0))
    axes.plot(time, 0.1 + 0.0 * time)
    axes.axvline(0.05)
    axes.set_xlim(0.0, 0.1)
    _fit_y_to_window(axes)
    shown = 0.2 * time[time <= 0.1] / 0.19
    bottom, top = 0.0, shown.max()
    np.testing.assert_allclose(axes.get_ylim(), (bottom - 0.05 * (top - bottom), top + 0.05 * (top - bottom)))
    plt.close(figure)


def test_one_contact_first_impacts_are_drawn_against_the_rollouts() -> None:
    """A ball's first impact has one contact: the figure's left panel puts each rollout's
    post-impact normal velocity at its index (the recorded values, exactly)."""
    results = monte_carlo("bouncing_ball", 2, seed=0, executor="serial", params={"duration": 0.4})
    figure = rollouts_figure(results)
    drawn = np.asarray(figure.axes[0].collections[0].get_offsets())
    expected = [(record.events[0].normal_after[0], record.index) for record in results.finished]
    np.testing.assert_array_equal(drawn, expected)
    assert figure.axes[0].get_xlabel().startswith(f"{results.finished[0].events[0].labels[0]}'s separating velocity")
