"""BEAM and LoCoMo-Plus loaders on small hand-written fixtures, and `auto` detection of every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.datasets import DatasetWarning, dataset_files, detect_format, load_dataset
from memcore.datasets.beam import ability_name
from memcore.datasets.locomo_plus import gap_days
from memcore.errors import DatasetError


def _msg(i: int, role: str, text: str, anchor: str = "") -> dict:
    m = {"role": role, "id": i, "content": text}
    if anchor:
        m["time_anchor"] = anchor
    return m


CHAT = [
    {"batch_number": 1, "time_anchor": None, "turns": [
        [_msg(0, "user", "I start a weather app with vanilla JavaScript.", "March-15-2024"),
         _msg(1, "assistant", "Good choice.")],
        [_msg(2, "user", "My API quota is 1,000 calls per day."), _msg(3, "assistant", "Noted.")]]},
    {"batch_number": 2, "time_anchor": None, "turns": [
        [_msg(4, "user", "The quota was raised to 1,200 calls per day.", "April-02-2024"),
         _msg(5, "assistant", "Great.")],
        [_msg(6, "user", "Later I added a debounce to the search box.", "April-10-2024"),
         _msg(7, "assistant", "OK.")]]},
]
QUESTIONS = {
    "knowledge_update": [{"question": "What is my daily quota?", "answer": "1,200 calls per day",
                          "source_chat_ids": {"original_info": [2], "updated_info": [4]},
                          "rubric": ["LLM response should state: 1,200 calls per day"]}],
    "event_ordering": [{"question": "In what order did I mention things?", "answer": "1) app 2) quota 3) debounce",
                        "source_chat_ids": [0, [2, 4], 6],
                        "rubric": ["starting the app", "the quota", "the debounce"]}],
    "abstention": [{"question": "Which CSS framework did I use?", "ideal_response": "Not mentioned.",
                    "rubric": ["Based on the provided chat, there is no information"]}],
    "instruction_following": [{"question": "How do I handle errors?", "expected_compliance": "Include codes.",
                               "source_chat_ids": [6], "rubric": ["mentions status codes"], "difficulty": "easy"}],
}


def write_beam(root: Path, questions: dict | None = None, beside: bool = False) -> Path:
    """A BEAM chat folder root/100K/7 with chat.json and its probing questions; returns chat.json."""
    folder = root / "100K" / "7"
    folder.mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps(CHAT), encoding="utf-8")
    qdir = folder if beside else folder / "probing_questions"
    qdir.mkdir(exist_ok=True)
    (qdir / "probing_questions.json").write_text(json.dumps(questions or QUESTIONS), encoding="utf-8")
    return folder / "chat.json"


def test_beam_batches_are_sessions_with_anchor_dates_and_every_gold(tmp_path) -> None:
    chat = write_beam(tmp_path)
    for path in (chat, chat.parent, chat.parent.parent):  # chat.json, its folder, a folder of chats
        [conv] = load_dataset(path)
        assert conv.id == "beam-100K-7" and conv.source == "beam"
    assert [t.session for t in conv.turns] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert [t.turn_id for t in conv.turns][:3] == ["0", "1", "2"]
    assert conv.turns[0].session_date == "March-15-2024" and conv.turns[0].timestamp == "2024-03-15T00:00:00"
    assert conv.turns[4].session_date == "April-02-2024"
    assert conv.turns[6].timestamp == "2024-04-10T00:00:00"  # a later anchor inside the batch dates its turns
    assert conv.turns[5].timestamp == "2024-04-02T00:00:00"
    q = {x.metadata["ability"]: x for x in conv.questions}
    ku = q["knowledge_update"]
    assert ku.category == "knowledge update" and ku.answer == "1,200 calls per day"
    assert ku.evidence == ["2", "4"]
    assert ku.metadata["evidence_groups"] == {"original_info": ["2"], "updated_info": ["4"]}
    assert ku.metadata["rubric"] == ["LLM response should state: 1,200 calls per day"]
    eo = q["event_ordering"]
    assert eo.evidence == ["0", "2", "4", "6"] and eo.metadata["evidence_items"] == [["0"], ["2", "4"], ["6"]]
    assert eo.metadata["reference_order"] == ["starting the app", "the quota", "the debounce"]
    ab = q["abstention"]
    assert ab.evidence == [] and ab.metadata["abstention"] is True and ab.metadata["gold_field"] == "ideal_response"
    inf = q["instruction_following"]
    assert inf.answer == "Include codes." and inf.metadata["gold_field"] == "expected_compliance"
    assert inf.metadata["beam"] == {"difficulty": "easy"} and inf.category == "instruction following"


def test_beam_questions_beside_chat_json_and_a_dangling_id(tmp_path) -> None:
    bad = {"information_extraction": [{"question": "q", "answer": "a", "source_chat_ids": [99], "rubric": ["a"]}]}
    chat = write_beam(tmp_path, bad, beside=True)
    with pytest.raises(DatasetError, match="message id 99 names no message") as err:
        load_dataset(chat)
    assert "--lenient" in str(err.value) and "read as beam" in str(err.value)
    with pytest.warns(DatasetWarning, match="99"):
        [conv] = load_dataset(chat, lenient=True)
    assert conv.questions[0].metadata["missing_evidence"] == ["99"]
    assert ability_name("multi_session_reasoning") == "multi-session reasoning"


def test_dataset_files_of_a_beam_folder(tmp_path) -> None:
    chat = write_beam(tmp_path)
    files = dataset_files(chat.parent, "beam")
    assert files == [chat, chat.parent / "probing_questions" / "probing_questions.json"]


# ---- LoCoMo-Plus --------------------------------------------------------------------------------------------


def _locomo_sample(sid: str, a: str, b: str, dates: list[str]) -> dict:
    conv: dict = {"speaker_a": a, "speaker_b": b}
    for n, date in enumerate(dates, start=1):
        conv[f"session_{n}_date_time"] = date
        conv[f"session_{n}"] = [{"speaker": a, "dia_id": f"D{n}:1", "text": f"{sid} session {n} from {a}"},
                                {"speaker": b, "dia_id": f"D{n}:2", "text": f"{sid} session {n} from {b}"}]
    return {"sample_id": sid, "conversation": conv, "qa": []}


PLUS = [
    {"relation_type": "causal", "cue_dialogue": "A: I learnt to say no.\nB: Good for you.",
     "trigger_query": "A: I volunteered and now I am overwhelmed.", "time_gap": "two weeks later"},
    {"relation_type": "state", "cue_dialogue": "A: I moved to Oslo.", "trigger_query": "A: It is cold here.",
     "time_gap": "several months later"},
    {"relation_type": "goal", "cue_dialogue": "A: x\nB: y", "trigger_query": "A: z", "time_gap": "one week later"},
]
PLUS += [dict(PLUS[2]) for _ in range(7)]  # items 3..9 (their conversations are absent too)
PLUS.append({"relation_type": "value", "cue_dialogue": "B: Family comes first for me.",
             "trigger_query": "A: Should you take the job abroad?", "time_gap": "one year later"})


def write_plus(tmp_path: Path) -> tuple[Path, Path]:
    """locomo_plus.json (11 items) and a locomo10-layout file holding conv-26 and conv-30 only."""
    locomo = tmp_path / "locomo10.json"
    locomo.write_text(json.dumps([
        _locomo_sample("conv-26", "Caroline", "Melanie", ["1:00 pm on 1 May, 2023", "1:00 pm on 1 June, 2023"]),
        _locomo_sample("conv-30", "Jon", "Gina", ["9:00 am on 3 March, 2023"]),
    ]), encoding="utf-8")
    plus = tmp_path / "locomo_plus.json"
    plus.write_text(json.dumps(PLUS), encoding="utf-8")
    return plus, locomo


def test_locomo_plus_stitching_matches_a_hand_computed_insertion(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MEMCORE_LOCOMO_FILE", raising=False)
    plus, locomo = write_plus(tmp_path)
    with pytest.warns(DatasetWarning, match="8 of 11 LoCoMo-Plus items skipped"):
        convs = load_dataset(plus)  # format detected; locomo10.json found beside it
    assert [c.id for c in convs] == ["conv-26+plus0", "conv-30+plus1", "conv-26+plus10"]
    c0 = convs[0]
    # item 0 -> conv-26 (0 mod 10): last session 1 June 2023 13:00; trigger +7 d = 8 June; cue 14 d before = 25 May,
    # between session 1 (1 May) and session 2 (1 June): the cue becomes session 2, the old session 2 session 3
    assert [(t.session, t.turn_id) for t in c0.turns] == [(1, "D1:1"), (1, "D1:2"), (2, "CUE:1"), (2, "CUE:2"),
                                                          (3, "D2:1"), (3, "D2:2")]
    assert [t.index for t in c0.turns] == list(range(6))
    cue = c0.turns[2]
    assert cue.timestamp == "2023-05-25T13:00:00" and cue.session_date == "1:00 pm on 25 May, 2023"
    assert (cue.speaker, cue.text) == ("Caroline", "I learnt to say no.") and c0.turns[3].speaker == "Melanie"
    q = c0.questions[0]
    assert q.text == "I volunteered and now I am overwhelmed." and q.category == "cognitive"
    assert q.evidence == ["CUE:1", "CUE:2"] and q.answer == "" and q.metadata["no_reference_answer"] is True
    assert q.question_date == "1:00 pm on 8 June, 2023" and q.metadata["question_timestamp"] == "2023-06-08T13:00:00"
    assert c0.metadata["cue_session"] == 2 and c0.metadata["locomo_file"] == str(locomo)
    # item 1 -> conv-30: "several months later" is unreadable -> 0 days: the cue sits at the trigger, after the last
    c1 = convs[1]
    assert c1.turns[-1].turn_id == "CUE:1" and c1.turns[-1].timestamp == "2023-03-10T09:00:00"
    # item 10 -> conv-26 again (10 mod 10 = 0): one year = 365 days before 8 June 2023 -> 8 June 2022, session 1
    c10 = convs[2]
    assert c10.turns[0].turn_id == "CUE:1" and c10.turns[0].timestamp == "2022-06-08T13:00:00"
    assert c10.turns[0].speaker == "Melanie"  # B is speaker_b
    assert {t.conv_id for t in c10.turns} == {"conv-26+plus10"}


def test_locomo_plus_gap_rule() -> None:
    assert gap_days("two weeks later") == 14 and gap_days("about six weeks later") == 42
    assert gap_days("a year after") == 365 and gap_days("3 months later") == 90
    assert gap_days("around one week after the birth") == 7
    assert gap_days("several months later") == 0 and gap_days("a couple of months later") == 0


def test_locomo_plus_without_a_locomo_file_names_the_fix(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MEMCORE_LOCOMO_FILE", raising=False)
    plus, locomo = write_plus(tmp_path)
    other = tmp_path / "elsewhere"
    other.mkdir()
    moved = other / "plus.json"
    moved.write_text(plus.read_text(), encoding="utf-8")
    with pytest.raises(DatasetError, match="MEMCORE_LOCOMO_FILE"):
        load_dataset(moved)
    monkeypatch.setenv("MEMCORE_LOCOMO_FILE", str(locomo))
    with pytest.warns(DatasetWarning):
        assert len(load_dataset(moved, "locomo-plus")) == 3
    assert dataset_files(moved, "locomo-plus") == [moved, locomo]


# ---- auto detection --------------------------------------------------------------------------------------------


def test_auto_detects_every_format_from_content(tmp_path) -> None:
    chat = write_beam(tmp_path / "b")
    plus, locomo = write_plus(tmp_path)
    lme = tmp_path / "lme.json"
    lme.write_text(json.dumps([{"question_id": "q1", "question_type": "multi-session", "question": "?",
                                "answer": "a", "question_date": "2023/05/20 (Sat) 02:21",
                                "haystack_session_ids": ["s1"], "haystack_dates": ["2023/05/20 (Sat) 02:21"],
                                "haystack_sessions": [[{"role": "user", "content": "hi"}]],
                                "answer_session_ids": ["s1"]}]), encoding="utf-8")
    lines = [{"conversation": "c", "session": 1, "date": "2024-03-01 10:00", "speaker": "A", "text": "hi"},
             {"conversation": "c", "speaker": "B", "text": "hello"}]
    jsonl = tmp_path / "chat.jsonl"
    jsonl.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    jsonl_as_json = tmp_path / "chat_lines.json"
    jsonl_as_json.write_text(jsonl.read_text(), encoding="utf-8")
    expected = {chat: "beam", chat.parent: "beam", plus: "locomo-plus", locomo: "locomo", lme: "longmemeval",
                jsonl: "jsonl", jsonl_as_json: "jsonl"}
    for path, fmt in expected.items():
        assert detect_format(path) == fmt, path
    assert load_dataset(jsonl_as_json, "auto")[0].id == "c"


def test_a_wrong_format_names_the_one_tried_and_the_flag_that_fixes_it(tmp_path) -> None:
    lines = [{"conversation": "c", "session": 1, "date": "2024-03-01 10:00", "speaker": "A", "text": "hi"},
             {"conversation": "c", "speaker": "B", "text": "hello"}]
    jsonl = tmp_path / "chat.jsonl"
    jsonl.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        load_dataset(jsonl, "locomo")
    text = str(err.value)
    assert "read as locomo (named by --dataset)" in text and "pass --dataset jsonl" in text
    assert "re-download" not in text.split("Fix:")[1]
    broken = tmp_path / "broken.json"  # looks like a BEAM chat, is not a valid one
    broken.write_text(json.dumps([{"batch_number": 1, "turns": [[{"role": "user", "id": 0}]]}]), encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        load_dataset(broken)
    text = str(err.value)
    assert "missing field 'content'" in text and "read as beam (detected from its content)" in text
    assert "name its format with --dataset" in text


def test_the_shared_beam_and_locomo_plus_files_load(shared_dir, monkeypatch) -> None:
    monkeypatch.delenv("MEMCORE_LOCOMO_FILE", raising=False)
    data = shared_dir / "datasets"
    [conv] = load_dataset(data / "beam" / "100K" / "2")
    assert len(conv.turns) == 200 and len(conv.questions) == 20
    with pytest.warns(DatasetWarning, match="80 of 401"):  # locomo8.json holds 8 of locomo10's 10 conversations
        plus = load_dataset(data / "locomo-plus" / "locomo_plus.json")
    assert len(plus) == 321 and all(c.questions[0].category == "cognitive" for c in plus)
