"""The strategy and guards of a ``compact`` run, from ``--strategy``, ``--param``
(``key=value``, trigger shorthands such as ``tokens_exceed:32000``) and a ``--config``
file; every bad value is a :class:`~compactlens.cli.errors.CliError` naming it."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from compactlens.analysis.corpus_config import analysis_kwargs
from compactlens.cli.errors import CliError
from compactlens.engine import triggers as _triggers
from compactlens.engine.guards import Guards
from compactlens.engine.profiles import profile_guards, run_guards
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.strategies.config import strategy_from_config
from compactlens.engine.strategies.registry import simple_strategy_names
from compactlens.engine.triggers import Trigger
from compactlens.summarizers.extractive import ExtractiveSummarizer

#: Strategy names that can be built from ``--strategy`` and ``--param`` alone (from the
#: strategy registry: every type that is not a composition).
SIMPLE_STRATEGIES = simple_strategy_names()
#: ``--param trigger=NAME:N`` shorthands (and ``NAME`` alone for those without a number).
TRIGGER_SHORTHANDS: Mapping[str, Any] = {
    "tokens_exceed": _triggers.tokens_exceed,
    "tokens_below": _triggers.tokens_below,
    "tokens_at_most": _triggers.tokens_at_most,
    "messages_exceed": _triggers.messages_exceed,
    "turns_exceed": _triggers.turns_exceed,
    "groups_exceed": _triggers.groups_exceed,
}
_NULLARY_TRIGGERS: Mapping[str, Trigger] = {
    "has_tool_calls": _triggers.has_tool_calls(),
    "always": _triggers.always,
    "never": _triggers.never,
}
_TRIGGER_KEYS = ("trigger", "target")


def parse_trigger(text: str, key: str) -> dict[str, Any]:
    """``tokens_exceed:32000`` (or ``has_tool_calls``) as a trigger dict."""
    name, sep, number = text.partition(":")
    name = name.strip()
    if name in _NULLARY_TRIGGERS and not sep:
        return _NULLARY_TRIGGERS[name].to_dict()
    if name not in TRIGGER_SHORTHANDS or not sep:
        known = sorted([*TRIGGER_SHORTHANDS, *_NULLARY_TRIGGERS])
        raise CliError(
            f"--param {key}={text}: expected NAME:N such as tokens_exceed:32000 "
            f"(NAME one of {', '.join(known)}) or a trigger JSON object"
        )
    try:
        n = int(number.replace("_", "").replace(",", ""))
        trigger: Trigger = TRIGGER_SHORTHANDS[name](n)
    except ValueError as exc:
        raise CliError(f"--param {key}={text}: {exc}") from None
    return trigger.to_dict()


def parse_param(text: str) -> tuple[str, Any]:
    """``key=value``: the value as JSON when it parses (ints, bools, null), else a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise CliError(f"--param {text!r}: expected KEY=VALUE, for example minimum_preserved=8")
    value: Any
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    if key in _TRIGGER_KEYS and isinstance(value, str):
        value = parse_trigger(value, key)
    return key, value


def load_config(path: str) -> dict[str, Any]:
    """The strategy config of a ``--config`` file (the file itself, or its ``strategy``)."""
    return strategy_part(read_config(path), path)


def strategy_part(data: Any, path: str) -> dict[str, Any]:
    """The strategy config in a ``--config`` document read from ``path``."""
    if isinstance(data, dict) and isinstance(data.get("strategy"), dict):
        data = data["strategy"]
    if not isinstance(data, dict):
        raise CliError(f"{path}: $: a strategy config must be a JSON object (--config)")
    return data


def read_config(path: str) -> Any:
    """A ``--config`` file's JSON, or a :class:`CliError` naming the file and the problem."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise CliError(f"{path}: no such file (--config)") from None
    except OSError as exc:
        raise CliError(f"{path}: cannot read (--config): {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: byte {exc.start}: not UTF-8 text (--config)") from None
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{path}: line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"
        ) from None
    except ValueError:  # the only other one: an integer with more digits than Python reads
        raise CliError(
            f"{path}: a number with more than {sys.get_int_max_str_digits()} digits (--config)"
        ) from None
    return data


def build_analysis(args: argparse.Namespace, document: Any) -> dict[str, Any]:
    """The analysis settings a run is judged with: the ``analysis`` object of the
    ``--config`` ``document`` (as ``compactlens report`` reads it: ``context_window``,
    ``model``, ``further_turns``...), then ``--context-window``."""
    given = document.get("analysis") if isinstance(document, dict) else None
    try:
        settings = analysis_kwargs(given)
    except ValueError as exc:
        raise CliError(f"{args.config}: $.analysis: {exc}") from None
    window = getattr(args, "context_window", None)
    if window is not None:
        if window < 0:
            raise CliError(f"--context-window must be a number of tokens (0: none), got {window}")
        settings.pop("context_window", None)
        if window:  # 0: judged against no window
            settings["context_window"] = window
    return settings


def build_guards(
    args: argparse.Namespace, document: Any, format_name: str | None, messages: int
) -> Guards:
    """The run's guards: the ``guards`` object of the ``--config`` ``document``, then the
    flags; the provider follows the transcript's format unless one is chosen."""
    base = profile_guards(args.profile)
    if isinstance(document, dict) and "guards" in document:
        try:
            base = Guards.from_dict(document["guards"])
        except (TypeError, ValueError) as exc:
            raise CliError(f"{args.config}: $.guards: {exc}") from None
    updates: dict[str, Any] = {}
    if args.provider is not None:
        updates["provider"] = args.provider
    if args.keep_latest_request is not None:
        updates["keep_latest_request"] = args.keep_latest_request
    if args.pin:
        updates["pins"] = base.pins | frozenset(args.pin)
    if args.keep_tool:
        updates["keep_tools"] = base.keep_tools | frozenset(args.keep_tool)
    if args.prunable_tool:
        updates["prunable_tools"] = base.prunable_tools | frozenset(args.prunable_tool)
    try:
        guards = run_guards(format_name, replace(base, **updates))
    except ValueError as exc:
        raise CliError(f"guards: {exc}") from None
    missing = sorted(i for i in guards.pins if i >= messages)
    if missing:
        raise CliError(
            f"guards: pins: message {missing[0]} does not exist (the transcript has {messages})"
        )
    return guards


def build_strategy(
    name: str | None, params: Sequence[str], config_path: str | None, document: Any
) -> tuple[Strategy, dict[str, Any]]:
    """The strategy config (``--config``, as read into ``document``, then ``--strategy``,
    then ``--param``) and its build."""
    config: dict[str, Any] = strategy_part(document, config_path) if config_path else {}
    if name is not None:
        config["type"] = name
    if "type" not in config and isinstance(document, dict) and "compact" in document:
        raise CliError(
            f'{config_path}: a {{"compact": ...}} configuration (compact()\'s settings) runs '
            f"with `compactlens report FOLDER --config {config_path}`; `compactlens compact` "
            'runs an engine strategy ("strategy" or "type")'
        )
    if "type" not in config:
        raise CliError("compact: give --strategy NAME or --config CONFIG.json")
    kind = config["type"]
    if kind in ("pipeline", "token_budget") and "strategies" not in config:
        raise CliError(
            f"--strategy {kind}: a composed strategy needs --config CONFIG.json with a "
            "'strategies' list"
        )
    for item in params:
        key, value = parse_param(item)
        if key == "type":
            raise CliError("--param type=...: use --strategy to choose the strategy")
        config[key] = value
    where = config_path or f"--strategy {kind}"
    try:
        strategy = strategy_from_config(config, summarizer=ExtractiveSummarizer(), where=where)
    except ValueError as exc:
        hint = "" if config_path else " (set parameters with --param KEY=VALUE)"
        raise CliError(f"{exc}{hint}") from None
    return strategy, config
