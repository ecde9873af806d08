"""Following the user's world: the PyBullet calls that change it, seen as they are made.

An :class:`~.simulator.ImpactSimulator` models the bodies, dynamics and engine parameters of
its client.  The user's code changes them at will: environments load their robots in
``reset()``, call ``resetSimulation`` and reload, randomize masses and frictions, spawn
objects mid-episode.  Re-reading everything before each step would cost more than the step.
Instead, while any simulator lives (:func:`follow`), the ``pybullet`` module functions that
change a world are replaced by wrappers that call the function found there and then record
what changed in the client's :class:`ClientWorld`:

- :data:`WORLD_CHANGES` bump the client's :attr:`ClientWorld.version`; a simulator compares
  it once per step and rebuilds its models when it moved;
- :data:`STATE_CHANGES` (the ``reset*`` state functions, and Bullet steps the client's
  simulator did not take) bump its :attr:`ClientWorld.state_version`: while it stays, the
  bodies are where the simulator's last step left them, and the next step need not read them
  to know it;
- :data:`STEP_COMMANDS` (``TORQUE_CONTROL`` motor commands and external forces and torques)
  act for one Bullet step only: they are kept until the next step, so that a simulator that
  splits that step re-issues them before every part (:attr:`ClientWorld.commands`); the other
  motor commands set motors that persist, and the last of each joint is kept
  (:attr:`ClientWorld.motor_calls`: a split step holds them, :mod:`.motors`);
- :data:`CONNECTIONS` give new clients to whoever listens (:func:`on_connect`, the hook of
  every client) and end a disconnected client's record.

The wrapper of ``stepSimulation`` also sends a hooked client's steps to its simulator
(:func:`route`, which :mod:`bullet_setimpact.hooks` calls): one function stands in for
PyBullet's, whatever the order in which simulators and hooks come and go.

The wrappers read the client from the ``physicsClientId`` keyword (default 0), as PyBullet's
documentation and ``BulletClient`` pass it, or by position where users pass it so
(:data:`CLIENT_POSITION`: ``disconnect``, the step and the state functions).
``BulletClient.__getattr__`` gives the id only to *builtin* functions, so the class is given
a method for each wrapped name while the wrappers are installed.  A name bound with
``from pybullet import loadURDF`` before :func:`follow` keeps PyBullet's function and is not
seen: a body moved through such a name (``resetJointState``, or Bullet's own step) between two
steps of a simulator would be taken as where that simulator's last step left it.  When the
last follower leaves (:func:`unfollow`), the module functions and the class are restored
exactly.
"""

from __future__ import annotations

import faulthandler
import itertools
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pybullet

#: Functions whose call changes what a simulator models: the bodies, their dynamics, the
#: constraints, the time step, gravity and the engine parameters.
WORLD_CHANGES = (
    "loadURDF",
    "loadSDF",
    "loadMJCF",
    "createMultiBody",
    "removeBody",
    "resetSimulation",
    "restoreState",
    "changeDynamics",
    "setTimeStep",
    "setGravity",
    "setPhysicsEngineParameter",
    "setDefaultContactERP",
    "createConstraint",
    "changeConstraint",
    "removeConstraint",
)
#: Functions that move bodies outside a simulator's own steps: the ``reset*`` state functions,
#: and ``stepSimulation`` (but a hooked client's steps, which go to its simulator, :func:`route`;
#: a simulator steps Bullet with the function bound before any wrapper).
STATE_CHANGES = (
    "stepSimulation",
    "resetBasePositionAndOrientation",
    "resetBaseVelocity",
    "resetJointState",
    "resetJointStateMultiDof",
    "resetJointStatesMultiDof",
)
#: The calls among :data:`WORLD_CHANGES` that change the constraints alone.
CONSTRAINT_CHANGES = ("createConstraint", "changeConstraint", "removeConstraint")
#: Commands that act during the next Bullet step only (PyBullet clears them after it): motor
#: commands in ``TORQUE_CONTROL`` mode, external forces and torques.  In the other modes a motor
#: command sets a motor that persists (:meth:`ClientWorld.record_motor`).
STEP_COMMANDS = (
    "setJointMotorControl2",
    "setJointMotorControlArray",
    "setJointMotorControlMultiDof",
    "setJointMotorControlMultiDofArray",
    "applyExternalForce",
    "applyExternalTorque",
)
#: Functions that open and close clients.
CONNECTIONS = ("connect", "disconnect")
#: Every wrapped name.
WRAPPED = WORLD_CHANGES + STATE_CHANGES + STEP_COMMANDS + CONNECTIONS
#: The position of the client id among the arguments of the wrapped functions that users pass
#: it to by position (``p.stepSimulation(client)``); the others take it as ``physicsClientId``.
CLIENT_POSITION = {
    "disconnect": 0,
    "stepSimulation": 0,
    "resetBasePositionAndOrientation": 3,
    "resetBaseVelocity": 3,
    "resetJointState": 4,
    "resetJointStateMultiDof": 4,
    "resetJointStatesMultiDof": 4,
}
#: PyBullet's own functions, bound before any wrapper: the simulator's own calls (its partial
#: steps' engine parameters, re-issued commands) never count as the user's changes.
ORIGINALS: dict[str, Callable[..., Any]] = {name: getattr(pybullet, name) for name in WRAPPED}
#: The engine parameters a simulator scales in its partial steps, by their
#: ``setPhysicsEngineParameter`` names.  PyBullet cannot report them back.
ERP_NAMES = ("erp", "contactERP", "frictionERP")

#: Versions are unique across clients, so a client id PyBullet hands out again never repeats one.
_versions = itertools.count(1)
_lock = threading.RLock()


#: The motor commands that name one joint (the others take a sequence of joints).
SINGLE_JOINT_COMMANDS = ("setJointMotorControl2", "setJointMotorControlMultiDof")


class MotorCall(NamedTuple):
    """A motor command as the user's code issued it: PyBullet's name of it, its arguments, the
    joints it sets, its place among the client's calls, and the client's time step then
    (:attr:`ClientWorld.time_step`; a tuple: recorded at every command)."""

    name: str
    args: tuple
    kwargs: dict
    joints: tuple[int, ...]
    order: int
    time_step: float | None


def _copied(value: Any) -> Any:
    """A list or array argument as a tuple of its values now; any other (a number, a NumPy
    scalar) as it is."""
    if isinstance(value, (int, float)):
        return value
    return tuple(value) if isinstance(value, (list, tuple)) or getattr(value, "ndim", 0) > 0 else value


@dataclass
class ClientWorld:
    """What the intercepted calls changed in one client since it connected.

    Attributes
    ----------
    client : int
        PyBullet client id.
    version : int
        Bumped by every call of :data:`WORLD_CHANGES` on the client.
    reset_version : int
        The version of the last ``resetSimulation`` (it also deletes user collision shapes).
    state_version : int
        Bumped by every call of :data:`STATE_CHANGES` on the client, and with :attr:`version`
        (a simulator's own Bullet steps are not such calls): a simulator that reads it at the
        end of its step knows, while it stays, that no body moved since.
    posed : dict of int to int
        The :attr:`state_version` of each body's last ``resetBasePositionAndOrientation``: the
        one way to move a body without degrees of freedom.
    mjcf : set of int
        Bodies loaded by ``loadMJCF``: PyBullet's ``getCollisionShapeData`` crashes the
        process on their links (:func:`shape_data_unsafe`).
    safe : set of int
        Bodies whose ``getCollisionShapeData`` is known not to crash (loaded by ``loadURDF``,
        ``loadSDF`` or ``createMultiBody``, or probed).
    erp : dict
        The error reduction parameters (:data:`ERP_NAMES`) the user set, each with the
        version that set it.
    commands : list
        The :data:`STEP_COMMANDS` issued since the last step: ``(function, args, kwargs)``;
        kept only while a simulator of the client lives (:attr:`simulators`).
    simulators : int
        The client's live simulators (:func:`follow` with the client).
    connected : bool
        False after ``disconnect``.
    constraints_version : int
        Bumped by ``createConstraint``, ``changeConstraint`` and ``removeConstraint``, which
        change the constraints alone (not :attr:`version`: the bodies are as they were).
    driven : set of int
        Constraints whose child pivot or frame ``changeConstraint`` moved: targets the user
        drives (a mocap), whose relative velocity is not zero.
    loaded : set of int
        Bodies loaded while followed: their joints' motors are known from the load on
        (:mod:`.motors`).
    motor_calls : dict
        The last motor command other than ``TORQUE_CONTROL`` of each body, by the command's name
        and joints (:class:`MotorCall`).
    time_step : float or None
        The client's time step, read when the record is made and followed through the calls
        that set it (None if it could not be read): a motor's impulse cap is its force times the
        time step when it was commanded (:attr:`MotorCall.time_step`).
    """

    client: int
    version: int = field(default_factory=lambda: next(_versions))
    reset_version: int = 0
    state_version: int = field(default_factory=lambda: next(_versions))
    posed: dict[int, int] = field(default_factory=dict)
    mjcf: set[int] = field(default_factory=set)
    safe: set[int] = field(default_factory=set)
    erp: dict[str, tuple[float, int]] = field(default_factory=dict)
    commands: list[tuple[Callable[..., Any], tuple, dict]] = field(default_factory=list)
    simulators: int = 0
    connected: bool = True
    constraints_version: int = field(default_factory=lambda: next(_versions))
    driven: set[int] = field(default_factory=set)
    loaded: set[int] = field(default_factory=set)
    motor_calls: dict[int, dict[tuple[str, tuple[int, ...]], MotorCall]] = field(default_factory=dict)
    time_step: float | None = field(init=False)

    def __post_init__(self) -> None:
        self.read_time_step()

    def read_time_step(self) -> None:
        """:attr:`time_step` as PyBullet reports it now (None for a client it cannot read)."""
        try:
            self.time_step = float(pybullet.getPhysicsEngineParameters(physicsClientId=self.client)["fixedTimeStep"])
        except pybullet.error:
            self.time_step = None

    def changed(self, bodies: Iterable[int] = ()) -> None:
        """Bump the version (and the state's); ``bodies`` were loaded or removed (what was known of their ids is void)."""
        self.version = self.state_version = next(_versions)
        for body in bodies:
            self.mjcf.discard(body)
            self.safe.discard(body)
            self.loaded.discard(body)
            self.motor_calls.pop(body, None)

    def record_motor(self, name: str, args: tuple, kwargs: dict) -> None:
        """Keep a motor command other than ``TORQUE_CONTROL`` as the last of its joints
        (:attr:`motor_calls`), its sequences copied (the caller may refill a buffer it passed;
        ``setJointMotorControl2`` takes numbers only)."""
        if name != "setJointMotorControl2":
            args = tuple([_copied(value) for value in args])
            kwargs = {key: _copied(value) for key, value in kwargs.items()}
        body = args[0] if args else kwargs.get("bodyUniqueId", kwargs.get("bodyIndex", -1))
        given = args[1] if len(args) > 1 else kwargs.get("jointIndex", kwargs.get("jointIndices", ()))
        joints = (given,) if name in SINGLE_JOINT_COMMANDS else given
        calls = self.motor_calls.get(body)
        if calls is None:
            calls = self.motor_calls[body] = {}
        calls[name, joints] = MotorCall(name, args, kwargs, joints, next(_versions), self.time_step)

    def take_commands(self) -> list[tuple[Callable[..., Any], tuple, dict]]:
        """The step commands issued since the last call, which start the next step."""
        commands, self.commands = self.commands, []
        return commands


_worlds: dict[int, ClientWorld] = {}
#: Live followers (simulators, hooks of every client); the wrappers are installed while > 0.
_followers = 0
#: What each wrapped name was when the wrappers were installed.
_previous: dict[str, Callable[..., Any]] = {}
_wrappers: dict[str, Callable[..., Any]] = {}
#: The function each routed client's ``stepSimulation`` calls instead of Bullet's (:func:`route`).
_routes: dict[int, Callable[[], Any]] = {}
#: Routed clients whose function is running: their steps meanwhile go to Bullet.
_routing: set[int] = set()
#: ``(what it wrapped, the wrapper)`` of the ``stepSimulation`` wrapper :func:`route` put on top
#: when someone had replaced the wrappers' own since they were installed; removed with the last route.
_routes_wrapper: tuple[Callable[..., Any], Callable[..., Any]] | None = None
#: Callbacks ``(client)`` run after a ``connect`` and after a ``disconnect``.
_connect_listeners: list[Callable[[int], None]] = []
_disconnect_listeners: list[Callable[[int], None]] = []
#: ``BulletClient`` methods set while the wrappers are installed, by class.
_class_methods: dict[type, list[str]] = {}


def world(client: int) -> ClientWorld:
    """The record of ``client`` (created on first use)."""
    with _lock:
        if client not in _worlds:
            _worlds[client] = ClientWorld(client)
        return _worlds[client]


def follow(client: int | None = None) -> ClientWorld | None:
    """Count one more follower (a simulator of ``client``, or a hook of every client) and return
    the client's record.  The first follower installs the wrappers and forgets every record:
    what happened while nobody followed was not seen (a client id may serve a new connection)."""
    global _followers
    with _lock:
        _followers += 1
        if _followers == 1:
            _worlds.clear()
            _install()
        if client is None:
            return None
        record = world(client)
        record.simulators += 1
        return record


def unfollow(record: ClientWorld | None = None) -> None:
    """Count one follower less (as :func:`follow` counted it); the last restores ``pybullet`` and
    ``BulletClient`` exactly."""
    global _followers
    with _lock:
        _followers -= 1
        if record is not None:
            record.simulators -= 1
        if _followers == 0:
            _restore()


def route(client: int, step: Callable[[], Any] | None) -> None:
    """Make ``stepSimulation`` of ``client`` call ``step()`` instead of Bullet's step while the
    wrappers are installed (``None``: Bullet's step again).  A step of the client issued while
    ``step`` runs (re-entrant, e.g. from inside a law) goes to Bullet, and so does a disconnected
    client's (Bullet raises its own error).  The routed steps are not state changes: they are
    the simulator's own.  If ``pybullet.stepSimulation`` was replaced since the wrappers were
    installed, a wrapper of what stands there is put on top while any client is routed."""
    global _routes_wrapper
    with _lock:
        if step is None:
            _routes.pop(client, None)
            if not _routes and _routes_wrapper is not None:
                if pybullet.stepSimulation is _routes_wrapper[1]:  # else someone wrapped it since: ours passes through
                    pybullet.stepSimulation = _routes_wrapper[0]
                _routes_wrapper = None
            return
        _routes[client] = step
        if pybullet.stepSimulation not in (_wrappers.get("stepSimulation"), None if _routes_wrapper is None else _routes_wrapper[1]):
            # replaced since the wrappers were installed: the routes need a wrapper on top of what stands there
            _routes_wrapper = (pybullet.stepSimulation, _wrap_step(pybullet.stepSimulation))
            pybullet.stepSimulation = _routes_wrapper[1]


def on_connect(listener: Callable[[int], None]) -> None:
    """Call ``listener(client)`` after each new connection (until :func:`ignore_connections`)."""
    _connect_listeners.append(listener)


def on_disconnect(listener: Callable[[int], None]) -> None:
    """Call ``listener(client)`` after each ``disconnect`` (until :func:`ignore_connections`)."""
    _disconnect_listeners.append(listener)


def ignore_connections(listener: Callable[[int], None]) -> None:
    """Stop calling ``listener`` on connections and disconnections."""
    for listeners in (_connect_listeners, _disconnect_listeners):
        while listener in listeners:
            listeners.remove(listener)


def bullet_client_classes() -> list[type]:
    """``BulletClient`` classes to give methods (``pybullet_utils`` ships with pybullet)."""
    try:
        from pybullet_utils.bullet_client import BulletClient
    except ImportError:  # pragma: no cover - pybullet always ships pybullet_utils
        return []
    return [BulletClient]


def patch_bullet_client(name: str, method: Callable[..., Any]) -> list[type]:
    """Give each ``BulletClient`` class that has no ``name`` of its own the method ``method``
    (its ``__getattr__`` would pass a Python function without the client id).  Returns the
    classes patched, for :func:`unpatch_bullet_client`."""
    patched = []
    for cls in bullet_client_classes():
        if name not in vars(cls):
            setattr(cls, name, method)
            patched.append(cls)
    return patched


def unpatch_bullet_client(name: str, classes: Iterable[type]) -> None:
    """Remove the method ``name`` :func:`patch_bullet_client` gave ``classes``."""
    for cls in classes:
        delattr(cls, name)


# ---------------------------------------------------------------- the wrappers
def _client_of(name: str, args: tuple, kwargs: dict) -> int:
    position = CLIENT_POSITION.get(name)
    if position is not None and len(args) > position:
        return int(args[position])
    return int(kwargs.get("physicsClientId", 0))


def _record(name: str, function: Callable[..., Any], args: tuple, kwargs: dict, result: Any) -> None:
    """Record in the client's :class:`ClientWorld` what the call ``name(*args, **kwargs)`` did."""
    if name == "connect":
        if isinstance(result, int) and result >= 0:
            with _lock:
                _worlds[result] = ClientWorld(result)
            for listener in list(_connect_listeners):
                listener(result)
        return
    client = _client_of(name, args, kwargs)
    record = world(client)
    if name == "disconnect":
        record.connected = False
        record.changed()
        for listener in list(_disconnect_listeners):
            listener(client)
        return
    if name in STATE_CHANGES:
        record.state_version = next(_versions)
        if name == "resetBasePositionAndOrientation":
            record.posed[int(args[0] if args else kwargs.get("bodyUniqueId", -1))] = record.state_version
        return
    if name in STEP_COMMANDS:
        if name.startswith("setJointMotorControl") and _control_mode(args, kwargs) != pybullet.TORQUE_CONTROL:
            record.record_motor(name, args, kwargs)
        elif record.simulators > 0:
            record.commands.append((function, args, kwargs))
        return
    bodies = _bodies_of(result)
    if name in ("loadURDF", "loadSDF", "loadMJCF", "createMultiBody"):
        record.changed(bodies)
        (record.mjcf if name == "loadMJCF" else record.safe).update(bodies)
        record.loaded.update(bodies)
    elif name == "removeBody":
        record.changed(args[:1] or [kwargs.get("bodyUniqueId", -1)])
    elif name == "resetSimulation":
        record.changed()
        record.reset_version = record.version
        record.mjcf.clear()
        record.safe.clear()
        record.driven.clear()
        record.erp.clear()  # a new dynamics world: PyBullet's default parameters
        record.loaded.clear()
        record.motor_calls.clear()
        record.read_time_step()  # PyBullet's default time step again
    elif name in CONSTRAINT_CHANGES:
        record.constraints_version = next(_versions)
        uid = int(args[0] if args else kwargs.get("userConstraintUniqueId", -1))
        if name == "removeConstraint":
            record.driven.discard(uid)
        elif name == "changeConstraint" and (len(args) > 1 or {"jointChildPivot", "jointChildFrameOrientation"} & set(kwargs)):
            record.driven.add(uid)
    else:
        record.changed()
        # setDefaultContactERP sets what setPhysicsEngineParameter calls contactERP (btContactSolverInfo::m_erp2)
        values: dict[str, Any] = (
            {"contactERP": args[0] if args else kwargs.get("defaultContactERP")} if name == "setDefaultContactERP" else kwargs
        )
        if name in ("setPhysicsEngineParameter", "setDefaultContactERP"):
            record.erp.update({key: (float(values[key]), record.version) for key in ERP_NAMES if values.get(key) is not None})
        if name == "setTimeStep" or (name == "setPhysicsEngineParameter" and kwargs.get("fixedTimeStep") is not None):
            record.read_time_step()


def _control_mode(args: tuple, kwargs: dict) -> Any:
    return args[2] if len(args) > 2 else kwargs.get("controlMode")


def _bodies_of(result: Any) -> list[int]:
    """The body ids a loading function returned (an id, or a tuple of ids)."""
    if isinstance(result, int):
        return [result] if result >= 0 else []
    if isinstance(result, (tuple, list)):
        return [body for body in result if isinstance(body, int) and body >= 0]
    return []


def _wrap(name: str, previous: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = previous(*args, **kwargs)
        _record(name, previous, args, kwargs, result)
        return result

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = getattr(previous, "__doc__", None)
    return wrapper


def _wrap_step(previous: Callable[..., Any]) -> Callable[..., Any]:
    """The wrapper of ``stepSimulation``: a routed client's step calls its function
    (:func:`route`), any other is Bullet's and a state change."""

    def stepSimulation(*args: Any, **kwargs: Any) -> Any:
        client = _client_of("stepSimulation", args, kwargs)
        routed = _routes.get(client)
        if routed is None or client in _routing or not pybullet.isConnected(physicsClientId=client):
            result = previous(*args, **kwargs)
            _record("stepSimulation", previous, args, kwargs, result)
            return result
        _routing.add(client)
        try:
            routed()
        finally:
            _routing.discard(client)
        return ()  # what Bullet's stepSimulation returns

    stepSimulation.__doc__ = getattr(previous, "__doc__", None)
    return stepSimulation


def _client_method(name: str) -> Callable[..., Any]:
    """``BulletClient.<name>`` while the wrappers are installed: the current module function
    with the client's id, as its ``__getattr__`` does for builtins."""
    if name == "disconnect":

        def disconnect(self: Any) -> Any:
            client, self._client = self._client, -1  # as BulletClient.__getattr__ marks it
            return pybullet.disconnect(physicsClientId=client)

        return disconnect

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(pybullet, name)(*args, physicsClientId=self._client, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


def _install() -> None:
    for name in WRAPPED:
        _previous[name] = getattr(pybullet, name)
        _wrappers[name] = _wrap_step(_previous[name]) if name == "stepSimulation" else _wrap(name, _previous[name])
        setattr(pybullet, name, _wrappers[name])
        if name != "connect":  # BulletClient connects in __init__, through the module
            for cls in patch_bullet_client(name, _client_method(name)):
                _class_methods.setdefault(cls, []).append(name)


def _restore() -> None:
    for name in WRAPPED:
        if getattr(pybullet, name) is _wrappers.get(name):  # else someone wrapped it since: ours passes through
            setattr(pybullet, name, _previous[name])
    for cls, names in _class_methods.items():
        for name in names:
            unpatch_bullet_client(name, [cls])
    _class_methods.clear()
    _wrappers.clear()


# ---------------------------------------------------------------- MJCF
def shape_data_unsafe(client: int, bodies: Iterable[int]) -> set[int]:
    """The ``bodies`` whose ``getCollisionShapeData`` would crash the process.

    PyBullet 3.2.7's ``getCollisionShapeData`` dies with a segmentation fault on the links
    of bodies loaded by ``loadMJCF`` that carry collision shapes, and a crash cannot be
    caught.  Bodies whose loader was seen are known (:attr:`ClientWorld.mjcf`,
    :attr:`ClientWorld.safe`).  The others (loaded before any simulator lived) are probed
    once, in a forked copy of this process (a ``DIRECT`` client's server lives in it): a
    body is unsafe when the copy died.  Without ``fork``, or for a client whose server lives
    elsewhere, a body of unknown origin is taken as safe.
    """
    record = world(client)
    unsafe = set()
    unknown = []
    for body in bodies:
        if body in record.mjcf:
            unsafe.add(body)
        elif body not in record.safe:
            unknown.append(body)
    if unknown and hasattr(os, "fork") and pybullet.getConnectionInfo(physicsClientId=client).get("connectionMethod") == pybullet.DIRECT:
        for body in unknown:
            if _crashes(client, body):
                record.mjcf.add(body)
                unsafe.add(body)
            else:
                record.safe.add(body)
    return unsafe


def _crashes(client: int, body: int) -> bool:
    """Whether ``getCollisionShapeData`` on every link of ``body`` kills a forked copy of the process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        try:
            os.close(read)
            faulthandler.disable()  # its death is the answer, not a report
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            for link in range(-1, pybullet.getNumJoints(body, physicsClientId=client)):
                pybullet.getCollisionShapeData(body, link, physicsClientId=client)
            os.write(write, b"1")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        survived = answer.read()
    os.waitpid(pid, 0)
    return not survived
