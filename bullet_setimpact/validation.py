"""Argument checks shared by the public API: each returns the value or raises ``ValueError`` naming it."""

from __future__ import annotations

import numpy as np


def positive_number(name: str, value: object) -> float:
    """Return ``value`` as a positive finite float or raise ``ValueError`` naming it (a
    string is refused, even one that reads as a number)."""
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError(value)
        number = float(value)  # type: ignore[arg-type]  # validated right below
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not np.isfinite(number) or number <= 0.0:
        raise ValueError(f"{name} must be a positive number, got {value!r} (finite and > 0 expected)")
    return number


def positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int >= 1 (not a bool) or raise ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)
