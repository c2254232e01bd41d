#!/usr/bin/env bash
# The long forms of the tests whose loops CI samples (tests/full_run.py): every case, not the
# CI-sized sample. Uses the same server as pytest (GUIDEDRAG_TEST_NEO4J_URI, or one of its own).
#   bash scripts/tests_full.sh                 # every sampled loop, in full
#   bash scripts/tests_full.sh tests/test_x.py # only these files (any pytest arguments)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "$#" -eq 0 ]; then
  # The test files that draw a sample with ci_sample (the ones this switch changes).
  mapfile -t files < <(grep -l "ci_sample(" tests/test_*.py)
  set -- "${files[@]}"
fi
GUIDEDRAG_TESTS_FULL=1 exec python -m pytest -q -p no:cacheprovider --durations=10 "$@"
