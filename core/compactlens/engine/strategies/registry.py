"""Every strategy type, declared once: its config name, class, plain label and explanation,
the parameters people edit (with their labels, help, defaults and bounds), the triggers it
starts on, and whether it is simple, needs a summarizer or is composed of other strategies.

:func:`~compactlens.engine.strategies.config.strategy_from_config`, the re-trigger
analysis, the command line and the inspector's strategy builder all read this table, so a
new strategy is added here and nowhere else (tests/engine/test_strategy_registry.py fails
on a strategy class this table does not list).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from compactlens.engine.strategies.clamp import ClampStrategy
from compactlens.engine.strategies.pipeline import PipelineStrategy, TokenBudgetComposedStrategy
from compactlens.engine.strategies.selective import SelectiveToolCallCompactionStrategy
from compactlens.engine.strategies.sliding_window import SlidingWindowStrategy
from compactlens.engine.strategies.summarization import SummarizationStrategy
from compactlens.engine.strategies.tool_results import ToolResultCompactionStrategy
from compactlens.engine.strategies.truncation import TruncationStrategy
from compactlens.engine.triggers import Trigger
from compactlens.engine.vocabulary import STAGES, parameter_term

ParamKind: TypeAlias = Literal["int", "optional_int", "bool", "choice", "text"]

#: How a strategy's shorthand keywords start it: ``(config, tokenizer_given) -> triggers``.
ShorthandTriggers: TypeAlias = Callable[[Mapping[str, Any], bool], tuple[Trigger, ...]]


@dataclass(frozen=True, slots=True)
class StrategyParam:
    """One parameter people edit: in the inspector's builder and with ``--param``.

    ``default`` is the value a new stage starts with in the builder; ``minimum`` bounds
    ``int`` and ``optional_int`` values, ``choices`` lists a ``choice``'s values.
    """

    name: str
    label: str
    kind: ParamKind
    default: Any
    minimum: int = 0
    choices: tuple[str, ...] = ()
    help: str = ""


@dataclass(frozen=True, slots=True)
class StrategyInfo:
    """One strategy type.

    ``name`` is its config ``type``; ``starts_on`` says in plain words what starts it and
    ``shorthand_triggers`` derives, from a config, the triggers its shorthand keywords
    stand for (an explicit ``trigger`` and a composite's children are read by the caller).
    ``takes_trigger`` is False for a strategy that has no ``trigger`` of its own;
    ``composite`` strategies hold others (``strategies``); ``needs_summarizer`` ones are
    built with a summarizer. ``builder_rank`` orders the inspector's stage menu (None: not
    offered there; the builder's list of stages is itself a pipeline).
    """

    name: str
    cls: type[Any]
    label: str
    description: str
    params: tuple[StrategyParam, ...]
    starts_on: str
    shorthand_triggers: ShorthandTriggers
    takes_trigger: bool = True
    composite: bool = False
    needs_summarizer: bool = False
    builder_rank: int | None = None

    @property
    def simple(self) -> bool:
        """Built from ``--strategy NAME`` and ``--param`` alone (not composite)."""
        return not self.composite


def _none(config: Mapping[str, Any], tokenizer_given: bool) -> tuple[Trigger, ...]:
    return ()


def _truncation(config: Mapping[str, Any], tokenizer_given: bool) -> tuple[Trigger, ...]:
    if config.get("max_n") is None or config.get("trigger") is not None:
        return ()
    metric = "tokens" if tokenizer_given else "messages"
    return (Trigger("exceed", metric, int(config["max_n"])),)


def _sliding_window(config: Mapping[str, Any], tokenizer_given: bool) -> tuple[Trigger, ...]:
    out: list[Trigger] = []
    if config.get("keep_last_turns") is not None:
        out.append(Trigger("exceed", "turns", int(config["keep_last_turns"])))
    if config.get("keep_last_groups") is not None:
        out.append(Trigger("exceed", "groups", int(config["keep_last_groups"])))
    return tuple(out)


def _summarization(config: Mapping[str, Any], tokenizer_given: bool) -> tuple[Trigger, ...]:
    if config.get("target_count") is None:
        return ()
    limit = int(config["target_count"]) + int(config.get("threshold") or 0)
    return (Trigger("exceed", "messages", limit),)


def _token_budget(config: Mapping[str, Any], tokenizer_given: bool) -> tuple[Trigger, ...]:
    if config.get("token_budget") is None:
        return ()
    return (Trigger("exceed", "tokens", int(config["token_budget"])),)


_MIN_PRESERVED = "minimum_preserved"


def _param(
    name: str,
    kind: ParamKind,
    default: Any,
    *,
    stage: str,
    minimum: int = 0,
    choices: tuple[str, ...] = (),
) -> StrategyParam:
    """A parameter labelled and explained by the vocabulary (one wording everywhere)."""
    term = parameter_term(name, stage)
    return StrategyParam(
        name=name,
        label=term.label[:1].upper() + term.label[1:],
        kind=kind,
        default=default,
        minimum=minimum,
        choices=choices,
        help=term.explanation,
    )


_CLAMP = StrategyInfo(
    "clamp",
    ClampStrategy,
    STAGES["clamp"].label,
    STAGES["clamp"].explanation,
    (
        _param(
            "max_tokens",
            "int",
            2000,
            minimum=1,
            stage="clamp",
        ),
        _param(
            _MIN_PRESERVED,
            "int",
            0,
            stage="clamp",
        ),
    ),
    "its trigger; without one it clamps every oversized part",
    _none,
    builder_rank=5,
)

_TRUNCATION = StrategyInfo(
    "truncation",
    TruncationStrategy,
    STAGES["truncation"].label,
    STAGES["truncation"].explanation,
    (
        _param(
            _MIN_PRESERVED,
            "int",
            32,
            stage="truncation",
        ),
        _param(
            "preserve_system",
            "bool",
            True,
            stage="truncation",
        ),
        _param(
            "preserve_first_user_group",
            "bool",
            False,
            stage="truncation",
        ),
    ),
    "its trigger, or max_n (tokens > max_n with a tokenizer, messages > max_n without)",
    _truncation,
    builder_rank=4,
)

_SLIDING_WINDOW = StrategyInfo(
    "sliding_window",
    SlidingWindowStrategy,
    STAGES["sliding_window"].label,
    STAGES["sliding_window"].explanation,
    (
        _param(
            _MIN_PRESERVED,
            "int",
            1,
            stage="sliding_window",
        ),
        _param(
            "keep_last_turns",
            "optional_int",
            None,
            minimum=1,
            stage="sliding_window",
        ),
        _param(
            "preserve_system",
            "bool",
            True,
            stage="sliding_window",
        ),
    ),
    "its trigger, or keep_last_turns (turns > N), or keep_last_groups (groups > N)",
    _sliding_window,
    builder_rank=3,
)

_TOOL_RESULT_COLLAPSE = StrategyInfo(
    "tool_result_collapse",
    ToolResultCompactionStrategy,
    STAGES["tool_result_collapse"].label,
    STAGES["tool_result_collapse"].explanation,
    (
        _param(
            "keep_last_tool_call_groups",
            "int",
            1,
            stage="tool_result_collapse",
        ),
        _param(
            _MIN_PRESERVED,
            "int",
            2,
            stage="tool_result_collapse",
        ),
        _param(
            "formatter",
            "choice",
            "results",
            choices=("results", "names"),
            stage="tool_result_collapse",
        ),
    ),
    "its trigger; without one it collapses every eligible group",
    _none,
    builder_rank=0,
)

_SELECTIVE_TOOL_CALLS = StrategyInfo(
    "selective_tool_calls",
    SelectiveToolCallCompactionStrategy,
    STAGES["selective_tool_calls"].label,
    STAGES["selective_tool_calls"].explanation,
    (
        _param(
            "keep_last_tool_call_groups",
            "int",
            1,
            stage="selective_tool_calls",
        ),
        _param(
            _MIN_PRESERVED,
            "int",
            0,
            stage="selective_tool_calls",
        ),
    ),
    "its trigger; without one it removes every eligible group",
    _none,
    builder_rank=1,
)

_SUMMARIZATION = StrategyInfo(
    "summarization",
    SummarizationStrategy,
    STAGES["summarization"].label,
    STAGES["summarization"].explanation,
    (
        _param(
            _MIN_PRESERVED,
            "int",
            4,
            stage="summarization",
        ),
        _param(
            "max_input_tokens",
            "int",
            8000,
            minimum=1,
            stage="summarization",
        ),
        _param(
            "max_summary_tokens",
            "int",
            2048,
            minimum=1,
            stage="summarization",
        ),
    ),
    "its trigger, or target_count (messages > target_count + threshold)",
    _summarization,
    needs_summarizer=True,
    builder_rank=2,
)

_PIPELINE = StrategyInfo(
    "pipeline",
    PipelineStrategy,
    STAGES["pipeline"].label,
    STAGES["pipeline"].explanation,
    (),
    "any of its stages' triggers",
    _none,
    takes_trigger=False,
    composite=True,
)

_TOKEN_BUDGET = StrategyInfo(
    "token_budget",
    TokenBudgetComposedStrategy,
    STAGES["token_budget"].label,
    STAGES["token_budget"].explanation,
    (
        _param(
            "token_budget",
            "int",
            8000,
            minimum=1,
            stage="token_budget",
        ),
        _param(
            _MIN_PRESERVED,
            "int",
            1,
            minimum=1,
            stage="token_budget",
        ),
        _param(
            "drop_system_if_needed",
            "bool",
            False,
            stage="token_budget",
        ),
    ),
    "tokens > token_budget, or any of its stages' triggers",
    _token_budget,
    takes_trigger=False,
    composite=True,
    builder_rank=6,
)

#: Every strategy type, in the order configs and the command line list them.
STRATEGY_REGISTRY: tuple[StrategyInfo, ...] = (
    _CLAMP,
    _TRUNCATION,
    _SLIDING_WINDOW,
    _TOOL_RESULT_COLLAPSE,
    _SELECTIVE_TOOL_CALLS,
    _SUMMARIZATION,
    _PIPELINE,
    _TOKEN_BUDGET,
)


def strategy_info(name: str) -> StrategyInfo | None:
    """The registry entry of config type ``name``, None when there is none."""
    return next((info for info in STRATEGY_REGISTRY if info.name == name), None)


def strategy_type_names() -> tuple[str, ...]:
    """Every config type name, in registry order."""
    return tuple(info.name for info in STRATEGY_REGISTRY)


def simple_strategy_names() -> tuple[str, ...]:
    """The types built from ``--strategy NAME`` and ``--param`` alone (not composite)."""
    return tuple(info.name for info in STRATEGY_REGISTRY if info.simple)


def builder_strategies() -> tuple[StrategyInfo, ...]:
    """The types the inspector's strategy builder offers, in its menu's order."""
    offered = [info for info in STRATEGY_REGISTRY if info.builder_rank is not None]
    return tuple(sorted(offered, key=lambda info: info.builder_rank or 0))


def _walk(config: Mapping[str, Any], tokenizer_given: bool) -> Iterable[Trigger]:
    """An explicit ``trigger``, then what the type's shorthand keywords stand for (from the
    strategy registry), then, for a composite, its stages' triggers."""
    kind = config.get("type")
    trigger = config.get("trigger")
    if isinstance(trigger, Mapping):
        yield Trigger.from_dict(dict(trigger))
    info = strategy_info(kind) if isinstance(kind, str) else None
    if info is None:
        return
    yield from info.shorthand_triggers(config, tokenizer_given)
    if info.composite:
        for child in config.get("strategies") or ():
            if isinstance(child, Mapping):
                yield from _walk(child, tokenizer_given)


def strategy_triggers(strategy: Any, *, tokenizer_given: bool = True) -> tuple[Trigger, ...]:
    """The triggers that start a strategy (or a ``to_dict()`` config), any one of which fires.

    Reads explicit ``trigger`` values and the shorthand keywords (``max_n``,
    ``keep_last_turns``, ``keep_last_groups``, ``target_count``/``threshold``,
    ``token_budget``), through pipelines. ``max_n`` counts tokens when a tokenizer is
    given and messages otherwise, as the engine does. Duplicates are dropped.
    """
    config = strategy if isinstance(strategy, Mapping) else strategy.to_dict()
    out: list[Trigger] = []
    for t in _walk(config, tokenizer_given):
        if t not in out:
            out.append(t)
    return tuple(out)


__all__ = [
    "STRATEGY_REGISTRY",
    "ParamKind",
    "ShorthandTriggers",
    "StrategyInfo",
    "StrategyParam",
    "builder_strategies",
    "simple_strategy_names",
    "strategy_info",
    "strategy_triggers",
    "strategy_type_names",
]
