"""Scenarios: named PyBullet worlds to simulate, one script each in ``scenarios/``.

A scenario script (``scenarios/<name>.py``) has a module docstring whose first line is its
one-line description and which says what it measures, a ``DEFAULTS`` dict of parameters,
and ``build(client, **params) -> Scenario``.  It runs standalone (``python
scenarios/<name>.py``) through :func:`run_standalone`.

This module finds, loads and validates scenarios (:func:`available`, :func:`load`,
:func:`build`), turns law specifications into laws (:func:`make_law`), and holds what the
scripts share: :func:`describe`, :func:`setup_physics`, :func:`require`,
:func:`planar_scenario`, :func:`setup_robot_drop` and :func:`raise_body` (contact labels
are in :mod:`bullet_setimpact.labels`).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pybullet as p
import pybullet_data

from .bullet.contacts import Contact
from .bullet.examples import ExampleWorld, load_static
from .data import data_path
from .laws import ImpactLaw, RouthImpact, get_law

#: The project's scenario scripts (:func:`bullet_setimpact.data_path`).
SCENARIO_DIR = Path(data_path("scenarios"))
#: Parameters every scenario may have that must be positive (seconds).
POSITIVE_PARAMETERS = frozenset({"duration", "time_step"})
#: Gravitational acceleration of every scenario [m/s^2] (the journal's g).
GRAVITY = 9.81


@dataclass
class Scenario:
    """A built world, ready for :class:`~bullet_setimpact.bullet.simulator.ImpactSimulator`.

    Attributes
    ----------
    name : str
    client : int
        PyBullet client the world lives in.
    bodies : dict of str to int
        The scenario's named bodies (robots, objects), whose final state is observed.
    duration : float
        Default simulated time of a rollout [s].
    law : ImpactLaw
        The scenario's set-valued law (``RouthImpact`` with a step fit to the impact).
    description : str
        One line.
    measures : str
        Which contacts and outcome variables the scenario is about.
    label_contact : callable, optional
        ``Contact -> str``: a stable name for a contact ("A", "left foot", ...), used to
        classify outcomes per contact.  Default: ``"<body>:<link>"``.
    """

    name: str
    client: int
    bodies: dict[str, int]
    duration: float
    law: ImpactLaw
    description: str
    measures: str
    label_contact: Callable[[Contact], str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def contact_label(self, contact: Contact) -> str:
        """The name of a contact (see ``label_contact``)."""
        if self.label_contact is not None:
            return self.label_contact(contact)
        body, link = (contact.body_b, contact.link_b) if contact.body_b in self.bodies.values() else (contact.body_a, contact.link_a)
        names = {value: key for key, value in self.bodies.items()}
        return f"{names.get(body, body)}:{link}"

    def observe(self) -> dict[str, np.ndarray]:
        """Final-state summary: base position, orientation (quaternion) and velocities, and
        joint positions of every named body, keyed ``"<body>.<quantity>"``."""
        state: dict[str, np.ndarray] = {}
        for name, body in self.bodies.items():
            position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=self.client)
            linear, angular = p.getBaseVelocity(body, physicsClientId=self.client)
            state[f"{name}.position"] = np.array(position)
            state[f"{name}.orientation"] = np.array(orientation)
            state[f"{name}.linear_velocity"] = np.array(linear)
            state[f"{name}.angular_velocity"] = np.array(angular)
            joints = [
                j
                for j in range(p.getNumJoints(body, physicsClientId=self.client))
                if p.getJointInfo(body, j, physicsClientId=self.client)[2] != p.JOINT_FIXED
            ]
            if joints:
                states = p.getJointStatesMultiDof(body, joints, physicsClientId=self.client)
                state[f"{name}.joint_positions"] = np.concatenate([np.atleast_1d(s[0]) for s in states])
                state[f"{name}.joint_velocities"] = np.concatenate([np.atleast_1d(s[1]) for s in states])
        return state


def describe(docstring: str | None) -> dict[str, str]:
    """``description`` (first line) and ``measures`` (the "Measures:" paragraph, one line) of a
    scenario script's docstring, as keyword arguments of :class:`Scenario`."""
    text = (docstring or "").strip()
    if "Measures:" not in text:
        raise ValueError("a scenario script's docstring must have a 'Measures:' paragraph")
    measures = text.split("Measures:", 1)[1].split("\n\n", 1)[0]
    return {"description": text.splitlines()[0], "measures": " ".join(measures.split())}


def setup_physics(client: int, time_step: float) -> None:
    """Gravity ``-GRAVITY`` along z and Bullet's fixed time step [s]."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setTimeStep(time_step, physicsClientId=client)


def raise_body(client: int, body: int, height: float) -> None:
    """Move ``body``'s base up by ``height`` [m] (down if negative), keeping its orientation."""
    position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    p.resetBasePositionAndOrientation(body, [position[0], position[1], position[2] + height], orientation, physicsClientId=client)


def planar_scenario(
    name: str,
    client: int,
    world: ExampleWorld,
    body_names: Sequence[str],
    duration: float,
    docstring: str | None,
    label_contact: Callable[[Contact], str],
) -> Scenario:
    """A scenario on a journal example's planar world (:func:`load_planar_example`), under the
    journal's law for that example (Tables 4-8: step h and N).  ``extra`` holds the ground,
    the wall (if any) and the closed-form example."""
    statics = {"ground": world.ground} | ({} if world.wall is None else {"wall": world.wall})
    return Scenario(
        name=name,
        client=client,
        bodies=dict(zip(body_names, world.bodies, strict=True)),
        duration=duration,
        law=RouthImpact(world.example.step, world.example.max_steps),
        **describe(docstring),
        label_contact=label_contact,
        extra=statics | {"example": world.example},
    )


def setup_robot_drop(client: int, params: Mapping[str, Any]) -> int:
    """Shared start of the legged-robot drops: checks ``height`` >= 0 and positive
    ``position_gain``, ``velocity_gain`` and ``torque_scale``, sets gravity and the time step,
    adds ``pybullet_data``'s search path and loads the box ground, whose id it returns."""
    for key in ("position_gain", "velocity_gain", "torque_scale"):
        require(params, key, params[key] > 0.0, "> 0")
    require(params, "height", params["height"] >= 0.0, ">= 0 m")
    setup_physics(client, params["time_step"])
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    return load_static(client)


def require(params: Mapping[str, Any], key: str, valid: bool, expected: str) -> None:
    """``ValueError`` naming parameter ``key``, its value and ``expected`` unless ``valid``."""
    if not valid:
        raise ValueError(f"parameter {key!r} must be {expected}, got {params[key]!r}")


def available() -> dict[str, str]:
    """Scenario names and their one-line descriptions."""
    return {path.stem: _first_line(path) for path in sorted(SCENARIO_DIR.glob("*.py")) if not path.stem.startswith("_")}


def _first_line(path: Path) -> str:
    module = load(path.stem)
    return (module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else ""


def load(name: str) -> ModuleType:
    """Import the scenario script ``scenarios/<name>.py``; ``ValueError`` if there is none."""
    path = SCENARIO_DIR / f"{name}.py"
    if not isinstance(name, str) or not name.isidentifier() or not path.is_file():
        known = sorted(path.stem for path in SCENARIO_DIR.glob("*.py") if not path.stem.startswith("_"))
        raise ValueError(f"unknown scenario {name!r}; expected one of {known}")
    module_name = f"bullet_setimpact_scenarios.{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    for attribute in ("DEFAULTS", "build"):
        if not hasattr(module, attribute):
            raise ValueError(f"scenario script {path} defines no {attribute}")
    return module


def parameters(name: str, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The scenario's ``DEFAULTS`` updated with ``overrides``, each coerced to its default's type.

    Raises
    ------
    ValueError
        Naming an unknown parameter (and the known ones), a value of the wrong type, or a
        ``duration`` or ``time_step`` that is not positive.
    """
    defaults = dict(load(name).DEFAULTS)
    result = dict(defaults)
    for key, value in (overrides or {}).items():
        if key not in defaults:
            raise ValueError(f"scenario {name!r} has no parameter {key!r}; expected one of {sorted(defaults)}")
        result[key] = coerce(key, value, defaults[key])
    for key in POSITIVE_PARAMETERS & result.keys():
        require(result, key, result[key] > 0.0, "> 0 s")
    return result


def coerce(key: str, value: Any, default: Any) -> Any:
    """``value`` (often a string from the command line) converted to the type of ``default``."""
    kind = type(default)
    try:
        if kind is bool:
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                return lowered in ("true", "1", "yes")
            return bool(value)
        if kind is int and isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        converted = kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"parameter {key!r} must be a {kind.__name__} (like its default {default!r}), got {value!r}") from None
    if isinstance(converted, float) and not np.isfinite(converted):
        raise ValueError(f"parameter {key!r} must be finite, got {value!r}")
    return converted


def build(name: str, client: int, params: Mapping[str, Any] | None = None) -> Scenario:
    """Build scenario ``name`` in ``client`` with validated parameters."""
    return load(name).build(client, **parameters(name, params))


def make_law(spec: str | ImpactLaw | None, scenario: Scenario) -> ImpactLaw:
    """The law for a rollout: None or the name of the scenario's own law gives
    ``scenario.law``; anything else goes to :func:`~bullet_setimpact.laws.get_law`."""
    if spec is None or spec == scenario.law.name:
        return scenario.law
    return get_law(spec)


def run_standalone(name: str, rollouts: int = 4) -> None:
    """What ``python scenarios/<name>.py`` does: ``bullet-setimpact run <name>`` on a few rollouts."""
    from .cli import main

    raise SystemExit(main(["run", name, "--rollouts", str(rollouts), "--workers", "1"]))
