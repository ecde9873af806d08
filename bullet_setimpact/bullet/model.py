"""Static layout of a live PyBullet world: bodies, joints, velocity vector (MuJoCo's ``Model``).

A :class:`WorldModel` inspects the bodies of one PyBullet client once (joint types, which
bodies are static, the velocity layout) and then reads, at any time,

* the world generalized velocity ``v`` (:meth:`WorldModel.velocity`) and writes it back
  (:meth:`WorldModel.set_velocity`) without touching positions;
* a :class:`~bullet_setimpact.bullet.configuration.Configuration` (the per-configuration
  dynamics, MuJoCo's ``Data``): ``M(q)`` (block-diagonal over bodies) and the world-frame
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

* ``M(q)`` and the Jacobians: see :mod:`~bullet_setimpact.bullet.configuration`.
* ``resetJointStateMultiDof`` renormalizes a spherical joint's quaternion, and Bullet's
  integrator leaves quaternions whose norm is 1 +- 1 ulp, so writing back the quaternion just
  read can change its last bits.  A ``targetValue`` whose length differs from the joint's
  position size (4) is ignored while ``targetVelocity`` is still applied (an EMPTY
  ``targetValue`` makes the whole call a no-op), so :meth:`WorldModel.set_velocity` writes
  spherical rates with ``targetValue=[0.0]`` and the quaternion stays bitwise unchanged.
* ``resetJointStatesMultiDof`` crashes (segmentation fault) when one call mixes joints with
  different DoF counts (:func:`~bullet_setimpact.bullet.inventory.reset_joint_states`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np
import pybullet as p

from .bodies import BodyModel, inspect_body
from .configuration import Configuration
from .inventory import check_client, reset_joint_states, world_bodies
from .state import Snapshot

#: ``targetValue`` for ``resetJointStateMultiDof`` that writes a spherical joint's rates and
#: leaves its quaternion alone (see the module docstring).
_KEEP_QUATERNION = [0.0]


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
        existing = world_bodies(client)
        ids = existing if bodies is None else _body_ids(bodies, existing, f"a body id of client {client}")
        self._setup(client, [inspect_body(client, body) for body in ids])

    def _setup(self, client: int, models: Sequence[BodyModel]) -> None:
        self.client = client
        self._models = {model.body: model for model in models}
        #: Ids of every modelled body (dynamic and static), in layout order.
        self.body_ids: tuple[int, ...] = tuple(self._models)
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

    def velocity(self, snapshot: Snapshot | None = None) -> np.ndarray:
        """The current world generalized velocity, shape ``(nv,)`` (layout in the module docstring),
        or the one ``snapshot`` holds (a :class:`~.state.Snapshot` of every body of the model,
        each with the model's joints)."""
        if snapshot is not None:
            return self._velocity_of(snapshot)
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

    def _velocity_of(self, snapshot: Snapshot) -> np.ndarray:
        states = {state.body: state for state in snapshot.bodies}
        v = np.empty(self.nv)
        for model in self.bodies:
            state = states.get(model.body)
            if state is None or state.joints != tuple(model.joints):
                raise ValueError(
                    f"the snapshot does not hold body {model.body} with joints {tuple(model.joints)}; "
                    "expected a snapshot of every body of the model"
                )
            block = v[self._slices[model.body]]
            if model.floating:
                block[:3], block[3:6] = state.velocity
            block[6 * model.floating :] = [rate for rates in state.joint_velocities for rate in rates]
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
        if not np.isfinite(v).all():
            raise ValueError("v must be finite, but it contains NaN or inf")
        for model in self.bodies:
            block = v[self._slices[model.body]]
            if model.floating:
                p.resetBaseVelocity(model.body, block[:3].tolist(), block[3:6].tolist(), physicsClientId=client)
            if not model.joints:
                continue
            rates = block[6 * model.floating :].tolist()
            ends = list(itertools.accumulate(model.joint_dofs))
            velocities = [rates[end - dofs : end] for end, dofs in zip(ends, model.joint_dofs, strict=True)]
            single = [joint for joint, dofs in zip(model.joints, model.joint_dofs, strict=True) if dofs == 1]
            current = p.getJointStates(model.body, single, physicsClientId=client) if single else ()
            held = iter([state[0]] for state in current)
            positions = [next(held) if dofs == 1 else _KEEP_QUATERNION for dofs in model.joint_dofs]
            reset_joint_states(client, model.body, model.joints, positions, velocities)
