#ifndef CGRAPHSTORETESTSUPPORT_H
#define CGRAPHSTORETESTSUPPORT_H

#include <spawn.h>

// The two calls `ChildProcess` needs that Swift cannot see: the C library declares them only
// with `_GNU_SOURCE`, which Swift's import of it lacks.

/// Makes a pipe whose two ends are both close-on-exec from the start (`pipe2` with
/// `O_CLOEXEC` on Linux), so that no child another thread starts meanwhile inherits either.
/// Returns 0, or -1 with `errno` set.
int graphstore_pipe_cloexec(int descriptors[2]);

/// Adds to `actions` the closing of every descriptor from `lowest` up
/// (`posix_spawn_file_actions_addclosefrom_np`). Returns 0, or an error number: `ENOSYS`
/// where the C library has no such action.
int graphstore_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif
