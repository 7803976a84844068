#!/usr/bin/env bash
# memcore in one command.
#   ./run.sh          install into .venv (first time) and start the app on the demo at http://127.0.0.1:8501
#                     (served on 127.0.0.1 only: .streamlit/config.toml; STREAMLIT_SERVER_ADDRESS=0.0.0.0 serves the network)
#   ./run.sh test     install everything the tests need and run the whole test suite
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
case "${1:-app}" in
  app)
    shift || true
    # --prepare-demo: the first start builds every system's memory of the built-in demo (offline engine) before
    # serving, so the demo opens ready; later starts find it built (idempotent). Not in the test path.
    exec .venv/bin/python -m ui.launch --prepare-demo --server.port "${PORT:-8501}" "$@"
    ;;
  test)
    shift
    # Browser tests drive Debian's chromium; the local-LLM test needs llama-cpp-python built once.
    bash scripts/install-browser.sh || echo "note: chromium not installed; browser tests will skip"
    if [ "${MEMCORE_SKIP_LOCAL_LLM:-0}" != "1" ]; then
      bash scripts/install-local-llm.sh || echo "note: local LLM not installed; its tests will skip"
    fi
    # Ray is optional (memcore eval --engine ray); its tests start one local Ray with 2 CPUs.
    if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('ray') != '2.60.0')" 2>/dev/null; then
      .venv/bin/pip install --quiet -r requirements-ray.txt || echo "note: ray not installed; its tests will skip"
    fi
    set +e
    # Standard input from /dev/null: CI runs with none, and a closed fd 0 breaks pytest's stdin stand-in (IPython,
    # imported by pyvis, asks it for an encoding) and hands the next file a child opens the number 0.
    .venv/bin/python -m pytest -q -ra "$@" </dev/null
    rc=$?
    set -e
    if [ "$rc" -eq 5 ]; then echo "pytest collected no tests"; exit 0; fi
    exit "$rc"
    ;;
  *)
    echo "usage: ./run.sh [app|test] [extra args]" >&2
    exit 2
    ;;
esac
