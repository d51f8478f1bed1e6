"""One module per page. Each is run by ``st.navigation`` as a script (``render()``)."""
