"""Generalized inertia and world-frame point Jacobians of a live PyBullet world.

A :class:`WorldModel` inspects the bodies of one PyBullet client once (joint types, which
bodies are static, the velocity layout) and then reads, at any time,

* the world generalized velocity ``v`` (:meth:`WorldModel.velocity`) and writes it back
  (:meth:`WorldModel.set_velocity`) without touching positions;
* a :class:`Configuration`: ``M(q)`` (block-diagonal over bodies) and the world-frame
  Jacobian of any point on any link, at the configuration it was read at.

Velocity layout
---------------
The world vector is the concatenation of one block per dynamic body, in the order of
:attr:`WorldModel.bodies` (the ``bodies`` argument, or increasing body id):

* **free and floating-base bodies:** ``[v_com (3), omega (3), joint entries]``: the linear
  velocity of the base's centre of mass and the base angular velocity, both in the WORLD
  frame (exactly what ``getBaseVelocity`` returns and ``resetBaseVelocity`` takes), then the
  joint entries;
* **fixed-base bodies:** ``[joint entries]``;
* **static bodies** (base mass 0 and no movable joint) have no block.

The joint entries list the movable joints in increasing joint index (fixed joints carry
none):

* a **revolute or prismatic** joint has 1 entry, its rate ``qdot`` (named after the joint);
* a **spherical** joint has 3 entries ``omega_x, omega_y, omega_z`` (named
  ``"<joint>.omega_x"`` etc.): the angular velocity of the child link RELATIVE to its parent
  link, expressed in the CHILD link's inertial (centre-of-mass) frame, i.e. the frame whose
  orientation ``getLinkState`` reports in field 1.  This is the convention of
  ``getJointStateMultiDof`` / ``resetJointStateMultiDof`` (Bullet's ``btMultiBody`` link
  frame), so the world angular velocity of the child is ``omega_parent + R_child @ omega``.
  When the URDF inertial origin has no rotation (the humanoid), these axes are the child's
  URDF link axes.

Planar joints are rejected with a ``ValueError`` naming the body and the joint.

PyBullet conventions this module relies on (pybullet 3.2.7, proven in
``tests/test_bullet_model.py``):

* ``calculateMassMatrix`` and ``calculateJacobian`` of a floating base use
  ``[base angular, base linear (of the centre of mass), qdot]``, both base parts in the BASE
  frame, i.e. the base's inertial frame whose pose ``getBasePositionAndOrientation``
  reports.  Their Jacobians are expressed in that frame too, for fixed bases as well.
* ``calculateJacobian``'s ``localPosition`` of link ``i >= 0`` is measured from the link's
  URDF (joint) frame origin but along the axes of the link's INERTIAL frame.  The link's
  centre of mass is therefore at ``R_inertial^T d`` (``d, R_inertial``: ``getDynamicsInfo``'s
  local inertial position and orientation).
* ``calculateJacobian`` refuses bodies without a movable joint; ``calculateMassMatrix``
  fails for maximal-coordinate bodies.  Rigid bodies therefore use rigid-body kinematics
  and, when jointless, ``M = diag(m I, R diag(I_local) R^T)`` from ``getDynamicsInfo``.
* **Spherical joints.**  ``calculateJacobian`` refuses them ("Spherical joints are not
  supported").  ``calculateMassMatrix`` accepts ``objPositions`` of any length without an
  error but its ``M`` is wrong: ``0.5 v^T M v`` is off from the links' kinetic energy by
  8 to 60 % for every encoding tried (flattened quaternions, 3 values per joint as rotation
  vectors or as any of the 24 Euler-angle conventions); Bullet's inverse-dynamics spherical
  joint is marked "todo: review" in its source.
  Bodies with a spherical joint therefore get their link Jacobians and
  ``M = sum_k m_k J_v^T J_v + J_w^T R_k diag(I_k) R_k^T J_w`` from
  :mod:`~bullet_setimpact.bullet.kinematics`, built on ``getLinkStates``' double-precision
  centre-of-mass frames (fields 0 and 1; the URDF-frame fields 4 and 5 are single precision),
  ``getJointInfo``'s ``parentFramePos`` (joint origin in the parent's inertial frame) and
  ``jointAxis`` (in the child's inertial frame).  Bodies without one keep the
  ``calculateJacobian`` / ``calculateMassMatrix`` path.
* ``resetJointStateMultiDof`` renormalizes a spherical joint's quaternion, and Bullet's
  integrator leaves quaternions whose norm is 1 +- 1 ulp, so writing back the quaternion just
  read can change its last bits.  A ``targetValue`` whose length differs from the joint's
  position size (4) is ignored while ``targetVelocity`` is still applied (an EMPTY
  ``targetValue`` makes the whole call a no-op), so :meth:`WorldModel.set_velocity` writes
  spherical rates with ``targetValue=[0.0]`` and the quaternion stays bitwise unchanged.
* ``resetJointStatesMultiDof`` crashes (segmentation fault) when one call mixes joints with
  different DoF counts: single-DoF joints go in one batched call, spherical ones one at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pybullet as p

from . import kinematics
from .kinematics import Tree

#: Joint types that carry degrees of freedom, with their number of velocity entries.
MOVABLE_JOINTS = {p.JOINT_REVOLUTE: "revolute", p.JOINT_PRISMATIC: "prismatic", p.JOINT_SPHERICAL: "spherical"}
_JOINT_DOFS = {p.JOINT_REVOLUTE: 1, p.JOINT_PRISMATIC: 1, p.JOINT_SPHERICAL: 3}
_JOINT_NAMES = {p.JOINT_PLANAR: "planar", p.JOINT_FIXED: "fixed"}
_BASE_COORDINATES = ("v_x", "v_y", "v_z", "omega_x", "omega_y", "omega_z")
_SPHERICAL_COORDINATES = ("omega_x", "omega_y", "omega_z")
#: ``targetValue`` for ``resetJointStateMultiDof`` that writes a spherical joint's rates and
#: leaves its quaternion alone (see the module docstring).
_KEEP_QUATERNION = [0.0]


def rotation_matrix(quaternion: Sequence[float]) -> np.ndarray:
    """Rotation matrix of a unit quaternion ``(x, y, z, w)``."""
    x, y, z, w = quaternion
    return np.array(
        [
            [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)],
            [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)],
            [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)],
        ]
    )


def _base_to_world(matrix: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """``matrix @ T`` where ``T`` maps a world block ``[v, omega, qdot]`` to Bullet's base-frame one.

    Bullet's floating-base velocity is ``[R^T omega, R^T v, qdot]`` (``R``: base orientation).
    """
    out = np.empty_like(matrix)
    out[:, :3] = matrix[:, 3:6] @ rotation.T
    out[:, 3:6] = matrix[:, :3] @ rotation.T
    out[:, 6:] = matrix[:, 6:]
    return out


def check_client(client: int) -> int:
    """Return ``client`` if it is connected to a physics server, else raise ``ValueError``."""
    if isinstance(client, bool) or not isinstance(client, (int, np.integer)):
        raise ValueError(f"client must be a PyBullet client id (int), got {client!r}")
    if not p.isConnected(physicsClientId=int(client)):
        raise ValueError(f"PyBullet client {client} is not connected; expected the id returned by p.connect()")
    return int(client)


def _body_ids(bodies: Iterable[int], known: Sequence[int], what: str) -> list[int]:
    """``bodies`` as a list of distinct ints from ``known``, else ``ValueError``."""
    ids = []
    for body in bodies:
        if isinstance(body, bool) or not isinstance(body, (int, np.integer)) or int(body) not in known:
            raise ValueError(f"body {body!r} is not {what}; expected one of {sorted(known)}")
        if int(body) in ids:
            raise ValueError(f"body {body} is listed twice; expected distinct ids")
        ids.append(int(body))
    return ids


@dataclass(frozen=True)
class BodyModel:
    """What the model needs to know about one body, read once from PyBullet.

    Attributes
    ----------
    body : int
        PyBullet body unique id.
    name : str
        Body name (``getBodyInfo``).
    floating : bool
        True when the base has 6 DoFs (a free rigid body or a floating-base robot).
    joints : tuple of int
        Movable (revolute, prismatic or spherical) joint indices, in increasing order.
    joint_names : tuple of str
        One name per joint of :attr:`joints`.
    num_links : int
        Number of links besides the base (``getNumJoints``).
    jointless : bool
        True for a single rigid body (no links); its ``M`` comes from mass and inertia.
    com_offsets : ndarray, shape (num_links, 3)
        Each link's centre of mass as ``calculateJacobian``'s ``localPosition``.
    joint_dofs : tuple of int
        Velocity entries of each joint of :attr:`joints`: 1 (revolute, prismatic) or 3
        (spherical).  Empty means one per joint.
    tree : kinematics.Tree or None
        Kinematic structure, set for bodies with spherical joints (their ``M`` and Jacobians
        come from :mod:`~bullet_setimpact.bullet.kinematics`, not from PyBullet).
    """

    body: int
    name: str
    floating: bool
    joints: tuple[int, ...]
    joint_names: tuple[str, ...]
    num_links: int
    jointless: bool
    com_offsets: np.ndarray = field(repr=False)
    joint_dofs: tuple[int, ...] = ()
    tree: Tree | None = field(default=None, repr=False)

    @property
    def spherical(self) -> bool:
        """True when the body has a spherical joint (3 velocity entries)."""
        return any(dofs == 3 for dofs in self.joint_dofs)

    @property
    def nv(self) -> int:
        """Number of generalized velocities of this body (0 for a static body)."""
        return 6 * self.floating + (sum(self.joint_dofs) if self.joint_dofs else len(self.joints))

    @property
    def static(self) -> bool:
        """True when the body has no DoF (it never moves under contact forces)."""
        return self.nv == 0

    @property
    def coordinates(self) -> tuple[str, ...]:
        """Names of the body's velocity entries, ``"<body name>[<id>].<entry>"``.

        E.g. ``"physics[1].omega_x"`` (base), ``"physics[1].right_front_wheel_joint"``
        (revolute or prismatic joint), ``"dumpUrdf[2].chest.omega_x"`` (spherical joint).
        """
        names = list(_BASE_COORDINATES if self.floating else ())
        for name, dofs in zip(self.joint_names, self.joint_dofs or (1,) * len(self.joints), strict=True):
            names += [f"{name}.{entry}" for entry in _SPHERICAL_COORDINATES] if dofs == 3 else [name]
        return tuple(f"{self.name}[{self.body}].{name}" for name in names)


def inspect_body(client: int, body: int) -> BodyModel:
    """Read a body's joint structure and classify it.

    A body is static when its base mass is 0 (fixed base; ``useFixedBase=True`` also
    reports mass 0) and it has no movable joint.

    Raises
    ------
    ValueError
        If a joint is neither revolute, prismatic, spherical nor fixed (a planar joint),
        naming the body and the joint.
    """
    name = p.getBodyInfo(body, physicsClientId=client)[1].decode()
    num_links = p.getNumJoints(body, physicsClientId=client)
    joints, joint_names, joint_dofs, infos = [], [], [], []
    offsets = np.zeros((num_links, 3))
    for link in range(num_links):
        info = p.getJointInfo(body, link, physicsClientId=client)
        infos.append(info)
        joint_type, joint_name = info[2], info[1].decode()
        if joint_type in MOVABLE_JOINTS:
            joints.append(link)
            joint_names.append(joint_name)
            joint_dofs.append(_JOINT_DOFS[joint_type])
        elif joint_type != p.JOINT_FIXED:
            kind = _JOINT_NAMES.get(joint_type, f"type-{joint_type}")
            raise ValueError(
                f"body {body} ({name!r}) has a {kind} joint {link} ({joint_name!r}); "
                "expected only revolute, prismatic, spherical or fixed joints"
            )
        dynamics = p.getDynamicsInfo(body, link, physicsClientId=client)
        offsets[link] = rotation_matrix(dynamics[4]).T @ np.asarray(dynamics[3])
    floating = p.getDynamicsInfo(body, -1, physicsClientId=client)[0] > 0.0
    return BodyModel(
        body=body,
        name=name,
        floating=floating,
        joints=tuple(joints),
        joint_names=tuple(joint_names),
        num_links=num_links,
        jointless=num_links == 0,
        com_offsets=offsets,
        joint_dofs=tuple(joint_dofs),
        tree=Tree.from_joint_info(infos, floating) if 3 in joint_dofs else None,
    )


class WorldModel:
    """Velocity layout of a PyBullet world and read/write access to its velocity.

    Parameters
    ----------
    client : int, optional
        PyBullet client id (``p.connect`` result).
    bodies : iterable of int, optional
        Bodies to model, in layout order; default: every body of the client in increasing
        id.  Static bodies may be listed; they get no velocity block.

    Raises
    ------
    ValueError
        If the client is not connected, a body id does not exist or is repeated, or a body
        has a spherical or planar joint.

    Notes
    -----
    The layout is read once: build a new model after adding or removing bodies.  Masses and
    inertias are read afresh by every :class:`Configuration`, so ``changeDynamics`` is
    honoured, except that turning a body static (mass 0) or dynamic needs a new model.
    Fixed bases are assumed at rest (``resetBaseVelocity`` on a fixed base makes Bullet
    move it kinematically; that motion is not part of this model).
    """

    def __init__(self, client: int = 0, bodies: Iterable[int] | None = None) -> None:
        client = check_client(client)
        existing = [p.getBodyUniqueId(i, physicsClientId=client) for i in range(p.getNumBodies(physicsClientId=client))]
        ids = sorted(existing) if bodies is None else _body_ids(bodies, existing, f"a body id of client {client}")
        self._setup(client, [inspect_body(client, body) for body in ids])

    def _setup(self, client: int, models: Sequence[BodyModel]) -> None:
        self.client = client
        self._models = {model.body: model for model in models}
        #: Dynamic bodies in layout order.
        self.bodies: tuple[BodyModel, ...] = tuple(model for model in models if not model.static)
        #: Ids of the static bodies in the model.
        self.static_bodies: frozenset[int] = frozenset(model.body for model in models if model.static)
        self._slices: dict[int, slice] = {}
        start = 0
        for model in self.bodies:
            self._slices[model.body] = slice(start, start + model.nv)
            start += model.nv
        #: Total number of generalized velocities.
        self.nv: int = start

    def restrict(self, bodies: Iterable[int]) -> WorldModel:
        """A model of the given bodies only (in that order), plus this model's static bodies.

        Uses the cached body data: no PyBullet call.  Because ``M`` is block-diagonal over
        bodies, an impact touching a few bodies can be solved in their smaller layout.

        Raises
        ------
        ValueError
            If a body is not part of this model or is repeated.
        """
        ids = _body_ids(bodies, list(self._models), "a body of this model")
        chosen = [self._models[body] for body in ids]
        chosen += [self._models[body] for body in sorted(self.static_bodies - set(ids))]
        model = object.__new__(WorldModel)
        model._setup(self.client, chosen)
        return model

    def body(self, body: int) -> BodyModel:
        """The :class:`BodyModel` of ``body`` (dynamic or static); ``ValueError`` if not modelled."""
        try:
            return self._models[body]
        except (KeyError, TypeError):
            raise ValueError(f"body {body!r} is not part of this model; expected one of {sorted(self._models)}") from None

    def block(self, body: int) -> slice:
        """Slice of ``body``'s entries in the world vector (empty for a static body)."""
        return self._slices.get(self.body(body).body, slice(0, 0))

    @property
    def coordinates(self) -> tuple[str, ...]:
        """Names of all world-vector entries, in order."""
        return tuple(name for model in self.bodies for name in model.coordinates)

    def configuration(self) -> Configuration:
        """Read the current configuration (base poses, joint positions) of every dynamic body."""
        return Configuration(self)

    def velocity(self) -> np.ndarray:
        """The current world generalized velocity, shape ``(nv,)`` (layout in the module docstring)."""
        client = check_client(self.client)
        v = np.empty(self.nv)
        for model in self.bodies:
            block = v[self._slices[model.body]]
            if model.floating:
                linear, angular = p.getBaseVelocity(model.body, physicsClientId=client)
                block[:3], block[3:6] = linear, angular
            if model.spherical:
                states = p.getJointStatesMultiDof(model.body, model.joints, physicsClientId=client)
                block[6 * model.floating :] = [rate for state in states for rate in state[1]]
            elif model.joints:
                states = p.getJointStates(model.body, model.joints, physicsClientId=client)
                block[6 * model.floating :] = [state[1] for state in states]
        return v

    def set_velocity(self, v: np.ndarray) -> None:
        """Write a world generalized velocity back to PyBullet; positions stay bitwise unchanged.

        Uses ``resetBaseVelocity``; one ``resetJointStatesMultiDof`` call per body for its
        revolute and prismatic joints (with each joint's current position); and, for each
        spherical joint, ``resetJointStateMultiDof`` with a position PyBullet ignores, so that
        its quaternion is not renormalized (see the module docstring).

        Raises
        ------
        ValueError
            If ``v`` does not have shape ``(nv,)`` or is not finite.
        """
        client = check_client(self.client)
        v = np.asarray(v, dtype=float)
        if v.shape != (self.nv,):
            raise ValueError(f"v must have shape ({self.nv},), got {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError("v must be finite, but it contains NaN or inf")
        for model in self.bodies:
            block = v[self._slices[model.body]]
            if model.floating:
                p.resetBaseVelocity(model.body, block[:3].tolist(), block[3:6].tolist(), physicsClientId=client)
            if not model.joints:
                continue
            rates = block[6 * model.floating :].tolist()
            if not model.spherical:
                states = p.getJointStates(model.body, model.joints, physicsClientId=client)
                positions = [[state[0]] for state in states]
                p.resetJointStatesMultiDof(model.body, model.joints, positions, [[rate] for rate in rates], physicsClientId=client)
                continue
            # pybullet 3.2.7 segfaults when one resetJointStatesMultiDof call mixes DoF counts
            single, single_rates, start = [], [], 0
            for joint, dofs in zip(model.joints, model.joint_dofs, strict=True):
                if dofs == 1:
                    single.append(joint)
                    single_rates.append(rates[start : start + 1])
                else:
                    p.resetJointStateMultiDof(model.body, joint, _KEEP_QUATERNION, rates[start : start + 3], physicsClientId=client)
                start += dofs
            if single:
                states = p.getJointStates(model.body, single, physicsClientId=client)
                positions = [[state[0]] for state in states]
                p.resetJointStatesMultiDof(model.body, single, positions, single_rates, physicsClientId=client)


@dataclass(frozen=True)
class _Pose:
    """One body's base pose (inertial frame) and joint positions."""

    position: np.ndarray  # (3,) base centre of mass
    rotation: np.ndarray  # (3, 3) base inertial frame
    joints: list[float]  # movable joint positions (for calculateJacobian / calculateMassMatrix)
    zeros: list[float]  # zero rates, for calculateJacobian
    # bodies with a kinematics.Tree: centres of mass (n + 1, 3) and inertial-frame rotations
    # (n + 1, 3, 3) of the base and every link, see kinematics.read_frames
    frames: tuple[np.ndarray, np.ndarray] | None = None


class Configuration:
    """``M(q)`` and world-frame point Jacobians at the configuration read at construction.

    Valid as long as PyBullet's positions do not change (no ``stepSimulation`` or reset of
    positions in between).  Link Jacobians are computed once per link and cached, so many
    points on one link cost one ``calculateJacobian`` call.  Bodies with spherical joints
    read every link's centre-of-mass frame at construction and get all their link Jacobians
    at once from :mod:`~bullet_setimpact.bullet.kinematics` (and ``M`` from those).

    Parameters
    ----------
    model : WorldModel
    """

    def __init__(self, model: WorldModel) -> None:
        client = check_client(model.client)
        self.model = model
        self._poses: dict[int, _Pose] = {}
        for body in model.bodies:
            if body.tree is not None:
                positions, rotations = kinematics.read_frames(client, body.body, body.num_links)
                self._poses[body.body] = _Pose(positions[0], rotations[0], [], [], (positions, rotations))
                continue
            position, orientation = p.getBasePositionAndOrientation(body.body, physicsClientId=client)
            joints = [state[0] for state in p.getJointStates(body.body, body.joints, physicsClientId=client)] if body.joints else []
            self._poses[body.body] = _Pose(np.asarray(position), rotation_matrix(orientation), joints, [0.0] * len(joints))
        self._links: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._trees: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._mass_matrix: np.ndarray | None = None

    def mass_matrix(self) -> np.ndarray:
        """Generalized inertia ``M(q)``, shape ``(nv, nv)``, block-diagonal over bodies (world layout)."""
        if self._mass_matrix is None:
            M = np.zeros((self.model.nv, self.model.nv))
            for body in self.model.bodies:
                M[self.model.block(body.body), self.model.block(body.body)] = self._body_mass_matrix(body)
            self._mass_matrix = 0.5 * (M + M.T)
        return self._mass_matrix.copy()

    def _body_mass_matrix(self, body: BodyModel) -> np.ndarray:
        client, pose = self.model.client, self._poses[body.body]
        if body.jointless:
            mass, _, inertia = p.getDynamicsInfo(body.body, -1, physicsClientId=client)[:3]
            block = np.zeros((6, 6))
            block[:3, :3] = mass * np.eye(3)
            block[3:, 3:] = (pose.rotation * np.asarray(inertia)) @ pose.rotation.T
            return block
        if body.tree is not None:
            dynamics = [p.getDynamicsInfo(body.body, link, physicsClientId=client) for link in range(-1, body.num_links)]
            masses = np.array([info[0] for info in dynamics])
            inertias = np.array([info[2] for info in dynamics])
            assert pose.frames is not None
            return kinematics.mass_matrix(*self._tree_jacobians(body), pose.frames[1], masses, inertias)
        M = np.asarray(p.calculateMassMatrix(body.body, pose.joints, physicsClientId=client))
        if body.floating:
            M = _base_to_world(_base_to_world(M, pose.rotation).T, pose.rotation)
        return M

    def _tree_jacobians(self, body: BodyModel) -> tuple[np.ndarray, np.ndarray]:
        """``kinematics.jacobians`` of a body with a tree: ``J_v, J_omega``, shape ``(n + 1, 3, nv_body)``."""
        if body.body not in self._trees:
            assert body.tree is not None, "only bodies with a kinematic tree take this path"
            frames = self._poses[body.body].frames
            assert frames is not None
            self._trees[body.body] = kinematics.jacobians(body.tree, *frames)
        return self._trees[body.body]

    def _link_jacobians(self, body: BodyModel, link: int) -> tuple[np.ndarray, np.ndarray]:
        """Centre of mass ``(3,)`` and the Jacobian ``(6, nv_body)`` of its velocity and the link's
        angular velocity, world frame, body-block columns."""
        key = (body.body, link)
        if key not in self._links:
            pose = self._poses[body.body]
            if body.tree is not None:
                linear, angular = self._tree_jacobians(body)
                assert pose.frames is not None
                com = pose.frames[0][link + 1]
                jacobian = np.concatenate((linear[link + 1], angular[link + 1]))
            elif link == -1 or not body.joints:  # the base, or a link welded to a free base
                jacobian = np.eye(6, body.nv)
                com = pose.position
            else:
                client = self.model.client
                com = np.asarray(p.getLinkState(body.body, link, computeForwardKinematics=True, physicsClientId=client)[0])
                bullet = p.calculateJacobian(
                    body.body, link, body.com_offsets[link].tolist(), pose.joints, pose.zeros, pose.zeros, physicsClientId=client
                )
                # base frame -> world frame, for fixed bases too
                jacobian = (pose.rotation @ np.asarray(bullet)).reshape(6, -1)
                if body.floating:
                    jacobian = _base_to_world(jacobian, pose.rotation)
            self._links[key] = (com, jacobian)
        return self._links[key]

    def point_jacobian(self, body: int, link: int, points: np.ndarray) -> np.ndarray:
        """World-frame Jacobian of material points of a link, columns in the world layout.

        ``J @ v`` is the world velocity of the point of ``body``'s ``link`` that is at
        ``points`` now.  Static bodies and fixed bases give zeros.

        Parameters
        ----------
        body : int
        link : int
            ``-1`` for the base, else a link (joint) index.
        points : array_like, shape (3,) or (k, 3)
            WORLD coordinates.

        Returns
        -------
        ndarray, shape (3, nv) or (k, 3, nv)

        Raises
        ------
        ValueError
            If the body is not in the model, the link does not exist, or ``points`` has the
            wrong shape or is not finite.
        """
        model = self.model.body(body)
        if isinstance(link, bool) or not isinstance(link, (int, np.integer)) or not -1 <= link < model.num_links:
            raise ValueError(f"link {link!r} does not exist on body {body} ({model.name!r}); expected -1 .. {model.num_links - 1}")
        points = np.asarray(points, dtype=float)
        if points.shape[-1:] != (3,) or points.ndim > 2 or not np.all(np.isfinite(points)):
            raise ValueError(f"points must be finite with shape (3,) or (k, 3), got shape {points.shape}")
        jacobian = np.zeros((*points.shape, self.model.nv))
        if model.static or (link == -1 and not model.floating):
            return jacobian
        com, twist = self._link_jacobians(model, int(link))
        # v_p = v_com + omega x (p - com) = (J_com - [p - com]_x J_omega) v
        offsets = points - com
        x, y, z = offsets[..., 0], offsets[..., 1], offsets[..., 2]
        skew = np.zeros((*points.shape, 3))
        skew[..., 0, 1], skew[..., 0, 2], skew[..., 1, 2] = -z, y, -x
        skew[..., 1, 0], skew[..., 2, 0], skew[..., 2, 1] = z, -y, x
        jacobian[..., self.model.block(body)] = twist[:3] - skew @ twist[3:]
        return jacobian

    def relative_jacobian(self, body_a: int, link_a: int, body_b: int, link_b: int, points: np.ndarray) -> np.ndarray:
        """Jacobian of the velocity of A's material point relative to B's, ``J_A(p) - J_B(p)``.

        Shapes and errors as :meth:`point_jacobian`.  With a contact normal on B pointing
        to A, ``n @ J`` is the separating velocity.
        """
        return self.point_jacobian(body_a, link_a, points) - self.point_jacobian(body_b, link_b, points)
