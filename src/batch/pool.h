/* pool.h — the batch layer's persistent thread pool (folder-private).
 *
 * A pool of T threads runs one function over the items [0, n) at a time: the calling thread and
 * T − 1 workers started once, by mbsi_pool_new, each take chunks of items from one atomic
 * counter until none is left. The only synchronisation is at the start of a run (the workers are
 * woken) and at its end (the caller waits until every worker has finished); in between nothing is
 * locked. A worker that finds no run waits first by spinning briefly, then on a condition
 * variable, so that a program stepping in a tight loop does not pay a wake-up per step and an
 * idle pool takes no processor time. With T = 1 no thread is started and a run is a plain loop
 * on the calling thread. Nothing here allocates after mbsi_pool_new. */
#ifndef MBS_BATCH_POOL_H
#define MBS_BATCH_POOL_H

#include "mbs/error.h"

/* The work of one run: items [begin, end) of ctx. Called from any thread of the pool, on disjoint
 * ranges, in no particular order. */
typedef void (*mbsi_pool_fn)(void *ctx, int begin, int end);

typedef struct mbsi_pool mbsi_pool;

/* A pool of nthreads (>= 1) threads, the caller's included: nthreads − 1 workers are started
 * here. NULL with err filled when a thread cannot be started or memory is short. */
mbsi_pool *mbsi_pool_new(int nthreads, mbs_error *err);
/* Runs fn over [0, n) in chunks of `chunk` items (>= 1) on every thread of the pool and returns
 * when all are done. The caller takes chunks too. Not reentrant: one run at a time. */
void mbsi_pool_run(mbsi_pool *p, int n, int chunk, mbsi_pool_fn fn, void *ctx);
/* Threads of the pool, the caller's included. */
int mbsi_pool_nthreads(const mbsi_pool *p);
/* Stops and joins the workers and frees the pool (NULL is fine). */
void mbsi_pool_free(mbsi_pool *p);

#endif
