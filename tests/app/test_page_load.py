"""Load page: upload, samples, paste; format, counts, both token counts, pairing problems,
and clear errors (file, location, message) instead of tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

from apptest_helpers import go, metric, metric_int, no_exceptions, plain, texts

from compactlens import CharEstimator, MessageIndex, TiktokenTokenizer, load_transcript
from compactlens.formats import from_caller


def _counts(messages):
    canon = from_caller(messages).messages
    return (
        MessageIndex.build(canon, CharEstimator()),
        MessageIndex.build(canon, TiktokenTokenizer("o200k_base")),
        MessageIndex.build(canon, TiktokenTokenizer("cl100k_base")),
    )


def test_load_shows_format_counts_and_both_token_counts(app, sample_doc) -> None:
    at = go(app().run(), "load")
    no_exceptions(at)
    messages = sample_doc("coding_agent")["messages"]
    est, o200k, cl100k = _counts(messages)
    assert metric_int(at, "Messages") == len(messages)
    assert metric_int(at, "Groups") == est.total_groups
    assert metric_int(at, "Turns") == est.total_turns
    assert metric_int(at, "Tokens (estimate)") == est.total_tokens
    assert metric_int(at, "Tokens (o200k_base)") == o200k.total_tokens
    assert "openai-chat" in texts(at)
    at.segmented_control(key="load_encoding").set_value("cl100k_base").run()
    assert metric_int(at, "Tokens (cl100k_base)") == cl100k.total_tokens


def test_pick_a_sample(app, sample_doc) -> None:
    at = go(app().run(), "load")
    at.selectbox(key="load_sample").set_value("unresolved")
    at.button(key="load_sample_button").click().run()
    no_exceptions(at)
    assert metric_int(at, "Messages") == len(sample_doc("unresolved")["messages"])
    # The unresolved call is reported as a pairing problem with its call id.
    assert "1 pairing problem" in texts(at)
    problems = at.dataframe[0].value
    assert list(problems["call id"]) == ["call_deploy"]
    assert list(problems["kind"]) == ["call without a result"]  # words, not unresolved_call


def test_paste_valid_json_becomes_the_active_transcript(app) -> None:
    at = go(app().run(), "load")
    pasted = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}]
    at.text_area(key="load_paste").set_value(json.dumps(pasted))
    at.button(key="load_paste_button").click().run()
    no_exceptions(at)
    assert metric(at, "Messages") == "2"
    assert at.selectbox(key="sidebar_source").value is not None
    assert "pasted.json" in texts(at)


def test_the_session_list_says_which_sample_the_app_opened_and_sizes_as_the_uploader(
    app,
) -> None:
    """After one paste the list holds two transcripts: it says the sample was opened when
    the session started (not by the user), and sizes count 1 KB as 1,000 bytes, as
    Streamlit's file uploader does (it showed 76.7KB beside our 74.9 KB)."""
    at = go(app().run(), "load")
    pasted = json.dumps([{"role": "user", "content": "x" * 2000}])
    at.text_area(key="load_paste").set_value(pasted)
    at.button(key="load_paste_button").click().run()
    no_exceptions(at)
    body = plain(texts(at))
    assert "(bundled sample, opened when the session started)" in body
    assert "(pasted) · **active**" in body
    assert f"{len(pasted.encode()) / 1000:,.1f} KB" in body
    # A sample the user picks is theirs: it no longer reads as opened for them.
    at.selectbox(key="load_sample").set_value("coding_agent")
    at.button(key="load_sample_button").click().run()
    body = plain(texts(at))
    assert "opened when the session started" not in body
    assert "(bundled sample) · **active**" in body


def test_paste_broken_json_shows_where_not_a_traceback(app) -> None:
    at = go(app().run(), "load")
    at.text_area(key="load_paste").set_value('[{"role": "user", "content": "hi"}')
    at.button(key="load_paste_button").click().run()
    no_exceptions(at)
    assert len(at.error) == 1
    box = plain(at.error[0].value)
    assert "pasted.json" in box and "line 1, column" in box and "invalid JSON" in box
    # The previously active transcript is still the one in use, and the page says so
    # instead of showing its summary under the error as if the paste had loaded.
    assert not [m for m in at.metric if m.label == "Messages"]
    assert "Nothing new was loaded" in plain(texts(at))
    assert at.selectbox(key="sidebar_source").value is not None


def test_a_file_of_any_extension_is_read_or_refused_with_a_message(app) -> None:
    at = go(app().run(), "load")
    traj = json.dumps({"trajectory": [], "history": [{"role": "user", "content": "hi"}]}).encode()
    at.file_uploader(key="load_upload").set_value(
        [("run.traj", traj, "application/octet-stream"), ("notes.bin", b"\x00\x01", "x/y")]
    ).run()
    no_exceptions(at)
    boxes = plain(" ".join(str(e.value) for e in at.error))
    assert "notes.bin" in boxes and "binary data" in boxes
    assert "run.traj" in at.selectbox(key="sidebar_source").options


def test_upload_several_files_and_a_bad_one(app, sample_doc) -> None:
    at = go(app().run(), "load")
    good = json.dumps(sample_doc("tiny")).encode()
    bad = json.dumps({"messages": [{"role": "wizard", "content": "x"}]}).encode()
    at.file_uploader(key="load_upload").set_value(
        [("a.json", good, "application/json"), ("broken.json", bad, "application/json")]
    ).run()
    no_exceptions(at)
    box = plain(at.error[0].value)
    assert "broken.json" in box and "messages[0].role" in box and "wizard" in box
    assert "a.json" in at.selectbox(key="sidebar_source").options
    assert metric(at, "Messages") == str(len(sample_doc("tiny")["messages"]))


def test_upload_over_our_limit_is_refused_with_the_limit(app, monkeypatch, sample_doc) -> None:
    monkeypatch.setenv("COMPACTLENS_MAX_UPLOAD_MB", "0.001")
    at = go(app().run(), "load")
    big = json.dumps(sample_doc("coding_agent")).encode()
    at.file_uploader(key="load_upload").set_value(("big.json", big, "application/json")).run()
    no_exceptions(at)
    box = plain(at.error[0].value)
    assert "big.json" in box and "limit" in box and "COMPACTLENS_MAX_UPLOAD_MB" in box


def test_a_log_cut_mid_line_loads_with_a_note_naming_the_cut(app) -> None:
    """A JSON-lines log copied while it was being written loads what is complete, and the
    Load page says what was cut (issue 27, finding 15)."""
    lines = [
        json.dumps({"role": "user", "content": "list the files"}),
        json.dumps({"role": "assistant", "content": "src/ and tests/"}),
        json.dumps({"role": "user", "content": "now open src/main.py please"}),
    ]
    data = ("\n".join(lines)[:-12]).encode()
    at = go(app().run(), "load")
    at.file_uploader(key="load_upload").set_value(("live.jsonl", data, "application/jsonl")).run()
    no_exceptions(at)
    assert at.error == [] or "live.jsonl" not in plain(at.error[0].value)
    assert metric(at, "Messages") == "2"
    notes = plain(" ".join(str(e.value) for e in at.info))
    assert "Read with notes" in notes and "line 3, cut off mid-line" in notes


def test_the_load_page_says_which_counter_counts_and_which_fits_the_model(app) -> None:
    """A Codex rollout names gpt-5.1-codex (o200k_base, exact offline); a Claude Code log
    names a Claude model, whose tokenizer we do not have: the calibrated estimate fits."""
    root = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
    at = go(app().run(), "load")
    for name in ("codex_rollout.jsonl", "claude_code_session.jsonl"):
        data = (root / name).read_bytes()
        at.file_uploader(key="load_upload").set_value((name, data, "application/jsonl")).run()
        no_exceptions(at)
        model = load_transcript(root / name).named_model
        assert model is not None
        shown = plain(texts(at)).replace("`", "")
        assert "Budgets and the lab count with: estimate (characters / 4)" in shown
        if name.startswith("codex"):
            assert f"names its model, {model}: its tokenizer is o200k_base" in shown
        else:
            assert f"names its model, {model}, whose tokenizer is not available" in shown
            # The closer counter comes with the way to it (it is not the one in use).
            assert "calibrated estimate: pick it in the sidebar's Token counter" in shown
    at.selectbox(key="sidebar_tokenizer").set_value("calibrated").run()
    no_exceptions(at)
    shown = plain(texts(at))
    assert "count with: calibrated estimate (per kind of content)" in shown
    assert "the closest counter is the calibrated estimate (in use)." in shown
