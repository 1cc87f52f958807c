#!/usr/bin/env bash
# Long fuzz run: N random mutations per snapshot kind (default 5000) of real snapshot and
# journal files; each must open or be refused with a GraphStoreError, leaving the files as they
# were; and N mutations of a gzip member compressed in parts, which must inflate in parts
# exactly as in one pass. `swift test` runs the same tests with a few iterations. A second
# argument sets the seed.
#
# Usage: scripts/fuzz-open.sh [N] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
iterations="${1:-5000}"
seed="${2:-$RANDOM$RANDOM}"
echo "fuzz seed $seed"
GRAPHSTORE_FUZZ_ITERATIONS="$iterations" GRAPHSTORE_FUZZ_SEED="$seed" swift test --filter "OpenFuzzTests" 2>&1 | grep -E "✘|Test run|seed"
