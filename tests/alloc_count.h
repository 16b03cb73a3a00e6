/* alloc_count.h — counts the allocator calls the library makes. A test that includes it is
 * linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc (the
 * Makefile's WRAP_ALLOC), which routes every such call in libmbs.a through the counters
 * below; include it from one file per test program. */
#ifndef MBS_ALLOC_COUNT_H
#define MBS_ALLOC_COUNT_H

#include <stddef.h>

/* weak: a program linked without the wrap flags still links, and alloc_counting() says so */
void *__real_malloc(size_t n) __attribute__((weak));
void *__real_calloc(size_t k, size_t n) __attribute__((weak));
void *__real_realloc(void *p, size_t n) __attribute__((weak));
void *__real_aligned_alloc(size_t a, size_t n) __attribute__((weak));
static long allocations;
void *__wrap_malloc(size_t n) { allocations++; return __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { allocations++; return __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { allocations++; return __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { allocations++; return __real_aligned_alloc(a, n); }

/* 1 when the program was linked with the wrap flags, so the counts mean something. */
static inline int alloc_counting(void) { return __real_malloc != NULL; }

#endif
