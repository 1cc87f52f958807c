#!/usr/bin/env bash
# Long run of the lineage oracle: N random trials (default 50000), under the strict merge
# policies, again with .mergeByProperty drawn too, and again with .contextWins, of reads,
# fetches, changes, deletes (one object, or the whole table), saves and rollbacks across
# top-level, child and grandchild contexts; no save that returns may write over a version its
# copy never saw (unless its policy merges or lets the context win), and every context can save
# a fresh copy afterwards (LineageOracleTests). `swift test` runs the same test with 2,000
# trials of each.
#
# Usage: scripts/lineage-trials.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
trials="${1:-50000}"
GRAPHSTORE_LINEAGE_TRIALS="$trials" swift test --filter "LineageOracleTests" 2>&1 | tee /dev/stderr | grep -E "Test run"
