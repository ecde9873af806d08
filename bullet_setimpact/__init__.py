"""bullet-setimpact: set-valued simultaneous frictional impacts (Halm & Posa) for PyBullet."""

from __future__ import annotations

from . import testing
from .analysis import planar
from .bullet.simulator import ImpactEvent, ImpactSimulator
from .core.problem import ImpactProblem
from .data import data_path
from .errors import (
    EventCapWarning,
    ImpactFailure,
    LawContractError,
    LCPError,
    ManifoldCompletionWarning,
    RestitutionIgnoredWarning,
    SamplesDroppedWarning,
    SetImpactError,
    SetImpactWarning,
    UnstableDampingWarning,
)
from .hooks import hook, install, uninstall
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

__version__ = "0.1.0"

__all__ = [
    "LAWS",
    "AnitescuPotraImpact",
    "EventCapWarning",
    "ImpactEvent",
    "ImpactFailure",
    "ImpactLaw",
    "ImpactProblem",
    "ImpactResult",
    "ImpactSimulator",
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
