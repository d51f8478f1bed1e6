"""How the inspector writes things: numbers, parameter words, colours and inert text.

The lowest of the inspector's packages: it imports only the library, never another
inspector package, and no Streamlit.
"""
