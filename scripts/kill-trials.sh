#!/usr/bin/env bash
# Long crash run: N SIGKILL trials per store kind (default 200) of a process that saves one note
# at a time and reports each save() that returned; every reported save must be in the reopened
# store. `swift test` runs the same test with a few trials.
#
# Usage: scripts/kill-trials.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
trials="${1:-200}"
GRAPHSTORE_KILL_TRIALS="$trials" swift test --filter JournalKillTrialsTests 2>&1 | tee /dev/stderr | grep -E "kill trials|Test run" 
