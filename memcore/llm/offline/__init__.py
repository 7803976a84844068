"""The offline engine's rule-based implementations, one module per family of roles.

Shared text tools live in `text.py`; role modules in memcore/llm/roles import from here.
"""
