"""Headless rendering of one rollout with PyBullet's TinyRenderer (``getCameraImage``).

Frames go to an animated GIF (Pillow, which matplotlib already needs) or, for a ``.png``
path, to one image strip of evenly spaced frames.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from .files import atomic_write
from .laws import ImpactLaw
from .scenario import make
from .validation import positive_int


def render(
    scenario: str,
    out: str | Path,
    seed: int = 0,
    law: str | ImpactLaw | None = None,
    params: Mapping[str, Any] | None = None,
    duration: float | None = None,
    frames: int = 60,
    size: tuple[int, int] = (320, 240),
) -> int:
    """Simulate one rollout of ``scenario`` and write ``frames`` images of it to ``out``.

    The camera looks at the scenario's first body from the side (the planar examples move
    in the x-z plane).  Returns the number of impact events.

    Raises
    ------
    ValueError
        For an output that is neither ``.gif`` nor ``.png``, or bad scenario parameters.
    """
    out = Path(out)
    if out.suffix.lower() not in (".gif", ".png"):
        raise ValueError(f"out must end in .gif or .png, got {str(out)!r}")
    frames = positive_int("frames", frames)
    client = p.connect(p.DIRECT)
    try:
        seed_sequence = np.random.SeedSequence(seed).spawn(1)[0]  # rollout 0 of a run with this seed
        rollout = make(scenario, client, law=law, seed=seed_sequence, params=params, duration=duration)
        world, simulator, dt, steps = rollout.scenario, rollout.simulator, rollout.time_step, rollout.steps
        capture = set(np.linspace(0, steps - 1, min(frames, steps)).round().astype(int))
        target = np.array(p.getBasePositionAndOrientation(next(iter(world.bodies.values())), physicsClientId=client)[0])
        images = []
        for step in range(steps):
            simulator.step()
            if step in capture:
                images.append(_camera_image(client, target, size))
    finally:
        p.disconnect(client)
    _write_frames(out, images, dt * steps / max(len(images), 1))
    return len(simulator.events)


def _camera_image(client: int, target: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    width, height = size
    view = p.computeViewMatrixFromYawPitchRoll(target.tolist(), 4.0, 0.0, -15.0, 0.0, 2, physicsClientId=client)
    projection = p.computeProjectionMatrixFOV(50.0, width / height, 0.05, 50.0, physicsClientId=client)
    image = p.getCameraImage(width, height, view, projection, renderer=p.ER_TINY_RENDERER, physicsClientId=client)[2]
    return np.asarray(image, dtype=np.uint8).reshape(height, width, 4)[:, :, :3]


def _write_frames(out: Path, images: list[np.ndarray], seconds_per_frame: float) -> None:
    from PIL import Image

    if out.suffix.lower() == ".gif":
        pictures = [Image.fromarray(image) for image in images]
        duration = max(20, 10 * round(100 * seconds_per_frame))  # GIF stores centiseconds
        atomic_write(
            out, lambda stream: pictures[0].save(stream, "GIF", save_all=True, append_images=pictures[1:], duration=duration, loop=0)
        )
    else:
        shown = images[:: max(1, len(images) // 8)][:8]
        atomic_write(out, lambda stream: Image.fromarray(np.concatenate(shown, axis=1)).save(stream, "PNG"))
