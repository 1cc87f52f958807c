#!/bin/sh
# Writes the version-1 SQLite fixtures from the committed version-1 snapshot fixtures, with the
# graphstore tool. Run once, by hand; the tests never regenerate the fixtures, so a change to
# the SQLite layout is tested against files an older GraphStore wrote.
#
#   Tests/GraphStoreSQLiteTests/Fixtures/ModelVersions/v1.sqlite  (ModelV1: tags, memos, drafts)
#   Tests/NotesTests/Fixtures/notes-v1.sqlite                      (the notes tool's version 1)
set -eu
cd "$(dirname "$0")/.."
swift build --product graphstore
tool="$(swift build --show-bin-path)/graphstore"
"$tool" migrate --force Tests/GraphStoreTests/Fixtures/ModelVersions/v1.json.gz \
    Tests/GraphStoreSQLiteTests/Fixtures/ModelVersions/v1.sqlite
"$tool" migrate --force Tests/NotesTests/Fixtures/notes-v1.json.gz Tests/NotesTests/Fixtures/notes-v1.sqlite
