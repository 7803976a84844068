"""No silent truncation: a text longer than the embedder's window is embedded whole (memcore.embed.LONG_TEXT_RULE),
so a question about a long turn's last sentence finds it; and token windows are cut without losing a character."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from memcore.embed import CHUNK_OVERLAP, MiniLMEmbedder, chunk_spans, long_text_counts
from memcore.settings import Settings
from memcore.text.tokens import token_spans
from memcore.workbench import Workbench

FILLER = ("We spent the morning repotting the tomato seedlings, checking the soil moisture, pruning the basil, "
          "and arguing about whether the compost heap needs more leaves or more kitchen scraps this autumn. ")
LAST = "Oh, and before I forget: the spare key to the boathouse is hidden under the red flowerpot."
OTHERS = ["I watched the football match last night, what a finish.", "My sister is moving to Lisbon in spring.",
          "The new bakery sells great sourdough.", "I finally finished reading that novel about the lighthouse keeper.",
          "Our team meeting moved to Thursday afternoon.", "The car needs new tyres before winter.",
          "I booked the flights to Oslo for the conference.", "The kids started piano lessons.",
          "I lost my umbrella on the train again.", "We adopted a grey kitten called Pepper."]


def test_chunks_cover_the_text_and_share_the_overlap() -> None:
    offsets = [(i * 2, i * 2 + 1) for i in range(100)]  # 100 one-character tokens, a space between
    spans = chunk_spans(offsets, 40, 8)
    assert spans[0] == (0, 79) and spans[-1][1] == 199  # the first token to the last, none dropped
    assert all(b[0] < a[1] for a, b in zip(spans, spans[1:], strict=False))  # neighbours overlap
    assert chunk_spans(offsets[:40], 40) == [(0, 79)]  # a text that fits is one chunk
    text = "naïve café, 日本語 and emoji 🙂 " * 50
    assert "".join(text[a:b] for a, b in token_spans(text)) == text  # OpenAI-encoding spans: every character
    assert CHUNK_OVERLAP > 0


def test_a_long_turns_last_sentence_is_found(tmp_path: Path) -> None:
    emb = MiniLMEmbedder()
    long_text = FILLER * 6 + LAST
    assert emb.text_tokens([long_text])[0] > emb.window  # longer than the window: the model alone would cut LAST
    lines = [{"conversation": "c", "session": 1, "date": "2024-03-01", "speaker": "Alice", "text": long_text}]
    lines += [{"conversation": "c", "session": 1, "speaker": "Bob" if i % 2 else "Alice", "text": t}
              for i, t in enumerate(OTHERS)]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), embedder="minilm", llm_provider="offline"), embedder=emb)
    conv = wb.load(path, fmt="jsonl")[0]
    ans = wb.ask("naive_rag", conv, "Where is the spare key to the boathouse hidden?", k=3)
    assert conv.turns[0].turn_id in [it.id for it in ans.trace.items]
    # the stored vector is the whole turn's, not its first window's
    whole, first = emb.embed([conv.turns[0].embed_text])[0], emb.embed([emb.chunks(conv.turns[0].embed_text)[0]])[0]
    assert not np.allclose(whole, first)
    assert long_text_counts(emb, [t.embed_text for t in conv.turns]) == {
        "window": 256, "rule": "mean-of-chunks", "over": 1, "of": len(conv.turns)}


def test_a_growing_text_encodes_only_its_new_chunks() -> None:
    """Re-embedding a text that grew (an episode a merge appended to) encodes its new chunks only (the chunk
    memo): its vector equals a fresh embedder's to float32 rounding, and the shared chunks are not encoded again."""
    emb, fresh = MiniLMEmbedder(), MiniLMEmbedder()
    short = FILLER * 15
    grown = short + LAST + " " + FILLER * 3
    assert len(emb.chunks(short)) > 2
    emb.embed([short])
    model, encoded = emb.model, []
    real = model.encode

    def counting(texts, *a, **k):
        encoded.extend(texts)
        return real(texts, *a, **k)

    model.encode = counting
    try:
        again = emb.embed([grown])[0]
    finally:
        del model.encode  # the instance attribute goes: the class's method is back
    new = [c for c in emb.chunks(grown) if c not in emb.chunks(short)]
    assert new and sorted(encoded) == sorted(new)  # the chunks both texts share came from the memo
    assert np.allclose(again, fresh.embed([grown])[0], rtol=0, atol=1e-6)
