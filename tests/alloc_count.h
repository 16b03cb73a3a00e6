/* alloc_count.h — counts the allocator calls the library makes. A test that includes it is
 * linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc (the
 * Makefile's WRAP_ALLOC), which routes every such call in libmbs.a through the counters
 * below; include it from one file per test program. Every test that counts allocations
 * starts with ALLOC_GUARD(), so that a program linked without the flags fails instead of
 * passing "no allocation" checks it cannot make. */
#ifndef MBS_ALLOC_COUNT_H
#define MBS_ALLOC_COUNT_H

#include <stddef.h>

#include "check.h"
#include "mbs.h"

/* weak: a program linked without the wrap flags still links, and ALLOC_GUARD() says so */
void *__real_malloc(size_t n) __attribute__((weak));
void *__real_calloc(size_t k, size_t n) __attribute__((weak));
void *__real_realloc(void *p, size_t n) __attribute__((weak));
void *__real_aligned_alloc(size_t a, size_t n) __attribute__((weak));
static long allocations;
static size_t allocated_bytes;   /* the sizes asked for (a realloc's new size), summed */
void *__wrap_malloc(size_t n) { allocations++; allocated_bytes += n; return __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { allocations++; allocated_bytes += k * n; return __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { allocations++; allocated_bytes += n; return __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { allocations++; allocated_bytes += n; return __real_aligned_alloc(a, n); }

/* 1 when all four wraps are linked and the counters see an allocation made inside libmbs.a
 * (a one-state ESS workspace, created and freed), so the counts mean something. */
static inline int alloc_counting(void)
{
    /* --wrap=f resolves __real_f to f; without it the weak reference stays NULL */
    if (!__real_malloc || !__real_calloc || !__real_realloc || !__real_aligned_alloc) return 0;
    long before = allocations;
    mbs_ess_free(mbs_ess_new(1, 0, 0, NULL));
    return allocations > before;
}

/* The guard: a failed CHECK, at the caller's line, when the allocator wrap is not active. */
#define ALLOC_GUARD()                                                                        \
    CHECK(alloc_counting(), "allocator wrap not active: link with -Wl,--wrap=malloc,--wrap=calloc," \
                            "--wrap=realloc,--wrap=aligned_alloc (the Makefile's WRAP_ALLOC)")

#endif
