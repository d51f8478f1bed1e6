"""Story mode as plain data (no Streamlit here): a guided walk through one bundled
transcript, from the problem to the fix.

Five steps, each a deep link (``story?step=N``): the history outgrows its budget; what
each strategy does to it; what was lost (fact survival); what it costs (prompt cache,
price); and, on the sample that cannot fit, the fix search. :func:`build_story` runs
everything once, offline (the extractive summarizer), over indexes the caller built and
cached; the page only draws the values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from compactlens import CompactionResult, MessageIndex, Verdict
from compactlens.analysis import FACT_KIND_LABELS, Fact, Fix, advised
from compactlens_inspector.lab.config import LabConfig, SummarizerSettings, default_stage
from compactlens_inspector.lab.presets import nice_budget, preset
from compactlens_inspector.lab.runs import (
    RunOutcome,
    find_fixes,
    fix_config,
    make_summarizer,
    run_config,
)
from compactlens_inspector.views.analysis import AnalysisSettings, judge, run_analysis
from compactlens_inspector.views.fixes import FixRow, fix_rows

#: The transcripts the story walks through (bundled samples, by file stem).
STORY_SAMPLE = "coding_agent"
CANNOT_FIT_SAMPLE = "cannot_fit_16k"
#: The trigger of the configuration that cannot fit the ``cannot_fit_16k`` sample.
CANNOT_FIT_TRIGGER = 12_000


@dataclass(frozen=True, slots=True)
class Step:
    key: str
    title: str
    lede: str


STEPS: tuple[Step, ...] = (
    Step(
        "problem",
        "The history outgrows the window",
        "Every turn adds messages, tool calls and tool output. Long before the task is done, "
        "the history no longer fits the budget the model can take.",
    ),
    Step(
        "strategies",
        "What each strategy does",
        "Four ways to shrink the same history to the same budget. Groups (a tool call with "
        "its results) are kept, removed, collapsed or summarized whole, never split.",
    ),
    Step(
        "lost",
        "What was lost",
        "Compaction is lossy. We extract facts (paths, numbers, identifiers, decisions) "
        "from what was removed or rewritten and check which of them survive.",
    ),
    Step(
        "cost",
        "What it costs",
        "Rewriting the start of the history invalidates the provider's prompt cache. A "
        "smaller history is cheaper per turn; the question is when it pays for itself.",
    ),
    Step(
        "fix",
        "When it cannot fit, and the fix",
        "Some histories cannot reach the target: what is left is protected. The fix search "
        "re-runs variants and ranks the changes a user would accept.",
    ),
)

#: The strategies the story compares (preset names) and what each does, in words.
STRATEGIES: tuple[tuple[str, str, str], ...] = (
    ("truncation", "Truncation", "Drops the oldest groups until the history fits."),
    ("sliding_window", "Sliding window", "Drops the oldest whole turns, keeping recent ones."),
    (
        "tool_collapse",
        "Tool-result collapse",
        "Replaces old tool output with a one-line note; keeps every message.",
    ),
    (
        "reference",
        "Reference pipeline",
        "Collapse, then summarize, then slide the window, then truncate: each stage runs "
        "only while the history is still over the budget.",
    ),
)


def step_number(raw: object) -> int:
    """The step a link asks for (1-based), clamped to the steps; 1 when unreadable."""
    try:
        n = int(str(raw))
    except ValueError:
        return 1
    return min(max(n, 1), len(STEPS))


@dataclass(frozen=True, slots=True)
class StrategyRun:
    """One strategy on the story's transcript: its result, its verdict (the tokens, group
    counts and fact recall the story shows) and the cache numbers of its analysis."""

    key: str
    title: str
    what: str
    config: LabConfig
    result: CompactionResult
    lost_examples: tuple[tuple[str, str], ...]  # (fact kind, value): transcript text
    cache_kept: float
    cost_without: float | None
    cost_with: float | None
    break_even_turn: int | None
    verdict: Verdict  # the run's one verdict: its headline and numbers are what the story shows
    minor_lost: int = 0  # timestamps, hashes, redaction placeholders not kept (apart)


@dataclass(frozen=True, slots=True)
class FixStory:
    """The cannot-fit sample: the configuration, why it fails, and the best fixes, found
    and judged as the Cannot-fit debugger finds and judges them (the same search, each fix
    read as the verdict of the run it gives once applied, in the debugger's order)."""

    config: LabConfig
    tokens: int
    target: int
    reason: str
    tried: int  # the changes the search re-ran
    fixes: tuple[FixRow, ...]  # the first fixes the debugger lists
    verdict: Verdict  # the cannot-fit run's verdict, as the debugger's bar shows it


@dataclass(frozen=True, slots=True)
class Story:
    budget: int
    total_tokens: int
    runs: tuple[StrategyRun, ...]
    fix: FixStory | None


#: The kinds of fact a stakeholder recognises first, in the order "what was lost" shows them.
_RECOGNISABLE: tuple[str, ...] = (
    "latest_request",
    "identifier",
    "path",
    "money",
    "quantity",
    "email",
    "url",
    "date",
    "quoted",
    "tool_name",
)


def recognisable(lost: Sequence[Fact]) -> tuple[tuple[str, str], ...]:
    """Lost facts as (kind in words, value), the kinds a stakeholder recognises first
    (identifiers, paths, amounts before quoted text and tool names), at most one value
    per kind before a second of any (so five examples show five kinds when there are).
    Minor values (timestamps, hashes) are not facts here: the report keeps them apart."""
    ranked = sorted(
        enumerate(lost),
        key=lambda nf: (_RECOGNISABLE.index(nf[1].kind), nf[0]),
    )
    firsts: list[Fact] = []
    rest: list[Fact] = []
    seen: set[str] = set()
    for _, f in ranked:
        (rest if f.kind in seen else firsts).append(f)
        seen.add(f.kind)
    return tuple((FACT_KIND_LABELS[f.kind], f.value) for f in (*firsts, *rest))


def run_strategy_story(
    index: MessageIndex,
    key: str,
    title: str,
    what: str,
    budget: int,
    format_name: str,
    settings: AnalysisSettings | None = None,
) -> StrategyRun | None:
    """One preset at ``budget`` over ``index``, with its analysis (``settings``, default
    the Analysis page's defaults; None on an error)."""
    config = preset(key, budget)
    outcome = run_config(
        index, config, make_summarizer(SummarizerSettings()), format_name=format_name
    )
    report = run_analysis(index, outcome, settings or AnalysisSettings())
    r = outcome.result
    judged = judge(outcome, report)
    if r is None or report is None or judged is None:
        return None
    lost = recognisable(report.facts.lost)
    cost = report.cache.cost
    return StrategyRun(
        key=key,
        title=title,
        what=what,
        config=config,
        result=r,
        lost_examples=lost[:5],
        minor_lost=len(report.facts.minor_lost),
        cache_kept=report.cache.prefix_fraction,
        cost_without=cost.cost_without if cost else None,
        cost_with=cost.cost_with if cost else None,
        break_even_turn=cost.break_even_turn if cost else None,
        verdict=judged,
    )


def cannot_fit_config(trigger: int = CANNOT_FIT_TRIGGER) -> LabConfig:
    """A sliding window at ``trigger`` tokens: on ``cannot_fit_16k`` it cannot fit."""
    return LabConfig(stages=(default_stage("sliding_window", trigger),), label="")


def fix_story(
    index: MessageIndex, format_name: str, settings: AnalysisSettings | None = None
) -> FixStory | None:
    """The cannot-fit configuration over ``index`` and the first three fixes the Cannot-fit
    debugger lists for it: the run and every fix judged as the debugger judges them (each
    fix by the verdict of the run it gives once applied), in the debugger's order."""
    config = cannot_fit_config()
    summarizer = make_summarizer(SummarizerSettings())
    chosen = settings or AnalysisSettings()  # the Analysis page's: its context window too

    def judged(cfg: LabConfig) -> tuple[RunOutcome, Verdict | None]:
        outcome = run_config(index, cfg, summarizer, explain=False, format_name=format_name)
        return outcome, judge(outcome, run_analysis(index, outcome, chosen))

    outcome, current = judged(config)
    r = outcome.result
    if r is None or current is None:
        return None

    def judged_fix(fix: Fix) -> Fix:
        v = judged(fix_config(fix, config))[1]
        return replace(fix, verdict=v) if v is not None else fix

    search = find_fixes(index, outcome, context_window=chosen.context_window)
    if search is not None:
        search = replace(search, fixes=tuple(judged_fix(f) for f in search.fixes))
    # The run's one next step and the fixes behind it, as the debugger gives them.
    current, search = (
        advised(
            index,
            outcome.strategy,
            current,
            search,
            guards=outcome.guards,
            summaries=r.summaries,
            judge=judged_fix,
        )
        if outcome.strategy is not None
        else (current, search)
    )
    fixes = list(search.fixes) if search is not None else []
    return FixStory(
        config=config,
        tokens=r.tokens_before,
        target=config.target_tokens or CANNOT_FIT_TRIGGER,
        reason=r.reason or r.explanation.summary,
        tried=search.tried if search is not None else 0,
        fixes=tuple(fix_rows(fixes, current)[:3]),
        verdict=current,
    )


def build_story(
    index: MessageIndex,
    format_name: str,
    cannot_fit: MessageIndex | None = None,
    cannot_fit_format: str = "",
    settings: AnalysisSettings | None = None,
) -> Story:
    """Every step's numbers: the strategies at half the history's tokens, and the fix,
    judged with ``settings`` (the Analysis page's: every page judges the same window)."""
    budget = nice_budget(index.total_tokens)
    runs = [
        run_strategy_story(index, key, title, what, budget, format_name, settings)
        for key, title, what in STRATEGIES
    ]
    fix = fix_story(cannot_fit, cannot_fit_format, settings) if cannot_fit is not None else None
    return Story(
        budget=budget,
        total_tokens=index.total_tokens,
        runs=tuple(r for r in runs if r is not None),
        fix=fix,
    )
