"""Reusable Streamlit pieces: badges, group list, budget bar, diff view, strategy builder."""
