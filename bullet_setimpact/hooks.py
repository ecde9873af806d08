"""Hook ``pybullet.stepSimulation`` itself, so code nobody rewrote steps through an :class:`ImpactSimulator`.

:func:`install` replaces the module attribute ``pybullet.stepSimulation`` by a dispatcher
that sends every step of a hooked client (``physicsClientId``, default 0) to that client's
:class:`~bullet_setimpact.bullet.simulator.ImpactSimulator` and every other client's step to
the function it found there.  Covered: ``p.stepSimulation(...)`` through the module,
``from pybullet import stepSimulation`` executed after installation, and
``pybullet_utils.bullet_client.BulletClient(...).stepSimulation()`` (which injects its id
with ``functools.partial`` only around *builtin* functions, so :func:`install` gives the
class a ``stepSimulation`` method that does the same around the dispatcher).  A name bound
by ``from pybullet import stepSimulation`` *before* installation keeps Bullet's function.

The simulator steps Bullet through
:data:`bullet_setimpact.bullet.simulator.bullet_step_simulation`, Bullet's own function
bound before any hook, so its steps never enter the dispatcher; a step of a client issued
while that client's simulator is stepping (e.g. from inside a law) also goes to Bullet
directly.  When the last hook is removed, ``pybullet.stepSimulation`` and ``BulletClient``
are restored exactly.  The results equal the explicit loop's: each hooked step is one
:meth:`ImpactSimulator.step`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pybullet

from .bullet import simulator as _simulator
from .bullet.inventory import client_id
from .bullet.simulator import ImpactSimulator

#: Bullet's own ``stepSimulation`` (the one the simulator steps with).
ORIGINAL_STEP: Callable[..., Any] = _simulator.bullet_step_simulation

_lock = threading.RLock()
#: The hooked clients' simulators, by client id.
_hooked: dict[int, ImpactSimulator] = {}
#: Clients whose simulator is inside ``step()`` (re-entrant steps go to Bullet).
_stepping: set[int] = set()
#: What ``pybullet.stepSimulation`` was when the first hook was installed.
_previous: Callable[..., Any] = ORIGINAL_STEP
#: Classes given a ``stepSimulation`` method while hooks are installed.
_patched_classes: list[type] = []


def _dispatch(physicsClientId: int = 0) -> Any:
    """``pybullet.stepSimulation`` while hooks are installed: a hooked client's step is its
    simulator's :meth:`~ImpactSimulator.step` (events in ``simulator.events``); any other
    client, a disconnected one, or a re-entrant step goes to the previous function."""
    simulator = _hooked.get(physicsClientId)
    if simulator is None or physicsClientId in _stepping or not pybullet.isConnected(physicsClientId=physicsClientId):
        return _previous(physicsClientId=physicsClientId)  # plain Bullet, its errors included
    _stepping.add(physicsClientId)
    try:
        simulator.step()
    finally:
        _stepping.discard(physicsClientId)
    return ()  # what Bullet's stepSimulation returns


_dispatch.__name__ = _dispatch.__qualname__ = "stepSimulation"


def _client_step(self: Any) -> Any:
    """``BulletClient.stepSimulation`` while hooks are installed: the current
    ``pybullet.stepSimulation`` with the client's id, as its ``__getattr__`` does for builtins."""
    return pybullet.stepSimulation(physicsClientId=self._client)


def _bullet_client_classes() -> list[type]:
    """``BulletClient`` classes to patch (``pybullet_utils`` ships with pybullet)."""
    try:
        from pybullet_utils.bullet_client import BulletClient
    except ImportError:  # pragma: no cover - pybullet always ships pybullet_utils
        return []
    return [BulletClient]


def install(law: Any, client: Any = 0, seed: int | np.random.SeedSequence | None = None, **simulator_kwargs: Any) -> ImpactSimulator:
    """Hook ``client`` (an id or a ``BulletClient``): from now on its ``stepSimulation`` is
    ``ImpactSimulator(law, client, seed, **simulator_kwargs).step()``.  Returns that simulator.

    Build the world first (the simulator models the bodies present now).  Hooking a client
    that is already hooked raises ``RuntimeError``; :func:`uninstall` removes the hook.
    """
    global _previous
    client = client_id(client)
    with _lock:
        if client in _hooked:
            raise RuntimeError(f"PyBullet client {client!r} is already hooked; call bullet_setimpact.uninstall({client!r}) first")
        simulator = ImpactSimulator(law, client=client, seed=seed, **simulator_kwargs)
        if not _hooked:
            _previous = pybullet.stepSimulation
            pybullet.stepSimulation = _dispatch
            for cls in _bullet_client_classes():
                if "stepSimulation" not in vars(cls):
                    cls.stepSimulation = _client_step  # type: ignore[attr-defined]
                    _patched_classes.append(cls)
        _hooked[simulator.client] = simulator
        return simulator


def uninstall(client: Any = 0) -> ImpactSimulator:
    """Remove the hook of ``client`` (an id or a ``BulletClient``, connected or not) and
    return its simulator.

    Removing the last hook restores ``pybullet.stepSimulation`` and ``BulletClient`` exactly
    as :func:`install` found them.  ``ValueError`` if the client is not hooked.
    """
    client = client_id(client)
    with _lock:
        if client not in _hooked:
            raise ValueError(f"PyBullet client {client!r} is not hooked; hooked clients: {sorted(_hooked)}")
        simulator = _hooked.pop(client)
        if not _hooked:
            if pybullet.stepSimulation is _dispatch:  # else someone wrapped it since: the dispatcher passes through
                pybullet.stepSimulation = _previous
            while _patched_classes:
                del _patched_classes.pop().stepSimulation  # type: ignore[attr-defined]
        return simulator


def hooked_clients() -> list[int]:
    """Ids of the clients hooked now."""
    return sorted(_hooked)


@contextlib.contextmanager
def hook(law: Any, client: Any = 0, seed: int | np.random.SeedSequence | None = None, **simulator_kwargs: Any) -> Iterator[ImpactSimulator]:
    """Within the block, every ``stepSimulation`` of ``client`` (an id or a ``BulletClient``)
    resolves impacts with ``law``::

        with bullet_setimpact.hook(RouthImpact("auto", 50), client=cid, seed=0) as sim:
            run_my_unmodified_code()  # p.stepSimulation(physicsClientId=cid) -> sim.step()
        print(sim.events)

    :func:`install` on entry, :func:`uninstall` on exit, normal or by an exception.
    """
    simulator = install(law, client, seed, **simulator_kwargs)
    try:
        yield simulator
    finally:
        uninstall(simulator.client)
