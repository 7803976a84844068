"""Dataset loaders: LoCoMo (both layouts), LongMemEval, JSONL chat logs, the demo, and bad files."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from memcore.datasets import (
    ABSTAIN_ANSWER,
    DEMO_PATH,
    FORMATS,
    KNOWN_ERRATA,
    DatasetWarning,
    category_counts,
    detect_format,
    load_dataset,
    load_demo,
    load_jsonl_chat,
    load_locomo,
    load_longmemeval,
    save_jsonl_chat,
    split_evidence,
)
from memcore.errors import DatasetError
from memcore.types import Conversation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LME_FIXTURE = FIXTURES / "longmemeval_small.json"
CHAT_FIXTURE = FIXTURES / "chat_small.jsonl"
LOCOMO_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "locomo"
LOCOMO_COUNTS = {1: 213, 2: 256, 3: 76, 4: 681, 5: 360}

needs_shared = pytest.mark.skipif(
    not (LOCOMO_DIR / "locomo8.json").exists(),
    reason=f"LoCoMo files not found at {LOCOMO_DIR} (../shared is only on the developers' machines)",
)


@pytest.fixture(scope="module")
def locomo_list() -> list[Conversation]:
    return load_locomo(LOCOMO_DIR / "locomo8.json")


@pytest.fixture()
def demo_raw() -> dict:
    return json.loads(DEMO_PATH.read_text(encoding="utf-8"))


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def same(a: Conversation, b: Conversation) -> bool:
    return (a.id, a.speakers, a.turns, a.questions) == (b.id, b.speakers, b.turns, b.questions)


# ---- LoCoMo on the real files (skipped without ../shared) --------------------------


@needs_shared
def test_locomo_layouts_identical(locomo_list):
    files = sorted(LOCOMO_DIR.glob("conv-*.json"))
    singles = [c for f in files for c in load_dataset(f)]
    assert [c.id for c in singles] == [c.id for c in locomo_list] == [f.stem for f in files]
    assert singles == locomo_list  # dataclass equality: every turn and question
    assert sum(len(c.questions) for c in locomo_list) == 1586
    assert all(c.source == "locomo" and len(c.speakers) == 2 for c in locomo_list)


@needs_shared
def test_locomo_category_counts(locomo_list):
    counts = category_counts(locomo_list)
    print("LoCoMo questions per category:", counts)
    assert counts == LOCOMO_COUNTS
    per_conv = [category_counts([c]) for c in locomo_list]
    assert {k: sum(p.get(k, 0) for p in per_conv) for k in counts} == counts
    adversarial = [q for c in locomo_list for q in c.questions if q.category == 5]
    assert all(q.answer == ABSTAIN_ANSWER and q.adversarial_answer for q in adversarial)
    assert all(q.answer and not q.adversarial_answer for c in locomo_list for q in c.questions if q.category != 5)


@needs_shared
def test_locomo_fields(locomo_list):
    conv = locomo_list[0]
    assert conv.id == "conv-26" and conv.speakers == ["Caroline", "Melanie"]
    first = conv.turns[0]
    assert (first.turn_id, first.index, first.session) == ("D1:1", 0, 1)
    assert first.session_date == "1:56 pm on 8 May, 2023" and first.timestamp == "2023-05-08T13:56:00"
    assert [t.index for t in conv.turns] == list(range(len(conv.turns)))
    photo = conv.turn("D1:5")
    assert photo.content.endswith("[shares a photo of a dog walking past a wall with a painting of a woman]")
    by_text = {q.text: q for q in conv.questions}
    assert by_text["What did Melanie paint recently?"].evidence == ["D8:6", "D9:17"]
    sunrise = by_text["When did Melanie paint a sunrise?"]
    assert sunrise.answer == "2022" and sunrise.id == f"conv-26:q{conv.questions.index(sunrise)}"
    assert by_text["Is Oscar Melanie's pet?"].metadata["dataset_answer"] == "No"
    ids = {t.turn_id for c in locomo_list for t in c.turns}
    evidence = [e for c in locomo_list for q in c.questions for e in q.evidence]
    assert "D" not in evidence and "D11:26" in evidence and sum(e not in ids for e in evidence) <= 2


# ---- LoCoMo parsing details (no shared files needed) -------------------------------


def test_split_evidence():
    assert split_evidence(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert split_evidence(["D8:6,D9:17", " D1:2 "]) == ["D8:6", "D9:17", "D1:2"]
    assert split_evidence(["D1:18", "D", "D:11:26", "D1:18"]) == ["D1:18", "D", "D:11:26"]  # spellings: Checks
    assert split_evidence("D2:1; D3:4") == ["D2:1", "D3:4"]


def test_locomo_list_layout_and_int_answers(tmp_path, demo_raw):
    flat = {k: v for k, v in demo_raw.items() if k not in ("sample_id", "qa")}
    qa = [{"question": "How many runs?", "answer": 3, "evidence": ["D1:3,D1:11"], "category": 1}]
    listed = write(tmp_path / "locomo10.json", [{"sample_id": "demo", "conversation": flat, "qa": qa}])
    [conv] = load_dataset(listed)
    assert detect_format(listed) == "locomo"
    q = conv.questions[0]
    assert q.answer == "3" and isinstance(q.answer, str)
    assert q.evidence == ["D1:3", "D1:11"] and q.id == "demo:q0" and q.category_name == "multi-hop"
    assert conv.turns == load_demo().turns


def test_locomo_single_layout_id_from_file_name(tmp_path, demo_raw):
    del demo_raw["sample_id"]
    [conv] = load_locomo(write(tmp_path / "conv-99.json", demo_raw))
    assert conv.id == "conv-99" and all(t.conv_id == "conv-99" for t in conv.turns)
    assert conv.questions[0].id == "conv-99:q0"


def test_image_caption_rendering():
    turn = load_demo().turn("D1:5")
    assert turn.image_caption == "a beagle lying on the grass next to a race medal"
    assert turn.content == f"{turn.text} [shares a photo of a beagle lying on the grass next to a race medal]"
    assert turn.render().startswith("[10:15 am on 8 May, 2023] Maya: My sister Lena")


# ---- LongMemEval ---------------------------------------------------------------------


def test_longmemeval_fixture():
    convs = load_dataset(LME_FIXTURE)
    assert detect_format(LME_FIXTURE) == "longmemeval"
    assert [c.id for c in convs] == ["e47becba", "6a1eabeb", "gpt4_d6585ce8", "c4a1ceb8_abs"]
    first = convs[0]
    assert first.source == "longmemeval" and first.speakers == ["user", "assistant"]
    assert sorted(first.sessions()) == [1, 2, 3] and len(first.turns) == 8
    assert [t.turn_id for t in first.sessions()[2]] == ["D2:1", "D2:2", "D2:3", "D2:4"]
    assert first.turns[2].session_date == "2023/05/22 (Mon) 10:05"
    assert first.turns[2].timestamp == "2023-05-22T10:05:00" and first.turns[2].speaker == "user"
    assert first.metadata["haystack_session_ids"][1] == "answer_280352e9"
    [q] = first.questions
    assert (q.id, q.conv_id, q.category, q.evidence) == ("e47becba", "e47becba", "single-session-user", ["D2:1"])
    assert q.question_date == "2023/05/30 (Tue) 23:40" and q.metadata["answer_sessions"] == [2]
    update = convs[1].questions[0]
    assert update.answer == "5" and update.evidence == ["D1:1", "D3:1"]
    assert {c.questions[0].category for c in convs} == {
        "single-session-user", "knowledge-update", "temporal-reasoning", "multi-session"}
    flags = [(c.metadata["abstention"], c.questions[0].metadata["abstention"]) for c in convs]
    assert flags == [(False, False)] * 3 + [(True, True)]


# ---- JSONL chat logs -----------------------------------------------------------------


def test_jsonl_fixture():
    bike, garden = load_dataset(CHAT_FIXTURE)
    assert (bike.id, bike.speakers, bike.source) == ("bike-chat", ["Alice", "Bob"], "jsonl")
    assert [t.turn_id for t in bike.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "bob-legs"]
    assert bike.turns[1].timestamp == "2024-03-01T10:00:00" and bike.turns[2].timestamp == "2024-03-01T10:05:00"
    assert bike.turns[2].session_date == "2024-03-01 10:00" and bike.metadata == {"note": "hand-written fixture"}
    assert "[shares a photo of a red bicycle" in bike.turns[0].content
    assert [q.id for q in bike.questions] == ["bike-chat:q0", "bike-q-date"]
    assert bike.questions[1].evidence == ["D1:3", "D1:1"] and bike.questions[1].category == 2
    assert (garden.speakers, [t.session for t in garden.turns]) == (["Carol", "Dan"], [1, 1])


def test_unusual_dates_fall_back_to_dateparser(tmp_path):
    path = tmp_path / "dates.jsonl"
    lines = [{"date": "March 1st, 2024 10am", "speaker": "A", "text": "hi"},
             {"session": 2, "date": "2023/05/20 (Sat) 02:21", "speaker": "B", "text": "yo"}]
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    [conv] = load_dataset(path)
    assert [t.timestamp for t in conv.turns] == ["2024-03-01T10:00:00", "2023-05-20T02:21:00"]
    assert conv.id == "dates" and conv.turns[0].session_date == "March 1st, 2024 10am"


def test_jsonl_round_trip(tmp_path):
    convs = [load_demo(), *load_longmemeval(LME_FIXTURE), *load_jsonl_chat(CHAT_FIXTURE)]
    back = load_dataset(save_jsonl_chat(convs, tmp_path / "all.jsonl"))
    assert len(back) == len(convs) and all(same(a, b) for a, b in zip(convs, back, strict=True))
    again = load_jsonl_chat(save_jsonl_chat(back, tmp_path / "again.jsonl"))
    assert again == back


@needs_shared
def test_jsonl_round_trip_locomo(tmp_path):
    conv = load_locomo(LOCOMO_DIR / "conv-26.json")[0]
    [back] = load_jsonl_chat(save_jsonl_chat([conv], tmp_path / "conv-26.jsonl"))
    assert same(conv, back)


# ---- the demo ------------------------------------------------------------------------


def test_demo():
    demo = load_demo()
    assert demo.id == "demo" and demo.source == "demo" and demo.speakers == ["Maya", "Jonas"]
    assert 60 <= len(demo.turns) <= 100 and sorted(demo.sessions()) == [1, 2, 3, 4]
    assert len({t.session_date for t in demo.turns}) == 4
    assert len(demo.questions) >= 14 and set(category_counts([demo])) == {1, 2, 3, 4, 5}
    assert sum(bool(t.image_caption) for t in demo.turns) >= 1
    for q in demo.questions:
        assert q.evidence and all(demo.turn(e) is not None for e in q.evidence), q.id
        assert q.answer and (q.category == 5) == bool(q.adversarial_answer)
    assert "D3:1" in {e for q in demo.questions for e in q.evidence}  # from "D2:14; D3:1"


# ---- bad files: one DatasetError naming the file and the field -----------------------


def raises(path: Path, *needles: str, fmt: str | None = None) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(path, fmt)
    msg = str(info.value)
    assert path.name in msg, msg
    for needle in needles:
        assert needle in msg, msg
    return msg


def test_truncated_json(tmp_path):
    text = DEMO_PATH.read_text(encoding="utf-8")
    path = tmp_path / "conv-26.json"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    raises(path, "invalid JSON at line", "column", "truncated", fmt="locomo")
    raises(path, "invalid JSON at line")  # autodetect reports the same problem


def test_missing_field(tmp_path, demo_raw):
    del demo_raw["qa"][3]["question"]
    msg = raises(write(tmp_path / "conv-26.json", demo_raw), "qa[3] is missing field 'question'")
    assert msg.startswith(str(tmp_path / "conv-26.json") + ": qa[3]")


@pytest.mark.parametrize(
    ("mutate", "needles"),
    [
        (lambda d: d.pop("speaker_b"), ["missing field 'speaker_b'"]),
        (lambda d: d.pop("session_2_date_time"), ["missing field 'session_2_date_time'"]),
        (lambda d: d["session_1"][2].pop("text"), ["session_1[2] is missing field 'text'"]),
        (lambda d: d["session_1"][0].update(speaker=7), ["session_1[0].speaker should be a string"]),
        (lambda d: d.update(session_1_date_time="someday"), ["session_1_date_time", "cannot read the date"]),
        (lambda d: d["qa"][0].update(category="hard"), ["qa[0].category"]),
        (lambda d: d["qa"][17].pop("adversarial_answer"), ["qa[17] is missing field 'adversarial_answer'"]),
        (lambda d: d.update(qa="none"), ["qa should be a list"]),
    ],
)
def test_wrong_fields(tmp_path, demo_raw, mutate, needles):
    mutate(demo_raw)
    raises(write(tmp_path / "mine.json", demo_raw), *needles)


def test_empty_conversation(tmp_path, demo_raw):
    for n in (1, 2, 3, 4):
        demo_raw[f"session_{n}"] = []
    raises(write(tmp_path / "empty.json", demo_raw), "'demo' has no turns")
    raises(write(tmp_path / "nolist.json", []), "empty list")
    (tmp_path / "blank.jsonl").write_text("\n\n", encoding="utf-8")
    raises(tmp_path / "blank.jsonl", "no messages")


def test_unknown_format(tmp_path, demo_raw):
    raises(write(tmp_path / "notes.json", {"title": "x", "items": []}), "unknown format", "title")
    raises(write(tmp_path / "nums.json", [1, 2]), "unknown format")
    raises(write(tmp_path / "demo.json", demo_raw), "unknown format 'xml'", "locomo", fmt="xml")
    assert set(FORMATS) == {"locomo", "longmemeval", "jsonl", "beam", "locomo-plus"}


def test_bad_longmemeval(tmp_path):
    items = json.loads(LME_FIXTURE.read_text(encoding="utf-8"))
    broken = copy.deepcopy(items)
    del broken[2]["haystack_sessions"][1][0]["role"]
    raises(write(tmp_path / "lme.json", broken), "[2] (gpt4_d6585ce8).haystack_sessions[1][0]", "'role'")
    broken = copy.deepcopy(items)
    broken[0]["haystack_dates"].pop()
    raises(write(tmp_path / "lme.json", broken), "same length")


@pytest.mark.parametrize(
    ("lines", "needles"),
    [
        (['{"date": "2024-01-01", "speaker": "A", "text": "hi"}', '{"speaker": "B", "text": "yo"'],
         ["line 2, column", "invalid JSON"]),
        (['{"date": "2024-01-01", "speaker": "A", "text": "hi"}', '{"text": "no speaker"}'],
         ["line 2 is missing field 'speaker'"]),
        (['{"speaker": "A", "text": "hi"}'], ["line 1 is missing field 'date'"]),
        (['{"date": "2024-01-01", "speaker": "A", "text": "hi"}', '{"type": "question", "answer": "x"}'],
         ["line 2 is missing field 'question'"]),
        (['{"date": "2024-01-01", "speaker": "A", "text": "hi"}', '{"type": "note"}'], ["unknown type 'note'"]),
        (['{"date": "2024-01-01", "speaker": "A", "text": "hi", "session": "one"}'], ["line 1.session"]),
        (['{"date": "2024-01-01", "speaker": "A", "text": "hi"}',
          '{"type": "question", "conversation": "other", "question": "q", "answer": "a"}'], ["'other' has no messages"]),
    ],
)
def test_bad_jsonl(tmp_path, lines, needles):
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    raises(path, *needles)


def test_missing_file_and_jsonl_named_json(tmp_path):
    raises(tmp_path / "nope.json", "file not found")
    path = tmp_path / "export.json"
    path.write_text(CHAT_FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    assert detect_format(path) == "jsonl" and len(load_dataset(path)) == 2


# ---- held to the format: strict by default, --lenient accepts with a warning ----------


def strict_then_lenient(path: Path, *needles: str) -> list[Conversation]:
    """The strict load raises naming every needle (and the --lenient way out); lenient loads with a warning."""
    msg = raises(path, *needles)
    assert "--lenient" in msg and "Fix:" in msg, msg
    with pytest.warns(DatasetWarning, match="Loaded anyway") as rec:
        convs = load_dataset(path, lenient=True)
    assert all(n in str(rec[0].message) for n in needles[:1])
    return convs


def test_missing_session_is_an_error(tmp_path, demo_raw):
    del demo_raw["session_2"]
    [conv] = strict_then_lenient(write(tmp_path / "cut.json", demo_raw), "session_2: session 2 is missing",
                                 "restore session_2")
    assert sorted(conv.sessions()) == [1, 3, 4]  # lenient: today's behaviour, the session skipped
    demo_raw["session_2"] = []
    raises(write(tmp_path / "emptied.json", demo_raw), "session 2 is empty")


def test_missing_session_in_list_layout_names_the_sample(tmp_path, demo_raw):
    flat = {k: v for k, v in demo_raw.items() if k not in ("sample_id", "qa")}
    del flat["session_1"]
    path = write(tmp_path / "locomo10.json", [{"sample_id": "s1", "conversation": flat, "qa": []}])
    raises(path, "[0] (s1) conversation.session_1: session 1 is missing")


def test_empty_turn_text_is_an_error(tmp_path, demo_raw):
    demo_raw["session_3"][4]["text"] = "  "
    demo_raw["session_3"][4].pop("blip_caption", None)
    [conv] = strict_then_lenient(write(tmp_path / "blank.json", demo_raw), "session_3[4]: the turn's text is empty")
    assert conv.turns[[t.session for t in conv.turns].index(3) + 4].text == "  "


def test_photo_without_text_is_not_empty(tmp_path, demo_raw):
    turn = next(t for t in demo_raw["session_1"] if t.get("blip_caption"))
    turn["text"] = ""
    [conv] = load_dataset(write(tmp_path / "photo.json", demo_raw))
    assert conv.turn(turn["dia_id"]).content.strip().startswith("[shares a photo")


def test_dangling_evidence_is_an_error(tmp_path, demo_raw):
    demo_raw["qa"][0]["evidence"] = ["D1:3", "D9:99"]
    [conv] = strict_then_lenient(write(tmp_path / "dangling.json", demo_raw),
                                 "qa[0] (demo:q0).evidence: evidence 'D9:99' names no turn", "correct or remove")
    assert conv.questions[0].metadata["missing_evidence"] == ["D9:99"]


def test_many_problems_are_counted(tmp_path, demo_raw):
    for q in demo_raw["qa"][:8]:
        q["evidence"] = ["D7:1"]
    msg = raises(write(tmp_path / "many.json", demo_raw), "8 format problem(s)", "(and 3 more)")
    assert msg.count("names no turn") == 5


@needs_shared
def test_published_locomo_errata_are_accepted_and_named(locomo_list):
    errata = {(q.conv_id, e) for c in locomo_list for q in c.questions for e in q.metadata.get("evidence_errata", [])}
    assert errata == set(KNOWN_ERRATA)
    assert all(q.metadata["missing_evidence"] == q.metadata["evidence_errata"]
               for c in locomo_list for q in c.questions if "missing_evidence" in q.metadata)


def test_longmemeval_held_to_format(tmp_path):
    items = json.loads(LME_FIXTURE.read_text(encoding="utf-8"))
    items[1]["haystack_sessions"][0][0]["content"] = ""
    items[2]["answer_session_ids"] = ["nowhere"]
    convs = strict_then_lenient(write(tmp_path / "lme.json", items), "[1] (6a1eabeb).haystack_sessions[0][0]: the "
                                "turn's text is empty", "answer session 'nowhere' is not in haystack_session_ids")
    assert len(convs) == 4


def test_jsonl_held_to_format(tmp_path):
    lines = [{"date": "2024-01-01", "speaker": "A", "text": "hi"}, {"speaker": "B", "text": ""},
             {"session": 3, "date": "2024-01-03", "speaker": "A", "text": "back"},
             {"type": "question", "question": "q?", "answer": "a", "evidence": ["D1:1", "D2:1"]}]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    [conv] = strict_then_lenient(path, "line 2: the turn's text is empty", "session 2 is missing",
                                 "line 4.evidence: evidence 'D2:1' names no turn")
    assert conv.questions[0].metadata["missing_evidence"] == ["D2:1"]


@pytest.mark.parametrize("name", ["conv-26.json", "chat.jsonl", "lme.json"])
def test_byte_order_mark_accepted(tmp_path, name):
    src = {"conv-26.json": DEMO_PATH, "chat.jsonl": CHAT_FIXTURE, "lme.json": LME_FIXTURE}[name]
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + src.read_bytes())
    assert load_dataset(path) == load_dataset(src)
    if name == "conv-26.json":
        assert detect_format(path) == "locomo" and load_dataset(path)[0].turns == load_demo().turns


@pytest.mark.parametrize("data", [[1, 2, 3], "text", 7, [[{"a": 1}]]])
def test_top_level_message_says_what_it_must_be(tmp_path, data):
    msg = raises(write(tmp_path / "odd.json", data), "unknown format: the top level is",
                 "top level must be a JSON object (one LoCoMo conversation) or a list of objects")
    assert "not a list or object" not in msg


@pytest.mark.parametrize("fmt", ["locomo", "longmemeval"])
def test_top_level_message_per_format(tmp_path, fmt):
    want = {"locomo": "a list of LoCoMo samples", "longmemeval": "a list of LongMemEval items"}[fmt]
    raises(write(tmp_path / "odd.json", "just text"), f"the top level should be {want}", fmt=fmt)
