"""The size of the built component (``make component``) against the product's bound.

The product requires the component to stay within 60 KB raw, taken as 60,000 bytes (the bound
``benches/report.py`` judges BENCHMARKS.md's headline row by). The bound is not met yet, so its
test is an expected failure, and a strict one: the build that first meets it fails this suite
until the marker is removed, which turns the test into the guard against growing past it again.
Until then the ceiling below keeps the component from growing unnoticed: a change that grows it
must lower something else or raise the ceiling on purpose.
"""

from __future__ import annotations

import pytest
import tenure_component_host

BOUND = 60_000
# The size of the component when the ceiling was last set (bytes, raw).
CEILING = 66_479


def size() -> int:
    path = tenure_component_host.component_path()
    assert path.exists(), f"{path} is missing: run `make component` first"
    return path.stat().st_size


@pytest.mark.xfail(strict=True, reason="the 60,000-byte goal is not met yet (BENCHMARKS.md, Headline)")
def test_within_the_product_bound() -> None:
    assert size() <= BOUND, f"component is {size():,} bytes, above the {BOUND:,}-byte bound"


def test_not_above_the_ceiling() -> None:
    assert size() <= CEILING, f"component is {size():,} bytes, above its ceiling of {CEILING:,}"
