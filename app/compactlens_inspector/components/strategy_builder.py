"""The strategy builder, drawn where the caller puts it (the Strategy lab's left column,
inside the fragment a parameter change re-runs): presets, stages (add, remove, reorder),
triggers, targets and parameters, the ``compact()`` one-shot mode, and the summarizer.

Every widget has a stable key starting with ``sb_`` (listed in ``app/README.md``).
Stage widgets are keyed by position (``sb_stage0_type``, ``sb_stage0_trigger``...);
adding, removing, moving a stage or applying a preset re-seeds them from the stored
configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import streamlit as st

from compactlens import Guards
from compactlens.engine import DEFAULT_PROFILE, PROFILE_NAMES, PROVIDERS, profile_guards
from compactlens_inspector import state
from compactlens_inspector.components.summarizer_settings import summarizer_settings
from compactlens_inspector.lab.config import (
    AUTO_PROVIDER,
    CUSTOM,
    PRESET_DETAILS,
    PRESETS,
    STAGE_TYPES,
    TARGET_CHOICES,
    TRIGGER_CHOICES,
    CompactSettings,
    LabConfig,
    clean_stage,
    default_stage,
    describe_trigger,
    nice_budget,
    parse_pins,
    preset,
    stage_summary,
    trigger_choice,
    trigger_dict,
    with_budget,
)
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import md_escape

PREFIX = "sb_"
STAGE_PREFIX = "sb_stage"
DEFAULT_N = {"messages": 50, "turns": 10, "groups": 20}
MODE_LABELS = {"pipeline": "Strategies", "compact": "One-shot compact"}
PROFILE_LABELS = {
    "compactlens": "compactlens (ours)",
    "maf": "Microsoft Agent Framework",
    "deepagents": "@deepagents/compaction",
}


def _budget_default() -> int:
    ix = state.index()
    return nice_budget(ix.total_tokens) if ix is not None else 8000


# -- callbacks (run before the script, so the widgets re-seed from the store) ------------------


def _reseed() -> None:
    state.forget(STAGE_PREFIX)
    state.forget("sb_target")
    state.forget("sb_compact_")
    state.forget("sb_mode")


def _apply_preset() -> None:
    name = st.session_state.get("sb_preset", "reference")
    budget = int(st.session_state.get("sb_budget") or _budget_default())
    state.set_lab(replace(preset(name, budget), guards=state.lab().guards))
    _reseed()
    # The one-budget field follows the preset's stages (it showed the old budget).
    state.forget("sb_all_budget")


def _set_budget() -> None:
    budget = int(st.session_state.get("sb_all_budget") or _budget_default())
    state.set_lab(with_budget(state.lab(), budget))
    _reseed()
    state.forget("sb_all_budget")


def budget_now(cfg: LabConfig) -> str:
    """Where the stages now start and stop, with thousands separators (a number field
    shows none): ``Now: from more than 102,400 tokens to at most 64,000.``"""
    trigger, target = cfg.trigger_tokens, cfg.target_tokens
    if trigger is not None and target is not None:
        return f"Now: from more than {num(trigger)} tokens to at most {num(target)}."
    if target is not None:
        return f"Now: down to at most {num(target)} tokens."
    if trigger is not None:
        return f"Now: from more than {num(trigger)} tokens."
    return "Now: no stage has a token threshold."


def _budget_widget(cfg: LabConfig) -> Any:
    """One budget for every stage: sets each stage's trigger and target together. Returns
    the place for :func:`budget_now`, filled once this run's stages are known."""
    state.widget("sb_all_budget", cfg.trigger_tokens or cfg.target_tokens or _budget_default())
    st.number_input(
        "Budget for every stage (tokens)",
        min_value=1,
        step=1000,
        key="sb_all_budget",
        help="Sets every stage to start above this many tokens and stop at it (and the "
        "pipeline's own target); each stage stays editable below.",
    )
    now = st.empty()
    # Full width: beside the field, the label was cut at 1280 px ("Set every s…").
    st.button("Set every stage", key="sb_set_budget", on_click=_set_budget, width="stretch")
    return now


def _with_stages(stages: list[dict[str, Any]]) -> None:
    cfg = state.lab()
    state.set_lab(replace(cfg, stages=tuple(stages), label=""))
    _reseed()


def _add_stage() -> None:
    kind = st.session_state.get("sb_add_type", "truncation")
    cfg = state.lab()
    budget = cfg.trigger_tokens or _budget_default()
    _with_stages([*map(dict, cfg.stages), default_stage(kind, budget)])


def _remove_stage(i: int) -> None:
    stages = [dict(s) for s in state.lab().stages]
    if 0 <= i < len(stages):
        stages.pop(i)
    _with_stages(stages)


def _move_stage(i: int, step: int) -> None:
    stages = [dict(s) for s in state.lab().stages]
    j = i + step
    if 0 <= i < len(stages) and 0 <= j < len(stages):
        stages[i], stages[j] = stages[j], stages[i]
    _with_stages(stages)


def _change_type(i: int) -> None:
    stages = [dict(s) for s in state.lab().stages]
    kind = st.session_state.get(f"{STAGE_PREFIX}{i}_type")
    if 0 <= i < len(stages) and kind in STAGE_TYPES:
        budget = state.lab().trigger_tokens or _budget_default()
        fresh = default_stage(str(kind), budget)
        if "trigger" in stages[i] and STAGE_TYPES[str(kind)].has_trigger:
            fresh["trigger"] = stages[i]["trigger"]
        stages[i] = fresh
    _with_stages(stages)


# -- widgets -----------------------------------------------------------------------------------


def _trigger_widgets(
    key: str, label: str, value: Mapping[str, Any] | None, choices: Mapping[str, tuple[str, str]]
) -> Mapping[str, Any] | None:
    choice, n = trigger_choice(value, choices)
    options = list(choices) + ([CUSTOM] if choice == CUSTOM else [])
    state.widget(key, choice)
    picked = st.selectbox(label, options, key=key)
    if picked == CUSTOM:
        st.caption(md_escape(describe_trigger(value)))
        return value
    op, metric = choices[str(picked)]
    if not op:
        return None
    if not metric:
        return trigger_dict(op)
    default = n if n is not None and value is not None and value.get("metric") == metric else None
    if default is None:
        default = DEFAULT_N.get(metric) or _budget_default()
    n_key = f"{key}_n_{metric}"
    state.widget(n_key, int(default))
    threshold = st.number_input(
        f"{label} threshold ({metric})",
        min_value=1,
        step=1000 if metric == "tokens" else 1,
        key=n_key,
    )
    return trigger_dict(op, metric, int(threshold))


def _param_widget(key: str, param: Any, value: Any) -> Any:
    if param.kind == "bool":
        state.widget(key, bool(value))
        return st.checkbox(param.label, key=key, help=param.help or None)
    if param.kind == "choice":
        state.widget(key, value if value in param.choices else param.default)
        return st.selectbox(param.label, list(param.choices), key=key, help=param.help or None)
    if param.kind == "optional_int":
        state.widget(key, int(value or 0))
        n = st.number_input(
            param.label + " (0 = off)", min_value=0, step=1, key=key, help=param.help or None
        )
        return int(n) or None
    state.widget(key, int(value if isinstance(value, int) else param.default))
    return int(
        st.number_input(
            param.label,
            min_value=param.minimum,
            step=1000 if "tokens" in param.name or param.name == "token_budget" else 1,
            key=key,
            help=param.help or None,
        )
    )


def _stage_widgets(i: int, stage: Mapping[str, Any], count: int) -> dict[str, Any]:
    key = f"{STAGE_PREFIX}{i}_"
    kind = str(stage.get("type"))
    spec = STAGE_TYPES[kind]
    new: dict[str, Any] = {"type": kind}
    with st.expander(f"{i + 1}. {spec.label}", expanded=count <= 2):
        summary = st.empty()  # filled in below, from this run's values
        cols = st.columns(3)
        cols[0].button(
            "↑",
            key=key + "up",
            on_click=_move_stage,
            args=(i, -1),
            disabled=i == 0,
            help="Move this stage up",
            width="stretch",
        )
        cols[1].button(
            "↓",
            key=key + "down",
            on_click=_move_stage,
            args=(i, 1),
            disabled=i == count - 1,
            help="Move this stage down",
            width="stretch",
        )
        cols[2].button(
            "✕",
            key=key + "remove",
            on_click=_remove_stage,
            args=(i,),
            help="Remove this stage",
            width="stretch",
        )
        state.widget(key + "type", kind)
        st.selectbox(
            "Strategy",
            list(STAGE_TYPES),
            format_func=lambda t: STAGE_TYPES[t].label,
            key=key + "type",
            on_change=_change_type,
            args=(i,),
            help=spec.description,
        )
        if spec.has_trigger:
            new["trigger"] = _trigger_widgets(
                key + "trigger", "Trigger", stage.get("trigger"), TRIGGER_CHOICES
            )
            new["target"] = _trigger_widgets(
                key + "target", "Target", stage.get("target"), TARGET_CHOICES
            )
        for p in spec.params:
            new[p.name] = _param_widget(key + p.name, p, stage.get(p.name, p.default))
        # Keys the builder has no widget for (from a link, an applied fix, a profile) stay.
        for extra, value in stage.items():
            if extra not in new and value is not None:
                new[extra] = value
        summary.caption(md_escape(stage_summary(clean_stage(new))))
    return new


def _on_profile() -> None:
    """A new profile brings its own guards: the guard widgets start again from them."""
    chosen = st.session_state.get("sb_profile", DEFAULT_PROFILE)
    profile = None if chosen == DEFAULT_PROFILE else str(chosen)
    state.set_lab(replace(state.lab(), profile=profile, guards=None, label=""))
    state.forget("sb_guard_")


def _profile_widget(cfg: LabConfig) -> str | None:
    """Whose defaults the stages take: ours, or a framework's (its guards follow)."""
    state.widget("sb_profile", cfg.profile or DEFAULT_PROFILE)
    chosen = st.selectbox(
        "Profile",
        list(PROFILE_NAMES),
        format_func=lambda p: PROFILE_LABELS.get(p, p),
        key="sb_profile",
        on_change=_on_profile,
        help="A framework's profile gives its defaults and rules, so what you tune here "
        "behaves the same in that framework (see docs/compat.md).",
    )
    return None if chosen == DEFAULT_PROFILE else str(chosen)


def _guard_widgets(cfg: LabConfig, profile: str | None) -> dict[str, Any] | None:
    """What every strategy keeps (None when everything is at the profile's default)."""
    default_guards = profile_guards(profile)
    current = Guards.from_dict(cfg.guards) if cfg.guards is not None else default_guards
    ix = state.index()
    tools = sorted({link.name for link in ix.links if link.name}) if ix is not None else []
    with st.expander("Guards (kept whatever the strategy does)", expanded=False):
        state.widget("sb_guard_provider", current.provider or AUTO_PROVIDER)
        provider = st.selectbox(
            "Provider the result must be valid for",
            [AUTO_PROVIDER, *PROVIDERS],
            key="sb_guard_provider",
            help="auto: the transcript's format's API. Anthropic and Gemini need a user turn "
            "first; every provider needs tool results after their calls.",
        )
        state.widget("sb_guard_latest", current.keep_latest_request)
        latest = st.checkbox("Keep the latest user request", key="sb_guard_latest")
        state.widget("sb_guard_pins", ", ".join(str(i) for i in sorted(current.pins)))
        pins_text = st.text_input(
            "Pinned messages (indices, for example 0, 12)",
            key="sb_guard_pins",
            help="These messages' groups are never dropped, collapsed or summarized.",
        )
        pins, bad = parse_pins(pins_text, ix.total_messages if ix is not None else None)
        if bad:
            st.caption(f":red[{md_escape(bad)}]")
        choices = sorted(set(tools) | current.keep_tools | current.prunable_tools)
        state.widget("sb_guard_keep_tools", sorted(current.keep_tools))
        keep = st.multiselect(
            "Tools whose results stay verbatim", choices, key="sb_guard_keep_tools"
        )
        state.widget("sb_guard_prunable", sorted(current.prunable_tools))
        prunable = st.multiselect(
            "Tools collapsed or removed first",
            [t for t in choices if t not in keep],
            key="sb_guard_prunable",
        )
    data = {
        "provider": None if provider == AUTO_PROVIDER else provider,
        "keep_latest_request": bool(latest),
        "pins": pins,
        "keep_tools": list(keep),
        "prunable_tools": [t for t in prunable if t not in keep],
    }
    return None if data == default_guards.to_dict() else data


def _compact_start(cfg: LabConfig) -> CompactSettings:
    """The ``compact()`` settings to show: the stored ones, or, on the first switch from
    strategies, ones sized like the current configuration (its trigger and target)."""
    if cfg.mode == "compact" or cfg.compact != CompactSettings():
        return cfg.compact
    target = cfg.target_tokens or _budget_default()
    return CompactSettings(target, cfg.compact.keep_last_messages, cfg.trigger_tokens or target)


def _compact_widgets(cfg: LabConfig) -> CompactSettings:
    c = _compact_start(cfg)
    state.widget("sb_compact_target", c.target_tokens)
    state.widget("sb_compact_keep", c.keep_last_messages)
    state.widget("sb_compact_trigger", c.trigger_tokens or 0)
    st.caption(
        "Replace the largest safe older range with one summary so the history fits the target."
    )
    trig = st.number_input(
        "Trigger: compact when tokens exceed (0 = always)",
        min_value=0,
        step=1000,
        key="sb_compact_trigger",
    )
    target = st.number_input(
        "Target (tokens)",
        min_value=1,
        step=1000,
        key="sb_compact_target",
        help="The most tokens the compacted history may hold.",
    )
    keep = st.number_input(
        "Newest messages kept verbatim",
        min_value=1,
        step=1,
        key="sb_compact_keep",
        help="The newest messages are never summarized.",
    )
    return CompactSettings(int(target), int(keep), int(trig) or None)


def strategy_builder() -> LabConfig:
    """Render the builder in the current container and return the (stored) configuration."""
    cfg = state.lab()
    st.subheader("Strategy", anchor=False)
    modes = ["pipeline", "compact"]
    state.widget("sb_mode", cfg.mode if cfg.mode in modes else "pipeline")
    mode = st.segmented_control(
        "Mode",
        modes,
        format_func=lambda k: MODE_LABELS[k],
        key="sb_mode",
        required=True,
        help="Strategies: one strategy or a pipeline of them (the engine). "
        "One-shot compact: one summary of the largest safe older range (compact()).",
    )
    with st.expander("Presets", expanded=False):
        state.widget("sb_preset", cfg.label if cfg.label in PRESETS else "reference")
        chosen = st.selectbox(
            "Preset", list(PRESETS), format_func=lambda k: PRESETS[k], key="sb_preset"
        )
        st.caption(PRESET_DETAILS[str(chosen)])
        state.widget("sb_budget", cfg.trigger_tokens or _budget_default())
        window = st.number_input(
            "Token budget (the window, for the context-window preset)",
            min_value=1,
            step=1000,
            key="sb_budget",
        )
        st.caption(f"{num(int(window))} tokens")  # a number field shows no separators
        st.button("Apply preset", key="sb_apply", on_click=_apply_preset, type="primary")
    stages = cfg.stages
    target = cfg.target
    compact = cfg.compact
    guards = cfg.guards
    profile = cfg.profile
    now = None
    if mode == "compact":
        compact = _compact_widgets(cfg)
    else:
        profile = _profile_widget(cfg)
        now = _budget_widget(cfg)
        st.caption("One stage is a single strategy; two or more run as a pipeline in order.")
        stages = tuple(_stage_widgets(i, s, len(cfg.stages)) for i, s in enumerate(cfg.stages))
        cols = st.columns([3, 2], vertical_alignment="bottom")
        state.widget("sb_add_type", "truncation")
        cols[0].selectbox(
            "New stage",
            list(STAGE_TYPES),
            format_func=lambda t: STAGE_TYPES[t].label,
            key="sb_add_type",
        )
        cols[1].button("Add stage", key="sb_add", on_click=_add_stage, width="stretch")
        if len(stages) > 1 or target is not None:
            target = _trigger_widgets(
                "sb_target",
                "Pipeline target",
                target,
                {
                    "none (the last stage's target)": ("", ""),
                    **{k: v for k, v in TARGET_CHOICES.items() if v[0]},
                },
            )
        guards = _guard_widgets(cfg, profile)
    summarizer = summarizer_settings()
    if summarizer != state.summarizer_settings():
        state.set_summarizer(summarizer)
    new = replace(
        cfg,
        stages=tuple(stages),
        target=target,
        mode="compact" if mode == "compact" else "pipeline",
        compact=compact,
        guards=guards,
        profile=profile,
    )
    if _meaning(new) != _meaning(cfg):
        # An edit: the configuration is no longer the preset it came from.
        state.set_lab(replace(new, label=""))
    if now is not None:
        now.caption(budget_now(new))
    return state.lab()


def _meaning(config: LabConfig) -> dict[str, Any]:
    """What a configuration does (its JSON form without the preset label)."""
    data = config.to_dict()
    data.pop("label", None)
    return data
