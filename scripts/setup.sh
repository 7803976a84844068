#!/usr/bin/env bash
# Create .venv and install memcore with all dependencies (CPU torch first, never CUDA).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.memcore-installed
# Reinstall when the requirements or a package's metadata (entry points included) change.
want=$(cat requirements.txt requirements-dev.txt pyproject.toml examples/memcore-example-plugin/pyproject.toml \
  | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/pip install --quiet --upgrade pip
  # CPU build of torch from local disk or the CPU index; a plain 'torch' would pull CUDA.
  # Elsewhere, set TORCH_INDEX_URL to PyTorch's CPU wheel index (see README).
  .venv/bin/pip install --quiet "torch==2.13.0" ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}
  .venv/bin/pip install --quiet -r requirements.txt -r requirements-dev.txt
  .venv/bin/pip install --quiet --no-deps -e .
  # The example plugin (a system, a retriever and a view from outside memcore, found through entry
  # points): installed so that its tests, part of the suite, exercise the plugin path.
  .venv/bin/pip install --quiet --no-deps -e examples/memcore-example-plugin
  echo "$want" > "$stamp"
fi
