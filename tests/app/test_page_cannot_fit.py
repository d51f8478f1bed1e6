"""Cannot-fit debugger: waterfall, the reason in words, the target that fits, and
single changes found by re-running, which can be applied."""

from __future__ import annotations

import re
from typing import Any

from apptest_helpers import (
    REPO_ROOT,
    coding_agent,
    go,
    metric,
    metric_int,
    no_exceptions,
    plain,
    texts,
)

from compactlens import MessageIndex, run_strategy, strategy_from_config
from compactlens.analysis import advise, fix_mark, shown_fixes
from compactlens.formats import from_caller
from compactlens_inspector.lab.config import (
    CompactSettings,
    LabConfig,
    default_stage,
    encode_config,
    preset,
)
from compactlens_inspector.views.fixes import stage_fell_short


def _truncation(budget: int, keep: int) -> LabConfig:
    return LabConfig(stages=({**default_stage("truncation", budget), "minimum_preserved": keep},))


def test_cannot_fit_explains_and_finds_a_fix_that_applies(app) -> None:
    at = go(app(cfg=encode_config(_truncation(1500, 12))).run(), "cannot_fit")
    no_exceptions(at)
    # The verdict bar ("Does not fit"), then the engine's reason.
    assert len(at.error) == 1 and plain(at.error[0].value).startswith("**Does not fit**")
    assert any(c.value.startswith("**Why the run stopped:**") for c in at.caption)
    after = metric_int(at, "Tokens after")
    assert metric_int(at, "Target") == 1500
    assert metric(at, "Over the target") == f"{after - 1500:,}"
    # The target that fits is the one the one-click larger target sets (review 3, #3):
    # when that fix is listed, the card shows its number; else what the run reached.
    fitting = metric_int(at, "Target that fits")
    raise_rows = re.findall(r"Raise the target (?:and the trigger )?to ([\d,]+) tokens", texts(at))
    assert fitting == (int(raise_rows[0].replace(",", "")) if raise_rows else after)
    parts = at.dataframe[0].value
    assert "newest groups never touched" in list(parts["part"])  # words, not code names
    assert "minimum_preserved" not in list(parts["part"])
    assert sum(parts["tokens"]) == after  # the waterfall adds up to what is left
    # The ranked fixes are the library's advice over the same run (the search, each fix
    # judged, the one-click larger target), each in plain words with the verdict of the
    # run it gives.
    config = _truncation(1500, 12)
    strategy = strategy_from_config(config.strategy_config())
    index = MessageIndex.build(from_caller(coding_agent()).messages)
    guards = config.guard_set("openai-chat")
    result = run_strategy(index, strategy, guards=guards)
    judged, found = advise(index, result, strategy, guards)
    first = next(plain(m.value) for m in at.markdown if "**1.**" in m.value)
    top = shown_fixes(found.fixes, judged).fixes[0]
    assert first.endswith(top.plain_summary[1:]), (first, top.plain_summary)
    assert top.summary not in plain(texts(at)) or top.summary == top.plain_summary
    assert top.request_kept and result.status == "cannot-fit"
    # Marked as every surface marks it (a costly fix's badge, none for a safe one).
    mark = fix_mark(top)
    assert first.startswith(f":orange-badge[{mark}] **1.**" if mark else "**1.**"), first
    promised = _fix_caption(at, 0)
    at.button(key="cf_apply_0").click().run()
    no_exceptions(at)
    assert not at.error  # no red box: the applied configuration fits
    applied = at.session_state["cl_lab"]
    rerun = run_strategy(
        index,
        strategy_from_config(applied.strategy_config()),
        guards=applied.guard_set("openai-chat"),
    )
    # (a larger target the whole history fits leaves it as it is: "unchanged")
    assert rerun.status in ("compacted", "unchanged") and rerun.tokens_after == top.tokens_after
    # The fix's cost was the verdict the page shows once it is applied.
    assert metric_int(at, "Tokens after") == top.tokens_after
    assert f"{top.tokens_after:,} tokens" in promised


def _fix_caption(at: Any, n: int) -> str:
    """The verdict line under fix ``n`` (its headline and summary)."""
    captions = [plain(c.value) for c in at.caption if c.value.startswith("**Fits")]
    return captions[n]


def test_a_costly_best_fix_comes_with_a_one_click_larger_target(app) -> None:
    at = go(app(cfg=encode_config(_truncation(1000, 40))).run(), "cannot_fit")
    no_exceptions(at)
    whole = metric_int(at, "Target that fits")
    body = plain(texts(at))
    assert "No fix" not in body and "only destructive changes fit" not in body
    # The two choices: the larger target, which fits and is safe, comes first (one click
    # to green, review 4 #7); the change a user would make keeping the target follows,
    # with its cost.
    assert "**2.** Set “newest groups never dropped” to" in body  # the vocabulary's label
    # The larger target names the trigger that moves with it (review 3, #4).
    raised = re.escape(f"{whole:,}")
    assert re.search(
        rf"\*\*1\.\*\* Raise the target (to {raised} tokens and the trigger to [\d,]+"
        rf"|and the trigger to {raised} tokens)",
        body,
    ), body
    assert _fix_caption(at, 0).startswith("**Fits and safe**")
    assert "Fact recall is" in body and "under the floor" in body  # the cost, named
    labels = [b.label for b in at.button if b.key and b.key.startswith("cf_apply_")]
    assert labels == ["Raise the target", "Apply"]
    assert "1 destructive fixes" not in body
    at.button(key="cf_apply_0").click().run()
    no_exceptions(at)
    assert not at.error and not at.warning
    assert metric_int(at, "Target") == whole
    assert "cannot-fit" not in plain(texts(at))


def test_a_safe_configuration_has_nothing_to_fix(app) -> None:
    at = go(app(cfg=encode_config(_truncation(20000, 2))).run(), "cannot_fit")
    no_exceptions(at)
    body = plain(texts(at))
    assert "Nothing to fix" in body
    assert "Fixes, ranked" not in body and "Optional improvements" not in body
    assert not [b for b in at.button if b.key and b.key.startswith("cf_apply_")]


def test_a_fitting_configuration_says_so(app) -> None:
    at = go(app(cfg=encode_config(_truncation(3000, 2))).run(), "cannot_fit")
    no_exceptions(at)
    body = plain(texts(at))
    assert "This configuration fits" in body
    # It fits with costs: only changes that fail fewer checks are offered, never a no-op.
    assert "Optional improvements" in body and "Fixes, ranked" not in body
    assert metric_int(at, "Room under the target") == 3000 - metric_int(at, "Tokens after")
    # A run that fits has no "target that fits" to show (it read "—").
    labels = [m.label for m in at.metric]
    assert "Target that fits" not in labels and "Smallest target that fits" not in labels


def test_compact_cannot_fit_names_the_protected_suffix(app) -> None:
    config = LabConfig(mode="compact", compact=CompactSettings(600, 12, None))
    at = go(app(cfg=encode_config(config)).run(), "cannot_fit")
    no_exceptions(at)
    body = plain(texts(at))
    # The reason by its plain label, never its code name (review 4, #6c).
    assert "No room for a summary" in body and "protected-history" not in body
    # the boundary analysis names the suffix, in words
    assert "The newest 12 messages" in body and "stay verbatim" in body
    table = at.dataframe[0].value
    parts = list(table["part"])
    # One number: the smallest target that fits (what must stay and the one token any
    # summary needs); the tokens over the target are counted from it (review finding 6).
    smallest = metric_int(at, "Smallest target that fits")
    assert smallest == sum(table["tokens"])
    assert parts[-1] == "shortest summary text" and list(table["tokens"])[-1] == 1
    assert metric_int(at, "Over the target") == smallest - 600
    assert f"so the smallest target that fits is {smallest:,}" in body
    assert parts[0] == "leading system messages"
    assert "newest messages kept verbatim" in parts and "summary wrapper" in parts
    # The smaller "newest messages kept" that fits is a fix, with the verdict it gives.
    fixes = [plain(m.value) for m in at.markdown if re.search(r"\*\*\d+\.\*\*", m.value)]
    assert any("“newest messages kept verbatim” to" in f for f in fixes), fixes
    assert [c for c in at.caption if c.value.startswith("**Fits")]


def _untriggered_truncation(keep: int) -> LabConfig:
    stage = {
        **default_stage("truncation", 60000),
        "target": {"op": "at_most", "metric": "tokens", "n": 2000},
        "minimum_preserved": keep,
    }
    return LabConfig(stages=(stage,))


def test_an_untriggered_history_over_the_target_is_not_called_a_fit(app) -> None:
    config = LabConfig(mode="compact", compact=CompactSettings(2000, 4, 60000))
    at = go(app(cfg=encode_config(config), sample="coding_agent").run(), "cannot_fit")
    no_exceptions(at)
    before = metric_int(at, "Tokens after")
    assert before > 2000
    body = plain(texts(at))
    assert "This configuration fits" not in body and "nothing to debug" not in body
    assert "What to change" in body and "not compacted (no trigger fired)" in body
    warning = plain(at.warning[0].value)
    assert "No trigger fired" in warning
    assert f"more than 60,000 tokens* (seen: {before:,} tokens)" in warning
    assert f"{before - 2000:,} over the target" in warning
    assert metric_int(at, "Over the target") == before - 2000
    # The lowered trigger was re-run: it fits, and applying it makes the page say so.
    fix = [ln for ln in body.splitlines() if "Lower the trigger to the target" in ln]
    assert fix and "fits" in fix[0] and "still does not fit" not in fix[0], body
    at.button(key="cf_lower_trigger").click().run()
    no_exceptions(at)
    assert at.session_state["cl_lab"].compact.trigger_tokens == 2000
    assert "This configuration fits" in plain(texts(at))
    assert metric_int(at, "Tokens after") <= 2000


def test_a_lowered_trigger_that_still_cannot_fit_says_so(app) -> None:
    at = go(app(cfg=encode_config(_untriggered_truncation(40))).run(), "cannot_fit")
    no_exceptions(at)
    assert "No trigger fired" in plain(at.warning[0].value)
    body = plain(texts(at))
    fix = [ln for ln in body.splitlines() if "Lower the trigger to the target" in ln]
    assert fix and "still does not fit" in fix[0], body
    at.button(key="cf_lower_trigger").click().run()
    no_exceptions(at)
    assert at.session_state["cl_lab"].stages[0]["trigger"]["n"] == 2000
    assert "cannot-fit" in plain(at.error[0].value)


BUNDLED = REPO_ROOT / "sample_transcripts"


def test_with_destructive_fixes_off_no_listed_fix_loses_most_facts(app, monkeypatch) -> None:
    """The verdict of a fix's run decides whether it is destructive: with the toggle off
    the page lists at most the best costly fix (its cost named) and the one-click larger
    target the verdict's next step names, never a fix at 0% or under 1% recall."""
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(BUNDLED))
    config = preset("reference", 16_000)
    at = go(app(sample="cannot_fit_16k", cfg=encode_config(config)).run(), "cannot_fit")
    no_exceptions(at)
    assert not at.toggle(key="cf_destructive").value
    body = plain(texts(at))
    rows = [
        plain(m.value)
        for m in at.markdown
        if re.match(r"(:\w+-badge\[\w+\] )?\*\*\d+\.\*\*", m.value)
    ]
    recalls = [
        int(x)
        for x in re.findall(
            r"(\d+)% fact recall",
            " ".join(c.value for c in at.caption if c.value.startswith("**Fits")),
        )
    ]
    assert rows and len(recalls) == len(rows), (rows, recalls)
    costly = [r for r in rows if "badge[" in r]
    assert len(costly) <= 1 and not [x for x in recalls if x < 50 and not costly], recalls
    assert "under 1% fact recall" not in body and " 0% fact recall" not in body
    # The larger target is one click away, as the verdict's next step says.
    smallest = metric_int(at, "Target that fits")
    assert f"Raise the target to {smallest:,} tokens" in body
    assert "destructive fixes are hidden" in body or "destructive fix is hidden" in body
    # The click sets every stage's target and the trigger the fix names (review 4, #1):
    # it lands where the fix's verdict said, with one next step on the page.
    raise_button = next(b for b in at.button if b.label == "Raise the target")
    raise_button.click().run()
    no_exceptions(at)
    assert metric_int(at, "Target") == smallest and not at.error
    stages = at.session_state["cl_lab"].stages
    assert {s["target"]["n"] for s in stages if s.get("target")} == {smallest}, stages
    assert all(s["trigger"]["n"] > smallest for s in stages if s.get("trigger")), stages
    after = plain(texts(at))
    assert "Fits and safe" in after and "fires again at once" not in after


def test_stages_that_fell_short_are_named_in_a_sentence() -> None:
    assert stage_fell_short([("Clamp", "target-missed")]) == "Clamp missed its own target"
    assert (
        stage_fell_short(
            [
                ("A", "target-missed"),
                ("B", "target-missed"),
                ("C", "target-missed"),
                ("D", "failed"),
            ]
        )
        == "A, B and C each missed their own target; D failed"
    )


def test_a_run_that_fires_again_gets_a_listed_lower_target_it_can_apply(app) -> None:
    # Truncation above 4,000 tokens down to 4,000 on the coding agent: compaction fires
    # again on the next turn. The lower target (every stage's, the triggers kept) is
    # listed with its cost; a fix that fits and is safe comes before it (review 4, #7),
    # and the step is that first fix, with one click; applied, the run leaves room.
    at = go(app(cfg=encode_config(_truncation(4000, 2))).run(), "cannot_fit")
    no_exceptions(at)
    bar = plain(at.warning[0].value)
    assert "fires again on the very next turn" in bar
    rows = [plain(m.value) for m in at.markdown if re.search(r"\*\*\d+\.\*\*", m.value)]
    assert any("Lower every stage's target to " in r and "costly" in r for r in rows), rows
    first = rows[0]
    verdicts = [c.value for c in at.caption if c.value.startswith("**Fits")]
    assert verdicts[0].startswith("**Fits and safe**"), verdicts
    step = bar.split("**Next step:** ", 1)[1]
    # The safe larger target, or the lower target at a cost: a choice (review 5, N8).
    assert step.startswith(("Apply: ", "Choose: "))
    assert first.split("**1.** ", 1)[1][1:] in step  # the same change, in the same words
    at.button(key="cf_apply_0").click().run()
    no_exceptions(at)
    assert "fires again on the very next turn" not in plain(texts(at))
    assert not at.warning and not at.error


def test_a_lower_target_that_adds_a_cost_is_not_the_next_step(app) -> None:
    # Above 5,000 down to 5,000: lowering the target (re-run by the search) loses facts,
    # and a larger trigger leaves the history over the target: the step must not be
    # advice the search found does not help.
    at = go(app(cfg=encode_config(_truncation(5000, 2))).run(), "cannot_fit")
    no_exceptions(at)
    bar = plain(at.warning[0].value)
    assert "fires again on the very next turn" in bar
    assert "Lower the target" not in bar
    assert "**Next step:** Keep the run as it is: no change the fix search re-ran" in bar


def test_after_the_costly_clamp_the_step_is_a_numbered_raise_with_its_button(
    app, monkeypatch
) -> None:
    """cannot_fit_16k under the reference pipeline at 12,000 (the app's default, review 4
    row 1): the raise is the first fix and lands on "Fits and safe"; applying the costly
    clamp instead keeps 48% of the facts, and the next step is then a larger target with
    its number, one click away, never a numberless "raise the target"."""
    monkeypatch.setenv("COMPACTLENS_SAMPLES", str(BUNDLED))
    at = go(
        app(sample="cannot_fit_16k", cfg=encode_config(preset("reference", 12_000))).run(),
        "cannot_fit",
    )
    no_exceptions(at)
    labels = [b.label for b in at.button if b.key and b.key.startswith("cf_apply_")]
    assert labels[0] == "Raise the target" and "Apply" in labels, labels
    clamp = next(b for b in at.button if b.label == "Apply" and b.key.startswith("cf_apply_"))
    clamp.click().run()
    no_exceptions(at)
    bar = plain(at.warning[0].value)
    assert "fact recall" in bar
    step = bar.split("**Next step:** ", 1)[1]
    said = re.match(r"Apply: raise the target to ([\d,]+) tokens and the trigger to ([\d,]+)", step)
    assert said is not None, step
    assert int(said.group(2).replace(",", "")) > int(said.group(1).replace(",", ""))
    raise_button = next(b for b in at.button if b.label == "Raise the target")
    raise_button.click().run()
    no_exceptions(at)
    assert not at.warning and not at.error
    assert "Fits and safe" in plain(texts(at))
