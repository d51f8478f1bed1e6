"""``debug()``: why a run cannot fit, the ranked fixes, and an Apply button.

The fixes come from :func:`compactlens.analysis.search_fixes` (each candidate re-run over
the cached index and scored: latest request kept, provider-valid, fact recall, tokens,
changes), each judged by the verdict of the run it gives
(:func:`compactlens.analysis.judge_fixes`). The run's own verdict decides what is listed
(:func:`compactlens.analysis.listed_fixes`): nothing when it fits and is safe ("Nothing
to fix"), improvements when it fits with costs, the fixes when it does not fit; its card's
next step is the first listed fix, so card and list agree. Apply re-runs the chosen fix
and shows its verdict beside the original's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from html import escape
from typing import Any

from compactlens.analysis import (
    Fix,
    FixSearch,
    ShownFixes,
    Verdict,
    advise,
    fitting_target,
    fix_mark,
    fix_recall,
    shown_fixes,
)
from compactlens.analysis.retrigger import DEFAULT_CONTEXT_WINDOW
from compactlens.analysis.verdict import verdict_card
from compactlens.engine import (
    CompactionResult,
    Guards,
    MessageIndex,
    Strategy,
    profile_guards,
    run_guards,
    run_strategy,
)
from compactlens.engine.display import explanation_card
from compactlens.engine.vocabulary import plural
from compactlens.formats import caller_format
from compactlens.model import CharEstimator, Message, Tokenizer, card_html
from compactlens.model.errors import ConfigError
from compactlens.notebook.widgets import (
    Snapshot,
    fix_controls,
    load_widgets,
    show_panel,
    window_words,
)
from compactlens.transcript import Transcript


class Debugger:
    """The explanation of ``result``, the ranked fixes for ``strategy`` over ``index``, and
    what applying one gives (see the module docstring)."""

    def __init__(
        self,
        result: CompactionResult,
        *,
        index: MessageIndex,
        strategy: Strategy,
        guards: Guards | None = None,
        include_destructive: bool = False,
        on_apply: Callable[[Fix], Any] | None = None,
        format: str | None = None,
        tokenizer_given: bool = True,
        advice: tuple[Verdict, FixSearch] | None = None,
        context_window: int | None = DEFAULT_CONTEXT_WINDOW,
    ) -> None:
        self.result = result
        #: The analysis settings every verdict here is judged with: the model's context
        #: window, when one is given (no fix then raises the target past it).
        self.analysis = {"context_window": context_window} if context_window else None
        self.index = index
        self.strategy = strategy
        self.tokenizer_given = tokenizer_given
        # The guards the command line and the inspector run and judge this transcript
        # with: the provider follows the transcript's format (``format``; default: the
        # one its messages were read from) unless the guards choose one.
        guards = run_guards(format if format is not None else caller_format(index.messages), guards)
        self.guards = guards
        self.on_apply = on_apply
        if advice is None:
            advice = advise(
                index,
                result,
                strategy,
                guards,
                tokenizer_given=tokenizer_given,
                include_destructive=include_destructive,
                analysis=self.analysis,
            )
        judged, self.search = advice
        self.include_destructive = include_destructive
        #: The run's verdict; its next step is the one every surface gives
        #: (:func:`compactlens.analysis.advised`).
        self.verdict: Verdict = judged
        self.applied: CompactionResult | None = None
        self.applied_fix: Fix | None = None
        self._build()

    @property
    def shown(self) -> ShownFixes:
        """What is listed for this run and how many destructive fixes are hidden, by the
        rule every surface uses (:func:`compactlens.analysis.shown_fixes`)."""
        return shown_fixes(
            self.search.fixes, self.verdict, include_destructive=self.include_destructive
        )

    @property
    def fixes(self) -> tuple[Fix, ...]:
        """The fixes listed for this run (:attr:`shown`)."""
        return self.shown.fixes

    @property
    def nothing_to_fix(self) -> bool:
        """True when the run fits and every check passed."""
        return self.verdict.level == "safe"

    def apply(self, rank: int | None = None) -> CompactionResult:
        """Run fix number ``rank`` (0 is the best; default: the one selected) and show it."""
        chosen = self.choice.value if rank is None else rank
        if not self.fixes:
            raise ConfigError(self._none())
        fix = self.fixes[chosen]
        self.applied = run_strategy(
            self.index, fix.strategy, guards=fix.guards, tokenizer_given=self.tokenizer_given
        )
        self.applied_fix = fix
        # The applied run's verdict with its own next step (the fix search over it), the
        # one debug() of that run gives: the fix's verdict was judged without it.
        after, _search = advise(
            self.index,
            self.applied,
            fix.strategy,
            fix.guards,
            tokenizer_given=self.tokenizer_given,
            include_destructive=self.include_destructive,
            analysis=self.analysis,
        )
        self.after.value = _after_html(fix, self.applied, after)
        self.snapshot.update(self.before.value + self.after.value, None)
        if self.on_apply is not None:
            self.on_apply(fix)
        return self.applied

    @property
    def panel(self) -> Any:
        return self._panel

    def _ipython_display_(self) -> None:
        show_panel(
            self._panel,
            f"compactlens debugger: {plural(len(self.fixes), 'fix')} for {self.result!r}",
        )
        self.snapshot.show()

    def _build(self) -> None:
        w = load_widgets()
        card = card_html(verdict_card(self.verdict))
        # The explanation's own suggestion would be a second "top fix": the card's next
        # step is the one.
        # Its "target that fits" is the one the one-click larger target sets (the trigger
        # with it), never a smaller number beside that fix.
        explained = explanation_card(self.result.explanation)
        fitting = fitting_target(self.verdict, self.search)
        extra = (("target that fits", fitting.short),) if fitting is not None else ()
        why = card_html(replace(explained, fix="", facts=(*explained.facts, *extra)))
        self.before = w.HTML(card + ("" if self.nothing_to_fix else why))
        controls = fix_controls(
            w,
            before=self.before,
            note=self._note(),
            lines=[fix_line(f) for f in self.fixes],
            empty="nothing to fix" if self.nothing_to_fix else "no fix found",
            table_html=fix_table_html(self.fixes),
            on_apply=self.apply,
            kind="compactlens-debugger",
        )
        self.choice, self.table = controls.choice, controls.table
        self.apply_button, self.after = controls.apply_button, controls.after
        self._panel = controls.panel
        self.snapshot = Snapshot(with_figure=False)
        self.snapshot.update(self.before.value + fix_table_html(self.fixes), None)

    def _none(self) -> str:
        if self.nothing_to_fix:
            return "nothing to fix: the run fits and every check passed"
        if self.verdict.level == "costs":
            return "no change found fails fewer checks than the run"
        return self.search.none_reason or "no change found that fits"

    def _note(self) -> str:
        n = len(self.fixes)
        if not n:
            return f"<b>{escape(self._none()[:1].upper() + self._none()[1:])}</b>"
        what = "improvement" if self.verdict.level == "costs" else "fix"
        head = f"<b>{plural(n, what)}</b>"
        hidden = self.shown.hidden + self.search.hidden_destructive
        more = (
            ""
            if not hidden
            else f"; {plural(hidden, 'destructive fix')} {'is' if hidden == 1 else 'are'} hidden"
        )
        window = window_words((self.analysis or {}).get("context_window"))
        return f"{head} ranked of {self.search.tried:,} tried{more} · {window}"


def fix_line(fix: Fix) -> str:
    """A fix in one line: the changes in plain words, then the verdict of the run it
    gives (headline and summary; its tokens when it was not judged)."""
    v = fix.verdict
    gives = f"{v.headline}: {v.summary}" if v is not None else f"{fix.tokens_after:,} tokens"
    mark = fix_mark(fix)
    return f"{fix.plain_summary} ({mark + ': ' if mark else ''}{gives})"


def fix_table_html(fixes: Sequence[Fix]) -> str:
    """The fixes as a table (rank, change, tokens after of the target, fact recall as the
    fix's verdict counts it, groups dropped, notes) that scrolls sideways rather than
    overflowing; every text escaped."""
    if not fixes:
        return ""
    cell = "padding:2px 8px;text-align:left;vertical-align:top"
    head = "".join(
        f'<th style="{cell}">{h}</th>'
        for h in ("#", "change", "tokens", "recall", "dropped", "notes")
    )
    rows = []
    for i, fix in enumerate(fixes, 1):
        target = f" of {fix.target_tokens:,}" if fix.target_tokens is not None else ""
        notes = [n for n in (fix_mark(fix),) if n]
        if not fix.request_kept:
            notes.append("loses the latest request")
        values = (
            str(i),
            fix.plain_summary,
            f"{fix.tokens_after:,}{target}",
            f"{fix_recall(fix):.0%}",
            f"{fix.groups_dropped:,}",
            ", ".join(notes),
        )
        rows.append(
            "<tr>"
            + "".join(
                f'<td style="{cell}{"" if n == 1 else ";white-space:nowrap"}">{escape(v)}</td>'
                for n, v in enumerate(values)
            )
        )
    return (
        '<div data-role="fixes" style="overflow-x:auto;max-width:100%;font-size:13px">'
        f'<table style="border-collapse:collapse"><tr>{head}</tr>{"".join(rows)}</table></div>'
    )


def _after_html(fix: Fix, result: CompactionResult, judged: Verdict | None) -> str:
    head = f"<div><b>applied</b> {escape(fix.plain_summary)}</div>"
    if judged is None or judged.numbers.tokens_after != result.tokens_after:
        return head + f"<div>{escape(result.status)}: {result.tokens_after:,} tokens</div>"
    return head + card_html(verdict_card(judged))


def source_index(
    source: Transcript | MessageIndex | Sequence[Any], tokenizer: Tokenizer | None
) -> tuple[MessageIndex, str | None]:
    """The index a debugger works on (``source`` itself when it is one, else built with
    ``tokenizer``, default the estimate) and the wire format its messages came in (None
    for an index)."""
    if isinstance(source, MessageIndex):
        return source, None
    messages: Sequence[Message]
    if isinstance(source, Transcript):
        messages, format_name = source.messages, source.format
    else:
        from compactlens.formats import from_caller

        caller = from_caller(list(source))
        messages, format_name = caller.messages, caller.format.name
    return MessageIndex.build(messages, tokenizer or CharEstimator()), format_name


def debug(
    result: CompactionResult,
    strategy: Strategy,
    source: Transcript | MessageIndex | Sequence[Any],
    *,
    tokenizer: Tokenizer | None = None,
    guards: Guards | None = None,
    profile: str | None = None,
    include_destructive: bool = False,
    context_window: int | None = DEFAULT_CONTEXT_WINDOW,
) -> Debugger:
    """A debugger of ``result``, the run of ``strategy`` over ``source`` (a transcript, its
    index, or its messages); counts with ``tokenizer`` (default: the estimate).

    ``guards`` (default: the ``profile``'s) are completed as the command line completes
    them (:func:`compactlens.engine.run_guards`: the provider follows the transcript's
    format unless one is chosen), so the verdict, the fixes and the next step are the ones
    ``compactlens compact --explain`` gives for the same run. ``context_window``: the
    model's context window (as ``compactlens compact --context-window``): a compacted
    history over it is a cost, and no fix raises the target past it."""
    index, format_name = source_index(source, tokenizer)
    return Debugger(
        result,
        index=index,
        strategy=strategy,
        guards=guards if guards is not None else profile_guards(profile),
        include_destructive=include_destructive,
        format=format_name,
        context_window=context_window,
    )
