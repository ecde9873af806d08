"""Impact-event detection and time localization, as ``scipy.integrate.solve_ivp`` does events.

An impact event is a gap function crossing into contact: ``g(t) = min gap of the
candidate link pairs - target``, with ``g(0) > 0`` at the start of the interval.  Like
``solve_ivp``'s ``find_active_events``/``solve_event_equation`` pair, detection is a mask
over the pairs and localization a bracketed root find (``brentq``) on ``g``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq


def localize(
    gap_after: Callable[[float], float], duration: float, target: float, start_gap: float, end_gap: float, accuracy: float
) -> float:
    """Time ``tau`` in ``(0, duration]`` at which ``gap_after(tau)`` reaches ``target``.

    ``gap_after(tau)`` simulates ``tau`` seconds from the interval's start and returns the
    smallest gap of the crossing pairs; ``start_gap > target`` and ``end_gap`` are its
    values at 0 and ``duration``, already known to the caller (so the root finder does not
    pay two more simulations for them).  When ``end_gap`` is still above ``target`` (the
    pair ended within the tolerance band) the event is at the end.  ``xtol`` asks for the
    gap to land within ``accuracy / 2`` of ``target`` at the mean approach speed.
    """
    if end_gap >= target:
        return duration
    known = {0.0: start_gap, duration: end_gap}
    speed = max(start_gap - end_gap, 0.0) / duration
    xtol = min(duration / 64.0, max(1e-12, 0.5 * accuracy / max(speed, 1e-9)))

    def distance_to_target(tau: float) -> float:
        return (known[tau] if tau in known else gap_after(tau)) - target

    return float(brentq(distance_to_target, 0.0, duration, xtol=xtol, rtol=4 * np.finfo(float).eps))
