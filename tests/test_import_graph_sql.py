"""SQL is written in the store package only (memcore/store/).

The library outside the store, the app (app.py, ui/, pages/) and the benchmarks say which rows they
want with the store's typed queries (`store.llm_calls(system=..., stage=...)`, `store.results(run_id,
systems=...)`, `store.rows(table, **columns)`, `wb.memory(system, conv).events()`, ...) or, on a raw
LanceDB table, with `memcore.store.schema.match(...)`. This test parses every module there and fails
on SQL built by hand: the quoting helpers, SQL comparisons in string literals or f-strings, and
string filters passed to LanceDB's where / delete / update / count_rows.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("memcore", "ui", "pages", "bench")
SQL_HELPERS = {"sql_str", "sql_in", "sql_value"}
_COLUMN = r"\b[A-Za-z_][\w.]* "
# a column compared with a quoted literal ("conv_id = '"), an IN list ("id IN ("), or with a value in a
# conjunction ("space = {} AND step > 3"); a lone "k = {}" in a message is not SQL
SQL_COMPARISON = re.compile(
    rf"{_COLUMN}(?:=|!=|<>|<=|>=|<|>|LIKE) '|{_COLUMN}(?:NOT )?IN \(|"
    rf"{_COLUMN}(?:=|!=|<>|<=|>=|<|>) (?:\{{\}}|-?\d|true|false).* (?:AND|OR) |"
    rf"\b(?:AND|OR) {_COLUMN}(?:=|!=|<>|<=|>=|<|>) ")
# whole statements are the SQLite caches' own databases (embeddings, LLM calls; parameterised), not the store
SQLITE_STATEMENT = re.compile(r"^\s*(?:SELECT|INSERT|REPLACE|UPDATE|DELETE|CREATE|DROP|PRAGMA|WITH)\b", re.I)
FILTER_METHODS = {"where", "delete", "count_rows"}  # take a SQL filter as their first argument
FILTER_KEYWORDS = {"where", "filter"}


def scanned_files() -> list[Path]:
    """Every Python file of the library, app and benchmarks, except the store package's."""
    files = [ROOT / "app.py"] if (ROOT / "app.py").exists() else []
    for d in SCANNED:
        files += sorted((ROOT / d).rglob("*.py"))
    store = ROOT / "memcore" / "store"
    return [f for f in files if store not in f.parents]


def string_shape(node: ast.AST) -> str | None:
    """The text of a string literal; an f-string with `{}` where values go; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_shape(node.left), string_shape(node.right)
        if left is not None or right is not None:
            return (left or "{}") + (right or "{}")
    return None


def is_docstring(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(node)
    return isinstance(parent, ast.Expr) and isinstance(parents.get(parent), ast.Module | ast.ClassDef
                                                       | ast.FunctionDef | ast.AsyncFunctionDef)


def sql_built_in(source: str) -> list[tuple[int, str]]:
    """(line, what) for every place the source builds SQL by hand."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name in SQL_HELPERS for a in node.names):
            found.append((node.lineno, f"imports {[a.name for a in node.names if a.name in SQL_HELPERS]}"))
        elif isinstance(node, ast.Name | ast.Attribute) and (getattr(node, "id", None) in SQL_HELPERS
                                                             or getattr(node, "attr", None) in SQL_HELPERS):
            found.append((node.lineno, "uses a SQL quoting helper"))
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            args = [a for a in node.args[:1] if name in FILTER_METHODS]
            args += [k.value for k in node.keywords if k.arg in FILTER_KEYWORDS]
            for a in args:
                if string_shape(a) is not None:
                    found.append((node.lineno, f"a string filter passed to {name}()"))
        elif isinstance(node, ast.Constant | ast.JoinedStr) and not isinstance(parents.get(node), ast.JoinedStr):
            shape = string_shape(node)
            if shape is not None and not is_docstring(node, parents) and SQL_COMPARISON.search(shape) \
                    and not SQLITE_STATEMENT.match(shape):
                found.append((node.lineno, f"SQL in a string: {shape[:60]!r}"))
    return sorted(set(found))


def test_the_check_sees_sql() -> None:
    """The patterns the store used to leak upward are all caught."""
    leaks = {
        'w = f"system = {sql_str(s)} AND conv_id = {sql_str(c)}"': "helper",
        'df = t.search().where(f"conv_id = \'{conv}\'")': "literal in where",
        'store.llm_calls("provider = \'openai\'")': "plain string",
        'x = f"run_id = {rid!r} AND system IN ({names})"': "f-string",
        't.delete("step > " + str(n))': "concatenated",
        'q.when_matched_update_all(where=f"target.expires_at < {now:.6f}")': "keyword filter",
    }
    for src, what in leaks.items():
        assert sql_built_in(src), f"not caught ({what}): {src}"
    clean = ['np.where(x > 0, x, 0)', 'store.llm_calls(system=s, stage="construction")',
             'print(f"k = {k}")', 'def f():\n    """Where step > 3 holds."""\n', 'label = f"{a} = {b:.3f}"']
    for src in clean:
        assert not sql_built_in(src), src


@pytest.mark.parametrize("path", scanned_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sql_outside_the_store(path: Path) -> None:
    found = sql_built_in(path.read_text(encoding="utf-8"))
    assert not found, (f"{path.relative_to(ROOT)} builds SQL: " + "; ".join(f"line {n}: {w}" for n, w in found)
                       + ". Fix: use a typed store query (memcore/store/) or memcore.store.schema.match(...)")
