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


def localize(gap_after: Callable[[float], float], duration: float, target: float, speed: float, accuracy: float) -> float:
    """Time ``tau`` in ``(0, duration]`` at which ``gap_after(tau)`` reaches ``target``.

    ``gap_after(tau)`` simulates ``tau`` seconds from the interval's start and returns the
    smallest gap of the crossing pairs.  The root is bracketed by ``gap_after(0) > target``;
    when the gap at the interval's end is still above ``target`` (the pair ended within
    the tolerance band) the event is at the end.  ``xtol`` asks for the gap to land within
    ``accuracy / 2`` of ``target`` at the approach ``speed``.
    """
    end_gap = gap_after(duration)
    if end_gap >= target:
        return duration
    xtol = min(duration / 64.0, max(1e-12, 0.5 * accuracy / max(speed, 1e-9)))
    return float(brentq(lambda tau: gap_after(tau) - target, 0.0, duration, xtol=xtol, rtol=4 * np.finfo(float).eps))
