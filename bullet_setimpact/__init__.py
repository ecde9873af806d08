"""bullet-setimpact: set-valued simultaneous frictional impacts (Halm & Posa) for PyBullet.

The impact problem, the laws and the analysis import no PyBullet: ``import bullet_setimpact``
loads the PyBullet adapter (``ImpactSimulator``, ``ImpactEvent``, ``hook``, ``install``,
``uninstall``) only when one of those names is first used, so an outcome set can be computed
where PyBullet is not installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import testing
from .analysis import planar
from .core.problem import ImpactProblem
from .data import data_path
from .errors import (
    ConstraintIgnoredWarning,
    EventCapWarning,
    ImpactFailure,
    JointAxisWarning,
    LawContractError,
    LCPError,
    ManifoldCompletionWarning,
    RestitutionIgnoredWarning,
    SamplesDroppedWarning,
    SetImpactError,
    SetImpactWarning,
    UnknownMotorWarning,
    UnstableDampingWarning,
)
from .laws import (
    LAWS,
    AnitescuPotraImpact,
    ImpactLaw,
    ImpactResult,
    OutcomeSet,
    PlasticImpact,
    PropagativeImpact,
    RouthImpact,
    SequentialImpact,
    get_law,
)

if TYPE_CHECKING:
    from .bullet.simulator import ImpactEvent, ImpactSimulator
    from .hooks import hook, install, uninstall

#: The public names that need PyBullet, and the module that defines each.
_ADAPTER = {
    "ImpactEvent": ".bullet.simulator",
    "ImpactSimulator": ".bullet.simulator",
    "hook": ".hooks",
    "install": ".hooks",
    "uninstall": ".hooks",
}


def __getattr__(name: str) -> Any:
    """Import the PyBullet adapter's public names on first use (PEP 562)."""
    module = _ADAPTER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_ADAPTER})


__version__ = "0.1.0"

__all__ = [
    "LAWS",
    "AnitescuPotraImpact",
    "ConstraintIgnoredWarning",
    "EventCapWarning",
    "ImpactEvent",
    "ImpactFailure",
    "ImpactLaw",
    "ImpactProblem",
    "ImpactResult",
    "ImpactSimulator",
    "JointAxisWarning",
    "LCPError",
    "LawContractError",
    "ManifoldCompletionWarning",
    "OutcomeSet",
    "PlasticImpact",
    "PropagativeImpact",
    "RestitutionIgnoredWarning",
    "RouthImpact",
    "SamplesDroppedWarning",
    "SequentialImpact",
    "SetImpactError",
    "SetImpactWarning",
    "UnknownMotorWarning",
    "UnstableDampingWarning",
    "__version__",
    "data_path",
    "get_law",
    "hook",
    "install",
    "planar",
    "testing",
    "uninstall",
]
