#ifndef CGRAPHSTORESQLITE_H
#define CGRAPHSTORESQLITE_H

/// Makes closing the SQLite connection `db` (a `sqlite3 *`) leave the database file and its
/// write-ahead log as they are, instead of checkpointing the log into the file: what a store
/// that failed to open needs, so the files stay byte for byte as they were.
/// `sqlite3_db_config` is variadic, which Swift cannot call. Returns SQLite's result code.
int graphstore_sqlite_skip_checkpoint_on_close(void *db);

#endif
