"""Profiles: the defaults and rules of a system we model, so tuning transfers to it.

A profile is a set of defaults, not a separate code path. ``compactlens`` (the
default) is ours; ``maf`` is Microsoft Agent Framework's ``agent_framework``
compaction strategies (1.23); ``deepagents`` is ``@deepagents/compaction``'s
one-shot ``compact()`` contract. Under a peer profile, code written against the
peer's API (``TruncationStrategy(max_n=..., compact_to=...)``,
``SummarizationStrategy(target_count=...)``) gives the peer's result.

A strategy takes the profile's default for every parameter left unset (``None``);
:func:`with_profile` gives a whole strategy tree (pipelines included) a profile,
and :func:`profile_guards` the guards a run under that profile keeps. ``docs/compat.md``
lists every parameter and behaviour, the peer's default beside ours, and why ours differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

from compactlens.engine.guards import Guards
from compactlens.engine.index import Grouping
from compactlens.model.errors import ConfigError
from compactlens.model.tokens import CharEstimator, Tokenizer

ProfileName: TypeAlias = Literal["compactlens", "maf", "deepagents"]
PROFILE_NAMES: tuple[ProfileName, ...] = ("compactlens", "maf", "deepagents")
DEFAULT_PROFILE: ProfileName = "compactlens"


@dataclass(frozen=True, slots=True)
class Profile:
    """The defaults and rules of one profile.

    ``truncation_minimum_preserved`` / ``summarization_minimum_preserved``: the newest
    non-system groups those strategies never touch. ``summarization_threshold``: how many
    messages above ``target_count`` summarization waits for. ``skip_if_larger``: tool-result
    collapse keeps a group verbatim when its line would cost more. ``raw_tool_results``:
    collapsed lines keep outputs as they are (MAF) instead of folding whitespace.
    ``drop_system_if_needed``: a token-budget composition's last fallback may drop system
    groups.
    ``keep_latest_request``: the latest user request is never dropped (a guard).
    ``summary_selection``: ``"summarize-oldest"`` summarizes the oldest groups while more
    than ``target_count`` messages remain; ``"keep-newest"`` keeps the newest groups until
    at least ``target_count`` messages are kept and summarizes the rest (MAF).
    ``oversized_first_group``: when the oldest candidate alone exceeds the summarizer's
    input cap, ``"stop"`` reports it; ``"skip"`` passes over it to the later groups (MAF).
    ``estimator``: how the profile estimates tokens without a tokenizer. ``grouping``:
    how the index groups reasoning-only messages (pass it to ``MessageIndex.build``).
    """

    name: ProfileName
    truncation_minimum_preserved: int
    summarization_minimum_preserved: int
    summarization_threshold: int
    skip_if_larger: bool
    raw_tool_results: bool
    drop_system_if_needed: bool
    keep_latest_request: bool
    summary_selection: Literal["summarize-oldest", "keep-newest"]
    oversized_first_group: Literal["stop", "skip"]
    estimator: str
    grouping: Grouping
    description: str


_PROFILES: dict[str, Profile] = {
    "compactlens": Profile(
        name="compactlens",
        truncation_minimum_preserved=32,
        summarization_minimum_preserved=4,
        summarization_threshold=0,
        skip_if_larger=True,
        raw_tool_results=False,
        drop_system_if_needed=False,
        keep_latest_request=True,
        summary_selection="summarize-oldest",
        oversized_first_group="stop",
        estimator="ceil(characters of the message text / 4)",
        grouping="compactlens",
        description="compactlens defaults: keep recent context and instructions",
    ),
    "maf": Profile(
        name="maf",
        truncation_minimum_preserved=1,
        summarization_minimum_preserved=1,
        summarization_threshold=2,
        skip_if_larger=False,
        raw_tool_results=True,
        drop_system_if_needed=True,
        keep_latest_request=False,
        summary_selection="keep-newest",
        oversized_first_group="skip",
        estimator="max(1, floor(characters of the serialized message / 4)) per message",
        grouping="maf",
        description="Microsoft Agent Framework 1.23 (agent_framework compaction strategies)",
    ),
    "deepagents": Profile(
        name="deepagents",
        truncation_minimum_preserved=32,
        summarization_minimum_preserved=4,
        summarization_threshold=0,
        skip_if_larger=True,
        raw_tool_results=False,
        drop_system_if_needed=False,
        keep_latest_request=True,
        summary_selection="summarize-oldest",
        oversized_first_group="stop",
        estimator="ceil(UTF-16 length of the JSON of the messages as given / 4)",
        grouping="compactlens",
        description="@deepagents/compaction compact() contract (replays the latest request)",
    ),
}


def check_profile(name: object) -> ProfileName:
    """``name`` if it is a profile name, else ``ValueError`` listing the names."""
    if not isinstance(name, str) or name not in _PROFILES:
        raise ConfigError(f"profile: unknown profile {name!r}; expected one of {PROFILE_NAMES}")
    return _PROFILES[name].name


def get_profile(name: str | None = None) -> Profile:
    """The :class:`Profile` called ``name`` (None: the default, ``compactlens``)."""
    return _PROFILES[check_profile(DEFAULT_PROFILE if name is None else name)]


def profile_guards(name: str | None = None, base: Guards | None = None) -> Guards:
    """The guards a run under profile ``name`` keeps: ``base`` (default guards when None)
    with the profile's ``keep_latest_request``."""
    keep = get_profile(name).keep_latest_request
    if base is None:
        return Guards(keep_latest_request=keep)
    return replace(base, keep_latest_request=keep)


def run_guards(
    format_name: str | None, guards: Guards | None = None, *, profile: str | None = None
) -> Guards:
    """The guards a run over a transcript in ``format_name`` is planned and judged with,
    the same on every surface (``compactlens compact``, the inspector, the notebook's
    ``debug()`` and ``tune()``, ``apply_compaction`` over the caller's messages):
    ``guards`` (default: :func:`profile_guards` of ``profile``) with the format's
    provider when none is chosen (:meth:`Guards.for_format`). Without it a debugger
    handed no guards checked every provider ("OpenAI Chat Completions or Anthropic")
    where the command line checked the transcript's own."""
    base = guards if guards is not None else profile_guards(profile)
    return base.for_format(format_name)


@dataclass(frozen=True, slots=True)
class FloorCharEstimator:
    """MAF's character estimator: ``max(1, len(text) // 4)`` (0 for an empty text here,
    since we count text rather than a serialized message that is never empty)."""

    chars_per_token: int = 4
    message_overhead: int = 0
    name: str = "estimate-floor"

    def count_tokens(self, text: str) -> int:
        if not text:
            return 0
        return max(1, len(text) // self.chars_per_token)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count_tokens(t) for t in texts]


def profile_tokenizer(name: str | None = None) -> Tokenizer:
    """The profile's estimator over message text (MAF's floors, ours and deepagents' round up).

    deepagents measures the JSON of the messages as given; that needs the messages
    themselves: see :func:`compactlens.compact.contract.estimate_tokens`.
    """
    if get_profile(name).name == "maf":
        return FloorCharEstimator()
    return CharEstimator()


def with_profile_key(config: dict[str, Any], profile: str | None) -> dict[str, Any]:
    """A strategy's ``to_dict()`` with its ``profile`` (only when one was given)."""
    if profile is not None:
        config["profile"] = profile
    return config
