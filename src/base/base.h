/* base.h — what every layer of the library may use: filling an mbs_error, π, a string copy,
 * and the one buffer carver that lays out every allocation of the library. Includes nothing
 * of the library but the public error record. */
#ifndef MBS_BASE_H
#define MBS_BASE_H

#include <stddef.h>

#include "mbs/error.h"

#define MBS_PI 3.14159265358979323846   /* M_PI is not ISO C */

/* Sets err (when not NULL) to code and a printf-style message; returns code. */
int mbsi_fail(mbs_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends one warning line to err (when not NULL). */
void mbsi_warn(mbs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 0 → 1 over x in [0, 1] with zero slope at both ends (a raised cosine): the time profile of
 * every planned motion of the controllers. */
double mbsi_smooth_step(double x);

/* Solves the n x n symmetric positive semi-definite system A x = b in place (A overwritten;
 * column-major, leading dimension n). A ridge at round-off level of A's diagonal makes a
 * semi-definite A (dependent contact rows) definite without moving the solution of a regular
 * one; b becomes 0 when A is not even semi-definite. By mbsi_cholesky, no allocation. */
void mbsi_spd_solve(double *A, int n, double *b);

/* A = L Lᵀ in place: the lower triangle of A (n x n, column-major, leading dimension lda)
 * becomes L; the upper triangle is not read. Returns -1, or the first column whose pivot is not
 * above `floor` (or not finite): A is not safely positive definite, and L is not complete. */
int mbsi_cholesky(double *A, int n, int lda, double floor);
/* Y ← (L Lᵀ)⁻¹ Y for the factor L of mbsi_cholesky (nf x nf, leading dimension nf), Y's nf rows
 * stored one after the other (row-major, ncol each): forward, then back substitution. */
void mbsi_cholesky_solve_rows(const double *L, int nf, double *Y, int ncol);

/* LU factorisation with partial pivoting of the n x n matrix a (column-major, leading
 * dimension n), in place: unit lower L below the diagonal, U on and above; row k was swapped
 * with row piv[k]. Returns 0, or k + 1 when the pivot of column k is zero. Written out rather
 * than LAPACK's dgetrf, which at the sizes of a step (n of 10 to 70) costs more in its
 * blocking, and in OpenBLAS's thread pool, than the factorisation itself (src/step/expm.c). */
int mbsi_lu_factor(int n, double *a, int *piv);
/* Solves (LU) X = B in place for the k columns of B (leading dimension n), a and piv from
 * mbsi_lu_factor. work: NULL, or n k doubles of scratch, with which four columns or more are
 * solved together, faster (the same operations per entry: the same X, bitwise). */
void mbsi_lu_solve(int n, const double *a, const int *piv, double *B, int k, double *work);

/* A weighted least-squares task ‖J x − e‖² (weight w) added to a normal system: the lower
 * triangle of H (ncols x ncols, leading dimension ldH) += w Jᵀ J and g += w Jᵀ e, J being the
 * rows r0 .. r0 + nr − 1 of a column-major matrix of leading dimension ldJ. Columns of J that
 * are zero on those rows are skipped (a joint that does not move the task). */
void mbsi_add_task(double *H, int ldH, double *g, const double *J, int ldJ, int r0, int nr, int ncols, const double *e,
                   double w);

/* Text appended to a buffer that may be too short (p may be NULL with n = 0), counting the
 * length it needed, as snprintf does: the formatters of summaries and option tables. */
typedef struct mbs_text {
    char *p;
    size_t n, len;
} mbs_text;
void mbsi_textf(mbs_text *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The next word of a list separated by spaces, tabs or commas, from *p: copied into word (n
 * bytes; left empty when it does not fit) and *p moved past it. Returns its length, 0 at the
 * end of the list, -1 when it does not fit. */
int mbsi_next_word(const char **p, char *word, size_t n);

/* The index of word w in a space-separated list of words, -1 when absent. */
int mbsi_word_index(const char *words, const char *w);

/* The one implementation of the scheme registries (steppers, controllers): `at` lists a registry's
 * entries 0..count-1, each the first member of its scheme's type. */
struct mbs_scheme_info;
/* The entry named `name`, or NULL (name may be NULL). */
const struct mbs_scheme_info *mbsi_scheme_find(const struct mbs_scheme_info *(*at)(int), int count, const char *name);
/* The registry's names separated by sep into buf (n bytes, cut short if need be): the "known: ..." of messages. */
void mbsi_scheme_names(const struct mbs_scheme_info *(*at)(int), int count, const char *sep, char *buf, size_t n);

/* A copy of s from malloc, NULL when out of memory (the caller reports). */
char *mbsi_strdup(const char *s);

/* The buffer carver: a layout function asks for its arrays one by one from a carver; run
 * once with no block it only adds up the size (mbs_carver_size), run again on the block
 * from mbsi_carver_alloc it hands out the arrays, each 64-byte aligned and zeroed. One block
 * per object, so that create and free are one call each and nothing is allocated later. */
typedef struct mbs_carver {
    char *base;       /* NULL while counting */
    size_t used;      /* bytes handed out so far */
} mbs_carver;

void *mbsi_carve(mbs_carver *c, size_t bytes);
static inline double *mbsi_carve_doubles(mbs_carver *c, size_t n) { return (double *)mbsi_carve(c, n * sizeof(double)); }
static inline int *mbsi_carve_ints(mbs_carver *c, size_t n) { return (int *)mbsi_carve(c, n * sizeof(int)); }
/* A zeroed, 64-byte aligned block of the size the counting pass found (c->used), and c
 * rewound onto it for the second pass; NULL when out of memory. Free it with free(). */
void *mbsi_carver_alloc(mbs_carver *c);

/* ---- the state stream of checkpoints (state.c) ----
 * One visitor per object type walks every field that persists between steps (or controller
 * periods) through mbsi_state_bytes, the same code for both directions: in save mode it appends
 * the bytes to a growing buffer, in load mode it copies them back from one. Each field is framed
 * by a hash of its name and its size, so a loader that disagrees with the saver (another build,
 * another model) fails at the first field that differs, naming it, instead of reading garbage. */
#include <stdint.h>

typedef struct mbsi_state {
    int load;                 /* 0: save (append to buf), 1: load (read buf from pos) */
    unsigned char *buf;       /* save: malloc'd, grown; load: the caller's bytes */
    size_t len, cap, pos;     /* bytes in buf, its room (save), read so far (load) */
    int failed;               /* set at the first error: every later call does nothing */
    char msg[256];            /* what went wrong */
    int fixed;                /* save into the caller's buf of cap bytes, never grown (NULL: count len only) */
    int raw;                  /* the fields' bytes alone, without their tags and sizes (a snapshot) */
} mbsi_state;

/* Saves or loads n bytes at p under `name` (the field's name, for messages). */
void mbsi_state_bytes(mbsi_state *s, const char *name, void *p, size_t n);
static inline void mbsi_state_doubles(mbsi_state *s, const char *name, double *p, size_t n)
{
    mbsi_state_bytes(s, name, p, n * sizeof *p);
}
static inline void mbsi_state_ints(mbsi_state *s, const char *name, int *p, size_t n)
{
    mbsi_state_bytes(s, name, p, n * sizeof *p);
}
/* A save stream that starts empty (len = 0, buffer kept for reuse), or a load stream over n bytes. */
void mbsi_state_begin_save(mbsi_state *s);
void mbsi_state_begin_load(mbsi_state *s, const unsigned char *buf, size_t n);

/* A save stream into the caller's n bytes at buf, which never allocates: it fails when they do
 * not suffice; with buf NULL it only counts (len: the bytes a save needs). */
void mbsi_state_begin_save_fixed(mbsi_state *s, unsigned char *buf, size_t n);
/* A snapshot: a fixed save stream (above) or a load stream of the fields' bytes alone, without the
 * tags and sizes that let a load name the field it did not find. For a state that the same object
 * reads back in the same process (a step's derivatives, a planner's knots), where nothing can have
 * changed shape and framing each field cost more than copying it; never for a file. A snapshot is
 * no longer than the framed state (mbs_stepper_state_size's room suffices). */
void mbsi_state_begin_snapshot(mbsi_state *s, unsigned char *buf, size_t n);
void mbsi_state_begin_reload(mbsi_state *s, const unsigned char *buf, size_t n);
/* Frees a save stream's buffer. */
void mbsi_state_free(mbsi_state *s);

/* FNV-1a 64 of n bytes, continuing from h (MBSI_FNV_INIT to start). */
#define MBSI_FNV_INIT 0xcbf29ce484222325ull
uint64_t mbsi_fnv1a(const void *p, size_t n, uint64_t h);

/* Seconds on the monotonic clock (clock.c): differences of two calls time a piece of work. */
double mbsi_wall_seconds(void);

#endif
