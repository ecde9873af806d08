"""Resting-contact certificates: proofs, from bounds on link speeds and distances, that no
contact can arrive within a step, so a settled world skips the contact queries an impact needs."""
