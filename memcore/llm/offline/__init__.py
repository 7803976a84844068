"""The offline engine's rule-based implementations, one module per family of roles.

Text tools (terms, stems, sentences, names, dates) come from memcore.text; role modules in
memcore/llm/roles import from here, never the other way round.
"""
