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


def get_law(spec: str | ImpactLaw | type[ImpactLaw]) -> ImpactLaw:
    """The law ``spec`` names: a ``LAWS`` key or an :class:`ImpactLaw` subclass gives its
    :meth:`~ImpactLaw.simulation_default`; an :class:`ImpactLaw` instance is returned as is.

    Raises
    ------
    ValueError
        Naming an unknown law and the known ones.
    """
    if isinstance(spec, ImpactLaw):
        return spec
    if isinstance(spec, type) and issubclass(spec, ImpactLaw):
        return spec.simulation_default()
    if isinstance(spec, str) and spec in LAWS:
        return LAWS[spec].simulation_default()
    raise ValueError(f"unknown law {spec!r}; expected one of {sorted(LAWS)}, an ImpactLaw or an ImpactLaw subclass")


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
    "get_law",
]
