"""`make test-netns`: the named fault schedules on real processes in network namespaces.

Skips (with the reason, never a silent pass) when not root or when namespaces, bridges or veth
pairs are unavailable. Each schedule tears its namespaces down even when it fails; stale
namespaces of crashed runs are swept first.
"""

from __future__ import annotations

import pytest
import schedules
from harness import install_signal_cleanup, sweep_stale, unavailable_reason

# The schedules the issue names, plus SIGKILL failover and a restart under a new address.
NAMED = list(schedules.SCHEDULES)


@pytest.fixture(scope="session")
def kinds() -> list[str]:
    why = unavailable_reason()
    if why:
        pytest.skip(f"network namespace tests SKIPPED: {why}")
    install_signal_cleanup()
    sweep_stale()
    try:
        return schedules.kinds_for_run()
    except RuntimeError as e:
        pytest.skip(f"network namespace tests SKIPPED: {e}")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n,
            marks=pytest.mark.xfail(
                strict=True,
                reason="known bug: refused sends shrink the view after ghost_ttl (tests/netns/README.md)",
            ),
        )
        if n in schedules.KNOWN_BUGS
        else n
        for n in NAMED
    ],
)
def test_schedule(name: str, kinds: list[str]) -> None:
    res = schedules.run(name, kinds)
    print(schedules.report(res))
    assert not res.failures, schedules.report(res)


def test_random_schedule_is_reproducible_and_safe(kinds: list[str]) -> None:
    res = schedules.run("random", kinds, seed=7)
    assert not res.failures, schedules.report(res)


def test_the_command_check_catches_a_supervisor_without_the_deadline_kill(
    kinds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The injected bug: supervisors that never SIGKILL at the lease deadline
    (`TENURE_TEST_NO_DEADLINE_KILL=1`, docs/command.md). The frozen leader's command then runs on
    while the new leader starts its own, and the command check must say so."""
    monkeypatch.setenv("TENURE_TEST_NO_DEADLINE_KILL", "1")
    res = schedules.run("sigstop-leader", kinds)
    assert any("leader-only commands ran together" in f for f in res.failures), (
        schedules.report(res)
    )
