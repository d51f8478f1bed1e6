"""``tune()``: an ipywidgets panel that re-plans a strategy over a cached index on each change.

The panel has a trigger and a target slider (tokens, in round steps; they move together
unless the user unticks "Trigger and target move together"), the profile and the provider,
and one field per parameter of every stage, labelled in the words the inspector's Lab
uses (:func:`~compactlens.engine.vocabulary.parameter_term`; a choice such as the
collapsed line is a dropdown of its values in words). The methods take the parameters'
code names (``set_parameter(0, "minimum_preserved", 8)``). Each change builds
:class:`TuneSettings`, plans the strategy over the index (built once per profile),
judges the run with :func:`compactlens.verdict` and gives it its one next step
(:func:`~compactlens.analysis.advise`: the fix search behind it, the same value
``tuner.debug()``, the inspector and ``compactlens compact`` show; a run that fits and is
safe is not searched), and redraws the verdict card (level colour and headline, status,
tokens, budget bar, groups by decision, one line per check, next step) and the decision
map. Everything the widgets do is also a method (:meth:`Tuner.update`,
:meth:`Tuner.set_parameter`), so a script or a test drives it the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from compactlens.analysis.fix_verdicts import advise
from compactlens.analysis.fixes import FixSearch
from compactlens.analysis.protocol import provider_words
from compactlens.analysis.retrigger import DEFAULT_CONTEXT_WINDOW
from compactlens.analysis.verdict import Verdict, verdict_card
from compactlens.engine import CompactionResult, Strategy, run_strategy
from compactlens.engine.vocabulary import VALUES, parameter_term, stage_words
from compactlens.model import Message, Tokenizer, card_html
from compactlens.model.display import THEME
from compactlens.model.errors import ConfigError
from compactlens.notebook.config import (
    PROFILE_CHOICES,
    PROVIDER_CHOICES,
    TuneSettings,
    Workbench,
    settings_for,
    unset_parameters,
)
from compactlens.notebook.widgets import (
    HIDE_SNAPSHOT_CSS,
    Snapshot,
    in_kernel,
    load_widgets,
    show_panel,
    theme_aware,
    window_words,
)
from compactlens.summarizers import ExtractiveSummarizer, Summarizer
from compactlens.transcript import Transcript

#: Steps of the token sliders (at most; the step is a round number).
SLIDER_STEPS = 200
#: The label of the checkbox that moves the trigger and the target together.
LINK_LABEL = "Trigger and target move together"


def slider_step(top: int) -> int:
    """A round step (1, 2, 2.5 or 5 times a power of ten) that cuts ``top`` tokens into at
    most :data:`SLIDER_STEPS` pieces, so a dragged slider lands on 29,500 or 30,000, not on
    multiples of 486."""
    from compactlens.viz.words import nice_step  # plain words and numbers, no plotly

    return nice_step(top, SLIDER_STEPS)


def _slider_top(top: int, step: int) -> int:
    """``top`` rounded up to a whole number of steps (the slider's end is a round number)."""
    return -(-top // step) * step


def _provider_line(chosen: str, shaped: str | None, judged: str | None) -> str:
    """The tuner's provider setting in words: ``chosen`` (``auto`` or a provider), the
    provider the guards shape the output for and the one the verdict's checks judge."""
    head = "auto" if chosen == "auto" else provider_words(chosen)
    if chosen == "auto" and shaped not in (None, "any", ""):
        head += f" ({provider_words(shaped)})"
    if judged is not None and judged != shaped:
        head += f"; checked for {provider_words(judged)}, the transcript's own API"
    return head


class Tuner:
    """A live configuration of one strategy over one transcript (see the module docstring)."""

    def __init__(
        self,
        messages: Sequence[Message],
        strategy: Strategy,
        budget: int,
        *,
        trigger: int | None = None,
        format: str | None = None,
        tokenizer: Tokenizer | None = None,
        summarizer: Summarizer | None = None,
        profile: str = "compactlens",
        provider: str = "auto",
        linked: bool | None = None,
        context_window: int | None = DEFAULT_CONTEXT_WINDOW,
    ) -> None:
        #: The analysis settings the card's verdict and fixes are judged with (the
        #: model's context window, when one is given).
        self.analysis = {"context_window": context_window} if context_window else None
        self.bench = Workbench(
            tuple(messages), format, tokenizer, summarizer or ExtractiveSummarizer()
        )
        self.settings = TuneSettings(
            config=strategy.to_dict(),
            trigger_tokens=budget if trigger is None else trigger,
            target_tokens=budget,
            profile=profile,
            provider=provider,
            unset=unset_parameters(strategy),
            linked=(trigger is None or trigger == budget) if linked is None else linked,
        )
        self.result: CompactionResult | None = None
        #: The verdict of ``result`` with its one next step (None when the settings do
        #: not run), and the judged fix search that step comes from.
        self.verdict: Verdict | None = None
        self.search: FixSearch | None = None
        self.error: str | None = None
        self.runs = 0
        self._quiet = False
        self.snapshot = Snapshot(with_figure=True)
        self._w = load_widgets()
        self._build()
        self.run()

    # -- the model --------------------------------------------------------------------

    @property
    def strategy(self) -> Strategy:
        """The strategy of the current settings."""
        return self.bench.strategy(self.settings)

    def load(self, strategy: Strategy) -> CompactionResult | None:
        """Take ``strategy`` (for example a fix's) with its own trigger and target."""
        self.settings = settings_for(
            strategy,
            profile=self.settings.profile,
            provider=self.settings.provider,
            budget=self.settings.target_tokens,
        )
        self._sync_widgets(rebuild=True)
        return self.run()

    def update(self, **changes: Any) -> CompactionResult | None:
        """Change ``trigger_tokens``, ``target_tokens``, ``linked``, ``profile``,
        ``provider`` or ``config`` and re-plan; the widgets follow (linked, the trigger
        follows the target and the target the trigger)."""
        self.settings = self.settings.changed(**changes)
        self._sync_widgets(rebuild="config" in changes)
        return self.run()

    def set_parameter(self, stage: int, name: str, value: Any) -> CompactionResult | None:
        """Set parameter ``name`` of stage ``stage`` (0-based) and re-plan."""
        self.settings = self.settings.with_parameter(stage, name, value)
        self._sync_widgets(rebuild=False)
        return self.run()

    def run(self) -> CompactionResult | None:
        """Plan the current settings over the cached index and redraw."""
        self.runs += 1
        try:
            index = self.bench.index(self.settings.profile)
            strategy = self.bench.strategy(self.settings)
            guards = self.bench.guards(self.settings)
            given = self.bench.tokenizer is not None
            self.result = run_strategy(
                index,
                strategy,
                tokenizer_given=given,
                guards=guards,
                profile=self.settings.profile,
            )
            # The card's next step is the one after the fix search (review 4, #3: the
            # step before it told the user to "raise the target" where tuner.debug()
            # said "lower every stage's target to 28,294").
            self.verdict, self.search = advise(
                index, self.result, strategy, guards, tokenizer_given=given, analysis=self.analysis
            )
            self.error = None
            self._show_defaults()
        except (ValueError, TypeError) as exc:
            self.result = None
            self.verdict = None
            self.search = None
            self.error = str(exc)
        self._redraw()
        return self.result

    def status_html(self) -> str:
        """The verdict card as shown (escaped HTML)."""
        if self.result is None or self.verdict is None:
            message = escape(self.error or "not run")
            return f'<div data-role="status" class="compactlens-error">error: {message}</div>'
        return card_html(verdict_card(self.verdict)) + self._ran_with()

    def _ran_with(self) -> str:
        """One line under the card: the settings this run was made with, and the provider
        its checks judge when that is not the one the guards shape the output for (a log
        in Chat Completions form whose tool calls went to Anthropic: the output keeps the
        log's form, and the checks count Anthropic's rules, as ``compactlens compact``
        does)."""
        s = self.settings
        target = "none" if s.target_tokens is None else f"{s.target_tokens:,}"
        shaped = self.bench.guards(s).provider if s.provider == "auto" else s.provider
        judged = self.verdict.numbers.provider if self.verdict is not None else None
        words = (
            f"ran with trigger {s.trigger_tokens:,} · target {target} · profile {s.profile}"
            f" · provider {_provider_line(s.provider, shaped, judged)}"
            f" · {window_words((self.analysis or {}).get('context_window'))}"
        )
        return (
            f'<div data-role="ran-with" style="color:{THEME["muted"]};font-size:12px">'
            f"{escape(words)}</div>"
        )

    def figure(self) -> Any:
        """The decision map of the current result (a plotly figure), or None."""
        if self.result is None:
            return None
        from compactlens.viz import decision_map

        return decision_map(self.result)

    def debug(self) -> Any:
        """A debugger of the current run; its Apply button loads the fix into this tuner."""
        from compactlens.notebook.debugger import Debugger

        if self.result is None or self.verdict is None or self.search is None:
            raise ConfigError("the current settings do not run: " + (self.error or ""))
        return Debugger(
            self.result,
            index=self.bench.index(self.settings.profile),
            strategy=self.strategy,
            guards=self.bench.guards(self.settings),
            on_apply=lambda fix: self.load(fix.strategy),
            tokenizer_given=self.bench.tokenizer is not None,
            advice=(self.verdict, self.search),  # the card's verdict and next step
            context_window=(self.analysis or {}).get("context_window"),
        )

    # -- the widgets ------------------------------------------------------------------

    @property
    def panel(self) -> Any:
        """The ipywidgets panel."""
        return self._panel

    def _ipython_display_(self) -> None:
        show_panel(self._panel, f"compactlens tuner: {self.result!r}")
        self.snapshot.show()

    def _build(self) -> None:
        w = self._w
        total = self.bench.index(self.settings.profile).total_tokens
        top = max(total, self.settings.trigger_tokens, self.settings.target_tokens or 0, 1)
        step = slider_step(top)
        slider = {
            "min": 0,
            "max": _slider_top(top, step),
            "step": step,
            "continuous_update": False,
        }
        style = {"description_width": "9em"}
        layout = w.Layout(width="36em")
        self.trigger = w.IntSlider(
            value=self.settings.trigger_tokens,
            description="trigger (tokens)",
            style=style,
            layout=layout,
            **slider,
        )
        self.target = w.IntSlider(
            value=self.settings.target_tokens or 0,
            description="target (0: none)",
            style=style,
            layout=layout,
            **slider,
        )
        self.profile = w.Dropdown(
            options=PROFILE_CHOICES, value=self.settings.profile, description="profile"
        )
        self.provider = w.Dropdown(
            options=PROVIDER_CHOICES, value=self.settings.provider, description="provider"
        )
        self.link = w.Checkbox(
            value=self.settings.linked,
            description=LINK_LABEL,
            indent=False,
        )
        self.trigger.observe(lambda c: self._on("trigger_tokens", c["new"]), names="value")
        self.target.observe(lambda c: self._on("target_tokens", c["new"] or None), names="value")
        self.profile.observe(lambda c: self._on("profile", c["new"]), names="value")
        self.provider.observe(lambda c: self._on("provider", c["new"]), names="value")
        self.link.observe(lambda c: self._on("linked", c["new"]), names="value")
        self.status = w.HTML(layout=w.Layout(min_height="6em"))
        self.stage_box = w.VBox()
        self.parameters: dict[tuple[int, str], Any] = {}
        self._build_parameters()
        controls = w.VBox(
            [
                self.trigger,
                self.target,
                self.link,
                w.HBox([self.profile, self.provider]),
                self.stage_box,
            ]
        )
        # The decision map is displayed under the panel, outside the widgets (Snapshot).
        self._panel = w.VBox([controls, self.status, w.HTML(HIDE_SNAPSHOT_CSS)])
        self._panel.add_class("compactlens-tuner")
        self._panel.add_class("compactlens-live")

    def _build_parameters(self) -> None:
        w = self._w
        rows: list[Any] = []
        self.parameters = {}
        stages = self.settings.stages()
        by_stage: dict[int, list[Any]] = {}
        for i, name, value in self.settings.parameters():
            field = _field(w, name, value, str(stages[i].get("type", "")))
            field.observe(
                lambda c, i=i, name=name, value=value: self._on_parameter(i, name, c["new"], value),
                names="value",
            )
            self.parameters[(i, name)] = field
            by_stage.setdefault(i, []).append(field)
        for i, stage in enumerate(stages):
            kind = stage_words(str(stage.get("type", "?")))
            title = w.HTML(f"<b>Stage {i + 1}: {escape(kind)}</b>")
            rows.append(w.VBox([title, w.HBox(by_stage.get(i, []), layout=_wrap(w))]))
        self.stage_box.children = tuple(rows)

    def _on(self, key: str, value: Any) -> None:
        if self._quiet:
            return
        linked = self.settings.linked
        self.settings = self.settings.changed(**{key: value})
        if linked or key == "linked":
            self._sync_widgets(rebuild=False)  # the other slider follows
        self.run()

    def _on_parameter(self, stage: int, name: str, raw: Any, original: Any) -> None:
        if self._quiet:
            return
        self.settings = self.settings.with_parameter(stage, name, _parse(raw, original))
        self.run()

    def _sync_widgets(self, *, rebuild: bool) -> None:
        self._quiet = True
        try:
            self.trigger.max = max(self.trigger.max, self.settings.trigger_tokens)
            self.target.max = max(self.target.max, self.settings.target_tokens or 0)
            self.trigger.value = self.settings.trigger_tokens
            self.target.value = self.settings.target_tokens or 0
            self.profile.value = self.settings.profile
            self.provider.value = self.settings.provider
            self.link.value = self.settings.linked
            if rebuild:
                self._build_parameters()
            else:
                for (i, name), field in self.parameters.items():
                    value = dict(self.settings.parameters_of(i)).get(name)
                    field.value = _shown(value, field.value)
        finally:
            self._quiet = False

    def _show_defaults(self) -> None:
        """Fields nobody set show the default of the current profile."""
        written = self.strategy.to_dict()
        stages = written.get("strategies", [written])
        self._quiet = True
        try:
            for stage, name in self.settings.unset:
                field = self.parameters.get((stage, name))
                if field is not None and stage < len(stages):
                    field.value = _shown(stages[stage].get(name), field.value)
        finally:
            self._quiet = False

    def _redraw(self) -> None:
        self.status.value = self.status_html()
        if not in_kernel():
            return  # a script or a test: the figure is there when asked for (figure())
        fig = self.figure()
        self.snapshot.update(self.status.value, None if fig is None else theme_aware(fig))


def tune(
    transcript: Transcript | Sequence[Any],
    strategy: Strategy,
    budget: int,
    *,
    trigger: int | None = None,
    tokenizer: Tokenizer | None = None,
    summarizer: Summarizer | None = None,
    profile: str = "compactlens",
    provider: str = "auto",
    linked: bool | None = None,
    context_window: int | None = DEFAULT_CONTEXT_WINDOW,
) -> Tuner:
    """An interactive tuner of ``strategy`` over ``transcript`` (a :class:`Transcript`, or
    messages in any supported wire format), starting with target ``budget`` and every
    stage's ``tokens >`` trigger at ``trigger`` (default: ``budget`` too). The trigger and
    the target move together (``linked``; default: when they start equal).

    The last expression of a cell shows the panel; ``tuner.result`` is the current result.
    ``context_window``: the model's context window (a compacted history over it is a
    cost; no fix raises the target past it).
    """
    messages, format_name = _messages(transcript)
    return Tuner(
        messages,
        strategy,
        budget,
        trigger=trigger,
        format=format_name,
        tokenizer=tokenizer,
        summarizer=summarizer,
        profile=profile,
        provider=provider,
        linked=linked,
        context_window=context_window,
    )


def _messages(source: Transcript | Sequence[Any]) -> tuple[tuple[Message, ...], str | None]:
    if isinstance(source, Transcript):
        return source.messages, source.format
    from compactlens.formats import from_caller

    caller = from_caller(list(source))
    return tuple(caller.messages), caller.format.name


def choices(name: str) -> list[tuple[str, str]]:
    """The values of a choice parameter as (words, value), e.g. the collapsed line's
    ("tool names only", "names"); empty for a parameter that is not a choice."""
    return [(words, value) for (param, value), words in VALUES.items() if param == name]


def _field(w: Any, name: str, value: Any, stage_type: str = "") -> Any:
    """The widget of one parameter, labelled in words (its explanation as the tooltip): a
    checkbox, a number, a dropdown for a choice, or text (empty: none)."""
    term = parameter_term(name, stage_type)
    common = {
        "description": term.label,
        "tooltip": term.explanation or term.label,
        "style": {"description_width": "initial"},
    }
    options = choices(name)
    if options and isinstance(value, str) and value in {v for _, v in options}:
        return w.Dropdown(options=options, value=value, **common)
    if isinstance(value, bool):
        return w.Checkbox(value=value, indent=False, **common)
    if isinstance(value, int):
        return w.IntText(value=value, layout=w.Layout(width="17em"), **common)
    if isinstance(value, float):
        return w.FloatText(value=value, layout=w.Layout(width="17em"), **common)
    return w.Text(
        value="" if value is None else str(value),
        placeholder="none",
        layout=w.Layout(width="17em"),
        **common,
    )


def _parse(raw: Any, original: Any) -> Any:
    """A text field's value: empty is None, digits an integer, anything else the text."""
    if not isinstance(raw, str) or isinstance(original, bool | int | float):
        return raw
    text = raw.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def _shown(value: Any, current: Any) -> Any:
    """``value`` as the widget holding ``current`` shows it."""
    if isinstance(current, str):
        return "" if value is None else str(value)
    return value


def _wrap(w: Any) -> Any:
    return w.Layout(flex_flow="row wrap")
