"""A results directory that a Monte Carlo run writes rollout by rollout and resumes from.

``DIR/run.json`` holds the run's configuration; each finished rollout is written at once,
atomically, to ``DIR/rollout_<index>.npz``.  Starting the same run again reuses the files on
disk (a corrupted one is deleted and redone), so a run killed at any point loses at most the
rollouts in flight.
"""

from __future__ import annotations

import json
import logging
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .records import RolloutRecord, atomic_savez, atomic_write_text

logger = logging.getLogger("bullet_setimpact")


class RolloutStore:
    """A results directory: ``run.json`` plus one ``rollout_<index>.npz`` per finished rollout."""

    def __init__(self, directory: str | Path, config: dict[str, Any], resume: bool) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise ValueError(f"out={str(directory)!r} exists and is not a directory")
        manifest = self.directory / "run.json"
        if manifest.exists():
            try:
                stored = json.loads(manifest.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise ValueError(
                    f"results directory {str(directory)!r} has an unreadable run.json ({exc}); move it away or pick another out"
                ) from None
            if resume:
                for key in ("scenario", "params", "law", "seed", "duration", "version"):
                    if stored.get(key) != config.get(key):
                        raise ValueError(
                            f"results directory {str(directory)!r} holds a different run ({key}: {stored.get(key)!r} there, "
                            f"{config.get(key)!r} now); use another out, or start over with resume=False (--no-resume)"
                        )
            else:
                for stale in self.directory.glob("rollout_*.npz"):
                    stale.unlink()
        for partial in self.directory.glob(".*.partial"):
            partial.unlink()
        atomic_write_text(manifest, json.dumps(config, indent=2, default=str))

    def path(self, index: int) -> Path:
        return self.directory / f"rollout_{index:06d}.npz"

    def load(self, index: int) -> RolloutRecord | None:
        """The stored record of rollout ``index``, or None if absent or corrupted (then it is deleted)."""
        path = self.path(index)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                record = RolloutRecord.from_arrays({key: data[key] for key in data.files})
            if record.index != index:
                raise ValueError(f"holds rollout {record.index}")
            return record
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError, EOFError) as exc:
            logger.warning("rollout file %s is corrupted (%s); it will be run again", path, exc)
            path.unlink(missing_ok=True)
            return None

    def save(self, record: RolloutRecord) -> None:
        atomic_savez(self.path(record.index), record.to_arrays())
