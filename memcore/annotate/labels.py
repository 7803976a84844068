"""Human evaluation: blind helpfulness annotation tasks, labels, results, export / import.

Protocol (MemWeaver paper): per question, show the question, the knowledge a system
retrieved and the reference answer; the annotator judges helpful / not helpful (is the
retrieved knowledge sufficient to derive the answer?); 25 questions per category.

Retrieval runs once when a task is created and is frozen into the task, so every
annotator sees identical evidence. Labels are append-only rows (the latest row per
task, item and annotator wins), so annotators working at the same time in separate
browser sessions or processes never overwrite each other.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import pyarrow as pa

from memcore.annotate.stats import agreement, wilson_interval
from memcore.errors import LLMError, MemoryNotBuilt
from memcore.store import LanceStore
from memcore.types import Conversation, Question

LABELS = ("helpful", "not_helpful", "skip")
TASKS = pa.schema([pa.field("task_id", pa.string()), pa.field("payload", pa.string()), pa.field("ts", pa.float64())])
ITEMS = pa.schema([pa.field("task_id", pa.string()), pa.field("item_id", pa.string()),
                   pa.field("system", pa.string()), pa.field("category", pa.string()), pa.field("payload", pa.string())])
LABEL_ROWS = pa.schema([
    pa.field("task_id", pa.string()), pa.field("item_id", pa.string()), pa.field("annotator", pa.string()),
    pa.field("label", pa.string()), pa.field("note", pa.string()), pa.field("ts", pa.float64()),
])


@dataclass
class AnnotationItem:
    """One (question, system) pair as frozen in a task. `system` is never shown to annotators."""

    item_id: str
    question_id: str
    conv_id: str
    category: str
    question: str
    reference: str
    knowledge: list[str]
    system: str
    category_name: str = ""  # e.g. "single-hop"; tasks made before it was stored show the number


@dataclass
class AnnotationTask:
    """A task: what was sampled, with which seed, and the frozen items."""

    task_id: str
    name: str
    systems: list[str]
    per_category: int
    seed: int
    conversations: list[str]
    created: float = field(default_factory=time.time)
    retriever: str = ""  # dense | lexical | hybrid (memcore.retrievers); "" for tasks made before it was recorded


def stratified_sample(questions: Sequence[Question], per_category: int, seed: int,
                      categories: Sequence[int | str] | None = None) -> list[Question]:
    """Up to `per_category` questions per category over all of `questions` (of every conversation
    together), reproducible for a seed."""
    by_cat: dict[str, list[Question]] = defaultdict(list)
    for q in sorted(questions, key=lambda q: (q.conv_id, q.id)):
        if categories is None or q.category in categories or str(q.category) in map(str, categories):
            by_cat[str(q.category)].append(q)
    rng = random.Random(seed)
    out: list[Question] = []
    for cat in sorted(by_cat):
        pool = by_cat[cat]
        out.extend(rng.sample(pool, min(per_category, len(pool))))
    return out


def _item_id(task_id: str, qid: str, system: str) -> str:
    return hashlib.sha256(f"{task_id}|{qid}|{system}".encode()).hexdigest()[:12]


class Annotations:
    """Annotation tasks and labels on a LanceStore."""

    def __init__(self, store: LanceStore) -> None:
        self.store = store

    def create_task(self, name: str, convs: Sequence[Conversation], systems: Sequence[str],
                    retrieve: Callable[[str, Conversation, Question], list[str]], per_category: int = 25,
                    seed: int = 0, categories: Sequence[int | str] | None = (1, 2, 3, 4),
                    retriever: str | None = None) -> AnnotationTask:
        """Sample `per_category` questions per category over all conversations together (not per conversation),
        run retrieval once per (question, system) and freeze it into a task. The task records `retriever`
        (by default the one a workbench_retriever function names; "" when unknown)."""
        task_id = hashlib.sha256(f"{name}|{seed}|{time.time()}".encode()).hexdigest()[:10]
        used = retriever if retriever is not None else str(getattr(retrieve, "retriever", ""))
        task = AnnotationTask(task_id, name, list(systems), per_category, seed, [c.id for c in convs],
                              retriever=used)
        rows = []
        owner = {(c.id, q.id): c for c in convs for q in c.questions}
        pool = [q for c in convs for q in c.questions]
        for q in stratified_sample(pool, per_category, seed, categories):
            conv = owner[(q.conv_id, q.id)]
            for sysname in systems:
                it = AnnotationItem(_item_id(task_id, f"{conv.id}|{q.id}", sysname), q.id, conv.id, str(q.category),
                                    q.text, q.answer, retrieve(sysname, conv, q), sysname, q.category_name)
                rows.append({"task_id": task_id, "item_id": it.item_id, "system": sysname,
                             "category": it.category, "payload": json.dumps(asdict(it))})
        self.store.table("ann_items", ITEMS).add(rows)
        self.store.table("ann_tasks", TASKS).add([{"task_id": task_id, "payload": json.dumps(asdict(task)),
                                                   "ts": task.created}])
        return task

    def tasks(self) -> list[AnnotationTask]:
        """All tasks, newest first."""
        df = self.store.rows("ann_tasks", TASKS)
        tasks = [AnnotationTask(**json.loads(p)) for p in df["payload"]]
        return sorted(tasks, key=lambda t: -t.created)

    def task(self, task_id: str) -> AnnotationTask | None:
        """One task by id, or None."""
        return next((t for t in self.tasks() if t.task_id == task_id), None)

    def items(self, task_id: str) -> list[AnnotationItem]:
        """The frozen items of a task."""
        df = self.store.rows("ann_items", ITEMS, task_id=task_id)
        return sorted((AnnotationItem(**json.loads(p)) for p in df["payload"]), key=lambda i: i.item_id)

    def queue(self, task_id: str, annotator: str) -> list[AnnotationItem]:
        """The task's items in this annotator's own shuffled order (stable across sessions)."""
        key = lambda i: hashlib.sha256(f"{annotator}|{i.item_id}".encode()).hexdigest()  # noqa: E731
        return sorted(self.items(task_id), key=key)

    def label(self, task_id: str, item_id: str, annotator: str, label: str, note: str = "") -> None:
        """Record (or change) one label; appends a row, so concurrent writers never collide."""
        if label not in LABELS:
            raise ValueError(f"label must be one of {LABELS}, not {label!r}")
        if not annotator.strip():
            raise ValueError("annotator name is empty: type your name first")
        self.store.table("labels", LABEL_ROWS).add([{"task_id": task_id, "item_id": item_id,
                                                     "annotator": annotator.strip(), "label": label,
                                                     "note": note, "ts": time.time()}])

    def labels(self, task_id: str, annotator: str | None = None) -> dict[tuple[str, str], dict]:
        """Latest label per (item, annotator)."""
        df = self.store.rows("labels", LABEL_ROWS, task_id=task_id, annotator=annotator or None)
        out: dict[tuple[str, str], dict] = {}
        for r in sorted(df.to_dict("records"), key=lambda r: r["ts"]):
            out[(r["item_id"], r["annotator"])] = {"label": r["label"], "note": r["note"], "ts": r["ts"]}
        return out

    def results(self, task_id: str) -> dict:
        """Helpfulness per system and category (by name), agreement, disagreements.

        `rate` is the mean of the annotators' own rates (each annotator counts once however many items they
        labelled), with their spread (`sd`, `min`, `max`) and `per_annotator` rates; `helpful`/`n` pool all
        labels and `ci95` is the pooled labels' Wilson interval."""
        items = {i.item_id: i for i in self.items(task_id)}
        labs = self.labels(task_id)
        counts: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        per_item: dict[str, dict[str, str]] = defaultdict(dict)
        for (iid, ann), lab in labs.items():
            if lab["label"] == "skip" or iid not in items:
                continue
            it = items[iid]
            per_item[iid][ann] = lab["label"]
            for cat in (it.category_name or it.category, "all"):
                c = counts[(it.system, cat)][ann]
                c[0] += lab["label"] == "helpful"
                c[1] += 1
        rates = [_rate(s, cat, per_ann) for (s, cat), per_ann in sorted(counts.items())]
        disagreements = [{"item_id": iid, "question": items[iid].question, "system": items[iid].system,
                          "labels": per} for iid, per in sorted(per_item.items()) if len(set(per.values())) > 1]
        task = self.task(task_id)
        return {"task_id": task_id, "name": task.name if task else "", "retriever": task.retriever if task else "",
                "rates": rates, "agreement": agreement(per_item), "disagreements": disagreements,
                "annotators": sorted({a for _, a in labs})}

    def export_labels(self, task_id: str, fmt: str = "json") -> str:
        """The label log of a task: every label row (a changed label appears once per change) as JSON or CSV
        text, each with the task's retriever (import ignores that column: it belongs to the task)."""
        df = self.store.rows("labels", LABEL_ROWS, task_id=task_id)
        task = self.task(task_id)
        rows = [{**r, "retriever": task.retriever if task else ""}
                for r in sorted(df.to_dict("records"), key=lambda r: (r["ts"], r["item_id"], r["annotator"]))]
        return _dump(rows, [*LABEL_ROWS.names, "retriever"], fmt)

    def export_current(self, task_id: str, fmt: str = "json") -> str:
        """The current labels of a task: one row per (item, annotator) with its latest label, the question,
        system, category and retriever, when it was given and how many times it was changed (`changes`: 0 = given once). The
        columns of the log are all there, so `import_labels` reads this file too (the latest labels only)."""
        items = {i.item_id: i for i in self.items(task_id)}
        task = self.task(task_id)
        df = self.store.rows("labels", LABEL_ROWS, task_id=task_id)
        changes = df.groupby(["item_id", "annotator"]).size().to_dict() if len(df) else {}
        rows = []
        for (iid, ann), lab in self.labels(task_id).items():
            it = items.get(iid)
            rows.append({"task_id": task_id, "item_id": iid, "conv_id": it.conv_id if it else "",
                         "question_id": it.question_id if it else "", "question": it.question if it else "",
                         "category": (it.category_name or it.category) if it else "", "system": it.system if it else "",
                         "retriever": task.retriever if task else "", "annotator": ann, "label": lab["label"],
                         "note": lab["note"], "labelled_at": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                                                           time.gmtime(lab["ts"])),
                         "ts": lab["ts"], "changes": int(changes.get((iid, ann), 1)) - 1})
        rows.sort(key=lambda r: (r["conv_id"], r["question_id"], r["system"], r["annotator"]))
        return _dump(rows, CURRENT_COLUMNS, fmt)

    def import_labels(self, text: str, fmt: str = "json") -> int:
        """Add label rows exported by `export_labels` (rows already present are skipped)."""
        rows = json.loads(text) if fmt == "json" else list(csv.DictReader(io.StringIO(text)))
        for r in rows:
            r["ts"] = float(r["ts"])
            r["note"] = r.get("note") or ""
            if r["label"] not in LABELS:
                raise ValueError(f"bad label {r['label']!r} in import; expected one of {LABELS}")
        have = set()
        for tid in {r["task_id"] for r in rows}:
            df = self.store.rows("labels", LABEL_ROWS, task_id=tid)
            have |= {(x["task_id"], x["item_id"], x["annotator"], x["ts"]) for x in df.to_dict("records")}
        new = [{k: r[k] for k in LABEL_ROWS.names} for r in rows
               if (r["task_id"], r["item_id"], r["annotator"], r["ts"]) not in have]
        if new:
            self.store.table("labels", LABEL_ROWS).add(new)
        return len(new)


CURRENT_COLUMNS = ["task_id", "item_id", "conv_id", "question_id", "question", "category", "system", "retriever",
                   "annotator", "label", "note", "labelled_at", "ts", "changes"]


def _dump(rows: list[dict], columns: list[str], fmt: str) -> str:
    """Rows as JSON, or CSV with these columns (`ts` written exactly, so an import reads the same float)."""
    if fmt == "json":
        return json.dumps(rows, indent=1)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns)
    w.writeheader()
    for r in rows:
        w.writerow({**r, "ts": repr(r["ts"])})
    return buf.getvalue()


def _rate(system: str, category: str, per_ann: dict[str, list[int]]) -> dict:
    by_ann = {a: k / n for a, (k, n) in sorted(per_ann.items()) if n}
    k, n = sum(c[0] for c in per_ann.values()), sum(c[1] for c in per_ann.values())
    vals = list(by_ann.values())
    mean = sum(vals) / len(vals) if vals else None
    sd = (sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) ** 0.5 if len(vals) > 1 else None
    return {"system": system, "category": category, "helpful": k, "n": n, "rate": mean, "sd": sd,
            "min": min(vals) if vals else None, "max": max(vals) if vals else None, "n_annotators": len(vals),
            "per_annotator": by_ann, "ci95": wilson_interval(k, n)}


def workbench_retriever(wb, retriever: str = "dense", *, build: bool = False,
                        ) -> Callable[[str, Conversation, Question], list[str]]:
    """A `retrieve` function for create_task: the knowledge a system retrieves with `retriever` (memcore.retrievers;
    dense = the papers' mode), one line per item; the function names its retriever (`.retriever`), which
    create_task records in the task.

    A memory that is not built raises MemoryNotBuilt naming the system, the conversation and the fix (create_task
    then stores nothing); with build=True it is built first (an ingest that fails raises LLMError)."""

    def retrieve(system: str, conv: Conversation, q: Question) -> list[str]:
        if not wb.is_ingested(system, conv):
            if not build:
                raise MemoryNotBuilt(f"the memory of {system} for conversation {conv.id} is not built, and the task "
                                     f"would need it. Fix: build it first (Build memory in the app, or `memcore "
                                     f"ingest <dataset> -s {system} -c {conv.id}`), or pass build=True")
            rep = wb.ingest(system, conv)
            if rep.error:  # never retrieve from a memory missing the failed steps
                raise LLMError(rep.message)
        trace = wb.system(system, conv, retriever=retriever).retrieve(q)
        seen: dict[str, str] = {}
        for it in trace.items:
            date = it.metadata.get("date", "")
            seen.setdefault(it.id, f"[{date}] {it.text}" if date else it.text)
        return list(seen.values())

    retrieve.retriever = retriever  # type: ignore[attr-defined]
    return retrieve
