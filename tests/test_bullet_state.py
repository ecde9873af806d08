"""Snapshots (:mod:`bullet_setimpact.bullet.state`): a body of single-DoF joints is read with
``getJointStates`` (the simulator's faster read, twice a step) and must mean exactly what the
``getJointStatesMultiDof`` read means."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pybullet_data

from bullet_setimpact.bullet.inventory import movable_joints
from bullet_setimpact.bullet.resting.budget import MotionBound
from bullet_setimpact.bullet.state import Snapshot


def _random_a1(client: int, seed: int) -> tuple[int, tuple[int, ...]]:
    """The a1 (twelve revolute joints) in a random pose, moving at random base and joint rates."""
    body = p.loadURDF(f"{pybullet_data.getDataPath()}/a1/a1.urdf", [0.0, 0.0, 1.0], physicsClientId=client)
    joints = movable_joints(client, body)
    rng = np.random.default_rng(seed)
    orientation = rng.normal(size=4)
    p.resetBasePositionAndOrientation(body, rng.normal(size=3), orientation / np.linalg.norm(orientation), physicsClientId=client)
    p.resetBaseVelocity(body, rng.normal(size=3), rng.normal(size=3), physicsClientId=client)
    for joint in joints:
        p.resetJointState(body, joint, rng.normal(), rng.normal() * 5.0, physicsClientId=client)
    return body, joints


def test_the_single_dof_read_holds_the_multi_dof_reads_state(client: int) -> None:
    """Read both ways, one state gives the same joint positions and velocities (as the 1-tuples
    ``getJointStateMultiDof`` returns for each joint, read here joint by joint), the same speeds
    ``|qdot|`` and the same speed bound; each read equals a fresh one until one joint rate changes, and
    restoring the single-DoF read brings back the state exactly."""
    body, joints = _random_a1(client, seed=4)
    bodies = {body: joints}
    multi, single = Snapshot.take(client, bodies), Snapshot.take(client, bodies, single_dof={body})
    (multi_state,), (single_state,) = multi.bodies, single.bodies
    expected = [p.getJointStateMultiDof(body, joint, physicsClientId=client) for joint in joints]
    assert single_state.joint_positions == multi_state.joint_positions == tuple(row[0] for row in expected)
    assert single_state.joint_velocities == multi_state.joint_velocities == tuple(row[1] for row in expected)
    assert single_state.joint_speeds == multi_state.joint_speeds == [abs(row[1][0]) for row in expected]
    bound = MotionBound(client, bodies)
    assert bound.speeds(single) == bound.speeds(multi)
    assert Snapshot.take(client, bodies, single_dof={body}) == single and Snapshot.take(client, bodies) == multi

    p.resetJointState(body, joints[5], expected[5][0][0], expected[5][1][0] + 1e-9, physicsClientId=client)
    assert Snapshot.take(client, bodies, single_dof={body}) != single and Snapshot.take(client, bodies) != multi
    single.restore()
    assert Snapshot.take(client, bodies, single_dof={body}) == single and Snapshot.take(client, bodies) == multi
