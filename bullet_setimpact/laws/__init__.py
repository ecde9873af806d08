"""Impact laws, one module each, all behind ``resolve(problem, v_minus, rng) -> ImpactResult``.

``LAWS`` maps registry names (the CLI's ``--law``) to classes, as ``scipy.integrate``'s
``METHODS`` does; :func:`get_law` also accepts a user's own :class:`ImpactLaw` subclass.
"""

from __future__ import annotations

from .anitescu_potra import AnitescuPotraImpact
from .base import ImpactLaw, ImpactResult, LawOutcome
from .plastic import PlasticImpact
from .propagative import PropagativeImpact
from .routh import OutcomeSet, RouthImpact
from .sequential import SequentialImpact

LAWS: dict[str, type[ImpactLaw]] = {
    RouthImpact.name: RouthImpact,
    AnitescuPotraImpact.name: AnitescuPotraImpact,
    SequentialImpact.name: SequentialImpact,
    PlasticImpact.name: PlasticImpact,
    PropagativeImpact.name: PropagativeImpact,
}

__all__ = [
    "LAWS",
    "AnitescuPotraImpact",
    "ImpactLaw",
    "ImpactResult",
    "LawOutcome",
    "OutcomeSet",
    "PlasticImpact",
    "PropagativeImpact",
    "RouthImpact",
    "SequentialImpact",
]
