"""Type stubs for the compiled core (``tenure._native``)."""

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ._types import (
    Config,
    ConfigWarning,
    DropReason,
    DurableState,
    FenceVerdict,
    Output,
    PeerDownReason,
    Role,
    ValidConfig,
)
from .wire import Envelope

VERSION: str
MAX_MESSAGE_SIZE: int
MAX_TERM: int
MAX_ID_LEN: int

class Node:
    """One member of a tenure cluster: the sans-IO election state machine.

    Feed it inputs, each with the current time of a monotonic millisecond clock; after every
    input drain its outputs and act on them in order; call ``handle_timeout(now)`` at
    ``poll_timeout()``. Wrong argument types raise ``TypeError``; integers outside ``0..2**64``
    raise ``OverflowError``; refused inputs raise a :class:`tenure.TenureError` subclass.
    Use a node from one thread at a time (a concurrent call raises ``RuntimeError``).
    """

    def __init__(
        self,
        config: Config,
        *,
        now: int,
        seed: Optional[int] = None,
        restored: Optional[DurableState] = None,
    ) -> None:
        """Creates a node at monotonic time ``now`` (ms); raises :class:`tenure.ConfigError`."""
    @property
    def id(self) -> str:
        """This node's id."""
    @property
    def cluster(self) -> str:
        """The cluster id."""
    @property
    def role(self) -> Role:
        """The current role."""
    @property
    def term(self) -> int:
        """The current term."""
    @property
    def voted_for(self) -> Optional[str]:
        """Whom this node voted for in the current term."""
    @property
    def leader(self) -> Optional[str]:
        """The leader known in the current term (this node's id when leading)."""
    @property
    def leader_value(self) -> Optional[str]:
        """The value the leader proclaims, as this node knows it (its own while leading)."""
    @property
    def is_leader(self) -> bool:
        """Whether this node is the confirmed leader."""
    @property
    def view(self) -> List[str]:
        """This node and every peer it counts, sorted."""
    @property
    def quorum(self) -> int:
        """Votes needed to win."""
    @property
    def fencing_token(self) -> Optional[int]:
        """The term while leading, else ``None``."""
    @property
    def lease_deadline(self) -> Optional[int]:
        """While leading: the instant (monotonic ms) until which no other leader can exist."""
    @property
    def warnings(self) -> List[ConfigWarning]:
        """Configuration warnings."""
    def poll_timeout(self) -> Optional[int]:
        """The next instant (ms) at which to call ``handle_timeout``."""
    def poll_output(self) -> Optional[Output]:
        """The next output, or ``None`` when drained."""
    def drain(self) -> List[Output]:
        """Every pending output, in order."""
    def dropped(self, reason: Union[DropReason, str]) -> int:
        """Inbound messages dropped for ``reason``."""
    def inspect(self) -> Dict[str, Any]:
        """The whole election state (the keys listed in the SPEC)."""
    def handle_message(self, now: int, sender: str, data: bytes) -> None:
        """Handles a datagram from ``sender``; raises :class:`tenure.DecodeError` when dropped."""
    def handle_timeout(self, now: int) -> None:
        """Handles the passing of time."""
    def join(self, now: int, peer: str) -> None:
        """Declares a peer (idempotent)."""
    def leave(self, now: int, peer: str) -> None:
        """Withdraws a peer from the view."""
    def peer_down(self, now: int, peer: str, reason: Union[PeerDownReason, str]) -> None:
        """Reports a peer down."""
    def confirm_leader(self, now: int, term: int, granted: bool) -> None:
        """Answers a ``ConfirmLeader`` event."""
    def leader_handler_failed(self, now: int, term: int) -> None:
        """Rolls leadership of ``term`` back."""
    def transfer_leadership(self, now: int, peer: str) -> None:
        """Hands leadership to ``peer``."""
    def transfer_target(self) -> Optional[str]:
        """The peer a graceful stop should hand leadership to: of the peers that have answered
        and are not reported unreachable, the one heard from most recently (ties: the smaller
        id); ``None`` when no peer qualifies."""
    def broadcast(self, now: int, payload: bytes) -> None:
        """Sends ``payload`` to every member of the view."""
    def proclaim(self, now: int, value: str) -> None:
        """Changes the value this node proclaims while it leads (empty: none)."""

class FenceChecker:
    """Remembers the highest ``(term, leader)`` a resource has seen and refuses stale writers."""

    def __init__(self, highest: Optional[Tuple[int, str]] = None) -> None:
        """A checker that has seen nothing, or restored from a stored ``(term, leader)``."""
    @property
    def highest(self) -> Optional[Tuple[int, str]]:
        """The highest ``(term, leader)`` accepted so far."""
    def check(self, term: int, leader: str) -> FenceVerdict:
        """Checks a writer, recording it when accepted."""

def validate_config(config: Config) -> ValidConfig: ...
def os_seed() -> int: ...
def encode_state(term: int, voted_for: Optional[str] = None) -> str: ...
def decode_state(text: str) -> Optional[DurableState]: ...
def encode(envelope: Envelope, key: Optional[bytes] = None, receiver: Optional[str] = None) -> bytes: ...
def decode(data: bytes, key: Optional[bytes] = None, receiver: Optional[str] = None) -> Envelope: ...

class Runtime:
    """A running ``tenure-runtime`` (see ``tenure.Elector``); every method may be called from any thread."""

    @property
    def id(self) -> str: ...
    @property
    def bound_addr(self) -> str: ...
    @property
    def running(self) -> bool: ...
    @property
    def role(self) -> str: ...
    @property
    def is_leader(self) -> bool: ...
    @property
    def term(self) -> int: ...
    @property
    def leader(self) -> Optional[str]: ...
    @property
    def leader_value(self) -> Optional[str]: ...
    @property
    def lease_deadline(self) -> Optional[int]: ...
    @property
    def lease_remaining_ms(self) -> Optional[int]: ...
    def lease_valid(self, term: int) -> bool: ...
    def now_ms(self) -> int: ...
    def fatal_error(self) -> Optional[BaseException]: ...
    def transfer(self, peer: Optional[str] = None) -> None: ...
    def inspect(self) -> Dict[str, Any]: ...
    def metrics(self) -> Dict[str, Any]: ...
    @property
    def http_addr(self) -> Optional[str]: ...
    def broadcast(self, payload: bytes) -> None: ...
    def proclaim(self, value: str) -> None: ...
    def join(self, peer: str) -> None: ...
    def leave(self, peer: str) -> None: ...
    def peer_down(self, peer: str, reason: str) -> None: ...
    def confirm_leader(self, term: int, granted: bool) -> None: ...
    def leader_work_failed(self, term: int) -> Optional[int]: ...
    def set_leader_work_running(self, running: bool) -> None: ...
    def request_stop(self) -> None: ...
    def stop(self, handover_timeout_ms: Optional[int] = None) -> None: ...

def spawn_runtime(
    config: Config,
    callback: Callable[..., None],
    *,
    bind: Optional[str] = None,
    state_file: Optional[str] = None,
    key_file: Optional[str] = None,
    confirm_timeout_ms: Optional[int] = None,
    handover_timeout_ms: Optional[int] = None,
    defer_confirm: bool = False,
    seed: Optional[int] = None,
    log: bool = False,
    http: Optional[str] = None,
    ready_when: Optional[str] = None,
    failure_policy: Optional[Tuple[int, Optional[int], int, int]] = None,
    pod_label: Optional[str] = None,
    service_account: Optional[str] = None,
) -> Runtime: ...
def validate_runtime(
    config: Config,
    *,
    bind: Optional[str] = None,
    state_file: Optional[str] = None,
    key_file: Optional[str] = None,
    http: Optional[str] = None,
    ready_when: Optional[str] = None,
    confirm_timeout_ms: Optional[int] = None,
    handover_timeout_ms: Optional[int] = None,
    pod_label: Optional[str] = None,
    service_account: Optional[str] = None,
) -> None: ...
def run_cli(argv: List[str], reexec: Optional[List[str]] = None) -> int: ...
def check_failure_policy(policy: Tuple[int, Optional[int], int, int]) -> None: ...
def failure_delay(policy: Tuple[int, Optional[int], int, int], failures: int) -> int: ...
def failure_policy_defaults() -> Tuple[int, Optional[int], int, int]: ...
def check_millis(value: int, what: str) -> int: ...
