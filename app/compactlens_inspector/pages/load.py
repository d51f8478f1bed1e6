"""Load: upload files (drag and drop), pick a bundled sample or paste JSON; see the format,
the counts, the tokens (estimate and exact) and the pairing problems."""

from __future__ import annotations

import streamlit as st

import compactlens.viz as figures
from compactlens import TranscriptError
from compactlens_inspector import state
from compactlens_inspector.components.error_box import transcript_error
from compactlens_inspector.components.sidebar import source_and_tokenizer
from compactlens_inspector.components.tables import table
from compactlens_inspector.pages._common import header, page
from compactlens_inspector.serving.loader import upload_size_mb
from compactlens_inspector.style.numbers import file_size, num
from compactlens_inspector.style.safety import md_code, md_escape
from compactlens_inspector.style.widths import shorten
from compactlens_inspector.style.wording import pairing_words
from compactlens_inspector.views.counters import counter_note

UPLOADED = "cl_uploaded_ids"
#: The text width the sample select shows whole in its third of the page at 1280 px.
SAMPLE_SELECT_PX = 210
#: True when the last load attempt (upload, sample, paste) loaded at least one file.
LOADED_NOW = "cl_load_succeeded"
EXACT = {"o200k_base": "o200k_base", "cl100k_base": "cl100k_base"}


def _load_sample() -> None:
    name = st.session_state.get("load_sample")
    state.clear_errors()
    if not isinstance(name, str):
        return
    st.session_state[LOADED_NOW] = False
    try:
        state.load_sample(name)
        st.session_state[LOADED_NOW] = True
    except TranscriptError as exc:
        state.record_error(exc)


def _load_paste() -> None:
    text = str(st.session_state.get("load_paste") or "")
    state.clear_errors()
    st.session_state[LOADED_NOW] = False
    if not text.strip():
        state.record_error(TranscriptError("nothing was pasted", source="pasted JSON"))
        return
    try:
        state.add_source("pasted.json", text.encode("utf-8"), "paste")
        st.session_state[LOADED_NOW] = True
    except TranscriptError as exc:
        state.record_error(exc)
    except Exception as exc:  # anything else is still shown as a clear error
        state.record_error(exc, "pasted JSON")


def _remove(digest: str) -> None:
    state.remove_source(digest)


def _on_upload() -> None:
    """Parse the newly dropped files (a callback: runs before the page, so the sidebar and
    the summary already show them)."""
    files = st.session_state.get("load_upload") or []
    seen: list[str] = list(st.session_state.get(UPLOADED, []))
    fresh = [f for f in files if f.file_id not in seen]
    if fresh:
        state.clear_errors()
        st.session_state[LOADED_NOW] = False
    for f in fresh:
        seen.append(f.file_id)
        try:
            state.add_source(f.name, f.getvalue(), "upload")
            st.session_state[LOADED_NOW] = True
        except TranscriptError as exc:
            state.record_error(exc)
        except Exception as exc:
            state.record_error(exc, f.name)
    st.session_state[UPLOADED] = seen[-200:]


def _uploads() -> None:
    st.file_uploader(
        "Drop transcript files here (.json, .jsonl, .traj, an Inspect .eval...)",
        # Any file: ours says why one cannot be read (a browser-side filter refuses silently).
        type=None,
        accept_multiple_files=True,
        key="load_upload",
        on_change=_on_upload,
        max_upload_size=upload_size_mb(),
        help=f"Up to {upload_size_mb()} MB per file (COMPACTLENS_MAX_UPLOAD_MB).",
    )


def _summary() -> None:
    current = state.loaded()
    ix = state.index()
    if current is None or ix is None:
        return
    top = st.columns([3, 1.4], vertical_alignment="bottom")
    with top[0]:
        st.subheader(md_escape(current.title or current.name), anchor=False)
        st.markdown(
            f"**Format:** {md_code(current.format)} · detected as {md_escape(current.detection)} · "
            f"{file_size(current.size_bytes)}"
        )
        if current.description:
            st.caption(md_escape(current.description))
        notes = current.transcript.warnings
        if notes:
            shown = "; ".join(md_escape(str(w)) for w in notes[:3])
            more = f"; and {num(len(notes) - 3)} more" if len(notes) > 3 else ""
            st.info(f"**Read with notes:** {shown}{more}", icon=":material/info:")
    with top[1]:
        state.widget("load_encoding", "o200k_base")
        encoding = st.segmented_control(
            "Exact encoding", list(EXACT), key="load_encoding", required=True
        )
    cols = st.columns([1, 1, 1, 1.4, 1.4])
    cols[0].metric("Messages", num(ix.total_messages), border=True)
    cols[1].metric("Groups", num(ix.total_groups), border=True)
    cols[2].metric("Turns", num(ix.total_turns), border=True)
    est = state.index("estimate")
    assert est is not None
    cols[3].metric(
        "Tokens (estimate)",
        num(est.total_tokens),
        border=True,
        help="characters / 4, no per-message overhead",
    )
    with st.spinner("Counting exact tokens with tiktoken…"):
        exact = state.index(str(encoding or "o200k_base"))
    assert exact is not None
    cols[4].metric(
        f"Tokens ({encoding})",
        num(exact.total_tokens),
        border=True,
        help="tiktoken, offline, +3 framing tokens per message",
    )
    st.caption(counter_note(current.transcript.named_model, state.tokenizer()))
    problems = ix.problems
    if problems:
        st.warning(
            f"**{num(len(problems))} pairing problem{'s' if len(problems) != 1 else ''}** "
            "(compaction keeps these groups intact and reports them)",
            icon=":material/link_off:",
        )
        table(
            [
                {
                    "kind": pairing_words(p.kind),
                    "message": p.message_index,
                    "call id": p.call_id,
                    "detail": p.detail,
                }
                for p in problems[:500]
            ],
            hide_index=True,
            width="stretch",
            key="load_problems",
        )
    else:
        st.success("No pairing problems: every tool call has its result.", icon=":material/link:")
    # Where the tokens are. Last on the page, after the exact count: it is also the
    # session's first plotly chart, so the browser loads the chart code (4.5 MB of
    # JavaScript) here, while the summary is read, and not when the lab opens.
    st.plotly_chart(figures.composition(ix), key="load_composition", config={"displaylogo": False})
    if state.access() is None:
        # Plan the lab's preview now (offline summarizer only: never a paid call from
        # here), while the page is read: the lab then opens from the cache (the first
        # plan of a 50,000-message transcript takes about 0.5 s).
        state.run()


def render() -> None:
    header("Load", "Upload transcripts, pick a bundled sample or paste JSON.")
    source_and_tokenizer()
    up, sample, paste = st.columns(3, gap="large")
    with up:
        st.markdown("##### Upload")
        _uploads()
    with sample:
        st.markdown("##### Bundled sample")
        samples = state.samples()
        if samples:
            ref = state.active_ref()
            names = [s.name for s in samples]
            state.widget("load_sample", ref.sample if ref and ref.sample in names else names[0])
            titles = {s.name: s.title for s in samples}
            # The select shows a title cut to its width; the whole one is the caption.
            chosen = st.selectbox(
                "Sample",
                list(titles),
                format_func=lambda n: shorten(titles[n], SAMPLE_SELECT_PX),
                key="load_sample",
            )
            if chosen in titles and shorten(titles[chosen], SAMPLE_SELECT_PX) != titles[chosen]:
                st.caption(md_escape(titles[chosen]))
            st.button("Load sample", key="load_sample_button", on_click=_load_sample)
        else:
            st.caption("No bundled samples were found.")
    with paste:
        st.markdown("##### Paste JSON")
        st.text_area(
            "A list of messages, or an object with 'messages'",
            key="load_paste",
            height=110,
            placeholder='[{"role": "user", "content": "hi"}]',
        )
        st.button("Load pasted JSON", key="load_paste_button", on_click=_load_paste)
    errors = state.load_errors()
    for source, location, message in errors:
        transcript_error(source, location, message)
    refs = state.sources()
    if refs:
        with st.expander(f"Loaded in this session ({num(len(refs))})", expanded=len(refs) > 1):
            for digest, ref in refs.items():
                c = st.columns([6, 2, 1], vertical_alignment="center")
                active = " · **active**" if digest == st.session_state.get(state.ACTIVE) else ""
                c[0].markdown(f"{md_code(ref.name)} ({state.origin_words(ref)}){active}")
                c[1].caption(file_size(len(ref.data)))
                c[2].button(
                    "Remove", key=f"load_remove_{digest[:12]}", on_click=_remove, args=(digest,)
                )
    st.divider()
    current = state.loaded()
    if errors and current is not None and not st.session_state.get(LOADED_NOW):
        # A refused file must not look loaded: say what is still in use, not its summary.
        st.caption(
            f"Nothing new was loaded. The transcript in use is still {md_code(current.name)}"
            " (pick it in the sidebar or on the other pages)."
        )
        return
    _summary()


if __name__ == "__main__":
    page(render, "load")
