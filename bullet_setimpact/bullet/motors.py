"""Bullet's joint motors through a split step: the whole step's motor, held in every part.

Bullet drives each revolute and prismatic joint of a multibody with a motor
(``btMultiBodyJointMotor``): PyBullet's ``VELOCITY_CONTROL`` and ``POSITION_CONTROL``, and the
motor each such joint gets at load, whatever the loader (``createJointMotors``: target velocity
0, an impulse of 1 N s a step).
In a step of ``h`` the motor is one constraint row (``createConstraintRows``): reach

    V = kp (q* - q) / h + qdot + kd (qdot* - qdot),    clamped to +-maxVelocity,

from the state at the step's start, with an impulse of at most its cap: ``force * h`` at the
time step of the command (``PhysicsServerCommandProcessor``), or 1 N s for the load-time motor
whatever ``h``.  A world stepped in ``K`` substeps runs each substep's row at ``h = dt / K``
with the cap ``force * dt`` fixed by the command: the simulator steps it substep by substep
(:class:`~.simulator.ImpactSimulator`), each a whole step here, with ``K`` times the force.

A step the simulator splits at an impact is several Bullet steps of ``h < dt`` (localization,
the rest of the step).  Left alone, each part would keep the whole step's cap and compute ``V``
with its own ``h``: a saturated motor applies its cap in every part (twice its torque limit
over a step split once), an unsaturated one overshoots (``kp / h``).  :class:`MotorHold` keeps
the whole step's motor instead.  Before each part it makes every known motor a position motor
without position gain (``kp = 0, kd = 1``: the row's target is ``V`` itself, which Bullet still
clamps to the motor's maximum velocity, a setting the command leaves as it was) with the whole
step's ``V``, computed at ``dt`` from the state the step started from, and the part's share of
the cap (``force * h``, or ``h / dt`` N s).  After the step it issues the user's commands that
set those motors again, so the next step runs them as Bullet would.  Without an impact in
between, the parts then end where the whole step does: a saturated motor with the same impulse,
an unsaturated one at the same velocity (``tests/test_motors.py``).

The motors known are those commanded while the simulator followed the client
(:mod:`.following`) with ``setJointMotorControl2`` or ``setJointMotorControlArray`` at the
current time step, and the load-time motors of the bodies loaded meanwhile.  The others (set
before, or at another time step, whose cap is not ``force * dt``; set with
``setJointMotorControlMultiDof*``, or in ``PD_CONTROL`` or ``STABLE_PD_CONTROL``, which PyBullet
runs through its PD plugin; the motors of spherical joints) are left as Bullet runs them.  When
one of them applied a torque in the step before a split one, the simulator says so once per
body (:class:`~bullet_setimpact.errors.UnknownMotorWarning`); a motor switched off
(``VELOCITY_CONTROL`` with ``force=0``, as torque control needs) applies none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pybullet as p

from ..errors import UnknownMotorWarning, warn
from .bodies import BodyModel
from .following import ORIGINALS, ClientWorld, MotorCall
from .state import Snapshot

#: The impulse cap of the motor ``createJointMotors`` gives each joint at load [N s a step].
LOAD_MOTOR_IMPULSE = 1.0
#: ``pybullet.c``'s defaults of the motor commands' force, position gain and velocity gain.
DEFAULT_FORCE, DEFAULT_POSITION_GAIN, DEFAULT_VELOCITY_GAIN = 100000.0, 0.1, 1.0
#: The arguments of the two commands modelled, in PyBullet's order (``kwlist`` of ``pybullet.c``).
ARGUMENTS = {
    "setJointMotorControl2": (
        "bodyUniqueId",
        "jointIndex",
        "controlMode",
        "targetPosition",
        "targetVelocity",
        "force",
        "positionGain",
        "velocityGain",
        "maxVelocity",
    ),
    "setJointMotorControlArray": (
        "bodyUniqueId",
        "jointIndices",
        "controlMode",
        "targetPositions",
        "targetVelocities",
        "forces",
        "positionGains",
        "velocityGains",
    ),
}


class Motor(NamedTuple):
    """One joint's motor as the last command set it (``position`` None: velocity control, ``kp = 0``;
    ``force`` None: the load-time motor); a tuple, built for every joint at each split step."""

    position: float | None
    velocity: float
    kp: float
    kd: float
    force: float | None

    def target(self, q: float, qdot: float, dt: float, limits: tuple[float, float]) -> float:
        """The whole step's ``V`` from ``q, qdot`` before Bullet's clamp to the maximum velocity
        (module docstring); ``q*`` clamped to ``limits`` when they are ordered, as PyBullet
        clamps the command."""
        held = qdot + self.kd * (self.velocity - qdot)
        if self.position is not None:
            lower, upper = limits
            position = min(max(self.position, lower), upper) if lower <= upper else self.position
            held += self.kp * (position - q) / dt
        return held

    def hold_force(self, dt: float, substeps: int) -> float:
        """The force of the motor holding it in a part of ``h`` of a step of ``dt``, one of the
        world step's ``substeps``: Bullet caps the impulse at ``force * h``, the part's share of
        the step's cap (the command's ``force * substeps * dt``, or 1 N s)."""
        return LOAD_MOTOR_IMPULSE / dt if self.force is None else self.force * substeps


#: The motor ``createJointMotors`` gives each revolute and prismatic joint at load.
LOAD_MOTOR = Motor(None, 0.0, 0.0, 1.0, None)


def _arguments(name: str, args: tuple, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(zip(ARGUMENTS[name], args, strict=False))
    merged.update(kwargs)
    if "bodyIndex" in merged:  # PyBullet's older keyword
        merged["bodyUniqueId"] = merged.pop("bodyIndex")
    return merged


def commanded(call: MotorCall) -> dict[int, Motor | None]:
    """The motors a recorded command set, by joint: None for a joint whose motor it leaves unknown
    (a multi-DoF command, or a PD mode)."""
    joints = [int(joint) for joint in call.joints]
    if call.name not in ARGUMENTS:
        return dict.fromkeys(joints)
    values = _arguments(call.name, call.args, call.kwargs)
    mode = values["controlMode"]
    if mode not in (p.VELOCITY_CONTROL, p.POSITION_CONTROL):
        return dict.fromkeys(joints)
    if call.name == "setJointMotorControl2":
        rows = [
            (
                values.get("targetPosition", 0.0),
                values.get("targetVelocity", 0.0),
                values.get("force", DEFAULT_FORCE),
                values.get("positionGain", DEFAULT_POSITION_GAIN),
                values.get("velocityGain", DEFAULT_VELOCITY_GAIN),
            )
        ]
    else:
        count = len(joints)
        columns = [
            [default] * count if values.get(key) is None else list(values[key])
            for key, default in (
                ("targetPositions", 0.0),
                ("targetVelocities", 0.0),
                ("forces", DEFAULT_FORCE),
                ("positionGains", DEFAULT_POSITION_GAIN),
                ("velocityGains", DEFAULT_VELOCITY_GAIN),
            )
        ]
        rows = list(zip(*columns, strict=True))
    return {
        joint: Motor(float(position), float(velocity), float(kp), float(kd), float(force))
        if mode == p.POSITION_CONTROL
        else Motor(None, float(velocity), 0.0, float(kd), float(force))
        for joint, (position, velocity, force, kp, kd) in zip(joints, rows, strict=True)
    }


def load_motor_force(dt: float) -> float:
    """The force whose cap at ``dt`` is exactly :data:`LOAD_MOTOR_IMPULSE` (``force * dt`` in
    double precision, as Bullet computes it), or the nearest when no double gives it."""
    force = LOAD_MOTOR_IMPULSE / dt
    for candidate in (force, math.nextafter(force, math.inf), math.nextafter(force, 0.0)):
        if candidate * dt == LOAD_MOTOR_IMPULSE:
            return candidate
    return force


@dataclass(frozen=True)
class _Held:
    """The known motors of one body held through a split step, and the commands that set them."""

    body: int
    joints: list[int]
    velocities: list[float]
    forces: list[float]
    motors: dict[int, Motor]
    calls: list[MotorCall]


class MotorHold:
    """Holds the known motors of the tracked bodies through the parts of a split step (module
    docstring), in a world stepped in ``substeps`` substeps (``numSubSteps``, at least 1).
    :meth:`hold` before each part, :meth:`restore` after the step, at the world's time step."""

    def __init__(self, client: int, record: ClientWorld, bodies: Sequence[BodyModel], substeps: int, warned: set[str]) -> None:
        self.client = client
        self.record = record
        self.substeps = substeps
        #: The tracked bodies with revolute or prismatic joints, by id.
        self.bodies = {body.body: body for body in bodies if any(dofs == 1 for dofs in body.joint_dofs)}
        #: The bodies (by id and name) whose unknown active motors were reported, kept by the caller across world changes.
        self.warned = warned
        self._held: list[_Held] | None = None
        self._origin: Snapshot | None = None

    def motors(self, body: BodyModel) -> tuple[dict[int, Motor], list[MotorCall], list[int]]:
        """The known motors of ``body``'s revolute and prismatic joints with a cap, by joint; the
        commands that set them, in their order; and the joints whose motor is not known.  A
        command given at another time step fixed a cap that is not ``force * dt``: its joints are
        not known."""
        single = [joint for joint, dofs in zip(body.joints, body.joint_dofs, strict=True) if dofs == 1]
        known: dict[int, Motor | None] = dict.fromkeys(single, LOAD_MOTOR) if body.body in self.record.loaded else {}
        setters: dict[int, MotorCall] = {}
        for call in sorted(self.record.motor_calls.get(body.body, {}).values(), key=lambda call: call.order):
            current = call.time_step is not None and call.time_step == self.record.time_step
            for joint, motor in commanded(call).items():
                known[joint] = motor if current else None
                setters[joint] = call
        motors = {joint: motor for joint, motor in known.items() if motor is not None and joint in single and motor.force != 0.0}
        calls = {setters[joint].order: setters[joint] for joint in motors if joint in setters}
        return motors, [calls[order] for order in sorted(calls)], [joint for joint in single if known.get(joint) is None]

    @property
    def holding(self) -> bool:
        """Whether motors are held: :meth:`restore` has commands to issue again."""
        return self._held is not None

    def hold(self, origin: Snapshot, dt: float) -> None:
        """Before a part of a split step of ``dt`` (the time step already set to the part's
        length): every known motor held at the whole step's ``V`` from ``origin``, the state
        the step started from, with its part of the cap."""
        if self._held is None or origin is not self._origin:
            self._origin, self._held = origin, self._targets(origin, dt)
        command = ORIGINALS["setJointMotorControlArray"]
        for held in self._held:  # a position motor without gain on the position: its row's target is V
            command(
                held.body,
                held.joints,
                p.POSITION_CONTROL,
                targetVelocities=held.velocities,
                positionGains=[0.0] * len(held.joints),
                velocityGains=[1.0] * len(held.joints),
                forces=held.forces,
                physicsClientId=self.client,
            )

    def _targets(self, origin: Snapshot, dt: float) -> list[_Held]:
        found = []
        for state in origin.bodies:
            body = self.bodies.get(state.body)
            if body is None:
                continue
            motors, calls, unknown = self.motors(body)
            column = {joint: index for index, joint in enumerate(state.joints)}
            torques = state.joint_torques
            self._report(body, [joint for joint in unknown if any(torques[column[joint]])])
            if not motors:
                continue
            limits = dict(zip(body.joints, body.joint_limits, strict=True))
            joints = sorted(motors)
            positions, rates = state.joint_positions, state.joint_velocities
            velocities = [motors[joint].target(positions[column[joint]][0], rates[column[joint]][0], dt, limits[joint]) for joint in joints]
            found.append(
                _Held(body.body, joints, velocities, [motors[joint].hold_force(dt, self.substeps) for joint in joints], motors, calls)
            )
        return found

    def _report(self, body: BodyModel, active: list[int]) -> None:
        """Warn once per body of the ``active`` joints whose motor is not known (the torque they
        applied in the step before the split one, ``getJointStates``' fourth field, is not zero)."""
        key = f"{body.body} {body.name}"
        if not active or key in self.warned:
            return
        self.warned.add(key)
        names = ", ".join(body.joint_names[body.joints.index(joint)] for joint in active)
        warn(
            f"body {body.body} ({body.name!r}): the motors of joints {names} are active but not held through a step split "
            "at an impact, so Bullet applies them in every part of such a step with the whole step's impulse limit, up to "
            "twice their force: the simulator does not know them: they were set before it followed the client, at another "
            "time step, or by a command it does not model (multi-DoF, PD). Issue their commands again with "
            "setJointMotorControl2 or setJointMotorControlArray while it lives, or create it (or the hook) before loading the body",
            UnknownMotorWarning,
        )

    def restore(self, dt: float) -> None:
        """After a split step held its motors (the time step back at the world's ``dt``): the
        load-time motors as loaded, and the commands that set the others issued again, in their
        order."""
        if self._held is None:
            return
        held, self._held, self._origin = self._held, None, None
        for body in held:
            loaded = [joint for joint, motor in body.motors.items() if motor is LOAD_MOTOR]
            if loaded:
                ORIGINALS["setJointMotorControlArray"](
                    body.body,
                    loaded,
                    p.VELOCITY_CONTROL,
                    targetVelocities=[0.0] * len(loaded),
                    velocityGains=[1.0] * len(loaded),
                    forces=[load_motor_force(dt)] * len(loaded),
                    physicsClientId=self.client,
                )
            for call in body.calls:
                ORIGINALS[call.name](*call.args, **call.kwargs)
