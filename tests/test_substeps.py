"""Worlds stepped in ``numSubSteps`` substeps: the simulator takes Bullet's substeps one at a time.

With ``numSubSteps = K``, one ``stepSimulation`` of PyBullet runs ``K`` substeps of
``h = fixedTimeStep / K``, each detecting and resolving contacts itself: an impact inside the
step would be Bullet's.  The simulator steps such a world substep by substep instead
(:class:`~bullet_setimpact.ImpactSimulator`), and relies on a fact of Bullet checked first
here: ``K`` steps of ``h`` are Bullet's substeps, bit for bit, when the torques and world-frame
torques of the step are issued again before each and the motors were commanded at the world's
time step (their impulse caps, ``force * fixedTimeStep``, are fixed by the command).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact import ImpactSimulator
from bullet_setimpact.bullet.examples import urdf_path

#: The world's time step [s] and its substeps: pybullet_envs' locomotion scenes step at 0.0165 s in 4.
WORLD_STEP, SUBSTEPS = 0.0165, 4


def _a1_world(client: int, time_step: float, substeps: int) -> tuple[int, list[int], int]:
    """An a1 0.12 m above the plane (its feet strike at about 1.5 m/s), a 5 cm cube beside it;
    returns the robot, its revolute joints and the cube."""
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=time_step, numSubSteps=substeps, physicsClientId=client)
    p.loadURDF("plane.urdf", physicsClientId=client)
    robot = p.loadURDF("a1/a1.urdf", [0.0, 0.0, 0.45], physicsClientId=client)
    cube = p.loadURDF("cube_small.urdf", [0.5, 0.0, 0.2], physicsClientId=client)
    joints = [
        joint
        for joint in range(p.getNumJoints(robot, physicsClientId=client))
        if p.getJointInfo(robot, joint, physicsClientId=client)[2] == p.JOINT_REVOLUTE
    ]
    return robot, joints, cube


def _commands(client: int, robot: int, joints: list[int], cube: int, step: int, force_scale: float) -> Callable[[], None]:
    """Issue the user's commands of world step ``step``: position targets swinging each leg, at
    ``20 * force_scale`` N m, and a torque about z on the cube; return a function issuing again
    the commands PyBullet clears after each ``stepSimulation`` (the torque)."""
    targets = [0.9 * (j % 3 == 2) * -1.8 + 0.3 * math.sin(0.8 * step + j) for j in range(len(joints))]
    p.setJointMotorControlArray(
        robot, joints, p.POSITION_CONTROL, targetPositions=targets, forces=[20.0 * force_scale] * len(joints), physicsClientId=client
    )

    def torque() -> None:
        p.applyExternalTorque(cube, -1, [0.0, 0.0, 0.002], p.WORLD_FRAME, physicsClientId=client)

    torque()
    return torque


def _state(client: int, robot: int, cube: int) -> tuple:
    """The robot's base and joint states and the cube's pose and velocity."""
    joints = p.getJointStates(robot, range(p.getNumJoints(robot, physicsClientId=client)), physicsClientId=client)
    bases = [
        (p.getBasePositionAndOrientation(body, physicsClientId=client), p.getBaseVelocity(body, physicsClientId=client))
        for body in (robot, cube)
    ]
    return (*bases, *(state[:2] for state in joints))


def test_bullets_substeps_are_single_steps_with_the_step_commands_issued_again() -> None:
    """The fact the simulator builds on (module docstring), on plain Bullet: the a1 dropped and
    swinging its legs under position motors commanded at ``fixedTimeStep = 0.0165`` s, the cube
    turned by a world-frame torque, for 60 steps of 4 substeps (landing included), against the
    same world switched to single steps of ``0.0165 / 4`` s for each step, the torque issued
    before each and the world's parameters set back after: the same states, bit for bit."""
    runs = []
    for emulated in (False, True):
        client = p.connect(p.DIRECT)
        try:
            robot, joints, cube = _a1_world(client, WORLD_STEP, SUBSTEPS)
            states = []
            for step in range(60):
                torque = _commands(client, robot, joints, cube, step, 1.0)
                if emulated:
                    p.setPhysicsEngineParameter(fixedTimeStep=WORLD_STEP / SUBSTEPS, numSubSteps=0, physicsClientId=client)
                    for substep in range(SUBSTEPS):
                        if substep:
                            torque()
                        p.stepSimulation(physicsClientId=client)
                    p.setPhysicsEngineParameter(fixedTimeStep=WORLD_STEP, numSubSteps=SUBSTEPS, physicsClientId=client)
                else:
                    p.stepSimulation(physicsClientId=client)
                states.append(_state(client, robot, cube))
            runs.append(states)
        finally:
            p.disconnect(client)
    assert runs[0] == runs[1]


def test_a_world_in_substeps_is_the_simulators_world_of_single_substeps() -> None:
    """The a1 of the test above under the simulator, in two worlds: stepped at 0.0165 s in 4
    substeps, and stepped at 0.0165 / 4 s in single substeps, four times as often, with the
    commands of each world step issued before each of its four steps and the motors' force
    times 4 (the cap ``force * fixedTimeStep`` is then the same, ``20 * 0.0165`` N s: a product
    by 4 is exact).  The simulator steps the first world as the second, so every event (time,
    contacts, ``v-``, ``v+``) and every state after each world step are the same, bit for bit,
    though the feet's landing splits substeps (events, motors held through the parts); the
    world's parameters read back as the user set them after each step."""
    runs = []
    for substeps in (SUBSTEPS, 1):
        client = p.connect(p.DIRECT)
        try:
            simulator = ImpactSimulator("routh", client, seed=0)
            robot, joints, cube = _a1_world(client, WORLD_STEP / SUBSTEPS * substeps, substeps)
            states = []
            for step in range(60):
                for _ in range(SUBSTEPS // substeps):
                    _commands(client, robot, joints, cube, step, SUBSTEPS / substeps)
                    simulator.step()
                parameters = p.getPhysicsEngineParameters(physicsClientId=client)
                assert (parameters["fixedTimeStep"], parameters["numSubSteps"]) == (WORLD_STEP / SUBSTEPS * substeps, substeps)
                states.append(_state(client, robot, cube))
            events = [
                (
                    event.time,
                    [(contact.feature, contact.gap, contact.position_a.tolist()) for contact in event.contacts],
                    event.v_minus.tolist(),
                    event.v_plus.tolist(),
                )
                for event in simulator.events
            ]
            runs.append((events, states))
            simulator.close()
        finally:
            p.disconnect(client)
    (events, states), (single_events, single_states) = runs
    assert len(events) >= 4  # the four feet land
    assert [event[0] for event in events] == pytest.approx([event[0] for event in single_events], abs=1e-12)
    assert [event[1:] for event in events] == [event[1:] for event in single_events]
    assert states == single_states


def _tilted_box_dropped(client: int, time_step: float, substeps: int) -> int:
    """A 1 kg box (0.2 x 0.1 x 0.06 m) rolled 0.3 rad, its lowest corner 3 cm above the box
    ground, thrown down at 1.2 m/s, in a world stepped at ``time_step`` in ``substeps``."""
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=time_step, numSubSteps=substeps, physicsClientId=client)
    p.loadURDF(urdf_path("ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.1, 0.05, 0.03], physicsClientId=client)
    lowest = 0.1 * np.sin(0.3) + 0.03
    box = p.createMultiBody(1.0, shape, -1, [0.0, 0.0, lowest + 0.03], p.getQuaternionFromEuler([0.3, 0.05, 0.0]), physicsClientId=client)
    p.resetBaseVelocity(box, [0.0, 0.0, -1.2], [0.0, 0.0, 0.0], physicsClientId=client)
    return box


def test_every_landing_inside_a_step_of_substeps_goes_to_the_law(client: int) -> None:
    """A tilted box thrown down in a world stepped at 4 / 240 s in 4 substeps: its first corner
    lands at 1.2 m/s plus the fall, ``v = 1.2 + g t`` with ``t`` about 0.03 s (some 1.5 m/s), then
    the corners of the other edges as the box rotates onto its face, each faster than 1 m/s (the
    box falls and rotates on).  Bullet's own substeps absorbed them inside the steps; the
    simulator resolves each, at its time inside the step (not all at the steps' boundaries)."""
    box = _tilted_box_dropped(client, 4.0 / 240.0, 4)
    simulator = ImpactSimulator("routh", client, seed=0)
    for _ in range(6):  # 0.1 s
        simulator.step()
    speeds = [-float(np.min(event.problem.normal_velocities(event.v_minus))) for event in simulator.events]
    assert len([speed for speed in speeds if speed > 1.0]) >= 3, speeds
    assert all(event.bodies == (box,) for event in simulator.events)
    inside = [event.time for event in simulator.events if not math.isclose(event.time * 60.0, round(event.time * 60.0), abs_tol=1e-9)]
    assert inside
    simulator.close()
