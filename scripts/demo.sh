#!/usr/bin/env bash
# The main job, end to end on a fresh machine, no LLM needed:
#   .venv (created if missing) -> pip install -e . -> Neo4j from Maven Central -> migrate ->
#   load the bundled sample KB -> base RAG next to GuidedRAG for a few sample questions
#   (selection size, ranked chunks, where the gold chunk landed).
# Options (environment): DEMO_QUESTIONS=4 (how many questions), DEMO_K=5, KEEP_NEO4J=1 (leave the
# server running afterwards). A server that was already running is left running either way.
# NEO4J_URI/NEO4J_PASSWORD point the demo at your own server instead (nothing is started then).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
step() { printf '\n== %s\n' "$*"; }
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

step "system tools (Java for Neo4j, Maven to fetch its jars)"
ensure_system_tools

step "Python environment (.venv) and the project"
PY=${PYTHON:-python3}
"$PY" -c 'import sys; assert sys.version_info >= (3, 11)' \
  || { echo "Python >= 3.11 is required (found $("$PY" --version 2>&1))"; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
pip install -q -e .

started_here=0
if [ -z "${NEO4J_URI:-}" ]; then
  VERSION=$(neo4j_version_for_this_machine)
  export GUIDEDRAG_NEO4J_VERSION=$VERSION
  export NEO4J_URI="bolt://127.0.0.1:${GUIDEDRAG_NEO4J_BOLT_PORT:-7687}"
  step "Neo4j $VERSION (managed local server, jars from Maven Central)"
  guidedrag neo4j install
  if guidedrag neo4j status >/dev/null 2>&1; then
    guidedrag neo4j status
  else
    guidedrag neo4j start
    started_here=1
  fi
fi
cleanup() {
  if [ "$started_here" = 1 ] && [ "${KEEP_NEO4J:-0}" != 1 ]; then
    step "stopping the Neo4j this script started (KEEP_NEO4J=1 keeps it)"
    guidedrag neo4j stop || true
  fi
}
trap cleanup EXIT

step "migrations"
guidedrag migrate

step "load the sample KB (precomputed embeddings: nothing to embed)"
SAMPLE=$(python -c 'from guidedrag_graph.kb import sample_kb_dir; print(sample_kb_dir())')
guidedrag load "$SAMPLE" --no-progress

step "base RAG next to GuidedRAG"
guidedrag demo -n "${DEMO_QUESTIONS:-4}" -k "${DEMO_K:-5}"

cat <<'MSG'

Try your own questions (Neo4j must be running: KEEP_NEO4J=1 bash scripts/demo.sh):
  guidedrag retrieve "Who founded the company?" --select "entity('X')" --explain
  guidedrag ask "..." --entity "X" --type factoid      # prints the prompt when no LLM is set
MSG
