// jemalloc (Debian's libjemalloc2) replaces glibc's malloc for the whole receiptd process by being
// linked into it: the executable lists it before libc, so the dynamic linker binds malloc, free and
// friends of every library (Swift's runtime, Foundation, librdkafka, OpenSSL) to it. Swift needs
// nothing from it but its control interface, declared here rather than by including
// <jemalloc/jemalloc.h>, which would declare malloc a second time next to glibc's.
#ifndef RECEIPTD_CJEMALLOC_SHIM_H
#define RECEIPTD_CJEMALLOC_SHIM_H

#include <stddef.h>
#include <stdint.h>

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

// Reading a string or a size through mallctl takes an out pointer and its length: wrapped so the
// Swift side passes no raw pointers.

/// jemalloc's version string, or NULL when mallctl fails.
static inline const char *CJemalloc_version(void) {
    const char *version = NULL;
    size_t length = sizeof(version);
    return mallctl("version", &version, &length, NULL, 0) == 0 ? version : NULL;
}

/// Bytes the process has allocated and not freed (`stats.allocated`, refreshed first by advancing
/// `epoch`), or SIZE_MAX when statistics are unavailable.
static inline size_t CJemalloc_allocatedBytes(void) {
    uint64_t epoch = 1;
    size_t epochLength = sizeof(epoch);
    if (mallctl("epoch", &epoch, &epochLength, &epoch, epochLength) != 0) return SIZE_MAX;
    size_t allocated = 0, length = sizeof(allocated);
    return mallctl("stats.allocated", &allocated, &length, NULL, 0) == 0 ? allocated : SIZE_MAX;
}

#endif
