"""Memory diff on a hand-built store with known item versions: exact added / changed / removed per kind, each
with the turn and the event that caused it; two memories of one conversation; memories without items."""

from __future__ import annotations

import pytest

from memcore.errors import MemcoreError
from memcore.memory_diff import Cause, diff_memories, diff_steps, word_diff
from memcore.store import LanceStore
from memcore.store.view import MemoryView
from memcore.types import Conversation, Event, MemoryItem, Turn
from memcore.viz.memory_diff import changes_frame, counts_frame, headline, summary_text, word_diff_html

TEXTS = ["I adopted a puppy!", "His name is Biscuit.", "Adopted him in May.", "Biscuit ate my shoe.",
         "I play chess on Sundays.", "Bye!"]
CONV = Conversation("c", ["Ana", "Bo"], [Turn("c", f"D1:{i + 1}", i, 1, "8 May 2023", "2023-05-08", "Ana", t)
                                         for i, t in enumerate(TEXTS)])


def it(iid: str, text: str, step: int, kind: str = "episode", sources: tuple = ()) -> MemoryItem:
    return MemoryItem(id=iid, kind=kind, text=text, system="s", conv_id="c", embedding=[0.0] * 8,
                      sources=list(sources), turn_ids=list(sources), created_step=step, updated_step=step)


def ev(step: int, kind: str, ids: list[str], reason: str, item_kind: str = "episode") -> Event:
    return Event(step, kind, ids, reason, "s", "c", f"D1:{step}", item_kind)


@pytest.fixture
def store(tmp_path) -> LanceStore:
    st = LanceStore(str(tmp_path / "db"), dim=8)
    # memory A: episode-1 created at 1 and rewritten at 3; semantic-1 lives from 2 to 4; episode-2 created at 3,
    # its links changed at 5; semantic-2 created at 5
    st.commit("A", "s", "c", 1, [it("episode-1", "Ana adopted a puppy named Biscuit", 1)], [],
              [ev(1, "created", ["episode-1"], "episode opened")], {})
    st.commit("A", "s", "c", 2, [it("semantic-1", "Ana has a cat", 2, "semantic")], [],
              [ev(2, "created", ["semantic-1", "episode-1"], "fact distilled", "semantic")], {})
    st.commit("A", "s", "c", 3, [it("episode-1", "Ana adopted a puppy named Biscuit in May", 3),
                                 it("episode-2", "Bo plays chess", 3)], [],
              [ev(3, "linked", ["semantic-1", "episode-1"], "fact linked to episode-1", "semantic"),
               ev(3, "merged", ["episode-1"], "turn 3 merged into episode-1"),
               ev(3, "created", ["episode-2"], "topic change")], {})
    st.commit("A", "s", "c", 4, [], [("semantic", "semantic-1")],
              [ev(4, "deleted", ["semantic-1"], "contradicted by turn 4", "semantic")], {})
    st.commit("A", "s", "c", 5, [it("episode-2", "Bo plays chess", 5, sources=("D1:5",)),
                                 it("semantic-2", "Ana likes parks", 5, "semantic")], [],
              [ev(5, "linked", ["episode-2"], "linked to turn 5"),
               ev(5, "created", ["semantic-2"], "fact distilled", "semantic")], {})
    st.commit("A", "s", "c", 7, [], [], [], {}, done=True)
    # memory B (another variant): the same first episode, Bo's episode under another id, one new episode,
    # semantic-2 worded differently, one fact A does not have
    st.commit("B", "s", "c", 5, [it("episode-1", "Ana adopted a puppy named Biscuit in May", 3),
                                 it("episode-2", "Cy plays golf", 2), it("episode-3", "Bo plays chess", 5, sources=("D1:5",)),
                                 it("semantic-2", "Ana likes big parks", 4, "semantic"),
                                 it("semantic-3", "Biscuit eats shoes", 4, "semantic")], [],
              [ev(2, "created", ["episode-2"], "golf episode"), ev(4, "created", ["semantic-3"], "shoe fact",
                                                                   "semantic"),
               ev(4, "created", ["semantic-2"], "park fact", "semantic")], {}, done=True)
    # memory R: a system that indexes raw turns only
    st.commit("R", "r", "c", 6, [], [], [ev(i, "indexed", [f"D1:{i}"], "turn indexed", "turn") for i in range(1, 7)],
              {}, done=True)
    return st


def view(store: LanceStore, space: str, system: str = "s") -> MemoryView:
    return MemoryView(store, system, "c", space)


def test_word_diff_segments():
    assert word_diff("Ana adopted a puppy named Biscuit", "Ana adopted a puppy named Biscuit in May") == [
        ("=", "Ana adopted a puppy named Biscuit"), ("+", " in May")]
    assert word_diff("Ana likes parks", "Ana likes big parks") == [("=", "Ana likes "), ("+", "big "), ("=", "parks")]
    assert word_diff("a b", "a c") == [("=", "a "), ("-", "b"), ("+", "c")]


def test_steps_diff_exact_added_changed_removed_with_causes(store):
    d = diff_steps(view(store, "A"), CONV, 2, 4)
    got = {k: [(c.change, c.item_id, c.before, c.after, [x.step for x in c.causes]) for c in v]
           for k, v in d.changes.items()}
    assert got == {"episode": [("added", "episode-2", None, "Bo plays chess", [3]),
                               ("changed", "episode-1", "Ana adopted a puppy named Biscuit",
                                "Ana adopted a puppy named Biscuit in May", [3])],
                   "semantic": [("removed", "semantic-1", "Ana has a cat", None, [4])]}
    assert d.counts() == {"episode": {"added": 1, "changed": 1, "removed": 0, "unchanged": 0},
                          "semantic": {"added": 0, "changed": 0, "removed": 1, "unchanged": 0}}
    removed = d.changes["semantic"][0]
    assert removed.causes == [Cause("", 4, "turn 4 (D1:4)", "D1:4", "Biscuit ate my shoe.",
                                    [{"kind": "deleted", "reason": "contradicted by turn 4"}])]
    changed = d.changes["episode"][1]
    assert changed.diff == [("=", "Ana adopted a puppy named Biscuit"), ("+", " in May")] and changed.fields == []
    assert changed.causes[0].events == [{"kind": "merged", "reason": "turn 3 merged into episode-1"},  # its own kind
                                        {"kind": "linked", "reason": "fact linked to episode-1"}]  # first


def test_an_item_born_and_gone_between_the_steps_is_no_change_and_links_count(store):
    d = diff_steps(view(store, "A"), CONV, 1, 5)  # semantic-1 lived from 2 to 4: not in either state
    got = {k: [(c.change, c.item_id, c.fields, [x.step for x in c.causes]) for c in v] for k, v in d.changes.items()}
    assert got == {"episode": [("added", "episode-2", [], [3, 5]), ("changed", "episode-1", [], [3])],
                   "semantic": [("added", "semantic-2", [], [5])]}
    d = diff_steps(view(store, "A"), CONV, 4, 5)  # episode-2's text is the same, its links changed
    ep2 = d.changes["episode"][0]
    assert (ep2.change, ep2.fields, ep2.diff) == ("changed", ["sources", "turn_ids"], [("=", "Bo plays chess")])
    assert ep2.causes[0].events == [{"kind": "linked", "reason": "linked to turn 5"}]


def test_empty_diff_and_end_of_conversation_said_plainly(store):
    d = diff_steps(view(store, "A"), CONV, 7, 5)  # swapped: 5 -> 7
    assert (d.a.step, d.b.step, d.empty) == (5, 7, True)
    assert headline(d) == "s on c from step 5 to step 7: nothing changed."
    assert counts_frame(d)["unchanged"].tolist() == [2, 1] and changes_frame(d).empty


def test_steps_outside_the_built_memory_and_unbuilt_memories_are_refused(store):
    with pytest.raises(MemcoreError, match=r"step 9 is outside 0\.\.7"):
        diff_steps(view(store, "A"), CONV, 0, 9)
    with pytest.raises(MemcoreError, match="no stored memory of s on c"):
        diff_steps(view(store, "nope"), CONV, 0, 1)


def test_two_memories_at_one_step_match_text_under_any_id(store):
    d = diff_memories(view(store, "A"), view(store, "B"), CONV, 5, ("s", "s[x=1]"))
    got = {k: [(c.change, c.item_id, c.before, c.after, [(x.side, x.step) for x in c.causes]) for c in v]
           for k, v in d.changes.items()}
    assert got == {"episode": [("added", "episode-2", None, "Cy plays golf", [("B", 2)])],
                   "semantic": [("added", "semantic-3", None, "Biscuit eats shoes", [("B", 4)]),
                                ("changed", "semantic-2", "Ana likes parks", "Ana likes big parks",
                                 [("A", 5), ("B", 4)])]}
    assert d.unchanged == {"episode": 2, "semantic": 0}  # episode-1, and A's episode-2 = B's episode-3
    golf = d.changes["episode"][0].causes[0]
    assert (golf.turn, golf.events) == ("turn 2 (D1:2)", [{"kind": "created", "reason": "golf episode"}])
    assert headline(d) == "s[x=1] against s on c at step 5: 2 added, 1 changed, 0 removed."


def test_memories_without_items_and_the_same_memory_say_so(store):
    d = diff_steps(view(store, "R", "r"), CONV, 2, 5)
    assert d.empty and d.kinds == [] and d.raw_turns == {"r": 3}
    assert "r holds no memory items of its own: it indexes the raw turns (3 turn(s)" in d.notes[0]
    assert headline(d) == "r on c from step 2 to step 5: no memory items on either side (nothing to compare)."
    same = diff_memories(view(store, "A"), view(store, "A"), CONV, 5, ("s", "s[retriever=lexical]"))
    assert same.empty and "are the same memory" in same.notes[0]


def test_summary_lists_items_with_causes_and_html_escapes_data(store):
    store.commit("A", "s", "c", 7, [it("episode-1", "<b>Ana</b> adopted", 6)], [],
                 [ev(6, "merged", ["episode-1"], "<script>x</script>")], {}, done=True)
    d = diff_steps(view(store, "A"), CONV, 5, 6)
    text = summary_text(d)
    assert "  ~ episode-1:\n      before: Ana adopted a puppy named Biscuit in May\n      after:  <b>Ana</b> adopted" in text
    assert "step 6 · turn 6 (D1:6) · merged: <script>x</script>" in text
    html = word_diff_html(d.changes["episode"][0])
    assert "<b>Ana" not in html and "&lt;b&gt;Ana&lt;/b&gt;" in html and html.count("<div>") == 2
    assert d.to_dict()["changes"]["episode"][0]["causes"][0]["step"] == 6


def test_other_fields_name_each_metadata_key_that_changed_and_nothing_when_equal_as_stored():
    """Issue 37 minor 10: 'also changed: metadata' was shown for items whose text was equal, naming no field."""
    from memcore.memory_diff import _fields

    def item(**meta):
        return MemoryItem(id="t", kind="theme", text="same", sources=["a"], turn_ids=("D1:1",), metadata=meta)

    assert _fields(item(label="x", n=2), item(label="y", n=2)) == ["metadata.label"]
    assert _fields(item(label="x"), item(label="x", summary="s")) == ["metadata.summary"]
    assert _fields(item(score=float("nan"), ids=("a", "b")), item(score=float("nan"), ids=["a", "b"])) == []


def test_steps_diff_from_given_versions_events_and_items_equals_the_store_read(store, monkeypatch):
    """diff_steps with versions, events and items handed in (the app's per-checkpoint caches) is the diff it reads
    itself (the changed items by id, or, for many, every version alive in between), between every two steps of a
    memory with items added, rewritten, relinked and deleted."""
    import memcore.memory_diff as md

    mem = view(store, "A")
    versions, events = mem.versions(), mem.events()
    kinds = {k: mem.kind_versions(k) for k in set(versions["kind"])}

    def items_at(kind: str, step: int) -> list[MemoryItem]:
        items, valid_to = kinds[kind]
        return [i for i, vt in zip(items, valid_to, strict=True) if i.updated_step <= step < vt]

    def partly_held(kind: str, step: int) -> list[MemoryItem] | None:
        return None if kind == min(kinds) else items_at(kind, step)  # one kind not held yet: read, the diff the same

    seen = set()
    for a in range(0, 8):
        for b in range(a, 8):
            want = diff_steps(mem, CONV, a, b).to_dict()
            assert diff_steps(mem, CONV, a, b, versions=versions, events=events, items_at=items_at,
                              checkpoint=mem.checkpoint()).to_dict() == want
            assert diff_steps(mem, CONV, a, b, versions=versions, events=events,
                              items_at=partly_held).to_dict() == want
            with monkeypatch.context() as m:
                m.setattr(md, "MAX_IDS_READ", 0)  # too many changed items to read by id
                assert diff_steps(mem, CONV, a, b).to_dict() == want
            seen |= {c["change"] for v in want["changes"].values() for c in v}
    assert seen == {"added", "changed", "removed"}
