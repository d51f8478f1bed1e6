"""compactlens inspector: navigation only. Run with ``streamlit run app/streamlit_app.py``."""

import streamlit as st

st.set_page_config(
    page_title="compactlens inspector",
    # An emoji favicon is an inline data: SVG; a ":material/..." one is fetched from
    # fonts.gstatic.com, and the app must make no request off the machine.
    page_icon="🗜️",
    layout="wide",
    initial_sidebar_state="expanded",
)

PAGES = "compactlens_inspector/pages/"

# The page frame: a short band above each title, narrower side margins on small
# screens and the sticky verdict bar (our own CSS; no transcript text ever goes into st.html).
st.html(
    """<style>
[data-testid="stMainBlockContainer"] { padding-left: 3rem; padding-right: 3rem; }
@media (max-width: 1200px) {
  [data-testid="stMainBlockContainer"] { padding-left: 1.25rem; padding-right: 1.25rem; }
}
[data-testid="stMainBlockContainer"] h1 { padding-top: 0; }
/* The verdict bar (components/verdict_bar.py) stays in view under the app's header while
   the page scrolls or a parameter is edited: its wrapper is sticky (the bar's own box is
   exactly as tall as that wrapper, so it could not move inside it). */
[data-testid="stLayoutWrapper"]:has(> [class*="st-key-verdict_"]),
[data-testid="stElementContainer"]:has(> [class*="st-key-verdict_"]) {
  position: sticky; top: 3.75rem; z-index: 50; background: #FFFFFF;
}
</style>"""
)

navigation = st.navigation(
    {
        "Start": [
            st.Page(PAGES + "landing.py", title="Overview", icon=":material/home:", default=True),
            st.Page(
                PAGES + "story.py",
                title="Story mode",
                icon=":material/auto_stories:",
                url_path="story",
            ),
            st.Page(
                PAGES + "load.py", title="Load", icon=":material/upload_file:", url_path="load"
            ),
        ],
        "Explore": [
            st.Page(PAGES + "runs.py", title="Runs", icon=":material/monitoring:", url_path="runs"),
            st.Page(
                PAGES + "transcript.py",
                title="Transcript",
                icon=":material/forum:",
                url_path="transcript",
            ),
            st.Page(PAGES + "diff.py", title="Diff", icon=":material/difference:", url_path="diff"),
            st.Page(
                PAGES + "timeline.py",
                title="Event timeline",
                icon=":material/timeline:",
                url_path="timeline",
            ),
            st.Page(
                PAGES + "postmortem.py",
                title="Post-mortem",
                icon=":material/history:",
                url_path="postmortem",
            ),
        ],
        "Tune": [
            st.Page(PAGES + "lab.py", title="Strategy lab", icon=":material/tune:", url_path="lab"),
            st.Page(
                PAGES + "cannot_fit.py",
                title="Cannot-fit debugger",
                icon=":material/troubleshoot:",
                url_path="cannot-fit",
            ),
            st.Page(
                PAGES + "analysis.py",
                title="Analysis",
                icon=":material/fact_check:",
                url_path="analysis",
            ),
            st.Page(
                PAGES + "sweep.py",
                title="Sweep & compare",
                icon=":material/ssid_chart:",
                url_path="sweep",
            ),
        ],
        "Share": [
            st.Page(
                PAGES + "export.py", title="Export", icon=":material/download:", url_path="export"
            ),
        ],
    },
    expanded=True,  # every page in view: past 10 pages Streamlit hides some behind 'View more'
)
navigation.run()
