"""Shared fixtures: the journal's examples, built once, a PyBullet client, and a registry of the laws under test."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pybullet as p
import pytest
from hypothesis import settings

import bullet_setimpact
from bullet_setimpact import AnitescuPotraImpact, RouthImpact, SamplesDroppedWarning, SequentialImpact, planar

# Hypothesis draws the same examples on every run and machine (a verdict never depends on the
# examples one run happened to draw); tests that want more set ``max_examples`` themselves.
settings.register_profile("reproducible", derandomize=True, print_blob=True)
settings.load_profile("reproducible")


@pytest.fixture(scope="session")
def examples() -> dict[str, planar.Example]:
    """Every planar example of journal Sec. 5.4, by name."""
    return {name: build() for name, build in planar.EXAMPLES.items()}


@pytest.fixture
def client() -> Iterator[int]:
    """A fresh ``p.DIRECT`` PyBullet client, disconnected afterwards."""
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


def outcome_set(example: planar.Example, samples: int | None = None, seed: int = 0) -> np.ndarray:
    """Algorithm 2 at the example's Table 4-8 settings (dropped samples are expected and silenced)."""
    law = RouthImpact(example.step, example.max_steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplesDroppedWarning)
        return law.outcome_set(example.problem, example.v_minus, samples or example.samples, rng=seed)


@pytest.fixture(scope="session")
def outcome_sets(examples: dict[str, planar.Example]) -> dict[str, np.ndarray]:
    """Outcome sets of the two-contact examples at the paper's sample counts (computed lazily)."""
    cache: dict[str, np.ndarray] = {}

    class Lazy(dict):
        def __missing__(self, name: str) -> np.ndarray:
            cache[name] = outcome_set(examples[name])
            self[name] = cache[name]
            return cache[name]

    return Lazy()


def contract_laws(contacts: int) -> list:
    """One instance of every law in the package, for contract tests over random problems."""
    return [RouthImpact(step=0.5, max_steps=20), AnitescuPotraImpact(), SequentialImpact(list(range(contacts)))]


def pytest_report_header() -> str:
    """Which ``bullet_setimpact`` the run tests: the clone's from the clone, an installed one from elsewhere."""
    return f"bullet_setimpact under test: {Path(bullet_setimpact.__file__).parent}"
