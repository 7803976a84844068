"""The offline engine's rule-based implementations, one module per family of roles.

Text tools (terms, stems, sentences, names, dates) come from memcore.text; role modules
(memcore/llm/roles, and a system's own roles.py and offline*.py rules under
memcore/systems/<name>/) import from here, never the other way round.
"""
