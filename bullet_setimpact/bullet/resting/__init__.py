"""Resting-contact certificates: proofs, from bounds on link speeds and distances, that no
contact can arrive or leave within a step, so a resting world skips the contact evaluation.

- :mod:`.certificates`: the invariants, their glossary, and :class:`RestingContact`, which
  opens, checks and drops them for a simulator (``ImpactSimulator(resting_budget=False)``
  turns them off: the reference path);
- :mod:`.budget`: the ledger they are checked against (slack, accounts, motion bounds);
- :mod:`.corner_watch`: a cheap every-step check of box corners creeping over a static box.
"""
