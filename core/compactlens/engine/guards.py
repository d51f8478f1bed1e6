"""Guards: the rules every strategy keeps, whatever it is told to do.

A :class:`Guards` value travels with a run (``apply_compaction(..., guards=...)``,
``run_strategy``, ``CompactionSession``, the CLI and the inspector):

* ``provider``: the result must be a history that provider's API accepts (see
  :mod:`compactlens.engine.providers`); ``any`` keeps tool-call pairing only; None (the
  default) means the provider of the transcript's format (``any`` when it has none);
* ``keep_latest_request``: the latest user request is never dropped, collapsed or
  summarized (on by default; off under a peer profile that has no such rule);
* ``pins``: message indices (of the input) whose groups are never dropped, collapsed,
  clamped or summarized;
* ``keep_tools``: tool names whose results are never collapsed or clamped (they may still
  be dropped whole);
* ``prunable_tools``: tool names whose groups are collapsed, clamped or removed first by
  the stages that treat tool-call groups one by one.

:func:`resolve_guards` turns them into group ids over one index (:class:`Locks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from compactlens.engine.index import GroupKind, MessageIndex
from compactlens.engine.providers import Provider, check_provider, provider_for_format
from compactlens.model.errors import ConfigError
from compactlens.model.messages import ApprovalResponsePart, Message, TextPart

PINNED = "pinned"
LATEST_REQUEST = "latest user request"


def latest_request_index(messages: Sequence[Message]) -> int | None:
    """The latest real user request: role ``user`` with some text, not a summary, not a
    tool-result or approval message. None when the history has none."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role != "user" or m.is_summary or m.tool_results:
            continue
        if any(isinstance(p, ApprovalResponsePart) for p in m.parts):
            continue
        if any(isinstance(p, TextPart) and p.text.strip() for p in m.parts):
            return i
    return None


def _names(value: object, name: str) -> frozenset[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ConfigError(f"{name} must be a list of tool names, got {value!r}")
    out = frozenset(value)
    bad = [v for v in out if not isinstance(v, str) or not v]
    if bad:
        raise ConfigError(f"{name} must hold non-empty tool names, got {bad[0]!r}")
    return out


def _pins(value: object) -> frozenset[int]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ConfigError(f"pins must be a list of message indices, got {value!r}")
    out = frozenset(value)
    bad = [v for v in out if isinstance(v, bool) or not isinstance(v, int) or v < 0]
    if bad:
        raise ConfigError(f"pins must hold message indices >= 0, got {bad[0]!r}")
    return out


@dataclass(frozen=True, slots=True)
class Guards:
    """What every strategy of a run must keep (see the module docstring)."""

    provider: Provider | None = None
    keep_latest_request: bool = True
    pins: frozenset[int] = field(default_factory=frozenset)
    keep_tools: frozenset[str] = field(default_factory=frozenset)
    prunable_tools: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.provider is not None:
            check_provider(self.provider)
        if not isinstance(self.keep_latest_request, bool):
            raise ConfigError(
                f"keep_latest_request must be true or false, got {self.keep_latest_request!r}"
            )
        object.__setattr__(self, "pins", _pins(self.pins))
        object.__setattr__(self, "keep_tools", _names(self.keep_tools, "keep_tools"))
        object.__setattr__(self, "prunable_tools", _names(self.prunable_tools, "prunable_tools"))
        both = self.keep_tools & self.prunable_tools
        if both:
            raise ConfigError(f"tool {sorted(both)[0]!r} is in both keep_tools and prunable_tools")

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "keep_latest_request": self.keep_latest_request,
            "pins": sorted(self.pins),
            "keep_tools": sorted(self.keep_tools),
            "prunable_tools": sorted(self.prunable_tools),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Guards:
        """Read :meth:`to_dict` output (every key optional); unknown keys are an error."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"guards must be an object, got {type(data).__name__}")
        known = {"provider", "keep_latest_request", "pins", "keep_tools", "prunable_tools"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"guards: unknown key {unknown[0]!r}; expected {sorted(known)}")
        return cls(**dict(data))

    def for_format(self, format_name: str | None) -> Guards:
        """These guards with the provider of ``format_name`` when none was chosen."""
        if self.provider is not None:
            return self
        return replace(self, provider=provider_for_format(format_name))


@dataclass(frozen=True, slots=True)
class Locks:
    """:class:`Guards` resolved over one index (group ids)."""

    provider: Provider = "any"
    locked: Mapping[int, str] = field(default_factory=dict)
    verbatim: frozenset[int] = field(default_factory=frozenset)
    prunable: frozenset[int] = field(default_factory=frozenset)

    def order(self, candidates: Iterable[int]) -> list[int]:
        """``candidates`` without locked groups, prunable ones first (stable)."""
        free = [g for g in candidates if g not in self.locked]
        return [g for g in free if g in self.prunable] + [g for g in free if g not in self.prunable]


NO_LOCKS = Locks()
DEFAULT_GUARDS = Guards()
#: Guards that change nothing a strategy does (a peer profile without such rules).
NO_GUARDS = Guards(provider="any", keep_latest_request=False)


def resolve_guards(index: MessageIndex, guards: Guards | None) -> Locks:
    """The groups ``guards`` (default :data:`DEFAULT_GUARDS`) lock, keep verbatim or
    prune first, over ``index``."""
    if guards is None:
        guards = DEFAULT_GUARDS
    locked: dict[int, str] = {}
    n = index.total_messages
    for i in sorted(guards.pins):
        if i >= n:
            raise ConfigError(f"pins: message {i} does not exist (the transcript has {n})")
        locked[index.group_of[i]] = PINNED
    if guards.keep_latest_request:
        latest = latest_request_index(index.messages)
        if latest is not None:
            locked.setdefault(index.group_of[latest], LATEST_REQUEST)
    verbatim: set[int] = set()
    prunable: set[int] = set()
    tool_rules = guards.keep_tools or guards.prunable_tools
    for g in index.groups if tool_rules else ():
        if g.kind is not GroupKind.TOOL_CALL or not g.tool_names:
            continue
        names = set(g.tool_names)
        if names & guards.keep_tools:
            verbatim.add(g.id)
        elif names <= guards.prunable_tools:
            prunable.add(g.id)
    provider = guards.provider or "any"
    return Locks(provider, locked, frozenset(verbatim), frozenset(prunable))
