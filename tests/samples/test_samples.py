"""The bundled sample transcripts load, have the properties they are bundled for, match
their README table, and are exactly what their generator scripts write."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from compactlens import (
    CharEstimator,
    Message,
    MessageIndex,
    SlidingWindowStrategy,
    TiktokenTokenizer,
    TruncationStrategy,
    apply_compaction,
    tokens_exceed,
)
from compactlens.engine import tokens_at_most
from compactlens.formats import from_caller
from compactlens.model import ReasoningPart

SAMPLES = Path(__file__).resolve().parents[2] / "sample_transcripts"
FILES = sorted(SAMPLES.glob("*.json"))
EXPECTED = {
    "shopping_assistant.json",
    "coding_agent.json",
    "support_long.json",
    "cannot_fit_16k.json",
    "injection_attempt.json",
    "pairing_problems.json",
}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    return data


def messages(name: str) -> tuple[Message, ...]:
    return from_caller(load(name)["messages"], source=name).messages


def index(name: str) -> MessageIndex:
    return MessageIndex.build(messages(name))


def tool_names(name: str) -> set[str]:
    return {link.name for link in index(name).links}


def test_every_expected_sample_is_there() -> None:
    assert {f.name for f in FILES} >= EXPECTED


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_sample_loads_in_the_container_shape(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["title", "description", "messages"]
    assert data["title"].strip() and data["description"].strip()
    caller = from_caller(data["messages"], source=path.name)
    assert len(caller.messages) == len(data["messages"]) > 0
    ix = MessageIndex.build(caller.messages)
    if path.name == "pairing_problems.json":
        assert ix.problems
    else:
        assert ix.problems == (), [p.detail for p in ix.problems]
    call_ids = [link.call_id for link in ix.links]
    assert len(call_ids) == len(set(call_ids)), "tool-call ids must be unique within a file"
    assert caller.messages[0].role == "system"


def _readme_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in (SAMPLES / "README.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*`([\w.]+\.json)`\s*\|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = [c.strip().replace(",", "") for c in m.group(2).split("|")]
    return rows


def test_readme_lists_every_sample_with_its_engine_counts() -> None:
    rows = _readme_rows()
    assert set(rows) == {f.name for f in FILES}
    exact = TiktokenTokenizer("o200k_base")
    for name, cells in rows.items():
        msgs = messages(name)
        ix = MessageIndex.build(msgs, CharEstimator())
        actual = [
            ix.total_messages,
            sum(1 for m in msgs if m.role == "user"),
            len(ix.links),
            sum(1 for m in msgs if len(m.tool_calls) > 1),
            ix.total_tokens,
            MessageIndex.build(msgs, exact).total_tokens,
            len(ix.problems),
        ]
        assert [int(c) for c in cells] == actual, name


# --------------------------------------------------------------------------- per sample


def test_shopping_assistant() -> None:
    msgs = messages("shopping_assistant.json")
    assert 10 <= sum(1 for m in msgs if m.role == "user") <= 14
    assert {
        "search_products",
        "get_product_details",
        "check_inventory",
        "add_to_cart",
        "apply_coupon",
        "checkout",
    } <= tool_names("shopping_assistant.json")
    text = "\n".join(m.text for m in msgs)
    for fact in ("TO-2024-118734", "RDG-APX-GTX-M10-BLK", "SPRING15", "2418 NW Alder Creek Rd"):
        assert fact in text
    assert any(len(m.tool_calls) > 1 for m in msgs)


def test_coding_agent() -> None:
    msgs = messages("coding_agent.json")
    assert 13 <= sum(1 for m in msgs if m.role == "user") <= 17
    assert {"read_file", "grep", "run_tests", "edit_file", "bash"} <= tool_names(
        "coding_agent.json"
    )
    parallel = [m for m in msgs if len(m.tool_calls) > 1]
    assert len(parallel) >= 3
    assert max(len(r.output) for m in msgs for r in m.tool_results if isinstance(r.output, str)) > (
        3000
    )
    assert sum(1 for m in msgs if any(isinstance(p, ReasoningPart) for p in m.parts)) >= 3
    text = "\n".join(m.text for m in msgs)
    assert re.search(r"\b[0-9a-f]{7}\b", text)  # commit hashes
    assert "src/invoicekit/money.py" in text


def test_support_long() -> None:
    msgs = messages("support_long.json")
    ix = MessageIndex.build(msgs)
    assert sum(1 for m in msgs if m.role == "user") >= 200
    assert ix.total_turns >= 200
    assert 40_000 <= ix.total_tokens <= 80_000
    assert {"lookup_account", "refund", "escalate"} <= {link.name for link in ix.links}
    text = "\n".join(m.text for m in msgs)
    assert re.search(r"\bACC-\d+\b", text) and re.search(r"\bTCK-\d+\b", text)
    # Varied: no single user message makes up more than 5% of the user turns.
    user_texts = [m.text for m in msgs if m.role == "user"]
    assert max(user_texts.count(t) for t in set(user_texts)) <= len(user_texts) * 0.05


def test_cannot_fit_16k_last_tool_result_alone_exceeds_the_budget() -> None:
    msgs = messages("cannot_fit_16k.json")
    last = msgs[-1]
    assert last.tool_results, "the last message is a tool result"
    output = last.tool_results[0].output
    assert isinstance(output, str) and len(output) > 70_000
    assert MessageIndex.build(msgs).message_tokens[-1] > 16_000
    wire = load("cannot_fit_16k.json")["messages"]
    for strategy in (
        TruncationStrategy(trigger=tokens_exceed(16_000), target=tokens_at_most(16_000)),
        SlidingWindowStrategy(trigger=tokens_exceed(16_000), target=tokens_at_most(16_000)),
    ):
        result = apply_compaction(wire, strategy)
        assert result.status == "cannot-fit", strategy.name
        assert result.tokens_after > 16_000


def test_injection_attempt_carries_the_payloads_in_text() -> None:
    text = "\n".join(m.text for m in messages("injection_attempt.json"))
    for payload in (
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "[click](javascript:alert(1))",
    ):
        assert payload in text


def test_pairing_problems_has_each_kind() -> None:
    kinds = {p.kind for p in index("pairing_problems.json").problems}
    assert kinds == {"orphan_result", "unresolved_call", "split_pair"}


# --------------------------------------------------------------------------- generators


@pytest.fixture
def scripts_on_path() -> Iterator[None]:
    sys.path.insert(0, str(SAMPLES))
    try:
        yield
    finally:
        sys.path.remove(str(SAMPLES))
        sys.modules.pop("_helpers", None)


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_sample_{name}", SAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.mark.usefixtures("scripts_on_path")
@pytest.mark.parametrize(
    ("script", "function", "sample"),
    [
        ("make_shopping_assistant", "build", "shopping_assistant.json"),
        ("make_coding_agent", "build", "coding_agent.json"),
        ("make_support_long", "build", "support_long.json"),
        ("make_edge_cases", "cannot_fit", "cannot_fit_16k.json"),
        ("make_edge_cases", "injection", "injection_attempt.json"),
        ("make_edge_cases", "pairing", "pairing_problems.json"),
    ],
)
def test_committed_sample_is_what_its_script_generates(
    script: str, function: str, sample: str
) -> None:
    built = getattr(_script(script), function)()
    assert json.loads(json.dumps(built)) == load(sample)["messages"]


@pytest.mark.usefixtures("scripts_on_path")
def test_support_long_generator_is_seeded() -> None:
    module = _script("make_support_long")
    assert module.build() == module.build()
    other = module.build(seed=module.SEED + 1)
    assert other != module.build()
    assert sum(1 for m in other if m["role"] == "user") >= module.MIN_USER_TURNS
