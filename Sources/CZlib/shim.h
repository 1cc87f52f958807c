#include <zlib.h>

/* Not zlib's: the one C helper the GraphStore target needs, kept in the C module it already
 * imports. A hint to load the cache line at `address` for writing (its reference count), kept
 * in all cache levels; it never faults, whatever the address. */
static inline void graphstore_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}
