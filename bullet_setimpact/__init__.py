"""bullet-setimpact: set-valued simultaneous frictional impacts (Halm & Posa) for PyBullet."""

from __future__ import annotations

from . import planar
from .data import data_path
from .errors import LCPError, SamplesDroppedWarning, SetImpactError, SetImpactWarning
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
)
from .problem import ImpactProblem

__version__ = "0.1.0"

__all__ = [
    "LAWS",
    "AnitescuPotraImpact",
    "ImpactLaw",
    "ImpactProblem",
    "ImpactResult",
    "LCPError",
    "OutcomeSet",
    "PlasticImpact",
    "PropagativeImpact",
    "RouthImpact",
    "SamplesDroppedWarning",
    "SequentialImpact",
    "SetImpactError",
    "SetImpactWarning",
    "__version__",
    "data_path",
    "hook",
    "install",
    "planar",
    "uninstall",
]
