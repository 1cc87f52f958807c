#if defined(__linux__)
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>
#include "CGraphStoreTestSupport.h"

// posix_spawn_file_actions_addclosefrom_np: glibc 2.34 and later.
#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 34)
#define GRAPHSTORE_HAS_CLOSEFROM 1
#endif
#endif

int graphstore_pipe_cloexec(int descriptors[2]) {
#if defined(__linux__)
    return pipe2(descriptors, O_CLOEXEC);
#else
    // No pipe2: close-on-exec set right after. ChildProcess spawns with
    // POSIX_SPAWN_CLOEXEC_DEFAULT there, so its children never see the moment in between.
    if (pipe(descriptors) != 0) return -1;
    if (fcntl(descriptors[0], F_SETFD, FD_CLOEXEC) != 0 || fcntl(descriptors[1], F_SETFD, FD_CLOEXEC) != 0) {
        int saved = errno;
        close(descriptors[0]);
        close(descriptors[1]);
        errno = saved;
        return -1;
    }
    return 0;
#endif
}

int graphstore_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
#if GRAPHSTORE_HAS_CLOSEFROM
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
#else
    (void)actions;
    (void)lowest;
    return ENOSYS;
#endif
}
