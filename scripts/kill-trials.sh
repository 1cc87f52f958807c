#!/usr/bin/env bash
# Long crash run: N SIGKILL trials per store kind (default 200) of
# - a process that saves one note at a time and reports each save() that returned; every
#   reported save must be in the reopened store (JournalKillTrialsTests);
# - a process that opens a store of model version 1 with version 2 (the open migrates it) and
#   then saves, killed before, during and after the migration; the store must hold every object
#   of the old store and every reported save, and the old app must either open it whole or be
#   refused for its model version (MigrationKillTrialsTests).
# `swift test` runs the same tests with a few trials.
#
# Usage: scripts/kill-trials.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
trials="${1:-200}"
GRAPHSTORE_KILL_TRIALS="$trials" GRAPHSTORE_MIGRATION_KILL_TRIALS="$trials" \
    swift test --filter "JournalKillTrialsTests|MigrationKillTrialsTests" 2>&1 | tee /dev/stderr | grep -E "kill trials|Test run"
