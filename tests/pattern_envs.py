"""Gym-style environments of our own, one per pattern of real environments' PyBullet code.

Each has ``reset(seed=None) -> (observation, info)`` and ``step(action) -> (observation,
reward, terminated, truncated, info)`` and never mentions the package under test; the
patterns are those of pybullet_envs and panda-gym:

- :class:`ClientInReset`: the client is created in ``reset()`` (pybullet_envs' envs);
- :class:`ReloadEveryReset`: ``resetSimulation`` and a reload on every reset, another body
  each episode (Minitaur, Kuka, Racecar);
- :class:`MJCFWalker`: an MJCF body loaded once, its state saved and restored between
  episodes, the world's own contact ERP (the locomotion envs);
- :class:`TorqueQuadruped`: a quadruped under a PD controller in ``TORQUE_CONTROL`` (Minitaur);
- :class:`Randomized`: mass and friction randomized per episode (domain randomization);
- :class:`Spawner`: bodies spawned and removed mid-episode.

and two walkers: pybullet_envs' own Minitaur (:func:`minitaur_world`, :func:`minitaur_command`),
knee loops closed by point2point constraints and position-controlled motors; pybullet_data's a1
trotting under position control (:func:`a1_world`, :func:`trot`).

Observations are a body's base position; rewards are 0.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import math
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p
import pybullet_data
from pybullet_utils.bullet_client import BulletClient

DATA = pybullet_data.getDataPath()
#: The trots' frequencies [Hz] (:func:`minitaur_command`, :func:`a1_world`).
MINITAUR_GAIT_HZ = 2.0
A1_GAIT_HZ = 2.25


def pybullet_envs_module(name: str) -> types.ModuleType:
    """``pybullet_envs.<name>`` without running ``pybullet_envs/__init__.py``, which imports
    ``gym`` (gymnasium replaced it); the package directories are set up empty instead."""
    spec = importlib.machinery.PathFinder.find_spec("pybullet_envs")  # the installed package, not sys.modules' entry
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("pybullet_envs is not installed (it ships with pybullet)")
    root = Path(next(iter(spec.submodule_search_locations)))
    parts = name.split(".")
    for depth in range(len(parts)):
        package = ".".join(["pybullet_envs", *parts[:depth]])
        if package not in sys.modules:
            module = types.ModuleType(package)
            module.__path__ = [str(root.joinpath(*parts[:depth]))]
            sys.modules[package] = module
    return importlib.import_module(f"pybullet_envs.{name}")


def minitaur_world(time_step: float) -> tuple[BulletClient, Any]:
    """pybullet_envs' Minitaur standing on plane.urdf (position control, its defaults)."""
    minitaur_module = pybullet_envs_module("bullet.minitaur")
    client = BulletClient(connection_mode=p.DIRECT)
    client.setGravity(0, 0, -9.81)
    client.setPhysicsEngineParameter(fixedTimeStep=time_step)
    client.loadURDF(os.path.join(DATA, "plane.urdf"))
    robot = minitaur_module.Minitaur(pybullet_client=client, urdf_root=DATA, time_step=time_step)
    return client, robot


def minitaur_command(robot: Any, t: float) -> None:
    """A trot through the leg model: diagonal legs in antiphase, swing and extension sines."""
    angle = 2 * math.pi * MINITAUR_GAIT_HZ * t
    ramp = min(1.0, t / 0.5)
    phases = [0.0, math.pi, math.pi, 0.0]  # front left, back left, front right, back right
    swing = [ramp * 0.3 * math.sin(angle + phase) for phase in phases]
    extension = [ramp * 0.35 * max(0.0, math.cos(angle + phase)) for phase in phases]
    robot.ApplyAction(robot.ConvertFromLegModel(np.array(swing + extension)))


def trot(client: BulletClient, joints: list[int], targets: Callable[[float], list[float]], force: float) -> Callable[[float], None]:
    """Position-control commands of a trot: ``targets(t)`` for ``joints``."""

    def command(t: float) -> None:
        client.setJointMotorControlArray(0, joints, p.POSITION_CONTROL, targetPositions=targets(t), forces=[force] * len(joints))

    return command


def a1_world(time_step: float) -> tuple[BulletClient, list[int], Callable[[float], list[float]]]:
    """pybullet_data's a1 standing on plane.urdf (a box ground); its leg joints and the joint targets
    at time t of a trot (diagonal legs in antiphase at :data:`A1_GAIT_HZ`, after 0.5 s standing up)."""
    client = BulletClient(connection_mode=p.DIRECT)
    client.setGravity(0, 0, -9.81)
    client.setPhysicsEngineParameter(fixedTimeStep=time_step)
    robot = client.loadURDF(os.path.join(DATA, "a1/a1.urdf"), [0, 0, 0.3])
    client.loadURDF(os.path.join(DATA, "plane.urdf"))
    legs = ["FR", "FL", "RR", "RL"]
    named = {client.getJointInfo(robot, j)[1].decode(): j for j in range(client.getNumJoints(robot))}
    joints = [named[f"{leg}_{part}_joint"] for leg in legs for part in ("hip", "upper", "lower")]
    phase = {"FR": 0.0, "RL": 0.0, "FL": math.pi, "RR": math.pi}
    stand = [0.0, 0.85, -1.7]
    for joint, value in zip(joints, stand * 4, strict=True):
        client.resetJointState(robot, joint, value)

    def targets(t: float) -> list[float]:
        values = []
        ramp = min(1.0, t / 0.5)  # stand first, then trot
        for leg in legs:
            angle = 2 * math.pi * A1_GAIT_HZ * t + phase[leg]
            lift = ramp * max(0.0, math.sin(angle))
            values += [0.0, stand[1] - ramp * 0.2 * math.cos(angle) + 0.3 * lift, stand[2] - 0.6 * lift]
        return values

    return client, joints, targets


class _Env:
    """What the environments share: a client, gravity, a plane, an observed body."""

    #: Steps per episode.
    horizon = 90

    def __init__(self) -> None:
        self.client = -1
        self.body = -1
        self.steps = 0
        self.rng = np.random.default_rng(0)

    def _world(self) -> None:
        p.setGravity(0.0, 0.0, -9.81, physicsClientId=self.client)
        p.loadURDF(os.path.join(DATA, "plane.urdf"), physicsClientId=self.client)

    def _observe(self) -> np.ndarray:
        return np.array(p.getBasePositionAndOrientation(self.body, physicsClientId=self.client)[0])

    def _start(self, seed: int | None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.steps = 0

    def _act(self, action: Any) -> None:
        """Issue the action's commands (none by default)."""

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        raise NotImplementedError

    def step(self, action: Any = None) -> tuple[np.ndarray, float, bool, bool, dict]:
        self._act(action)
        p.stepSimulation(physicsClientId=self.client)
        self.steps += 1
        return self._observe(), 0.0, False, self.steps >= self.horizon, {}

    def close(self) -> None:
        if self.client >= 0 and p.isConnected(physicsClientId=self.client):
            p.disconnect(physicsClientId=self.client)
        self.client = -1


class ClientInReset(_Env):
    """A new client at every reset (the old one disconnected), a cube dropped onto the plane."""

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        self._start(seed)
        self.close()
        self.client = p.connect(p.DIRECT)
        self._world()
        self.body = p.loadURDF(os.path.join(DATA, "cube_small.urdf"), [0.0, 0.0, 0.2], physicsClientId=self.client)
        return self._observe(), {}


class ReloadEveryReset(_Env):
    """One client; every reset calls ``resetSimulation`` and loads another body (cube, sphere,
    duck in turn) dropped from a random height."""

    BODIES = ("cube_small.urdf", "sphere_small.urdf", "duck_vhacd.urdf")

    def __init__(self) -> None:
        super().__init__()
        self.client = p.connect(p.DIRECT)
        self.episode = 0

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        self._start(seed)
        p.resetSimulation(physicsClientId=self.client)
        self._world()
        name = self.BODIES[self.episode % len(self.BODIES)]
        self.episode += 1
        self.body = p.loadURDF(os.path.join(DATA, name), [0.0, 0.0, self.rng.uniform(0.1, 0.3)], physicsClientId=self.client)
        return self._observe(), {}


class MJCFWalker(_Env):
    """pybullet_data's MJCF ant, loaded at the first reset with the world's contact ERP 0.9;
    its state is saved then, 0.1 m higher than the file places it, and restored at every
    reset; motors off."""

    horizon = 240

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        self._start(seed)
        if self.client < 0:
            self.client = p.connect(p.DIRECT)
            self._world()
            p.setDefaultContactERP(0.9, physicsClientId=self.client)
            self.body = p.loadMJCF(os.path.join(DATA, "mjcf", "ant.xml"), physicsClientId=self.client)[-1]
            joints = list(range(p.getNumJoints(self.body, physicsClientId=self.client)))
            p.setJointMotorControlArray(self.body, joints, p.VELOCITY_CONTROL, forces=[0.0] * len(joints), physicsClientId=self.client)
            position, orientation = p.getBasePositionAndOrientation(self.body, physicsClientId=self.client)
            p.resetBasePositionAndOrientation(
                self.body, [position[0], position[1], position[2] + 0.1], orientation, physicsClientId=self.client
            )
            self.state = p.saveState(physicsClientId=self.client)
        else:
            p.restoreState(self.state, physicsClientId=self.client)
        return self._observe(), {}


class TorqueQuadruped(_Env):
    """pybullet_data's laikago dropped from 2 cm, its joints driven by a PD law in
    ``TORQUE_CONTROL`` towards a standing pose plus the action (joint offsets, rad)."""

    horizon = 120
    TARGET = np.array([0.0, 0.6, -1.2] * 4)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        self._start(seed)
        if self.client < 0:
            self.client = p.connect(p.DIRECT)
        p.resetSimulation(physicsClientId=self.client)
        self._world()
        self.body = p.loadURDF(
            os.path.join(DATA, "laikago/laikago_toes.urdf"), [0.0, 0.0, 0.5], [0.5, 0.5, 0.5, 0.5], physicsClientId=self.client
        )
        self.joints = [
            joint
            for joint in range(p.getNumJoints(self.body, physicsClientId=self.client))
            if p.getJointInfo(self.body, joint, physicsClientId=self.client)[2] == p.JOINT_REVOLUTE
        ]
        for joint, angle in zip(self.joints, self.TARGET, strict=True):
            p.resetJointState(self.body, joint, angle, physicsClientId=self.client)
        p.setJointMotorControlArray(self.body, self.joints, p.VELOCITY_CONTROL, forces=[0.0] * 12, physicsClientId=self.client)
        return self._observe(), {}

    def _act(self, action: Any) -> None:
        target = self.TARGET + (0.0 if action is None else np.asarray(action))
        states = p.getJointStates(self.body, self.joints, physicsClientId=self.client)
        q, qd = np.array([s[0] for s in states]), np.array([s[1] for s in states])
        torques = np.clip(200.0 * (target - q) - 5.0 * qd, -40.0, 40.0)
        p.setJointMotorControlArray(self.body, self.joints, p.TORQUE_CONTROL, forces=torques.tolist(), physicsClientId=self.client)


class Randomized(_Env):
    """A box dropped onto the plane, its mass (0.5-2 kg) and friction (0-1) and the plane's
    friction drawn at every reset with ``changeDynamics``; the box slides in at 1 m/s."""

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        self._start(seed)
        if self.client < 0:
            self.client = p.connect(p.DIRECT)
            self._world()
            shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05, 0.05, 0.05], physicsClientId=self.client)
            self.body = p.createMultiBody(1.0, shape, physicsClientId=self.client)
        p.changeDynamics(
            self.body, -1, mass=self.rng.uniform(0.5, 2.0), lateralFriction=self.rng.uniform(0.0, 1.0), physicsClientId=self.client
        )
        p.changeDynamics(0, -1, lateralFriction=self.rng.uniform(0.0, 1.0), physicsClientId=self.client)
        p.resetBasePositionAndOrientation(self.body, [0.0, 0.0, 0.15], [0.0, 0.0, 0.0, 1.0], physicsClientId=self.client)
        p.resetBaseVelocity(self.body, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=self.client)
        return self._observe(), {}


class Spawner(_Env):
    """A sphere on the plane; every 30 steps a cube is spawned above it, and the oldest cube
    beyond two is removed."""

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        self._start(seed)
        if self.client < 0:
            self.client = p.connect(p.DIRECT)
            self._world()
            self.body = p.loadURDF(os.path.join(DATA, "sphere_small.urdf"), [0.0, 0.0, 0.1], physicsClientId=self.client)
        self.cubes: list[int] = getattr(self, "cubes", [])
        return self._observe(), {}

    def _act(self, action: Any) -> None:
        if self.steps % 30 == 0:
            x, y = self.rng.uniform(-0.5, 0.5, size=2)
            cube = p.loadURDF(os.path.join(DATA, "cube_small.urdf"), [x, y, 0.2], physicsClientId=self.client)
            self.cubes.append(cube)
            if len(self.cubes) > 2:
                p.removeBody(self.cubes.pop(0), physicsClientId=self.client)


#: Every pattern environment, by name.
PATTERNS = {cls.__name__: cls for cls in (ClientInReset, ReloadEveryReset, MJCFWalker, TorqueQuadruped, Randomized, Spawner)}
