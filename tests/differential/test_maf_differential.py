"""Differential tests: Microsoft Agent Framework's strategies vs ours under the maf profile.

Seeded random conversations (system messages mid-conversation, parallel calls,
out-of-order results, several results in one message, reasoning before calls and
answers and beside calls, hosted MCP / code-interpreter / shell calls, reused call
ids, text beside calls) x every strategy both libraries have x several parameter
settings. Each case runs MAF's strategy through its own API and ours under the maf
profile with one shared token count, and compares what the model would see. The
only documented difference (docs/compat.md) is the summary message's wording.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("agent_framework", reason="agent-framework-core (dev extra) is not installed")

from agent_framework import Message as MafMessage
from agent_framework import _compaction as maf

from compactlens.engine.index import MessageIndex
from compactlens.engine.profiles import get_profile
from compactlens.engine.strategies import (
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
)
from compactlens.engine.strategies.base import Strategy
from compactlens.formats import agent_framework
from compactlens.formats.agent_framework import to_messages
from compactlens.summarizers.testing import FakeSummarizer
from compactlens.transcript import load_transcript

from .maf_harness import (
    SUMMARY_TEXT,
    FixedClient,
    MafTable,
    conversation,
    run_maf,
    run_ours,
    token_table,
)

SEEDS = range(24)
TURNS = (2, 4, 7)


@dataclass(frozen=True)
class Case:
    family: str
    setting: str
    maf: Callable[[MafTable], Any]
    ours: Strategy
    tokens: bool


def _summarizer() -> FakeSummarizer:
    return FakeSummarizer(text=SUMMARY_TEXT)


def cases(n_messages: int, total_tokens: int) -> Iterator[Case]:
    """Every strategy both libraries have, at several settings scaled to the conversation."""
    for frac in (0.3, 0.6):
        for preserve_system in (True, False):
            for first_user in (False, True):
                max_n = max(2, int(n_messages * (frac + 0.2)))
                to = max(1, int(n_messages * frac))
                yield Case(
                    "truncation",
                    f"messages {max_n}->{to} system={preserve_system} first_user={first_user}",
                    lambda t, a=max_n, b=to, s=preserve_system, f=first_user: (
                        maf.TruncationStrategy(
                            max_n=a, compact_to=b, preserve_system=s, preserve_first_user_group=f
                        )
                    ),
                    TruncationStrategy(
                        max_n=max_n,
                        compact_to=to,
                        preserve_system=preserve_system,
                        preserve_first_user_group=first_user,
                    ),
                    False,
                )
        max_t = max(2, int(total_tokens * (frac + 0.2)))
        to_t = max(1, int(total_tokens * frac))
        yield Case(
            "truncation",
            f"tokens {max_t}->{to_t}",
            lambda t, a=max_t, b=to_t: maf.TruncationStrategy(max_n=a, compact_to=b, tokenizer=t),
            TruncationStrategy(max_n=max_t, compact_to=to_t),
            True,
        )
    for keep in (1, 2, 4):
        for preserve_system in (True, False):
            yield Case(
                "sliding_window",
                f"keep_last_groups={keep} system={preserve_system}",
                lambda t, k=keep, s=preserve_system: maf.SlidingWindowStrategy(
                    keep_last_groups=k, preserve_system=s
                ),
                SlidingWindowStrategy(keep_last_groups=keep, preserve_system=preserve_system),
                False,
            )
    for keep in (0, 1, 2):
        yield Case(
            "selective_tool_calls",
            f"keep={keep}",
            lambda t, k=keep: maf.SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=k),
            SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=keep),
            False,
        )
        yield Case(
            "tool_result_collapse",
            f"keep={keep}",
            lambda t, k=keep: maf.ToolResultCompactionStrategy(keep_last_tool_call_groups=k),
            ToolResultCompactionStrategy(keep_last_tool_call_groups=keep),
            False,
        )
    yield Case(
        "summarization",
        "target_count=3, threshold left to the default",
        lambda t: maf.SummarizationStrategy(
            client=FixedClient(), target_count=3, max_summary_input_tokens=None
        ),
        SummarizationStrategy(summarizer=_summarizer(), target_count=3, max_input_tokens=10**9),
        False,
    )
    for target in (1, 3, 6):
        for threshold in (0, 2):
            yield Case(
                "summarization",
                f"target_count={target} threshold={threshold}",
                lambda t, c=target, h=threshold: maf.SummarizationStrategy(
                    client=FixedClient(),
                    target_count=c,
                    threshold=h,
                    max_summary_input_tokens=None,
                ),
                SummarizationStrategy(
                    summarizer=_summarizer(),
                    target_count=target,
                    threshold=threshold,
                    max_input_tokens=10**9,
                ),
                False,
            )
    for frac in (0.25, 0.5, 0.8):
        budget = max(1, int(total_tokens * frac))
        children: list[tuple[str, Callable[[], list[Any]], tuple[Strategy, ...]]] = [
            ("fallback only", list, ()),
            (
                "tool results",
                lambda: [maf.ToolResultCompactionStrategy(keep_last_tool_call_groups=1)],
                (ToolResultCompactionStrategy(keep_last_tool_call_groups=1),),
            ),
            (
                "selective + window",
                lambda: [
                    maf.SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1),
                    maf.SlidingWindowStrategy(keep_last_groups=3),
                ],
                (
                    SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1),
                    SlidingWindowStrategy(keep_last_groups=3),
                ),
            ),
        ]
        for label, maf_children, our_children in children:
            yield Case(
                "token_budget",
                f"budget={budget} {label}",
                lambda t, b=budget, c=maf_children: maf.TokenBudgetComposedStrategy(
                    token_budget=b, tokenizer=t, strategies=c()
                ),
                TokenBudgetComposedStrategy(token_budget=budget, strategies=our_children),
                True,
            )


def _all_runs() -> Iterator[tuple[int, int, Case, Any, Any]]:
    for seed in SEEDS:
        turns = TURNS[seed % len(TURNS)]
        dicts = conversation(seed, turns)
        counts = token_table(dicts, seed)
        for case in cases(len(dicts), sum(counts)):
            theirs = run_maf(dicts, counts, case.maf, tokens=case.tokens)
            ours = run_ours(dicts, counts, case.ours, tokens=case.tokens)
            yield seed, turns, case, theirs, ours


@pytest.fixture(scope="module")
def runs() -> list[tuple[int, int, Case, Any, Any]]:
    return list(_all_runs())


@pytest.mark.slow
def test_every_strategy_agrees_with_maf(runs: list[tuple[int, int, Case, Any, Any]]) -> None:
    agree: Counter[str] = Counter()
    total: Counter[str] = Counter()
    failures: list[str] = []
    for seed, turns, case, theirs, ours in runs:
        total[case.family] += 1
        if theirs == ours:
            agree[case.family] += 1
        elif len(failures) < 8:
            failures.append(
                f"seed={seed} turns={turns} {case.family} {case.setting}:\n"
                f"  maf:  {theirs}\n  ours: {ours}"
            )
    report = ", ".join(f"{f} {agree[f]}/{total[f]}" for f in sorted(total))
    print(f"\nagreement per strategy: {report}")
    assert not failures, f"agreement: {report}\n" + "\n".join(failures)


def test_the_runs_exercise_every_feature(runs: list[tuple[int, int, Case, Any, Any]]) -> None:
    """Guard against a generator that stops producing what the suite claims to cover."""
    kinds: Counter[str] = Counter()
    changed: Counter[str] = Counter()
    for seed in SEEDS:
        dicts = conversation(seed, TURNS[seed % len(TURNS)])
        for i, d in enumerate(dicts):
            types = [c["type"] for c in d["contents"]]
            calls = types.count("function_call")
            kinds["system mid-conversation"] += d["role"] == "system" and i > 0
            kinds["parallel calls"] += calls > 1
            kinds["several results in one message"] += types.count("function_result") > 1
            kinds["reasoning beside a call"] += calls > 0 and "text_reasoning" in types
            kinds["text beside a call"] += calls > 0 and "text" in types
            kinds["reasoning-only message"] += set(types) == {"text_reasoning"}
            kinds["mcp call"] += "mcp_server_tool_call" in types
            kinds["code interpreter"] += "code_interpreter_tool_call" in types
            kinds["shell"] += "shell_tool_call" in types
        ids = [c["call_id"] for d in dicts for c in d["contents"] if c["type"] == "function_call"]
        kinds["reused call id"] += len(ids) != len(set(ids))
    for _seed, _turns, case, theirs, _ours in runs:
        changed[case.family] += theirs != list(range(len(theirs))) or any(
            isinstance(x, tuple) for x in theirs
        )
    missing = [
        k
        for k in (
            "system mid-conversation",
            "parallel calls",
            "several results in one message",
            "reasoning beside a call",
            "text beside a call",
            "reasoning-only message",
            "mcp call",
            "code interpreter",
            "shell",
            "reused call id",
        )
        if kinds[k] == 0
    ]
    assert not missing, f"the generator never produced: {missing}"
    assert all(changed[f] > 0 for f in changed), f"some strategy never changed anything: {changed}"


CORPUS_MESSAGES = 120  # the head of each transcript: enough tool traffic, a few seconds in all


@pytest.mark.slow
def test_corpus_transcripts_agree_with_maf(corpus_files: list[Path]) -> None:
    """Real transcripts, written in agent-framework form by our encoder, under every case."""
    agree: Counter[str] = Counter()
    total: Counter[str] = Counter()
    failures: list[str] = []
    for path in corpus_files:
        messages = load_transcript(path).messages[:CORPUS_MESSAGES]
        dicts = [agent_framework.from_message(m) for m in messages]
        for i, d in enumerate(dicts):
            d["message_id"] = f"m{i}"
        counts = token_table(dicts, len(dicts))
        for case in cases(len(dicts), sum(counts)):
            theirs = run_maf(dicts, counts, case.maf, tokens=case.tokens)
            ours = run_ours(dicts, counts, case.ours, tokens=case.tokens)
            total[case.family] += 1
            if theirs == ours:
                agree[case.family] += 1
            elif len(failures) < 4:
                failures.append(f"{path.name} {case.family} {case.setting}")
    report = ", ".join(f"{f} {agree[f]}/{total[f]}" for f in sorted(total))
    print(f"\ncorpus agreement per strategy: {report}")
    assert not failures, f"agreement: {report}\n" + "\n".join(failures)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10**6), turns=st.integers(min_value=1, max_value=6))
def test_groups_kinds_and_reasoning_flags_match_maf(seed: int, turns: int) -> None:
    """The maf profile's index partitions like MAF's annotation, with the same kinds and
    the same has-reasoning flag on every group."""
    dicts = conversation(seed, turns)
    msgs = [MafMessage.from_dict(json.loads(json.dumps(d))) for d in dicts]
    maf.annotate_message_groups(msgs)
    theirs: dict[str, list[int]] = {}
    for i, m in enumerate(msgs):
        theirs.setdefault(maf._group_id(m) or "", []).append(i)
    annotations = {tuple(v): maf._read_group_annotation(msgs[v[0]]) or {} for v in theirs.values()}
    index = MessageIndex.build(to_messages(dicts), grouping=get_profile("maf").grouping)
    ours = {g.indices: g for g in index.groups}
    assert sorted(ours) == sorted(annotations)
    for indices, note in annotations.items():
        group = ours[indices]
        assert group.kind.value == note.get("kind"), indices
        assert ("reasoning" in group.flags) == bool(note.get("has_reasoning")), indices
