/* pool.c — the batch layer's persistent thread pool (see pool.h).
 *
 * Layout: what the caller writes once per run (the work and the run's generation number), the
 * chunk counter every thread increments, and the count of workers still running sit on cache
 * lines of their own, so that taking a chunk does not invalidate the line the others read the
 * work from. The generation number is how a worker learns that a run started: it spins on it
 * for a few tens of microseconds (a program stepping a batch in a loop starts the next run
 * sooner than that), then sleeps on the `wake` condition variable. The caller raises it under
 * the mutex, so a worker that checks it under the mutex and then waits cannot miss the raise;
 * the last worker to finish signals `done` under the mutex for the same reason. A spinning thread
 * yields its processor after its first few hundred pauses: on a machine busy with other programs
 * the thread it waits for may be queued on the same core. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/base.h"
#include "pool.h"

#define LINE 64
/* how long a thread spins on a flag before it sleeps: longer than a program's work between two
 * batch steps usually takes, short enough that an idle pool soon stops using a processor */
#define SPIN_NS 50000L

struct mbsi_pool {
    /* written by the caller before a run, read by the workers */
    _Alignas(LINE) atomic_ulong generation;   /* raised once per run (release) */
    mbsi_pool_fn fn;
    void *ctx;
    int n, chunk;
    int quit;                                 /* set with a last raise: the workers return */
    int nthreads;
    /* the next item to hand out: taken by every thread */
    _Alignas(LINE) atomic_int next;
    /* workers still in the current run */
    _Alignas(LINE) atomic_int pending;
    _Alignas(LINE) pthread_mutex_t mu;
    pthread_cond_t wake, done;
    pthread_t *threads;
    int started;                              /* workers running (for the clean-up) */
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

/* One round of waiting: a pause at first; after that a yield, so that when the machine is busy and
 * the thread we wait for shares our core, it runs instead of our spin. Returns 0 once SPIN_NS
 * have passed since the first call (*t0 = 0 at the start). */
static int spin_once(int k, long *t0)
{
    if (k < 256) {
        cpu_relax();
        return 1;
    }
    long t = now_ns();
    if (!*t0) *t0 = t;
    else if (t - *t0 > SPIN_NS) return 0;
    sched_yield();
    return 1;
}

/* Spins until *gen differs from seen or SPIN_NS pass; returns the value last read. */
static unsigned long spin_generation(atomic_ulong *gen, unsigned long seen)
{
    long t0 = 0;
    for (int k = 0;; k++) {
        unsigned long g = atomic_load_explicit(gen, memory_order_acquire);
        if (g != seen || !spin_once(k, &t0)) return g;
    }
}

/* Spins until *count is 0 or SPIN_NS pass; returns the value last read. */
static int spin_zero(atomic_int *count)
{
    long t0 = 0;
    for (int k = 0;; k++) {
        int c = atomic_load_explicit(count, memory_order_acquire);
        if (c == 0 || !spin_once(k, &t0)) return c;
    }
}

/* Takes chunks of the current run until none is left. */
static void take_chunks(mbsi_pool *p)
{
    const int n = p->n, chunk = p->chunk;
    for (;;) {
        int b = atomic_fetch_add_explicit(&p->next, chunk, memory_order_relaxed);
        if (b >= n) return;
        p->fn(p->ctx, b, n - b > chunk ? b + chunk : n);
    }
}

static void *worker(void *arg)
{
    mbsi_pool *p = arg;
    unsigned long seen = 0;
    for (;;) {
        unsigned long g = spin_generation(&p->generation, seen);
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            while ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen)
                pthread_cond_wait(&p->wake, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        seen = g;
        if (p->quit) return NULL;
        take_chunks(p);
        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

/* Raises the generation under the mutex and wakes the sleeping workers. */
static void start_run(mbsi_pool *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
}

static void stop_workers(mbsi_pool *p)
{
    if (!p->started) return;
    p->quit = 1;
    start_run(p);
    for (int i = 0; i < p->started; i++) pthread_join(p->threads[i], NULL);
    p->started = 0;
}

mbsi_pool *mbsi_pool_new(int nthreads, mbs_error *err)
{
    if (nthreads < 1) {
        mbsi_fail(err, MBS_ERR_ARG, "threads: %d, not at least 1", nthreads);
        return NULL;
    }
    mbs_carver c = {NULL, 0};
    mbsi_carve(&c, sizeof(mbsi_pool));
    mbsi_carve(&c, (size_t)nthreads * sizeof(pthread_t));
    mbsi_pool *p = mbsi_carver_alloc(&c);
    if (!p) {
        mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    mbsi_carve(&c, sizeof(mbsi_pool));
    p->threads = mbsi_carve(&c, (size_t)nthreads * sizeof(pthread_t));
    p->nthreads = nthreads;
    atomic_init(&p->generation, 0);
    atomic_init(&p->next, 0);
    atomic_init(&p->pending, 0);
    if (nthreads == 1) return p;   /* inline: no worker, no synchronisation */
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    /* the workers block every signal: a program's handlers run on its own threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = 0;
    for (int i = 0; i < nthreads - 1 && rc == 0; i++) {
        rc = pthread_create(&p->threads[i], NULL, worker, p);
        if (rc == 0) p->started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        mbsi_fail(err, MBS_ERR_NOMEM, "threads: cannot start thread %d of %d (%s)", p->started + 2, nthreads,
                  strerror(rc));
        mbsi_pool_free(p);
        return NULL;
    }
    return p;
}

void mbsi_pool_run(mbsi_pool *p, int n, int chunk, mbsi_pool_fn fn, void *ctx)
{
    if (chunk < 1) chunk = 1;
    if (p->nthreads == 1 || n <= chunk) {   /* one chunk: nothing to share */
        if (n > 0) fn(ctx, 0, n);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->chunk = chunk;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store_explicit(&p->pending, p->nthreads - 1, memory_order_relaxed);
    start_run(p);   /* its release publishes the stores above */
    take_chunks(p);
    if (spin_zero(&p->pending) != 0) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load_explicit(&p->pending, memory_order_acquire) != 0) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}

int mbsi_pool_nthreads(const mbsi_pool *p) { return p->nthreads; }

void mbsi_pool_free(mbsi_pool *p)
{
    if (!p) return;
    if (p->nthreads > 1) {
        stop_workers(p);
        pthread_cond_destroy(&p->done);
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->mu);
    }
    free(p);
}
