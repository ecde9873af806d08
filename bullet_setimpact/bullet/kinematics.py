"""Link Jacobians and ``M(q)`` of a PyBullet multibody by rigid-body kinematics.

Used by :mod:`bullet_setimpact.bullet.model` for bodies with spherical joints, which
``calculateJacobian`` refuses and ``calculateMassMatrix`` gets wrong (see the model's module
docstring).  Everything is expressed with the links' centre-of-mass (inertial) frames, the
frames Bullet's ``btMultiBody`` works in and the ones ``getLinkState`` reports in double
precision (fields 0 and 1):

* ``getJointInfo``'s ``parentFramePos`` is the joint origin in the PARENT's centre-of-mass
  frame, and its ``jointAxis`` is expressed in the CHILD's centre-of-mass frame;
* a revolute or spherical joint turns the child about that joint origin (fixed on the
  parent); a prismatic joint translates the child along its axis;
* a spherical joint's 3 rates are the child's angular velocity relative to its parent,
  expressed in the CHILD's centre-of-mass frame (``getJointStateMultiDof`` convention).

The world Jacobian of link ``k`` is then, column by column (one column per velocity entry
of the body block, zero unless the entry belongs to the base or to a joint on the path from
the base to ``k``)::

    J_omega[:, c] = a_c                        J_v[:, c] = a_c x (p_k - o_c) + t_c

with ``a_c`` the world angular axis of the entry (a revolute axis, a column of the child's
rotation for a spherical joint, a unit vector for the base's angular velocity), ``o_c`` the
point it turns about (the joint origin, or the base's centre of mass), ``t_c`` its world
translation axis (a prismatic axis, a unit vector for the base's linear velocity) and
``p_k`` the link's centre of mass.  ``M`` follows from the kinetic energy,
``M = sum_k m_k J_v,k^T J_v,k + J_omega,k^T R_k diag(I_k) R_k^T J_omega,k``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pybullet as p

from .frames import rotation_matrices
from .inventory import JOINT_DOFS


@dataclass(frozen=True)
class Tree:
    """Static kinematic structure of one multibody, read once from ``getJointInfo``.

    Row 0 of every per-frame array is the base; row ``i + 1`` is link (joint) ``i``.

    Attributes
    ----------
    floating : bool
        The base has 6 velocity entries ``[v_com, omega]`` (world frame) at columns 0..5.
    nv : int
        Number of velocity entries of the body block.
    parents : ndarray of int, shape (n,)
        Row of each link's parent (0 for the base).
    offsets : ndarray, shape (n, 3)
        Joint origins in the parent's centre-of-mass frame (``parentFramePos``).
    axes : ndarray, shape (n, 3)
        Joint axes in the child's centre-of-mass frame (``jointAxis``).
    mask : ndarray of bool, shape (n + 1, nv)
        ``mask[r, c]``: entry ``c`` moves the frame of row ``r`` (base or ancestor joint).
    """

    floating: bool
    nv: int
    parents: np.ndarray = field(repr=False)
    offsets: np.ndarray = field(repr=False)
    axes: np.ndarray = field(repr=False)
    mask: np.ndarray = field(repr=False)
    # links and first columns of each joint type
    revolute: tuple[np.ndarray, np.ndarray] = field(repr=False)
    prismatic: tuple[np.ndarray, np.ndarray] = field(repr=False)
    spherical: tuple[np.ndarray, np.ndarray] = field(repr=False)

    @classmethod
    def from_joint_info(cls, infos: Sequence[tuple], floating: bool) -> Tree:
        """Build the tree from ``getJointInfo`` of every link (in joint-index order).

        Raises
        ------
        ValueError
            If a joint type is not in :data:`JOINT_DOFS` or a parent does not precede its child.
        """
        n = len(infos)
        parents = np.empty(n, dtype=int)
        columns, dofs = [], []
        column = 6 * floating
        groups: dict[int, tuple[list[int], list[int]]] = {kind: ([], []) for kind in JOINT_DOFS}
        for link, info in enumerate(infos):
            kind, parent = info[2], info[16]
            if kind not in JOINT_DOFS:
                raise ValueError(f"joint {link} has unsupported type {kind}")
            if not -1 <= parent < link:
                raise ValueError(f"joint {link} has parent {parent}; expected a parent index below the joint's")
            parents[link] = parent + 1
            columns.append(column)
            dofs.append(JOINT_DOFS[kind])
            groups[kind][0].append(link)
            groups[kind][1].append(column)
            column += JOINT_DOFS[kind]
        mask = np.zeros((n + 1, column), dtype=bool)
        mask[:, : 6 * floating] = True
        for link in range(n):
            row = link + 1
            mask[row] = mask[parents[link]]
            mask[row, columns[link] : columns[link] + dofs[link]] = True

        def group(kind: int) -> tuple[np.ndarray, np.ndarray]:
            links, firsts = groups[kind]
            return np.asarray(links, dtype=int), np.asarray(firsts, dtype=int)

        return cls(
            floating=floating,
            nv=column,
            parents=parents,
            offsets=np.array([info[14] for info in infos], dtype=float).reshape(n, 3),
            axes=np.array([info[13] for info in infos], dtype=float).reshape(n, 3),
            mask=mask,
            revolute=group(p.JOINT_REVOLUTE),
            prismatic=group(p.JOINT_PRISMATIC),
            spherical=group(p.JOINT_SPHERICAL),
        )


def read_frames(client: int, body: int, num_links: int) -> tuple[np.ndarray, np.ndarray]:
    """Centres of mass ``(n + 1, 3)`` and inertial-frame rotations ``(n + 1, 3, 3)``, base first.

    From ``getBasePositionAndOrientation`` and ``getLinkStates(computeForwardKinematics=1)``
    fields 0 and 1 (double precision, unlike the URDF-frame fields 4 and 5).
    """
    position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    positions, orientations = [position], [orientation]
    if num_links:
        states = p.getLinkStates(body, list(range(num_links)), computeForwardKinematics=1, physicsClientId=client)
        positions += [state[0] for state in states]
        orientations += [state[1] for state in states]
    return np.array(positions, dtype=float), rotation_matrices(np.array(orientations, dtype=float))


def jacobians(tree: Tree, positions: np.ndarray, rotations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World Jacobians of every frame's centre-of-mass velocity and angular velocity.

    Parameters
    ----------
    tree : Tree
    positions, rotations : ndarray
        From :func:`read_frames`.

    Returns
    -------
    J_v, J_omega : ndarray, shape (n + 1, 3, nv)
        Row 0 is the base, row ``i + 1`` link ``i``; columns are the body block's entries.
    """
    nv = tree.nv
    axes = np.zeros((3, nv))  # a_c
    origins = np.zeros((3, nv))  # o_c
    slides = np.zeros((3, nv))  # t_c
    if tree.floating:
        slides[:, :3] = np.eye(3)
        axes[:, 3:6] = np.eye(3)
        origins[:, 3:6] = positions[0][:, None]
    if len(tree.parents):
        parent_rotations = rotations[tree.parents]
        joint_origins = positions[tree.parents] + (parent_rotations @ tree.offsets[:, :, None])[:, :, 0]
        world_axes = (rotations[1:] @ tree.axes[:, :, None])[:, :, 0]
        links, columns = tree.revolute
        axes[:, columns] = world_axes[links].T
        origins[:, columns] = joint_origins[links].T
        links, columns = tree.prismatic
        slides[:, columns] = world_axes[links].T
        links, columns = tree.spherical
        if len(links):
            columns = (columns[:, None] + np.arange(3)).ravel()
            # entry j of the joint turns about the j-th axis of the child's inertial frame
            axes[:, columns] = np.transpose(rotations[links + 1], (1, 0, 2)).reshape(3, -1)
            origins[:, columns] = np.repeat(joint_origins[links], 3, axis=0).T
    arms = positions[:, :, None] - origins[None]  # p_k - o_c, (n + 1, 3, nv)
    linear = np.empty_like(arms)
    linear[:, 0] = axes[1] * arms[:, 2] - axes[2] * arms[:, 1]
    linear[:, 1] = axes[2] * arms[:, 0] - axes[0] * arms[:, 2]
    linear[:, 2] = axes[0] * arms[:, 1] - axes[1] * arms[:, 0]
    linear += slides
    mask = tree.mask[:, None, :]
    return linear * mask, axes * mask


def mass_matrix(linear: np.ndarray, angular: np.ndarray, rotations: np.ndarray, masses: np.ndarray, inertias: np.ndarray) -> np.ndarray:
    """``sum_k m_k J_v,k^T J_v,k + J_omega,k^T R_k diag(I_k) R_k^T J_omega,k`` (symmetric).

    ``masses (n + 1,)`` and ``inertias (n + 1, 3)`` are ``getDynamicsInfo``'s mass and local
    inertia diagonal (in the inertial frame ``R_k``), base first.
    """
    nv = linear.shape[-1]
    translational = (linear * np.sqrt(masses)[:, None, None]).reshape(-1, nv)
    rotational = ((np.transpose(rotations, (0, 2, 1)) @ angular) * np.sqrt(inertias)[:, :, None]).reshape(-1, nv)
    M = translational.T @ translational + rotational.T @ rotational
    return 0.5 * (M + M.T)
