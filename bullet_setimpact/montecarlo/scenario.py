"""Scenarios: named PyBullet worlds to simulate, one script each in ``scenarios/``.

A scenario script (``scenarios/<name>.py``, or any file given by path) has a module
docstring whose first line is its one-line description and which says what it measures, a
``DEFAULTS`` dict of parameters, and ``build(client, **params) -> Scenario``, called with
parameters already validated (:func:`parameters`) and gravity and the time step already set
(:func:`setup_physics`).  It runs standalone (``python scenarios/<name>.py [run options]``)
through :func:`bullet_setimpact.cli.run_script`.

This module finds, loads and validates scenarios (:func:`available`, :func:`load`,
:func:`parameters`), builds them (:func:`build`, and :func:`make` for a ready
:class:`Rollout`, like gymnasium's ``make``), turns law specifications into laws
(:func:`make_law`), and holds what the scripts share: :func:`describe`, :func:`require`,
:func:`planar_scenario`, :func:`setup_robot_drop` and :func:`raise_body` (contact labels
are in :mod:`bullet_setimpact.montecarlo.labels`).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pybullet as p
import pybullet_data

from ..bullet import following
from ..bullet.contacts import Contact
from ..bullet.examples import ExampleWorld, load_static
from ..bullet.inventory import movable_joints
from ..bullet.simulator import ImpactSimulator
from ..data import data_path
from ..laws import ImpactLaw, RouthImpact, get_law
from .labels import in_link_frame

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

    def __repr__(self) -> str:
        return f"Scenario(name={self.name!r}, client={self.client}, bodies={self.bodies}, duration={self.duration}, law={self.law!r})"

    def _side(self, contact: Contact) -> tuple[int, int, np.ndarray, int]:
        """``(body, link, world point, other body)`` of the scenario body's side of ``contact``."""
        body = contact.body_b if contact.body_b in self.bodies.values() else contact.body_a
        link, point, other = contact.side(body)
        return body, link, point, other

    def contact_label(self, contact: Contact) -> str:
        """The name of a contact (see ``label_contact``)."""
        if self.label_contact is not None:
            return self.label_contact(contact)
        body, link, _, _ = self._side(contact)
        names = {value: key for key, value in self.bodies.items()}
        return f"{names.get(body, body)}:{link}"

    def contact_labels(self, contacts: Sequence[Contact]) -> tuple[str, ...]:
        """:meth:`contact_label` of each contact, made distinct within the event where the
        geometry allows: contacts sharing a label at different corners of their link get the
        octant of their point in the link frame, e.g. ``slab[-x+y-z]`` (two points of one
        corner keep the shared label)."""
        labels = [self.contact_label(contact) for contact in contacts]
        for label in {label for label in labels if labels.count(label) > 1}:
            group = [i for i, other in enumerate(labels) if other == label]
            octants = [self._octant(contacts[i]) for i in group]
            if len(set(octants)) == len(group):
                for i, octant in zip(group, octants, strict=True):
                    labels[i] = f"{label}[{octant}]"
        return tuple(labels)

    def _octant(self, contact: Contact) -> str:
        """``"-x+y-z"``: the signs of the contact point in its link's frame."""
        body, link, point, _ = self._side(contact)
        local = in_link_frame(self.client, body, link, point)
        return "".join(f"{'-' if value < 0.0 else '+'}{axis}" for value, axis in zip(local, "xyz", strict=True))

    def contact_definition(self, contact: Contact) -> str:
        """What a contact label stands for: body, link, point in the link frame [m], other body."""
        body, link, point, other = self._side(contact)
        names = {value: key for key, value in self.bodies.items()} | {
            value: key for key, value in self.extra.items() if isinstance(value, int) and not isinstance(value, bool)
        }
        link_name = p.getJointInfo(body, link, physicsClientId=self.client)[12].decode() if link >= 0 else "base"
        x, y, z = in_link_frame(self.client, body, link, point)
        return f"{names.get(body, body)} {link_name} at ({x:+.2f}, {y:+.2f}, {z:+.2f}) m in the link frame, on {names.get(other, other)}"

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
            joints = list(movable_joints(self.client, body))
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
    """Gravity ``-GRAVITY`` along z and Bullet's fixed time step [s] without substeps: the
    one place a scenario's world gets them (:func:`build` calls it before the script)."""
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=time_step, numSubSteps=0, physicsClientId=client)


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
    ``position_gain``, ``velocity_gain`` and ``torque_scale``, adds ``pybullet_data``'s search
    path and loads the box ground, whose id it returns."""
    for key in ("position_gain", "velocity_gain", "torque_scale"):
        require(params, key, params[key] > 0.0, "> 0")
    require(params, "height", params["height"] >= 0.0, ">= 0 m")
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    return load_static(client)


def require(params: Mapping[str, Any], key: str, valid: bool, expected: str) -> None:
    """``ValueError`` naming parameter ``key``, its value and ``expected`` unless ``valid``."""
    if not valid:
        raise ValueError(f"parameter {key!r} must be {expected}, got {params[key]!r}")


def elastic_ground(client: int, params: Mapping[str, Any]) -> int:
    """The box ground with restitution ``params["ground_restitution"]`` (checked to be in [0, 1]),
    set with ``changeDynamics``: Bullet combines it with the other link's by their product."""
    require(params, "ground_restitution", 0.0 <= params["ground_restitution"] <= 1.0, "in [0, 1]")
    ground = load_static(client)
    p.changeDynamics(ground, -1, restitution=params["ground_restitution"], physicsClientId=client)
    return ground


def script_paths() -> dict[str, Path]:
    """The shipped scenario scripts by name: the one place scenarios are discovered."""
    return {path.stem: path for path in sorted(SCENARIO_DIR.glob("*.py")) if not path.stem.startswith("_")}


def available() -> dict[str, str]:
    """Scenario names and their one-line descriptions (read with ``ast``; nothing is run)."""
    return {name: docstring(path).splitlines()[0] if docstring(path) else "" for name, path in script_paths().items()}


def docstring(path: Path) -> str:
    """The module docstring of the script at ``path``, stripped (``""`` if none), without running it."""
    return (ast.get_docstring(ast.parse(path.read_text(), filename=str(path))) or "").strip()


def parameter_help(name: str | Path) -> list[tuple[str, Any, str]]:
    """``(parameter, default, comment)`` for each entry of the script's ``DEFAULTS``: the
    comment on the entry's line (meaning and unit), or ``""``.  Read from the source; the
    defaults come from the loaded script."""
    path = script_path(name)
    source = path.read_text()
    lines = source.splitlines()
    comments: dict[str, str] = {}
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or not isinstance(node.value, ast.Dict):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(target, ast.Name) and target.id == "DEFAULTS" for target in targets):
            for key in node.value.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    line = lines[key.lineno - 1]
                    comments[key.value] = line.split("#", 1)[1].strip() if "#" in line else ""
    return [(key, value, comments.get(key, "")) for key, value in load(name).DEFAULTS.items()]


def script_path(name: str | Path) -> Path:
    """The script of scenario ``name``: a shipped name, or the path of a user's ``.py`` file.

    Raises
    ------
    ValueError
        Naming ``name`` and the shipped scenarios if it is neither.
    """
    text = str(name)
    if text.endswith(".py"):
        path = Path(text).expanduser().resolve()
        if not path.is_file():
            raise ValueError(f"scenario script {text!r} does not exist")
        return path
    shipped = script_paths()
    if text not in shipped:
        raise ValueError(f"unknown scenario {text!r}; expected one of {sorted(shipped)} or the path of a .py scenario script")
    return shipped[text]


def load(name: str | Path) -> ModuleType:
    """Import scenario ``name``'s script (a shipped name or a ``.py`` path); ``ValueError``
    if there is none or it lacks ``DEFAULTS`` or ``build``."""
    path = script_path(name)
    stem = path.stem if path.parent == SCENARIO_DIR.resolve() else re.sub(r"\W", "_", str(path))
    module_name = f"bullet_setimpact_scenarios.{stem}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import scenario script {str(path)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    for attribute in ("DEFAULTS", "build"):
        if not hasattr(module, attribute):
            del sys.modules[module_name]
            raise ValueError(f"scenario script {str(path)!r} defines no {attribute}")
    return module


def parameters(name: str | Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
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
            raise ValueError(f"scenario {str(name)!r} has no parameter {key!r}; expected one of {sorted(defaults)}")
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


def build(name: str | Path, client: int, params: Mapping[str, Any] | None = None) -> Scenario:
    """Build scenario ``name`` in ``client`` (an empty world): validates the parameters once,
    sets gravity and the time step (:func:`setup_physics`), then runs the script's ``build``."""
    resolved = parameters(name, params)
    setup_physics(client, resolved["time_step"])
    return load(name).build(client, **resolved)


@dataclass(frozen=True)
class Rollout:
    """A scenario built and ready to simulate: what :func:`make` returns.

    Attributes
    ----------
    scenario : Scenario
    simulator : ImpactSimulator
        Bound to the scenario's client, under the rollout's law and seed.
    time_step : float
        Bullet's fixed time step [s].
    steps : int
        Steps that simulate the rollout's duration.
    """

    scenario: Scenario
    simulator: ImpactSimulator
    time_step: float
    steps: int


def make(
    name: str | Path,
    client: int,
    *,
    law: str | ImpactLaw | None = None,
    seed: np.random.SeedSequence | int | None = None,
    params: Mapping[str, Any] | None = None,
    duration: float | None = None,
    on_failure: str = "raise",
) -> Rollout:
    """Build scenario ``name`` (a shipped name or a script path) in ``client`` (an empty
    world) with its simulator under ``law`` (:func:`make_law`) and ``seed``; ``duration``
    [s] overrides the scenario's; ``on_failure`` is the simulator's ("raise" or "fallback").
    The world is built while the package follows the client, so its bodies' motors, those of
    their load and those the script commands, are known to the simulator (:mod:`bullet_setimpact.bullet.motors`)."""
    following.follow()
    try:
        scenario = build(name, client, params)
        simulator = ImpactSimulator(make_law(law, scenario), client, seed=seed, on_failure=on_failure)
    finally:
        following.unfollow()
    time_step = float(p.getPhysicsEngineParameters(physicsClientId=client)["fixedTimeStep"])
    steps = max(1, round((duration if duration is not None else scenario.duration) / time_step))
    return Rollout(scenario, simulator, time_step, steps)


def make_law(spec: str | ImpactLaw | None, scenario: Scenario) -> ImpactLaw:
    """The law for a rollout: None or the name of the scenario's own law gives
    ``scenario.law``; anything else goes to :func:`~bullet_setimpact.laws.get_law`."""
    if spec is None or spec == scenario.law.name:
        return scenario.law
    return get_law(spec)
