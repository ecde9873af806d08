"""Hook ``pybullet.stepSimulation`` itself, so code nobody rewrote steps through an :class:`ImpactSimulator`.

While a hook is installed, ``pybullet.stepSimulation`` is the wrapper of
:mod:`~bullet_setimpact.bullet.following`, which sends every step of a hooked client
(``physicsClientId``, default 0, or by position) to that client's
:class:`~bullet_setimpact.bullet.simulator.ImpactSimulator` (:func:`.following.route`) and
every other client's step to the function it found there.  Covered: ``p.stepSimulation(...)``
through the module, ``from pybullet import stepSimulation`` executed after installation, and
``pybullet_utils.bullet_client.BulletClient(...).stepSimulation()`` (which injects its id
with ``functools.partial`` only around *builtin* functions, so the class is given a
``stepSimulation`` method that does the same around the wrapper).  A name bound by ``from
pybullet import stepSimulation`` before any simulator lived keeps Bullet's function.

The simulator steps Bullet through
:data:`bullet_setimpact.bullet.simulator.bullet_step_simulation`, Bullet's own function
bound before any wrapper, so its steps never enter the hook; a step of a client issued
while that client's simulator is stepping (e.g. from inside a law) also goes to Bullet
directly.  Each hook follows the world itself (:func:`.following.follow`), so the wrapper
stays while it is installed, even if its simulator is closed; when the last hook and
simulator are gone, ``pybullet.stepSimulation`` and ``BulletClient`` are restored exactly.
The results equal the explicit loop's: each hooked step is one :meth:`ImpactSimulator.step`.

:func:`hook` without a client hooks every client, those connected later included
(``p.connect``, ``BulletClient(...)``, seen through :mod:`~bullet_setimpact.bullet.following`):
an environment that creates its client inside the block is hooked as it connects.  Each
client gets its own simulator and seed stream, spawned from ``seed`` in order of connection
(the clients already connected first, by id).
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pybullet

from .bullet import following
from .bullet import simulator as _simulator
from .bullet.inventory import client_id
from .bullet.simulator import ImpactEvent, ImpactSimulator

#: Bullet's own ``stepSimulation`` (the one the simulator steps with).
ORIGINAL_STEP: Callable[..., Any] = _simulator.bullet_step_simulation

_lock = threading.RLock()
#: The hooked clients' simulators, by client id.
_hooked: dict[int, ImpactSimulator] = {}
#: The options a hook passes to each :class:`ImpactSimulator`.
OPTIONS = tuple(name for name in inspect.signature(ImpactSimulator).parameters if name not in ("law", "client", "seed"))
#: PyBullet's most clients per process (``MAX_PHYSICS_CLIENTS``): the ids a hook of every client looks at.
MAX_CLIENTS = 1024


def _hooked_step(simulator: ImpactSimulator) -> Callable[[], None]:
    """What a hooked client's ``stepSimulation`` calls: the simulator's step, its errors naming the hook."""

    def step() -> None:
        try:
            simulator.step()
        except Exception as exc:
            exc.add_note(
                f"(raised by the ImpactSimulator of bullet_setimpact.hook on PyBullet client {simulator.client}, in stepSimulation)"
            )
            raise

    return step


def check_options(options: dict[str, Any], caller: str) -> None:
    """``TypeError`` naming ``caller``, the closest valid name and all of them when an option
    is not an :class:`ImpactSimulator` parameter (:data:`OPTIONS`)."""
    for name in options:
        if name not in OPTIONS:
            close = difflib.get_close_matches(name, OPTIONS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise TypeError(f"{caller} got an unknown option {name!r}; {hint}the options are {', '.join(OPTIONS)}")


def install(law: Any, client: Any = 0, seed: int | np.random.SeedSequence | None = None, **simulator_kwargs: Any) -> ImpactSimulator:
    """Hook ``client`` (an id or a ``BulletClient``): from now on its ``stepSimulation`` is
    ``ImpactSimulator(law, client, seed, **simulator_kwargs).step()``.  Returns that simulator.

    Build the world first (the simulator models the bodies present now).  Hooking a client
    that is already hooked raises ``RuntimeError``; :func:`uninstall` removes the hook.
    """
    check_options(simulator_kwargs, "bullet_setimpact.install()")
    client = client_id(client)
    with _lock:
        if client in _hooked:
            raise RuntimeError(f"PyBullet client {client!r} is already hooked; call bullet_setimpact.uninstall({client!r}) first")
        try:
            simulator = ImpactSimulator(law, client=client, seed=seed, **simulator_kwargs)
        except Exception as exc:
            exc.add_note(f"(raised while bullet_setimpact's hook built the ImpactSimulator of PyBullet client {client})")
            raise
        following.follow()  # the hook's own: the wrapper stays while it is installed
        following.route(simulator.client, _hooked_step(simulator))
        _hooked[simulator.client] = simulator
        return simulator


def uninstall(client: Any = 0) -> ImpactSimulator:
    """Remove the hook of ``client`` (an id or a ``BulletClient``, connected or not) and
    return its simulator, closed (:meth:`ImpactSimulator.close`).

    When the last hook and simulator are gone, ``pybullet.stepSimulation`` and ``BulletClient``
    are restored exactly as the first found them.  ``ValueError`` if the client is not hooked.
    """
    client = client_id(client)
    with _lock:
        if client not in _hooked:
            raise ValueError(f"PyBullet client {client!r} is not hooked; hooked clients: {sorted(_hooked)}")
        simulator = _hooked.pop(client)
        following.route(client, None)
        simulator.close()
        following.unfollow()
        return simulator


def hooked_clients() -> list[int]:
    """Ids of the clients hooked now."""
    return sorted(_hooked)


class HookedClients:
    """What :func:`hook` without a client yields: the simulators of every client it hooked.

    Attributes
    ----------
    simulators : dict of int to ImpactSimulator
        The simulator of each client hooked now, by client id (a disconnected client's
        leaves, its events stay in :attr:`events`).
    """

    def __init__(self, law: Any, seed: int | np.random.SeedSequence | None, options: dict[str, Any]) -> None:
        self.law = law
        self.options = options
        self._seeds = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        self.simulators: dict[int, ImpactSimulator] = {}
        self._all: list[ImpactSimulator] = []  # every simulator, in order of connection

    @property
    def events(self) -> list[ImpactEvent]:
        """Every hooked client's events, in simulated time (ties: in order of connection); each
        names its client (:attr:`ImpactEvent.client`)."""
        order = {id(simulator): index for index, simulator in enumerate(self._all)}
        tagged = [(event.time, order[id(simulator)], event) for simulator in self._all for event in simulator.events]
        return [event for _, _, event in sorted(tagged, key=lambda item: item[:2])]

    def _connected(self, client: int) -> None:
        """Hook a client that just connected, with the next seed stream."""
        seed = self._seeds.spawn(1)[0]
        simulator = install(self.law, client, seed, **self.options)
        self.simulators[client] = simulator
        self._all.append(simulator)

    def _disconnected(self, client: int) -> None:
        """Unhook a client that just disconnected (its events stay)."""
        if self.simulators.pop(client, None) is not None:
            uninstall(client)

    def _start(self) -> None:
        following.follow()
        try:
            for client in range(MAX_CLIENTS):
                if pybullet.isConnected(physicsClientId=client):
                    self._connected(client)
            following.on_connect(self._connected)
            following.on_disconnect(self._disconnected)
        except BaseException:
            self._stop()
            raise

    def _stop(self) -> None:
        following.ignore_connections(self._connected)
        following.ignore_connections(self._disconnected)
        for client in list(self.simulators):
            uninstall(client)
        self.simulators.clear()
        following.unfollow()


@contextlib.contextmanager
def hook(law: Any, client: Any = None, seed: int | np.random.SeedSequence | None = None, **simulator_kwargs: Any) -> Iterator[Any]:
    """Within the block, every ``stepSimulation`` resolves impacts with ``law`` (an impact law
    or its name, :func:`~bullet_setimpact.get_law`).

    Without ``client``, every client is hooked, those connected inside the block included,
    and the block yields a :class:`HookedClients` (``.events``, ``.simulators``)::

        with bullet_setimpact.hook("routh", seed=0) as h:
            env = gymnasium.make("PandaPush-v3")  # its client connects, and is hooked
            ...
        print(h.events)

    With ``client`` (an id or a ``BulletClient``), only that client is hooked, and the block
    yields its :class:`ImpactSimulator`::

        with bullet_setimpact.hook(RouthImpact("auto", 50), client=cid, seed=0) as sim:
            run_my_unmodified_code()  # p.stepSimulation(physicsClientId=cid) -> sim.step()
        print(sim.events)

    ``simulator_kwargs`` are :class:`ImpactSimulator`'s options (:data:`OPTIONS`; an unknown
    one is a ``TypeError`` listing them).  :func:`install` on entry, :func:`uninstall` on
    exit, normal or by an exception.
    """
    check_options(simulator_kwargs, "bullet_setimpact.hook()")
    if client is None:
        clients = HookedClients(law, seed, simulator_kwargs)
        clients._start()
        try:
            yield clients
        finally:
            clients._stop()
        return
    simulator = install(law, client, seed, **simulator_kwargs)
    try:
        yield simulator
    finally:
        uninstall(simulator.client)
