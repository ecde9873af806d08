"""Headless rendering of one rollout with PyBullet's TinyRenderer (``getCameraImage``).

The rollout is simulated once, keeping the world state (``saveState``) at every frame to
show: one frame per fixed interval of simulated time, and every Bullet step during
:data:`EVENT_WINDOW` from each impact on (slow motion).  The camera then frames the bounding box
of the moving bodies over the whole rollout (planar examples included: their fixed slider
bases are left out), looking along +y at the x-z plane.  Each frame carries the simulated
time, the slow-motion factor, and during an impact's window its time, outcome class and
contact points.  Frames go to an animated GIF (Pillow, which matplotlib already needs) or,
for a ``.png`` path, to a 2 x 4 grid of frames spread over the rollout.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from .._files import atomic_write
from ..laws import ImpactLaw
from ..montecarlo.records import event_record
from ..montecarlo.scenario import Rollout, make
from ..validation import positive_int

#: Simulated seconds from an impact on rendered at every Bullet step (slow motion).
EVENT_WINDOW = 0.03
#: Vertical field of view of the camera [deg] and the margin around the framed box.
FIELD_OF_VIEW = 50.0
MARGIN = 1.6
#: Smallest framed extent [m] (a body that hardly moves still gets some context).
MIN_EXTENT = 0.5
#: Camera pitch [deg] (looking slightly down).
PITCH = -12.0


@dataclass(frozen=True)
class _Frame:
    """A kept world state: its ``state`` id, simulated ``time``, slow-motion ``factor`` and the
    impact shown (text and world contact points), if any."""

    state: int
    time: float
    factor: int
    caption: str
    points: np.ndarray


def checked_output(out: str | Path, name: str = "out") -> Path:
    """``out`` as a path, refused (ValueError, naming it ``name``: the CLI's ``--out``) unless it
    ends in ``.gif`` or ``.png``."""
    out = Path(out)
    if out.suffix.lower() not in (".gif", ".png"):
        raise ValueError(f"{name} must end in .gif or .png, got {str(out)!r}")
    return out


def render(
    scenario: str | Path,
    out: str | Path,
    seed: int = 0,
    law: str | ImpactLaw | None = None,
    params: Mapping[str, Any] | None = None,
    duration: float | None = None,
    frames: int = 60,
    size: tuple[int, int] = (640, 480),
) -> int:
    """Simulate one rollout of ``scenario`` (the rollout 0 of a run with ``seed``) and write it
    to ``out``: ``frames`` frames at a fixed interval of simulated time plus slow motion
    around each impact.  Returns the number of impact events.

    Raises
    ------
    ValueError
        For an output that is neither ``.gif`` nor ``.png``, a bad size, or bad scenario parameters.
    """
    out = checked_output(out)
    frames = positive_int("frames", frames)
    width, height = (positive_int("width", size[0]), positive_int("height", size[1]))
    client = p.connect(p.DIRECT)
    try:
        seed_sequence = np.random.SeedSequence(seed).spawn(1)[0]  # rollout 0 of a run with this seed
        rollout = make(scenario, client, law=law, seed=seed_sequence, params=params, duration=duration)
        kept, low, high = _simulate(rollout, frames)
        camera = _camera(client, low, high, width / height)
        images = [_image(client, frame, camera, (width, height)) for frame in kept]
        interval = rollout.time_step * max(1, rollout.steps // frames)
        events = len(rollout.simulator.events)
    finally:
        p.disconnect(client)
    _write_frames(out, images, interval)
    return events


def _simulate(rollout: Rollout, frames: int) -> tuple[list[_Frame], np.ndarray, np.ndarray]:
    """Step the rollout, keeping the frames to show, and the box the moving bodies swept."""
    scenario, simulator, client = rollout.scenario, rollout.simulator, rollout.scenario.client
    every = max(1, rollout.steps // frames)
    window = max(1, round(EVENT_WINDOW / rollout.time_step))
    shapes = [
        (body, link)
        for body in scenario.bodies.values()
        if body not in simulator.world.static_bodies
        for link in range(-1, p.getNumJoints(body, physicsClientId=client))
        if body in simulator.finder.opaque or p.getCollisionShapeData(body, link, physicsClientId=client)  # never on MJCF bodies
    ]
    low, high = np.full(3, np.inf), np.full(3, -np.inf)
    kept: list[_Frame] = []
    caption, points, last_event = "", np.zeros((0, 3)), -(10**9)
    for step in range(rollout.steps):
        for event in simulator.step():
            caption = f"impact at t = {event.time:.3f} s: {event_record(event, scenario).outcome}"
            points = np.array([0.5 * (contact.position_a + contact.position_b) for contact in event.contacts])
            last_event = step
        slow = step - last_event <= window
        if not slow:
            caption, points = "", np.zeros((0, 3))
        if step % every == 0 or slow:
            for body, link in shapes:
                box = np.array(p.getAABB(body, link, physicsClientId=client))
                low, high = np.minimum(low, box[0]), np.maximum(high, box[1])
            kept.append(_Frame(p.saveState(physicsClientId=client), simulator.time, every if slow else 1, caption, points))
    if not np.all(np.isfinite(low)):
        low, high = np.zeros(3), np.zeros(3)
    return kept, low, high


@dataclass(frozen=True)
class _Camera:
    view: list[float]
    projection: list[float]


def _camera(client: int, low: np.ndarray, high: np.ndarray, aspect: float) -> _Camera:
    """A camera looking along +y at the box ``[low, high]``, far enough that it fits with a margin."""
    centre = 0.5 * (low + high)
    extent = np.maximum(high - low, MIN_EXTENT) * MARGIN
    half_angle = math.radians(FIELD_OF_VIEW) / 2.0
    distance = max(extent[2] / (2.0 * math.tan(half_angle)), extent[0] / (2.0 * math.tan(half_angle) * aspect)) + 0.5 * extent[1]
    view = p.computeViewMatrixFromYawPitchRoll(centre.tolist(), distance, 0.0, PITCH, 0.0, 2, physicsClientId=client)
    projection = p.computeProjectionMatrixFOV(FIELD_OF_VIEW, aspect, 0.02, 10.0 * distance + 10.0, physicsClientId=client)
    return _Camera(list(view), list(projection))


def _pixels(camera: _Camera, points: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """World ``points`` (k, 3) to pixel coordinates (k, 2) (OpenGL column-major matrices)."""
    view = np.array(camera.view).reshape(4, 4).T
    projection = np.array(camera.projection).reshape(4, 4).T
    clip = (projection @ view @ np.column_stack([points, np.ones(len(points))]).T).T
    ndc = clip[:, :2] / clip[:, 3:4]
    return np.column_stack([(ndc[:, 0] + 1.0) / 2.0 * size[0], (1.0 - ndc[:, 1]) / 2.0 * size[1]])


def _image(client: int, frame: _Frame, camera: _Camera, size: tuple[int, int]) -> np.ndarray:
    """The frame's world state rendered, with time, slow-motion and impact overlays."""
    from PIL import Image, ImageDraw, ImageFont

    p.restoreState(frame.state, physicsClientId=client)
    width, height = size
    raw = p.getCameraImage(width, height, camera.view, camera.projection, renderer=p.ER_TINY_RENDERER, physicsClientId=client)[2]
    picture = Image.fromarray(np.asarray(raw, dtype=np.uint8).reshape(height, width, 4)[:, :, :3])
    draw = ImageDraw.Draw(picture)
    text_size = max(10, height // 32)
    font = ImageFont.load_default(size=text_size)
    bar = text_size + 6
    header = f"t = {frame.time:.3f} s" + (f"   slow motion x{frame.factor}" if frame.factor > 1 else "")
    draw.rectangle((0, 0, width, bar), fill=(255, 255, 255))
    draw.text((4, 3), header, fill=(0, 0, 0), font=font)
    if frame.caption:
        draw.rectangle((0, height - bar, width, height), fill=(255, 255, 255))
        draw.text((4, height - bar + 3), frame.caption, fill=(200, 0, 0), font=font)
        for x, y in _pixels(camera, frame.points, size):
            draw.ellipse((x - 5, y - 5, x + 5, y + 5), outline=(220, 0, 0), width=2)
    return np.asarray(picture)


def _write_frames(out: Path, images: list[np.ndarray], seconds_per_frame: float) -> None:
    from PIL import Image

    if out.suffix.lower() == ".gif":
        pictures = [Image.fromarray(image) for image in images]
        duration = max(20, 10 * round(100 * seconds_per_frame))  # GIF stores centiseconds
        atomic_write(
            out, lambda stream: pictures[0].save(stream, "GIF", save_all=True, append_images=pictures[1:], duration=duration, loop=0)
        )
    else:
        shown = [images[i] for i in np.linspace(0, len(images) - 1, 8).round().astype(int)]
        grid = np.concatenate([np.concatenate(shown[:4], axis=1), np.concatenate(shown[4:], axis=1)], axis=0)
        atomic_write(out, lambda stream: Image.fromarray(grid).save(stream, "PNG"))
