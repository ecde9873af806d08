"""Exception and warning classes of bullet-setimpact (one hierarchy, as in gymnasium's ``error``),
and :func:`warn`, which raises the warnings at the user's line."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from types import FrameType

#: This package's directory: frames of its files are not the user's.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` attributed to the caller of the outermost frame of this package on the
    stack, past ``contextlib``'s (a ``with hook(...)`` line): the user's line, also when the
    warning arises in a hooked ``stepSimulation`` or a wrapped PyBullet call, or under a library
    the package calls back from (SciPy's root find)."""
    frames = []
    frame: FrameType | None = sys._getframe(0)
    while frame is not None:
        frames.append(frame.f_code.co_filename)
        frame = frame.f_back
    level = max(index for index, name in enumerate(frames) if name.startswith(_PACKAGE)) + 1
    while level < len(frames) and frames[level] == contextlib.__file__:
        level += 1
    warnings.warn(message, category, stacklevel=level + 1)


class SetImpactError(Exception):
    """Base class of every error this package raises on purpose."""


class LCPError(SetImpactError, RuntimeError):
    """An LCP could not be solved.

    :func:`~bullet_setimpact.core.lcp_solve.solve_lcp` raises this class itself only when the LCP has
    no solution (certified: no ``z >= 0`` with ``Wz + w >= 0``, or the mixed-integer
    formulation over valid bounds is infeasible); its subclasses name the other failures.
    """


class LemkeError(LCPError):
    """Lemke's path failed (ray termination, pivot cap, singular basis, residual above tolerance).

    Not a verdict on the LCP: :func:`~bullet_setimpact.core.lcp_solve.solve_lcp` catches it and falls back.
    """


class LCPSolverError(LCPError):
    """The complete solver itself failed (time or size limit, unrefinable solution, no bounds to certify)."""


class ImpactFailure(SetImpactError):  # noqa: N818  (a failed impact, not a program error; the name reads as the event)
    """An impact law's outcome failed the checks (or the law raised); nothing was written back."""


class LawContractError(SetImpactError, AssertionError):
    """An impact law broke the contract :func:`bullet_setimpact.testing.check_law` checks."""


class SetImpactWarning(UserWarning):
    """Base class of the package's warnings (filter them all with this category)."""


class SamplesDroppedWarning(SetImpactWarning):
    """Outcome-set samples were dropped because they had not terminated (journal Alg. 2, line 8)."""


class UnfinishedImpactWarning(SetImpactWarning):
    """An impact law's ``resolve`` returned ``terminated=False`` (its ``message`` says why):
    ``v_plus`` may still collide.  ``resolve(..., unfinished="raise")`` raises
    :class:`ImpactFailure` instead; :class:`~bullet_setimpact.laws.checked.CheckedLaw` rejects
    such outcomes."""


class ManifoldCompletionWarning(SetImpactWarning):
    """A contact set against a ``GEOM_PLANE`` was completed from the shape's vertices by the plugin."""


class RestitutionIgnoredWarning(SetImpactWarning):
    """Bodies with a positive combined restitution struck under a law without restitution:
    the law treated the impact as inelastic, where Bullet's own response would bounce."""


class ConstraintIgnoredWarning(SetImpactWarning):
    """A user constraint of a kind impacts do not model (gear, prismatic): Bullet enforces it in
    its steps, the impact law does not see it."""


class EventCapWarning(SetImpactWarning):
    """More impact events than ``max_events_per_step`` in one step; Bullet finished the step."""


class UnstableDampingWarning(SetImpactWarning):
    """A body's joint damping, which Bullet integrates explicitly, grows a velocity mode at the
    world's time step (:mod:`bullet_setimpact.bullet.damping`)."""


class JointAxisWarning(SetImpactWarning):
    """A joint's axis is not a unit vector (MJCF files allow it): Bullet turns the joint about the
    unit axis but takes its velocity along the axis as given, so the link velocities it reports
    disagree with the joint's motion; impacts use the unit axis."""


class UnknownMotorWarning(SetImpactWarning):
    """A joint motor the simulator does not hold (set before it followed the client, at another
    time step, or by a command it does not model) was active before a step split at an impact:
    Bullet applies it in every part with the whole step's impulse limit, up to twice its force
    (:mod:`bullet_setimpact.bullet.motors`)."""
