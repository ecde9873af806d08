"""Environments built inside ``with bullet_setimpact.hook(law, seed=0) as h:``, unmodified.

Our own gym-style environments, one per pattern of real environments' PyBullet code
(tests/pattern_envs.py), and panda-gym's manipulation tasks (the ``envs`` extra: gymnasium
and panda-gym).  For each: 3 episodes with resets; impacts are recorded as events naming
their client, no event gains kinetic energy (Theorem 7 of the journal paper: the Routh
model never adds energy, and Stronge restitution at most restores it), and the same seed
gives the same events.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import bullet_setimpact
from bullet_setimpact import ImpactEvent

from .pattern_envs import PATTERNS

EPISODES = 3


def _gains_energy(event: ImpactEvent) -> bool:
    return event.energy_after > event.energy_before * (1.0 + 1e-9) + 1e-12


def _episodes(make: Callable[[], Any], actions: Callable[[Any, np.random.Generator], Any], steps: int) -> tuple[list, list[int]]:
    """The events of :data:`EPISODES` episodes of the environment ``make()`` builds inside a hook
    of every client (seed 0), and the number of events in each episode."""
    rng = np.random.default_rng(0)
    counts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Bullet's URDF warnings, damping warnings of the robots
        with bullet_setimpact.hook("routh", seed=0) as h:
            env = make()
            try:
                for episode in range(EPISODES):
                    env.reset(seed=episode)
                    before = len(h.events)
                    for _ in range(steps):
                        *_, terminated, truncated, _ = env.step(actions(env, rng))
                        if terminated or truncated:
                            break
                    counts.append(len(h.events) - before)
            finally:
                env.close()
    return h.events, counts


def _check(events: list, counts: list[int], again: list) -> None:
    assert all(count > 0 for count in counts), counts
    assert not [event for event in events if _gains_energy(event)]
    assert len({event.client for event in events}) >= 1 and all(event.client >= 0 for event in events)
    assert [(e.time, e.client, e.v_plus.tobytes()) for e in events] == [(e.time, e.client, e.v_plus.tobytes()) for e in again]


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_pattern_environment_inside_a_hook(name: str) -> None:
    """Each pattern environment (tests/pattern_envs.py), created inside the hook: every episode
    has events (each drops or spawns a body), none gains energy, and a second run with the
    same seed gives the same events."""
    events, counts = _episodes(PATTERNS[name], lambda env, rng: None, 1000)
    again, _ = _episodes(PATTERNS[name], lambda env, rng: None, 1000)
    _check(events, counts, again)


PANDA_TASKS = ["PandaPush-v3", "PandaSlide-v3", "PandaPickAndPlace-v3", "PandaStack-v3"]


@pytest.mark.parametrize("task", PANDA_TASKS)
def test_panda_gym_inside_a_hook(task: str) -> None:
    """panda-gym's task, made by ``gymnasium.make`` inside the hook (its client connects there),
    3 episodes of 50 random actions: the object's landing and the gripper's touches are events
    in every episode, none gains energy, and the same seed gives the same events."""
    gymnasium = pytest.importorskip("gymnasium")
    pytest.importorskip("panda_gym")

    def make() -> Any:
        return gymnasium.make(task)

    def act(env: Any, rng: np.random.Generator) -> Any:
        return rng.uniform(-1.0, 1.0, env.action_space.shape)

    events, counts = _episodes(make, act, 50)
    again, _ = _episodes(make, act, 50)
    _check(events, counts, again)


def _push_events(**options: Any) -> list[tuple[float, bytes]]:
    """PandaPush-v3 made inside a hook (seed 0), its end effector driven onto the object and
    pressed down every tenth step for 50 steps: the events' times and ``v+``."""
    import gymnasium
    import panda_gym  # noqa: F401  (registers the Panda tasks)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with bullet_setimpact.hook("routh", seed=0, **options) as h:
            env = gymnasium.make("PandaPush-v3")
            try:
                task = env.unwrapped
                env.reset(seed=0)
                for step in range(50):
                    action = np.zeros(3)
                    action[:2] = np.clip((task.sim.get_base_position("object") - task.robot.get_ee_position())[:2] * 50, -1, 1)
                    action[2] = 1.0 if step % 10 >= 7 else -1.0
                    env.step(action)
            finally:
                env.close()
    return [(event.time, event.v_plus.tobytes()) for event in h.events]


def test_the_certificates_change_no_event_of_a_gripper_pushing_an_object() -> None:
    """The resting-contact certificates only skip evaluations that would find the contact set
    unchanged, and the simulator refreshes every articulated body's forward kinematics after
    each Bullet step (PyBullet's ``getLinkState`` with ``computeForwardKinematics`` changes the
    next step's result otherwise, and the two paths query it unequally): so with and without
    them Bullet takes the same steps and the events are the same, bit for bit, even where a
    gripper pressing an object into a table turns round-off into different trajectories."""
    certified = _push_events()
    assert certified  # the gripper strikes the object and the table
    assert certified == _push_events(resting_budget=False)
