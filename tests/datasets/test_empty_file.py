"""An empty dataset file (issue 37) is called empty, not truncated."""

from __future__ import annotations

import pytest

from memcore.datasets import load_dataset
from memcore.errors import DatasetError


@pytest.mark.parametrize("fmt", ["locomo", "longmemeval"])
def test_an_empty_file_is_called_empty(tmp_path, fmt: str) -> None:
    path = tmp_path / "data.json"
    path.write_text("  \n", encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        load_dataset(path, fmt)
    assert "empty" in str(err.value) and "truncated" not in str(err.value)
