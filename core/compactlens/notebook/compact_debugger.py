"""``debug_compact()``: a ``compact()`` call judged, its ranked fixes, and an Apply button.

``compact()`` is no engine strategy, so its fixes are changes of its three settings (the
target, the newest messages kept verbatim, the trigger), found, judged and ranked by
:func:`compactlens.analysis.advise_compact`: the search ``compactlens report`` and the
inspector's ``compact()`` debugger run, so the three give the same next step for the same
transcript and settings. The verdict card's next step is the first listed fix; Apply
re-runs the chosen settings and shows that run's verdict, with its own next step.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from compactlens.analysis import CompactAdvice, CompactFix, advise_compact
from compactlens.analysis.protocol import transcript_provider, verdict_provider
from compactlens.analysis.retrigger import DEFAULT_CONTEXT_WINDOW
from compactlens.analysis.verdict import verdict_card
from compactlens.engine import MessageIndex, run_guards
from compactlens.engine.vocabulary import plural
from compactlens.formats import caller_format
from compactlens.model import Tokenizer, card_html
from compactlens.model.errors import ConfigError
from compactlens.notebook.debugger import source_index
from compactlens.notebook.widgets import (
    Snapshot,
    fix_controls,
    load_widgets,
    show_panel,
    window_words,
)
from compactlens.summarizers import Summarizer
from compactlens.transcript import Transcript


class CompactDebugger:
    """The verdict of a ``compact()`` call over ``index`` with ``settings``, its ranked
    fixes and what applying one gives (see the module docstring)."""

    def __init__(
        self,
        index: MessageIndex,
        settings: CompactFix,
        *,
        provider: str | None = None,
        context_window: int | None = DEFAULT_CONTEXT_WINDOW,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.index = index
        self.settings = settings
        self.provider = provider
        self.summarizer = summarizer
        #: The analysis settings every verdict here is judged with (the context window).
        self.analysis = {"context_window": context_window} if context_window else {}
        #: The call judged, its one next step and its listed fixes.
        self.advice: CompactAdvice = self._advise(settings)
        #: The applied fix's advice (None until Apply).
        self.applied: CompactAdvice | None = None
        self._build()

    @property
    def verdict(self) -> Any:
        """The call's verdict; its next step is the one every surface gives."""
        return self.advice.verdict

    @property
    def fixes(self) -> tuple[CompactFix, ...]:
        """The listed fixes, the best first (none when the call fits and is safe)."""
        return self.advice.fixes

    def apply(self, rank: int | None = None) -> CompactAdvice:
        """Run fix number ``rank`` (0 is the best; default: the one selected), show its
        verdict with its own next step, and return that advice."""
        chosen = self.choice.value if rank is None else rank
        if not self.fixes:
            raise ConfigError(self._none())
        fix = self.fixes[chosen]
        self.applied = self._advise(fix)
        self.after.value = f"<div><b>applied</b> {escape(fix.words)}</div>" + card_html(
            verdict_card(self.applied.verdict)
        )
        self.snapshot.update(self.before.value + self.after.value, None)
        return self.applied

    @property
    def panel(self) -> Any:
        return self._panel

    def _ipython_display_(self) -> None:
        text = f"compactlens compact() debugger: {plural(len(self.fixes), 'fix')}"
        show_panel(self._panel, text)
        self.snapshot.show()

    def _advise(self, settings: CompactFix) -> CompactAdvice:
        return advise_compact(
            self.index,
            settings,
            summarizer=self.summarizer,
            analysis=self.analysis,
            provider=self.provider,
        )

    def _build(self) -> None:
        w = load_widgets()
        self.before = w.HTML(card_html(verdict_card(self.verdict)))
        controls = fix_controls(
            w,
            before=self.before,
            note=self._note(),
            lines=[compact_fix_line(f) for f in self.fixes],
            empty=self._none(),
            table_html=compact_fix_table_html(self.fixes, self.settings),
            on_apply=self.apply,
            kind="compactlens-compact-debugger",
        )
        self.choice, self.table = controls.choice, controls.table
        self.apply_button, self.after = controls.apply_button, controls.after
        self._panel = controls.panel
        self.snapshot = Snapshot(with_figure=False)
        self.snapshot.update(self.before.value + self.table.value, None)

    def _none(self) -> str:
        if self.verdict.level == "safe":
            return "nothing to fix: the call fits and every check passed"
        if self.advice.tried:
            return f"no change of the {self.advice.tried:,} re-run improves on the call"
        return "no change was re-run"

    def _note(self) -> str:
        n = len(self.fixes)
        if not n:
            return f"<b>{escape(self._none()[:1].upper() + self._none()[1:])}</b>"
        what = "improvement" if self.verdict.level == "costs" else "fix"
        window = window_words(self.analysis.get("context_window"))
        return f"<b>{plural(n, what)}</b> ranked of {self.advice.tried:,} tried · {window}"


def compact_fix_line(fix: CompactFix) -> str:
    """A fix in one line: the change in words, then the verdict of the run it gives."""
    v = fix.verdict
    return f"{fix.words} ({v.headline}: {v.summary})" if v is not None else fix.words


def compact_fix_table_html(fixes: Sequence[CompactFix], base: CompactFix) -> str:
    """The fixes as a table (rank, change, the settings it gives, tokens after of the
    target, fact recall and the verdict's headline, as the fix's verdict counts them);
    every text escaped."""
    if not fixes:
        return ""
    cell = "padding:2px 8px;text-align:left;vertical-align:top"
    heads = ("#", "change", "tokens", "fact recall", "verdict")
    head = "".join(f'<th style="{cell}">{h}</th>' for h in heads)
    rows = []
    for i, fix in enumerate(fixes, 1):
        v = fix.verdict
        n = v.numbers if v is not None else None
        tokens = f"{n.tokens_after:,} of {fix.target_tokens:,}" if n is not None else ""
        values = (
            str(i),
            fix.words,
            tokens,
            n.recall_text if n is not None else "not measured",
            v.headline if v is not None else "not judged",
        )
        rows.append(
            "<tr>"
            + "".join(
                f'<td style="{cell}{"" if k == 1 else ";white-space:nowrap"}">{escape(t)}</td>'
                for k, t in enumerate(values)
            )
        )
    return (
        '<div data-role="fixes" style="overflow-x:auto;max-width:100%;font-size:13px">'
        f'<table style="border-collapse:collapse"><tr>{head}</tr>{"".join(rows)}</table></div>'
    )


def debug_compact(
    source: Transcript | MessageIndex | Sequence[Any],
    *,
    target_tokens: int,
    keep_last_messages: int = 4,
    trigger_tokens: int | None = None,
    tokenizer: Tokenizer | None = None,
    context_window: int | None = DEFAULT_CONTEXT_WINDOW,
    summarizer: Summarizer | None = None,
) -> CompactDebugger:
    """A debugger of ``compact(source, target_tokens=..., keep_last_messages=...)`` (with
    ``trigger_tokens``: only when the history is over it) over ``source`` (a transcript,
    its index, or its messages), counted with ``tokenizer`` (default: the estimate) and
    summarized by ``summarizer`` (default: the extractive one, which needs no model; a
    model summarizer is called once per fix judged). ``context_window``: the model's
    context window: a compacted history over it is a cost, and no fix goes past it.
    Problems are counted for the transcript's own provider, else its format's."""
    index, format_name = source_index(source, tokenizer)
    guards = run_guards(format_name if format_name else caller_format(index.messages), None)
    provider = verdict_provider(transcript_provider(index.messages), guards.provider)
    settings = CompactFix(
        target_tokens=target_tokens,
        keep_last_messages=keep_last_messages,
        trigger_tokens=trigger_tokens,
    )
    return CompactDebugger(
        index,
        settings,
        provider=provider,
        context_window=context_window,
        summarizer=summarizer,
    )


__all__ = ["CompactDebugger", "compact_fix_line", "compact_fix_table_html", "debug_compact"]
