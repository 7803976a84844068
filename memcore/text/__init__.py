"""The text library, at the bottom of memcore: used by the systems, the evaluation and the offline engine.

- `terms`: content words, stopwords, Porter stems (nltk), tf-idf keywords, overlap;
- `sentences`: sentence splitting, names (capitalised spans), first -> third person, answer types;
- `dates`: session dates, LoCoMo / LongMemEval formats, relative time expressions;
- `tokens`: OpenAI-compatible token counts (quicktok);
- `terminal`: control characters from data made visible for the terminal (the CLI prints through `echo`).

It imports only the standard library, third-party libraries and memcore.types
(tests/test_import_graph.py). Import from the modules; this package re-exports nothing.
"""
