/* expo.c — the exponential integrator of Hammoud, Olivieri, Righetti, Carpentier, Del Prete,
 * "Exponential integration for efficient and accurate multi-body simulation with stiff
 * viscoelastic contacts" (Multibody System Dynamics 2022). Equation numbers are the paper's.
 *
 * The stiff part of the dynamics — the contact points on their linear springs and dampers —
 * is integrated exactly over the step as the linear system (11) in contact space, with
 * A and b frozen over the step; the rest is explicit Euler (eq. 34). The paper freezes them at
 * the step's start; by default they are taken at q + δt/2·v (option linearise, the comment
 * above linearisation_point says why). One step:
 *
 *  1. contacts at (q, v) from the contact layer (anchors set on first touch, moved on slip —
 *     eq. 28 applied to the state the last step ended in); with no active contact the step
 *     is explicit Euler (with linearise = start, operation for operation);
 *  2. J (LOCAL_WORLD_ALIGNED, linear rows of each contact point; as G J_r, the six rows of the
 *     frame, for three or more points on one frame: contact_rows), J̇v, the free acceleration
 *     v̇_f = M⁻¹(τ − h) and M⁻¹Jᵀ from the tree-sparse LTDL factor of M, Υ = J M⁻¹Jᵀ (eq. 9),
 *     all at the configuration q + δt/2·v and the velocity v (at q with linearise = start);
 *  3. x_int and x_int2 (eq. 16) from one matrix exponential of the augmented matrix (29–30),
 *     applied to the two columns it needs (eq. 33), and the average forces λ̄ (eq. 23) and
 *     λ̄₂ (eq. 25) — or, when every contact's damping is its stiffness times one factor
 *     (B = βK, the paper's and every scenario's material), the same averages in closed form on
 *     the eigenmodes of K^½ Υ K^½ (expo_modal.c): exact, and a fraction of the Padé cost;
 *  4. when an average leaves its friction cone, a second pass with those contacts sliding
 *     (or, if pulling, separated) for the step, then every average projected onto its cone
 *     (eqs. 23–26);
 *  5. v⁺ = v + δt (v̇_f + M⁻¹Jᵀλ̄), q⁺ = integrate(q, δt v + δt²/2 (v̇_f + M⁻¹Jᵀλ̄₂)) —
 *     eqs. 14, 19–20 when both averages are inside their cones (then nothing of 4 happens),
 *     eqs. 24 and 26 otherwise.
 * Where the code departs from the letter of the paper (where the dynamics are frozen, the anchor
 * over the step, the second pass, contacts that pull while they still penetrate, the anchor
 * velocity of a sticking contact), the comment at that place says why, with the case that
 * decided it.
 *
 * Touch-downs: a step at whose end a free contact point penetrates is taken again, split where it
 * reached the surface (or where a touching point left it, if that came first), and the rest of it
 * taken in sub-steps of at most δt / landing_substeps (the comment above SPLITS says why; options
 * split, default 1, and landing_substeps, default 4; split = 0 with linearise = start is the
 * paper's letter).
 * Options: linearise (midpoint, the default, or start), max_mat_mult (full or -1: Higham's
 * complete algorithm, the default; 0..4: the reduced variants of §5.3), balance (1: balance the
 * exponent matrix first, §5.3; default 1),
 * method (auto: the closed form where B = βK and max_mat_mult is full, Padé otherwise; pade;
 * modal: the closed form, refused for a material without proportional damping), warm_start (1:
 * the closed form's eigendecomposition from the previous step's eigenvectors when the matrix
 * barely moved, expo_modal.c; default 1).
 * Statistics: iterations = exponentials computed in the step (0 without contact, 1 to 3 per
 * sub-step: average_forces says when more than one). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dynamics/dynamics_internal.h"
#include "../contact/contact_internal.h"
#include "../base/base.h"
#include "expm.h"
#include "expo_derivatives.h"
#include "expo_modal.h"
#include "step_internal.h"

typedef struct expo_options {
    int max_mat_mult, balance, method, split, landing_substeps, linearise, warm_start;
} expo_options;

/* the values of the option `method`, in the order of its words */
enum { METHOD_AUTO = 0, METHOD_PADE = 1, METHOD_MODAL = 2 };
/* the values of the option `linearise` */
enum { AT_START = 0, AT_MIDPOINT = 1 };

static const mbs_option_spec expo_spec[] = {
    {"max_mat_mult", MBS_OPT_INT, "", -1, 4, 0, "full", "full=-1", offsetof(expo_options, max_mat_mult),
     "full (or -1): Higham's complete scaling-and-squaring exponential; 0..4: the reduced variants of sec. 5.3, "
     "at most this many matrix-matrix products"},
    {"balance", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(expo_options, balance),
     "1: balance the exponent matrix before the exponential (sec. 5.3)"},
    {"method", MBS_OPT_ENUM, "", 0, 0, 0, "auto", "auto pade modal", offsetof(expo_options, method),
     "auto: the closed form on the eigenmodes of the contact space (exact, one symmetric eigendecomposition) when "
     "every contact's damping is its stiffness times one factor (b = beta k, normal and tangential) and max_mat_mult "
     "is full, the Pade exponential otherwise; pade: always Pade; modal: the closed form, the stepper refused when "
     "the damping is not proportional (a pass with a sliding contact is Pade's in every mode)"},
    {"split", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(expo_options, split),
     "1: a step at whose end a contact point that was free at its start penetrates is taken again, split where "
     "the point reached the surface, so that its spring starts at the touch-down (or, if a point touching at the "
     "start had left the surface before that, where it left); 0: contacts are found at the "
     "start of each step only, as in the paper (a landing point then starts on its spring as deep as a step of "
     "flight took it); the paper's scheme is split 0 with linearise start: with the midpoint, solo_jump at 10 ms "
     "diverges without splitting"},
    {"landing_substeps", MBS_OPT_INT, "", 1, 64, 0, "4", NULL, offsetof(expo_options, landing_substeps),
     "with split: after a touch-down inside a step, the rest of the step is taken in equal sub-steps of at most "
     "dt / landing_substeps, each linearised again; 1: the rest of the step in one sub-step"},
    {"linearise", MBS_OPT_ENUM, "", 0, 0, 0, "midpoint", "start midpoint", offsetof(expo_options, linearise),
     "where the step's frozen dynamics (M, h, the contact Jacobians and J'v; without contact, ABA) are "
     "evaluated: midpoint: at the configuration half a step ahead, q + dt/2 v, with the step's start velocity v "
     "(second order in how the dynamics depend on the configuration; one more forward kinematics and integrate "
     "per step); start: at the step's start, the paper's scheme (first order)"},
    {"warm_start", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(expo_options, warm_start),
     "1: the closed form's eigendecomposition starts from the previous step's eigenvectors when the contact-space "
     "matrix moved by at most 1e-6 of its norm (a robot standing still; a few Jacobi rotations instead of a fresh "
     "decomposition; the same results to rounding, which then depends on the run's earlier steps); 0: every step "
     "decomposes afresh (the same bits from the same state whatever came before)"},
};

typedef struct expo {
    int max_mat_mult, balance, method, split, landing_substeps, linearise, warm_start;
    int cmax, nv;
    mbs_expm_ws *ws;
    int *act;               /* indices of the active contacts */
    double *X;              /* nv x (nr+1), row-major: [J_rᵀ, τ − h], then L⁻ᵀ times it (M = Lᵀ D L) */
    double *acc;            /* nv x 2, row-major: v̇ under the two forces (advance_state) */
    /* the rows J_r that J = G J_r is built from (contact_rows says why): nr of them, a contact's
     * first at row[a], its frame's six (body[a] = 1) or its point's three */
    int nr, grouped;        /* grouped: some contacts share their frame's rows (G is not I) */
    int *row, *body;        /* per active contact */
    double *rw;             /* 3 per contact: the point's offset from its frame's origin, world axes */
    double *Gm;             /* 3c x nr: G (column-major), when grouped */
    double *upsr;           /* nr x nr: Υ_r = J_r M⁻¹ J_rᵀ, when grouped (Υ = G Υ_r Gᵀ) */
    double *Lr;             /* nr x nr: L, L Lᵀ = Υ_r (lower triangle), when grouped */
    double *Bf;             /* 3c x nr: G L, when grouped: Υ = B Bᵀ for the closed form */
    double *mu, *mu2;       /* nr: Gᵀ λ of the two forces; J_r v̇_f */
    int ups_full, factor;   /* this step: Υ expanded into ups; Bf formed (1), or Υ_r not definite (-1) */
    double *dq, *zero;      /* nv */
    double *J6;             /* 6 x nv frame Jacobian */
    double *ups;            /* 3c x 3c: Υ */
    double *Kw, *Bw;        /* 9 per contact: stiffness and damping in world axes */
    double *off;            /* 3 per contact: the touching point in its frame */
    double *pdd;            /* 3c: p̈_free = J v̇_f + J̇v */
    double *Ab;             /* (6c+3)²: δt Ā (eq. 30) */
    double *V2, *X2;        /* (6c+3) x 2 */
    double *lam, *lam2;     /* 3c: the forces applied (eqs. 24, 26) */
    double *lb, *lb2;       /* 3c: the averages λ̄ (eq. 23), λ̄₂ (eq. 25) before the cone */
    int *mode;              /* per active contact: STICK, SLIDE, SEPARATE or SLID_PULLING over the step */
    int *yoff, *ydim;       /* per active contact: its driving coordinates in the Padé path (driving_dim) */
    double *col;            /* 3c: a column of Υ K S */
    double *Rw;             /* 9 per contact: K^½ in world axes (the closed form) */
    double *dpv, *dvv, *v0v; /* 3c: Δp, Δṗ, ṗ0 of the active contacts (the closed form) */
    mbsi_modal modal;       /* the closed form's scratch (expo_modal.h) */
    /* touch-down splitting (the comment above step()) */
    double *q0, *v0;        /* nq, nv: the state at the start of the sub-step */
    double *qlin;           /* nq: the configuration the dynamics are evaluated at (linearise = midpoint) */
    double *gap0, *rate0;   /* per contact: its gap and the gap's rate at the start of the sub-step (free ones) */
    mbs_contact *c0;        /* the contacts at the start of the sub-step */
    double *impulse;        /* 3 per contact: Σ h λ over the sub-steps of a split step */
    int nq, nc;
    int last_subs;          /* the sub-steps the last step took (its derivatives need one) */
    mbsi_expo_dws dws;      /* the derivatives' workspace */
} expo;

/* SLID_PULLING: a contact whose first-pass average pulled, but mostly tangentially; it slides in
 * the second pass and separates only if it still pulls there (classify says why). */
enum { STICK = 0, SLIDE = 1, SEPARATE = 2, SLID_PULLING = 3 };

static void fini(mbs_stepper *st)
{
    expo *e = st->impl;
    if (!e) return;
    mbsi_expm_ws_free(e->ws);
    free(e);   /* one block: the struct and every buffer */
    st->impl = NULL;
}

static void layout(mbs_carver *c, expo *e)
{
    size_t nv = (size_t)e->nv, cs = (size_t)e->cmax, N = 6 * cs + 3;
    e->X = mbsi_carve_doubles(c, nv * (3 * cs + 1));
    e->acc = mbsi_carve_doubles(c, 2 * nv);
    e->dq = mbsi_carve_doubles(c, nv);
    e->zero = mbsi_carve_doubles(c, nv);
    e->J6 = mbsi_carve_doubles(c, 6 * nv);
    e->ups = mbsi_carve_doubles(c, 9 * cs * cs);
    e->row = mbsi_carve_ints(c, cs);
    e->body = mbsi_carve_ints(c, cs);
    e->rw = mbsi_carve_doubles(c, 3 * cs);
    e->Gm = mbsi_carve_doubles(c, 9 * cs * cs);
    e->upsr = mbsi_carve_doubles(c, 9 * cs * cs);
    e->Lr = mbsi_carve_doubles(c, 9 * cs * cs);
    e->Bf = mbsi_carve_doubles(c, 9 * cs * cs);
    e->mu = mbsi_carve_doubles(c, 3 * cs);
    e->mu2 = mbsi_carve_doubles(c, 3 * cs);
    e->Kw = mbsi_carve_doubles(c, 9 * cs);
    e->Bw = mbsi_carve_doubles(c, 9 * cs);
    e->off = mbsi_carve_doubles(c, 3 * cs);
    e->pdd = mbsi_carve_doubles(c, 3 * cs);
    e->Ab = mbsi_carve_doubles(c, N * N);
    e->V2 = mbsi_carve_doubles(c, 2 * N);
    e->X2 = mbsi_carve_doubles(c, 2 * N);
    e->lam = mbsi_carve_doubles(c, 3 * cs);
    e->lam2 = mbsi_carve_doubles(c, 3 * cs);
    e->lb = mbsi_carve_doubles(c, 3 * cs);
    e->lb2 = mbsi_carve_doubles(c, 3 * cs);
    e->act = mbsi_carve_ints(c, cs);
    e->mode = mbsi_carve_ints(c, cs);
    e->yoff = mbsi_carve_ints(c, cs);
    e->ydim = mbsi_carve_ints(c, cs);
    e->col = mbsi_carve_doubles(c, 3 * cs);
    e->Rw = mbsi_carve_doubles(c, 9 * cs);
    e->dpv = mbsi_carve_doubles(c, 3 * cs);
    e->dvv = mbsi_carve_doubles(c, 3 * cs);
    e->v0v = mbsi_carve_doubles(c, 3 * cs);
    mbsi_modal_layout(c, &e->modal, 3 * e->cmax);
    e->q0 = mbsi_carve_doubles(c, (size_t)e->nq);
    e->v0 = mbsi_carve_doubles(c, nv);
    e->gap0 = mbsi_carve_doubles(c, (size_t)e->nc);
    e->rate0 = mbsi_carve_doubles(c, (size_t)e->nc);
    e->c0 = mbsi_carve(c, (size_t)e->nc * sizeof(mbs_contact));
    e->impulse = mbsi_carve_doubles(c, 3 * (size_t)e->nc);
    e->qlin = mbsi_carve_doubles(c, (size_t)e->nq);
    mbsi_expo_dws_layout(c, &e->dws, e->cmax, e->nq, e->nv);
}

/* Folds material mt into the factor β of B = βK (−1: none seen yet): 0 when its damping is not
 * its stiffness times that one β, normal and tangential, the case the closed form
 * (expo_modal.h) integrates. A gain pair (0, 0) fits any β. */
static int fold_beta(const mbs_material *mt, double *beta)
{
    const double k[2] = {mt->k_normal, mt->k_tangent}, b[2] = {mt->b_normal, mt->b_tangent};
    for (int j = 0; j < 2; j++) {
        if (k[j] == 0) {
            if (b[j] != 0) return 0;
        } else if (*beta < 0) {
            *beta = b[j] / k[j];
        } else if (!(fabs(b[j] - *beta * k[j]) <= 1e-12 * fabs(b[j]))) {
            return 0;
        }
    }
    return 1;
}

/* β for the active contacts' materials (the geometries they touch), or −1 when their damping is
 * not proportional with one factor; 0 when no stiffness is positive. */
static double proportional_beta(const mbs_system *s, const int *act, int na)
{
    double beta = -1;
    for (int a = 0; a < na; a++)
        if (!fold_beta(mbsi_contact_material(s, &s->contacts[act[a]]), &beta)) return -1;
    return beta < 0 ? 0 : beta;
}

/* 1 when every geometry of s's environment has proportional damping with one β. */
static int environment_proportional(const mbs_system *s)
{
    double beta = -1;
    for (int i = 0; i < s->env.nplanes; i++)
        if (!fold_beta(&s->env.planes[i].material, &beta)) return 0;
    for (int i = 0; i < s->env.nboxes; i++)
        if (!fold_beta(&s->env.boxes[i].material, &beta)) return 0;
    for (int i = 0; i < s->env.nheightfields; i++)
        if (!fold_beta(&s->env.heightfields[i].material, &beta)) return 0;
    return 1;
}

static int init(mbs_stepper *st, mbs_error *err)
{
    mbs_system *s = st->sys;
    const expo_options *o = st->opts;
    int c = s->max_contacts > 0 ? s->max_contacts : 1, nv = s->nv, N = 6 * c + 3;
    /* the struct first, then its buffers, in one block */
    expo head = {0};
    head.cmax = c;
    head.nv = nv;
    head.nq = s->nq;
    head.nc = s->ncontacts > 0 ? s->ncontacts : 1;
    mbs_carver cv = {NULL, 0};
    mbsi_carve(&cv, sizeof(expo));
    layout(&cv, &head);
    expo *e = mbsi_carver_alloc(&cv);
    if (!e) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    *e = head;
    mbsi_carve(&cv, sizeof(expo));
    layout(&cv, e);
    st->impl = e;
    e->max_mat_mult = o->max_mat_mult;
    e->balance = o->balance;
    e->method = o->method;
    e->split = o->split;
    e->landing_substeps = o->landing_substeps;
    e->linearise = o->linearise;
    e->warm_start = o->warm_start;
    if (e->method == METHOD_MODAL && !environment_proportional(s)) {
        fini(st);
        return mbsi_fail(err, MBS_ERR_ARG,
                         "method: modal needs the damping of every geometry proportional to its stiffness, "
                         "damping = beta * stiffness with one beta for all, normal and tangential");
    }
    e->ws = mbsi_expm_ws_new(N);
    if (!e->ws) {
        fini(st);
        return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    return MBS_OK;
}

/* The configuration at which a step of length dt evaluates its frozen dynamics (option
 * linearise): s->q itself, or q + dt/2 v in e->qlin.
 * Why the midpoint: everything but the contact springs is frozen over the step, so how M, h and
 * the contact Jacobians change with the configuration is taken at first order. Romeo's walk at
 * 5 ms leaned 3.18° at most where the 0.05 ms run leans 4.22° (the robot tipping about the edge
 * of its stance sole, a mode that grows; part l of the expo benchmark): evaluated at q + δt/2 v,
 * the frozen dynamics are off by O(δt²) instead of O(δt) in the configuration, and the 5 ms walk
 * leans 4.24°. The velocity stays the step's start value: an estimate of the velocity at the
 * midpoint needs the contact forces over the half step (a second exponential), and the
 * velocity-dependent terms (Coriolis, J̇v) did not carry the error: a midpoint state from a half
 * step with the exponential gave the same 4.24° at twice the cost. Evaluating only h at the
 * midpoint (M and J at the start) left the lean at 3.03°: it is the lever arms that matter.
 * tests/test_expo.c checks the order on a box tipping over one edge (the error falls 4 times per
 * halving of the step, twice at the start).
 * What it costs at the largest steps: the contact force acts through J at q + δt/2 v, so the
 * step's map feeds the velocity back through δt/2 · ∂(Jᵀλ)/∂q, the contact's geometric
 * stiffness, which is indefinite and, with a robot's weight on it, large: a velocity feedback
 * that can act as negative damping. Robosimian (100 kg) at 50 ms steps diverges with it (bench-nmdp;
 * stable with linearise = start on the jump), and with J taken at the start (M and h at the
 * midpoint) it did not diverge, but leaned 3.03° again on Romeo. */
static const double *linearisation_point(expo *e, mbs_system *s, double dt)
{
    if (e->linearise == AT_START) return s->q;
    for (int k = 0; k < s->nv; k++) e->dq[k] = 0.5 * dt * s->v[k];
    mbs_integrate(s->model, s->q, e->dq, e->qlin);
    return e->qlin;
}

/* What the scheme reduces to without contacts: explicit Euler (eq. 34) with the acceleration taken
 * at q + dt/2 v; with linearise = start, explicit Euler exactly as euler.c. */
static void euler_step(mbs_stepper *st, double dt)
{
    mbs_system *s = st->sys;
    expo *e = st->impl;
    double *ddq = e->X;
    mbs_aba_fext(s->model, s->data, linearisation_point(e, s, dt), s->v, s->tau, s->fext, ddq);
    for (int k = 0; k < s->nv; k++) {
        e->dq[k] = dt * s->v[k] + 0.5 * dt * dt * ddq[k];
        s->v[k] += dt * ddq[k];
    }
    mbs_integrate(s->model, s->q, e->dq, s->q);
}

/* out = k_n n nᵀ + k_t (1 − n nᵀ): a contact's 3x3 stiffness (or damping) in world axes. */
static void world_gain(const double n[3], double kn, double kt, double out[9])
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) out[i + 3 * j] = (kn - kt) * n[i] * n[j] + (i == j ? kt : 0);
}

/* Υ = G Υ_r Gᵀ into e->ups, once per step, for what needs it whole (the Padé path; the closed
 * form when Υ_r is not safely definite). e->Ab, the Padé path's matrix, filled after this, is
 * scratch for Υ_r Gᵀ. */
static void expand_ups(expo *e, int na)
{
    if (e->ups_full) return;
    int n = 3 * na, nr = e->nr;
    double *T = e->Ab;   /* nr x n */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < nr; i++) {
            double t = 0;
            for (int k = 0; k < nr; k++) t += e->upsr[i + (size_t)nr * k] * e->Gm[j + (size_t)n * k];
            T[i + (size_t)nr * j] = t;
        }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double u = 0;
            for (int k = 0; k < nr; k++) u += e->Gm[i + (size_t)n * k] * T[k + (size_t)nr * j];
            e->ups[i + (size_t)n * j] = u;
        }
    e->ups_full = 1;
}

/* B = G L with L Lᵀ = Υ_r into e->Bf, once per step, so that Υ = B Bᵀ (the closed form's
 * factored path). Returns 0, or -1 when Υ_r is not safely positive definite (points of frames
 * whose rows are dependent: the full Υ is used then). */
static int factor_ups(expo *e, int na)
{
    if (e->factor) return e->factor > 0 ? 0 : -1;
    int n = 3 * na, nr = e->nr;
    double *L = e->Lr, dmax = 0;
    for (int j = 0; j < nr; j++)
        for (int i = j; i < nr; i++) L[i + (size_t)nr * j] = e->upsr[i + (size_t)nr * j];
    for (int i = 0; i < nr; i++) dmax = fmax(dmax, L[i * (nr + 1)]);
    if (mbsi_cholesky(L, nr, nr, nr * 0x1p-52 * dmax) >= 0) {
        e->factor = -1;
        return -1;
    }
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < n; i++) {
            double b = 0;
            for (int k = j; k < nr; k++) b += e->Gm[i + (size_t)n * k] * L[k + (size_t)nr * j];
            e->Bf[i + (size_t)n * j] = b;
        }
    e->factor = 1;
    return 0;
}

/* The coordinates of contact a that drive the linear system, y_a = S_aᵀ Δp_a: its force law
 * λ_a = −K_a Δp_a − B_a Δṗ_a reads Δp_a and Δṗ_a only through them (K_a = K_a S_a S_aᵀ, B_a
 * likewise). On its spring (STICK) that is all three, S_a = I; sliding (SLIDE, SLID_PULLING),
 * K_a = k_n (n + μ f̂) nᵀ reads the normal alone, S_a = n; SEPARATE reads nothing. Their number: */
static int driving_dim(const expo *e, int a)
{
    return e->mode[a] == STICK ? 3 : e->mode[a] == SEPARATE ? 0 : 1;
}

/* Coordinate r of S_aᵀ x for a 3-vector x of contact a. */
static double drive(const expo *e, const mbs_system *s, int a, int r, const double x[3])
{
    if (e->mode[a] == STICK) return x[r];
    const double *n = s->contacts[e->act[a]].normal;
    return n[0] * x[0] + n[1] * x[1] + n[2] * x[2];
}

/* Column r of G S_a for a 3 x 3 gain G (column-major) of contact a. */
static void gain_column(const expo *e, const mbs_system *s, int a, int r, const double *G, double out[3])
{
    if (e->mode[a] == STICK) {
        memcpy(out, G + 3 * r, 3 * sizeof(double));
        return;
    }
    const double *n = s->contacts[e->act[a]].normal;
    for (int l = 0; l < 3; l++) out[l] = G[l] * n[0] + G[l + 3] * n[1] + G[l + 6] * n[2];
}

/* The contact-space linear system (11) over the step with the force law λ = −K Δp − B Δṗ of
 * the gains e->Kw, e->Bw (3x3 per contact, world axes, any matrices): x_int and x_int2 from
 * one matrix exponential, then the averages λ̄ and λ̄₂ into e->lb, e->lb2. */
static int contact_averages(expo *e, const mbs_system *s, int na, double dt)
{
    /* δt Ā (eq. 30) with A = [[0, I], [−ΥK, −ΥB]] (eq. 11), x(0) = [Δp; Δṗ], Δp = p − p0,
     * Δṗ = ṗ − ṗ0 (eq. 2); K and B are 3x3 blocks per contact in world axes (normal and
     * tangential gains of the material).
     * b = [ṗ0; p̈_free] rather than eq. 11's [0; p̈_free]: the contact layer keeps the anchor p0
     * where eq. 28 last put it and uses ṗ0 only as the damper's reference velocity, so over
     * the step d(Δp)/dt = ṗ = Δṗ + ṗ0 — the force law every other stepper integrates. The two
     * agree for a sticking contact (ṗ0 = 0, and see the end of the step). On a slipping one,
     * eq. 11's "business as usual" anchor, carried along at ṗ0 while friction slows the
     * point, lets the damper push forward: a box sliding at 1 m/s (μ = 0.4, δt = 1 ms)
     * decelerated at 2.8 m/s² instead of μg = 3.9 — its average force never even left the
     * cone. With the anchor held, the spring stretches past the cone, the slip is seen and
     * the second pass (classify) applies Coulomb's μ λ_n.
     * The system is written in the coordinates that drive it, y = Sᵀ Δp (driving_dim): ÿ =
     * Sᵀ(Υλ + p̈_free), λ = −K S y − B S ẏ. Every other coordinate of Δp only follows and is never
     * read, so this is the same system, exactly. With every contact on its spring S = I and the
     * matrix is eq. 30's; in the second pass a sliding contact keeps one row of three and a
     * separated one none, and the exponential, which costs the cube of its size, shrinks with
     * them (Solo's 4 feet, one sliding: 23 x 23 instead of 27 x 27). */
    int nc = 3 * na, m = 0;
    for (int a = 0; a < na; a++) {
        e->yoff[a] = m;
        e->ydim[a] = driving_dim(e, a);
        m += e->ydim[a];
    }
    int n = 2 * m, N = n + 3;
    double *Ab = e->Ab, *col = e->col;
    expand_ups(e, na);
    memset(Ab, 0, (size_t)N * N * sizeof(double));
    for (int k = 0; k < m; k++) Ab[k + (size_t)N * (m + k)] = dt;
    /* the columns of y_b and ẏ_b: −δt Sᵀ Υ K_b S_b and −δt Sᵀ Υ B_b S_b */
    for (int b = 0; b < na; b++)
        for (int j = 0; j < e->ydim[b]; j++)
            for (int g = 0; g < 2; g++) {
                double gs[3];
                gain_column(e, s, b, j, (g ? e->Bw : e->Kw) + 9 * b, gs);
                memset(col, 0, (size_t)nc * sizeof(double));
                for (int l = 0; l < 3; l++) {
                    const double *u = e->ups + (size_t)nc * (3 * b + l);
                    double kk = -dt * gs[l];
                    for (int i = 0; i < nc; i++) col[i] += u[i] * kk;
                }
                double *out = Ab + (size_t)N * (g * m + e->yoff[b] + j) + m;
                for (int a = 0; a < na; a++)
                    for (int r = 0; r < e->ydim[a]; r++) out[e->yoff[a] + r] = drive(e, s, a, r, col + 3 * a);
            }
    {
        double *cb = Ab + (size_t)N * n, *cx = Ab + (size_t)N * (n + 1);
        for (int a = 0; a < na; a++) {
            const mbs_contact *c = &s->contacts[e->act[a]];
            double dp[3], dv[3];
            for (int k = 0; k < 3; k++) {
                dp[k] = c->p[k] - c->p0[k];
                dv[k] = c->dp[k] - c->dp0[k];
            }
            for (int r = 0; r < e->ydim[a]; r++) {
                int i = e->yoff[a] + r;
                cb[i] = dt * drive(e, s, a, r, c->dp0);
                cb[m + i] = dt * drive(e, s, a, r, e->pdd + 3 * a);
                cx[i] = dt * drive(e, s, a, r, dp);
                cx[m + i] = dt * drive(e, s, a, r, dv);
            }
        }
        cx[n] = dt;
        Ab[(n + 1) + (size_t)N * (n + 2)] = dt;
    }
    /* [x_int x_int2] = [I 0] e^{δt Ā} [0; I₂] (eq. 29): the last two columns */
    memset(e->V2, 0, 2 * (size_t)N * sizeof(double));
    e->V2[n + 1] = 1;
    e->V2[N + n + 2] = 1;
    int rc = mbsi_expm_apply(e->ws, N, Ab, N, 2, e->V2, N, e->X2, N, e->max_mat_mult, e->balance, NULL);
    if (rc != 0) return MBS_ERR_MODEL;
    const double *xi = e->X2, *xi2 = e->X2 + N;

    /* λ̄ = D x_int / δt (eq. 23) and λ̄₂ = 2 D x_int2 / δt² (eq. 25), D = [−K S −B S] */
    for (int a = 0; a < na; a++) {
        double *l1 = e->lb + 3 * a, *l2 = e->lb2 + 3 * a, K[3][3], Bc[3][3];
        int o = e->yoff[a];
        for (int r = 0; r < e->ydim[a]; r++) {
            gain_column(e, s, a, r, e->Kw + 9 * a, K[r]);
            gain_column(e, s, a, r, e->Bw + 9 * a, Bc[r]);
        }
        for (int i = 0; i < 3; i++) {
            double s1 = 0, s2 = 0;
            for (int r = 0; r < e->ydim[a]; r++) {
                double ks = K[r][i], bs = Bc[r][i];
                s1 += ks * xi[o + r] + bs * xi[m + o + r];
                s2 += ks * xi2[o + r] + bs * xi2[m + o + r];
            }
            l1[i] = -s1 / dt;
            l2[i] = -2 * s2 / (dt * dt);
        }
    }
    return 0;
}

/* The averages λ̄ and λ̄₂ into e->lb, e->lb2 as contact_averages computes them, in closed form
 * (expo_modal.h) for B = βK: K^½ per contact in world axes (zero for a contact SEPARATE over the
 * step), the state Δp, Δṗ and the anchor velocities ṗ0 in contact space. */
static int modal_averages(expo *e, const mbs_system *s, int na, double dt, double beta, int warm)
{
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[e->act[a]];
        const mbs_material *mt = mbsi_contact_material(s, c);
        if (e->mode[a] == SEPARATE)
            memset(e->Rw + 9 * a, 0, 9 * sizeof(double));
        else
            world_gain(c->normal, sqrt(mt->k_normal), sqrt(mt->k_tangent), e->Rw + 9 * a);
        for (int k = 0; k < 3; k++) {
            e->dpv[3 * a + k] = c->p[k] - c->p0[k];
            e->dvv[3 * a + k] = c->dp[k] - c->dp0[k];
            e->v0v[3 * a + k] = c->dp0[k];
        }
    }
    if (e->grouped && factor_ups(e, na) == 0)
        return mbsi_modal_averages_factored(&e->modal, warm, 3 * na, e->nr, e->Bf, 3 * na, e->Rw, beta, e->dpv, e->dvv,
                                            e->v0v, e->pdd, dt, e->lb, e->lb2) != 0;
    expand_ups(e, na);
    return mbsi_modal_averages(&e->modal, warm, 3 * na, e->ups, e->Rw, beta, e->dpv, e->dvv, e->v0v, e->pdd, dt, e->lb,
                               e->lb2) != 0;
}

/* The normal force of c's spring and damper at the end of a step h if the point kept its normal
 * velocity relative to the anchor: −(k_n (d_n + v_n h) + b_n v_n), d_n = nᵀΔp, v_n = nᵀΔṗ
 * (> 0: it would still push). */
static double normal_push_after(const mbs_system *s, const mbs_contact *c, double h)
{
    const double *n = c->normal;
    double dn = 0, vn = 0;
    for (int k = 0; k < 3; k++) {
        dn += (c->p[k] - c->p0[k]) * n[k];
        vn += (c->dp[k] - c->dp0[k]) * n[k];
    }
    const mbs_material *mt = mbsi_contact_material(s, c);
    return -(mt->k_normal * (dn + vn * h) + mt->b_normal * vn);
}

/* After a first pass with every contact on its spring (the paper's eq. 11), a contact whose
 * average force λ̄ pulls is SEPARATE for the step (no force) — or SLID_PULLING when the pull may
 * come from its own unbounded tangential spring (separate_pulling says when and why) — and one
 * whose λ̄ leaves the
 * cone SLIDEs: its force is λ = λ_n (n + μ f̂), f̂ the direction of the first pass's
 * tangential average, λ_n = −k_n nᵀΔp − b_n nᵀΔṗ its normal spring and damper — still
 * linear in x, so a second exponential integrates it exactly. Returns 1 when a second pass
 * is needed.
 * Why: eqs. 24–26 project the averages after the fact, so the normal forces they keep were
 * computed under the unbounded tangential forces of the spring. On a slipping contact those
 * are large (10 to 100 times the cone when a point touches down sliding), and through Υ they
 * tilt the normal forces: with the projection alone, a box set down sliding at 1 m/s
 * (δt = 1 ms) rocked onto its back edge for 0.1 s, and a box sliding down an incline
 * accelerated 2.8 % (2 ms) and 16 % (5 ms) off Coulomb's g (sin θ − μ cos θ). With friction
 * tied to the normal force inside the linear system the normal forces see the friction that
 * will really act: the box's trajectory matches explicit Euler at δt = 10 µs to five digits,
 * and the incline is within 0.1 %, 1.3 % and 1.9 % at 1, 2 and 5 ms. The second pass costs a
 * second exponential on the steps where a contact slips or separates (2 % of Solo's trotting
 * steps). */
/* Active contact a without force over the step: SEPARATE, no stiffness, no damping. */
static void separate(expo *e, int a)
{
    e->mode[a] = SEPARATE;
    memset(e->Kw + 9 * a, 0, 9 * sizeof(double));
    memset(e->Bw + 9 * a, 0, 9 * sizeof(double));
}

static int classify(expo *e, const mbs_system *s, int na, double h)
{
    int redo = 0;
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[e->act[a]];
        const mbs_material *mt = mbsi_contact_material(s, c);
        const double *l = e->lb + 3 * a, *n = c->normal;
        double ln = l[0] * n[0] + l[1] * n[1] + l[2] * n[2], t[3], lt = 0, mu = mt->mu;
        for (int k = 0; k < 3; k++) {
            t[k] = l[k] - ln * n[k];
            lt += t[k] * t[k];
        }
        lt = sqrt(lt);
        double *K = e->Kw + 9 * a, *B = e->Bw + 9 * a;
        double push = ln > 0 ? 0 : normal_push_after(s, c, h);
        if (!(ln > 0) && !(push > 0 && lt > mu * push)) {
            separate(e, a);
            redo = 1;
        } else if (lt > mu * ln) {
            e->mode[a] = ln > 0 ? SLIDE : SLID_PULLING;
            double dir[3];
            for (int k = 0; k < 3; k++) dir[k] = n[k] + mu * t[k] / lt;
            for (int j = 0; j < 3; j++)
                for (int i = 0; i < 3; i++) {
                    K[i + 3 * j] = dir[i] * mt->k_normal * n[j];
                    B[i + 3 * j] = dir[i] * mt->b_normal * n[j];
                }
            redo = 1;
        }
    }
    return redo;
}

/* After the second pass: a SLID_PULLING contact whose normal average still pulls, now that the
 * friction on it and on the others is bounded, is SEPARATE (a third pass); one that pushes SLIDEs.
 * Why: a contact sliding under a long step pulls in the first pass although it is pressed into the
 * ground. Its anchor stays put over the step (eq. 28 moves it only between steps), so its
 * tangential spring stretches by the whole slip v δt, far beyond the cone, and the moment of that
 * force about the centre of mass lifts the contacts behind. A 2 kg box sliding down an incline
 * (tan θ = 0.6, μ = 0.3) at 3 ms saw its uphill corners' first-pass normal average fall from 3.9 N
 * to below zero as it gathered speed (0.2 m/s after 0.09 s, tangential averages of 20 N where the
 * cone allows 1.2 N); taken as separating for whole steps, those corners sank unresisted and were
 * pushed out hard at the next step, on alternate steps — the rocking that made the incline's
 * acceleration 7.5 % off Coulomb's at 4 ms and 27-31 % at 8 ms (tests/test_expo.c test_incline).
 * Only a contact whose own spring and damper would still push at the step's end (it is not
 * leaving) and whose tangential average lies beyond the cone of that push is tried so: a foot
 * pushing off or bouncing out keeps the separation decided at once. Returns 1 when a third pass is
 * needed. */
static int separate_pulling(expo *e, const mbs_system *s, int na)
{
    int redo = 0;
    for (int a = 0; a < na; a++) {
        if (e->mode[a] != SLID_PULLING) continue;
        const double *l = e->lb + 3 * a, *n = s->contacts[e->act[a]].normal;
        if (l[0] * n[0] + l[1] * n[1] + l[2] * n[2] > 0) {
            e->mode[a] = SLIDE;
            continue;
        }
        separate(e, a);
        redo = 1;
    }
    return redo;
}

/* Contacts at (q, v) from the contact layer (anchors set on first touch, moved on slip), and
 * the indices of the active ones in e->act: the contacts the linear system (11) integrates.
 * A contact that the layer has just released but that still penetrates is kept active, with
 * its anchor. The layer releases a contact whose spring pulls at this instant (the point
 * moving out fast), even inside the ground. Over a long step such a contact pushes again as
 * soon as its damper has slowed the point; left out of the linear system, the point sinks
 * unresisted for the whole step, is pushed out hard at the next, released again... — Solo's
 * landings in solo_jump at δt = 10 ms alternated contact and no contact every step and
 * diverged. So expo keeps it and enforces unilaterality on the average force (eqs. 21, 24) as
 * the paper does ("we suggest to check friction constraints on the average value"); it leaves
 * when it no longer penetrates. */
static int collect_active(expo *e, mbs_system *s);

static int gather_active(expo *e, mbs_system *s)
{
    mbs_contact_forces(s, s->q, s->v, 1);
    return collect_active(e, s);
}

/* gather_active after its mbs_contact_forces: the indices of the active contacts into e->act. */
static int collect_active(expo *e, mbs_system *s)
{
    int na = 0;
    for (int i = 0; i < s->ncontacts && na < e->cmax; i++) {
        mbs_contact *c = &s->contacts[i];
        if (!c->active && mbsi_contact_penetrates(s, c)) mbsi_contact_activate(c);
        if (c->active) e->act[na++] = i;
    }
    return na;
}

/* The rows J_r that the contact Jacobian J = G J_r is built from. A point's velocity is its
 * frame's linear velocity plus ω × r, r its offset from the frame's origin: three or more points
 * on one frame (a sole's corners) move with that frame's six velocities, and their 3k rows are
 * G (3k x 6) times the frame's six. The contact-space matrix Υ = G Υ_r Gᵀ then has rank 6 per such
 * frame: Romeo standing on its eight sole corners has Υ of 24 x 24 and rank 12. M⁻¹ is applied
 * to 12 columns instead of 24, and the closed form diagonalises a 12 x 12 matrix instead of a
 * 24 x 24 one (mbsi_modal_averages_factored): Romeo standing took 34.9 us per step before and
 * 23.0 us after (make bench-expo part e, Zen 4). One or two points on a frame keep their own
 * three rows each (G = I there); a model without such frames (Solo's four feet) runs exactly as
 * without this. */
static void contact_rows(expo *e, const mbs_system *s, int na)
{
    int nr = 0;
    e->grouped = 0;
    for (int a = 0; a < na; a++) {
        int f = s->contacts[e->act[a]].frame, first = -1, count = 0;
        for (int b = 0; b < na; b++)
            if (s->contacts[e->act[b]].frame == f) {
                if (first < 0) first = b;
                count++;
            }
        e->body[a] = count >= 3;
        if (!e->body[a]) {
            e->row[a] = nr;
            nr += 3;
        } else if (first == a) {
            e->row[a] = nr;
            nr += 6;
            e->grouped = 1;
        } else {
            e->row[a] = e->row[first];
        }
    }
    e->nr = nr;
    e->ups_full = !e->grouped;
    e->factor = 0;
}

/* out = G_a x: contact a's point velocity (or acceleration) from the rows of x at its rows. */
static void rows_to_point(const expo *e, int a, const double *x, double out[3])
{
    const double *r = e->rw + 3 * a, *v = x + e->row[a];
    if (!e->body[a]) {
        memcpy(out, v, 3 * sizeof(double));
        return;
    }
    out[0] = v[0] + v[4] * r[2] - v[5] * r[1];
    out[1] = v[1] + v[5] * r[0] - v[3] * r[2];
    out[2] = v[2] + v[3] * r[1] - v[4] * r[0];
}

/* G (3·na x nr, column-major) into e->Gm: rows_to_point as a matrix, for the products with Υ_r. */
static void form_g(expo *e, int na)
{
    int n = 3 * na, nr = e->nr;
    memset(e->Gm, 0, (size_t)n * nr * sizeof(double));
    for (int a = 0; a < na; a++) {
        double *g = e->Gm + 3 * a + (size_t)n * e->row[a];
        const double *r = e->rw + 3 * a;
        for (int i = 0; i < 3; i++) g[i + (size_t)n * i] = 1;
        if (!e->body[a]) continue;
        /* the columns of ω: ω × r = −[r]× ω */
        g += (size_t)n * 3;
        g[1 + 0 * (size_t)n] = -r[2];
        g[2 + 0 * (size_t)n] = r[1];
        g[0 + 1 * (size_t)n] = r[2];
        g[2 + 1 * (size_t)n] = -r[0];
        g[0 + 2 * (size_t)n] = -r[1];
        g[1 + 2 * (size_t)n] = r[0];
    }
}

/* J_r (LOCAL_WORLD_ALIGNED: the linear rows of each point on its own, the six of each frame that
 * carries three or more, contact_rows), transposed, into the first nr columns of the row-major
 * right-hand sides e->X, and J̇v into e->pdd, at the configuration q
 * (linearisation_point) and the velocity s->v: the contact-space view of the dynamics that Υ and
 * p̈_free (eqs. 9-10) are built from. */
static void contact_jacobians(expo *e, mbs_system *s, const double *q, int na)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    int nv = s->nv;
    const double *v = s->v;
    contact_rows(e, s, na);
    /* Kinematics with q̈ = 0: the classical acceleration of each contact point is then J̇v
     * (gravity is not in the kinematic accelerations). The contact point is the touching point,
     * a point of the body at this instant, and its offset in the frame Rᵀ(p − p_f): at the step's
     * start c->p; at the midpoint the touching point there for the contact's normal (a rolling
     * sphere touches at another point of the body than at the start: with the start's point,
     * turned by half a step's rotation, a ball rolling at 1 m/s settled at 0.7179 m/s instead of
     * 5/7 at 0.1 ms steps). */
    mbs_forward_kinematics(m, d, q, v, e->zero);
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[e->act[a]];
        double R[9], pf[3], pt[3], *dp = e->rw + 3 * a, acc[6], *off = e->off + 3 * a;
        if (q == s->q) {
            mbs_frame_placement(m, d, c->frame, R, pf);
            memcpy(pt, c->p, sizeof pt);
        } else {
            mbsi_contact_touch_point(s, c, c->normal, pt, R, pf);
        }
        for (int k = 0; k < 3; k++) dp[k] = pt[k] - pf[k];
        for (int k = 0; k < 3; k++) off[k] = R[3 * k] * dp[0] + R[3 * k + 1] * dp[1] + R[3 * k + 2] * dp[2];
        mbs_frame_classical_acceleration(m, d, c->frame, off, MBS_LOCAL_WORLD_ALIGNED, acc);
        memcpy(e->pdd + 3 * a, acc, 3 * sizeof(double));   /* J̇v for now */
    }
    /* J_rᵀ as the first nr columns of the row-major right-hand sides X */
    int nr = e->nr, ld = nr + 1;
    double *X = e->X;
    mbsi_joint_jacobians_from_placements(m, d);   /* the placements of the kinematics above, at q */
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[e->act[a]];
        int r0 = e->row[a], rows = e->body[a] ? 6 : 3, done = 0;
        for (int b = 0; b < a && !done; b++) done = e->row[b] == r0;   /* the frame's rows are in */
        if (done) continue;
        mbs_frame_jacobian(m, d, c->frame, e->body[a] ? NULL : e->off + 3 * a, MBS_LOCAL_WORLD_ALIGNED, e->J6, 6);
        for (int k = 0; k < nv; k++)
            for (int r = 0; r < rows; r++) X[(size_t)ld * k + r0 + r] = e->J6[r + 6 * k];
    }
    if (e->grouped) form_g(e, na);
}

/* Y = L⁻ᵀ[J_rᵀ, τ − h] in e->X (M = Lᵀ D L), then Υ = J M⁻¹Jᵀ (eq. 9) in e->ups (or Υ_r in
 * e->upsr, when grouped) and p̈_free = J v̇_f + J̇v (eq. 10) in e->pdd, at the configuration q and
 * the velocity s->v: the matrix and the drift of the contact-space system (11).
 * M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ through the tree-sparse factor (CRBA + LTDL), all nr + 1 right-hand sides in
 * one row-major sweep of the tree: measured several times faster than ABA + ABI (one
 * articulated-body sweep of 6x6 operations per column) and than column-by-column solves, whose
 * inner loops are chains of dependent loads. Only the half L⁻ᵀ is applied here: Υ_r = J_r M⁻¹J_rᵀ
 * = Yᵀ D⁻¹ Y and J_r v̇_f = Y_Jᵀ D⁻¹ Y_τ need no more, and the other half then runs on the two
 * accelerations advance_state needs instead of on nr + 1 columns (`./sim scenarios/solo_trot.ini`:
 * 9.03 -> 8.56 us per step, medians of 11 runs alternating with the binary before, Zen 4).
 * M⁻¹ itself is never formed. */
static int contact_space_dynamics(expo *e, mbs_system *s, const double *q, int na)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    int nv = s->nv, nr = e->nr, ld = nr + 1;
    double *X = e->X, *ur = e->grouped ? e->upsr : e->ups, *pacc = e->grouped ? e->mu2 : e->pdd;
    /* h = C(q, v) v + g(q) by RNEA's backward pass on the kinematics contact_jacobians left at
     * this q and v with q̈ = 0 (before CRBA, which has placements of its own) */
    mbsi_rnea_from_kinematics(m, d, NULL, NULL, e->dq);
    /* M straight into the factor's storage, factored in place */
    mbsi_crba_tree_lower(m, d, q, d->L);
    if (mbsi_ltdl_in_place(m, d) != MBS_OK) return MBS_ERR_MODEL;
    for (int k = 0; k < nv; k++) X[(size_t)ld * k + nr] = s->tau[k] - e->dq[k];
    mbsi_ltdl_solve_rows_lt(m, d, X, ld, 0);   /* Y = L⁻ᵀ[J_rᵀ, τ − h] */
    /* Υ_r = Yᵀ D⁻¹ Y (eq. 9) and J_r v̇_f = Y_Jᵀ D⁻¹ Y_τ (in p̈_free, eq. 10). Υ_r is symmetric:
     * its lower triangle is accumulated and mirrored, half the products. Y keeps much of J_rᵀ's
     * sparsity (a foot's column is zero on the other legs' dofs): its zeros are skipped */
    memset(ur, 0, (size_t)nr * nr * sizeof(double));
    if (e->grouped) memset(pacc, 0, (size_t)nr * sizeof(double));
    for (int k = 0; k < nv; k++) {
        const double *yk = X + (size_t)ld * k;
        const double dk = d->Dinv[k];
        for (int c = 0; c < nr; c++) {
            double w = dk * yk[c], *u = ur + (size_t)nr * c;
            if (w == 0) continue;
            for (int r = 0; r < nr; r++) u[r] += yk[r] * w;
        }
        double w = dk * yk[nr];
        for (int r = 0; r < nr; r++) pacc[r] += yk[r] * w;
    }
    for (int c = 0; c < nr; c++)
        for (int r = c + 1; r < nr; r++) ur[c + (size_t)nr * r] = ur[r + (size_t)nr * c];
    if (e->grouped)
        for (int a = 0; a < na; a++) {
            double t[3];
            rows_to_point(e, a, pacc, t);
            for (int k = 0; k < 3; k++) e->pdd[3 * a + k] += t[k];
        }
    return MBS_OK;
}

/* The averages λ̄ (eq. 23) and λ̄₂ (eq. 25) into e->lb, e->lb2: a first pass with every
 * contact on its spring and damper (eq. 2), as the paper, and a second when a contact slides
 * or separates (classify says why), and a third when a contact slid because it pulled and pulls
 * still (separate_pulling); *passes = the exponentials computed. */
static int average_forces(expo *e, const mbs_system *s, int na, double dt, int *passes)
{
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[e->act[a]];
        const mbs_material *mt = mbsi_contact_material(s, c);
        world_gain(c->normal, mt->k_normal, mt->k_tangent, e->Kw + 9 * a);
        world_gain(c->normal, mt->b_normal, mt->b_tangent, e->Bw + 9 * a);
        e->mode[a] = STICK;
    }
    /* the closed form where it applies (B = βK) and was asked for: by `method = modal`, or by
     * auto with the full exponential, which it reproduces to rounding at a fraction of the cost */
    double beta = e->method == METHOD_PADE ? -1 : proportional_beta(s, e->act, na);
    int modal = beta >= 0 && (e->method == METHOD_MODAL || e->max_mat_mult == MBS_EXPM_FULL);
    /* the first pass's matrix is close to the previous step's while the contacts stay put: its
     * eigenvectors start from that step's (expo_modal.c, warm starts) */
    if (modal ? modal_averages(e, s, na, dt, beta, e->warm_start) : contact_averages(e, s, na, dt)) return MBS_ERR_MODEL;
    *passes = 1;
    for (int pass = 2; pass <= 3 && (pass == 2 ? classify(e, s, na, dt) : separate_pulling(e, s, na)); pass++) {
        /* a sliding contact's force, λ_n (n + μ f̂), is no longer B = βK with K symmetric: Padé */
        int slide = 0;
        for (int a = 0; a < na; a++) slide |= e->mode[a] == SLIDE || e->mode[a] == SLID_PULLING;
        if (modal && !slide ? modal_averages(e, s, na, dt, beta, 0) : contact_averages(e, s, na, dt))
            return MBS_ERR_MODEL;
        *passes = pass;
    }
    return MBS_OK;
}

/* Every average projected onto its friction cone (eqs. 24, 26; mbs_cone_project, the exact
 * projection onto the second-order cone) into e->lam, e->lam2, and the contact layer told
 * the force applied and whether it slid. After the second pass a sliding contact's average
 * is on the boundary already and a separated one is zero, so the projection only trims what
 * the other contacts' new forces pushed out — without the second pass it had to undo
 * tangential forces up to 100 times the cone, and the normal force it adds when doing so,
 * μ|λ_t|/(1 + μ²), made a box set down sliding at 1 m/s (δt = 1 ms) hop off all four
 * corners, pitching at 1.6 rad/s. A contact that stuck over the step has an
 * anchor at rest from now on (§2.1: "as long as contacts are sticking ṗ0 = 0");
 * left at the velocity of its last slip, the damper would keep pushing a stopped point.
 * A contact that slid gets its anchor moved by eq. 28 (ṗ0_t := ṗ_t, p0_t := p_t + K_t⁻¹λ_t
 * on the cone boundary) from the state this step ends in: mbs_contact_forces does exactly
 * that at the start of the next step, so it is not done twice here. */
static void project_on_cones(expo *e, mbs_system *s, int na)
{
    for (int a = 0; a < na; a++) {
        mbs_contact *c = &s->contacts[e->act[a]];
        const double mu = mbsi_contact_material(s, c)->mu;
        mbs_cone_project(e->lb + 3 * a, c->normal, mu, e->lam + 3 * a);
        mbs_cone_project(e->lb2 + 3 * a, c->normal, mu, e->lam2 + 3 * a);
        const double *l = e->lam + 3 * a;
        int trimmed = memcmp(e->lb + 3 * a, l, 3 * sizeof(double)) != 0, zero = l[0] == 0 && l[1] == 0 && l[2] == 0;
        /* on the cone's boundary; the force applied is kept for logging */
        mbsi_contact_record_step(c, l, e->mode[a] == SLIDE || (trimmed && !zero));
    }
}

/* v⁺ = v + δt (v̇_f + M⁻¹Jᵀλ̄), q⁺ = integrate(q, δt v + δt²/2 (v̇_f + M⁻¹Jᵀλ̄₂)): the state
 * at the end of the step from the two projected forces (eqs. 24 and 26; eqs. 14, 19-20 when
 * both averages were inside their cones). */
static void advance_state(expo *e, mbs_system *s, int na, double dt)
{
    int nv = s->nv, nr = e->nr, ld = nr + 1;
    const double *X = e->X, *l1 = e->lam, *l2 = e->lam2;
    if (e->grouped) {
        /* Jᵀλ = J_rᵀ Gᵀλ: the forces on a frame's points as the frame's force and moment */
        memset(e->mu, 0, (size_t)nr * sizeof(double));
        memset(e->mu2, 0, (size_t)nr * sizeof(double));
        int n = 3 * na;
        for (int j = 0; j < nr; j++)
            for (int i = 0; i < n; i++) {
                double g = e->Gm[i + (size_t)n * j];
                e->mu[j] += g * e->lam[i];
                e->mu2[j] += g * e->lam2[i];
            }
        l1 = e->mu;
        l2 = e->mu2;
    }
    /* eqs. 24 and 26: v̇ = v̇_f + M⁻¹Jᵀλ = L⁻¹D⁻¹(Y_τ + Y_J λ) for each of the two forces */
    double *acc = e->acc;
    for (int k = 0; k < nv; k++) {
        const double *xk = X + (size_t)ld * k;
        double a1 = xk[nr], a2 = xk[nr];
        for (int r = 0; r < nr; r++) {
            a1 += xk[r] * l1[r];
            a2 += xk[r] * l2[r];
        }
        acc[2 * k] = a1;
        acc[2 * k + 1] = a2;
    }
    mbsi_ltdl_solve_rows_dl(s->model, s->data, acc, 2, 0);
    for (int k = 0; k < nv; k++) {
        e->dq[k] = dt * s->v[k] + 0.5 * dt * dt * acc[2 * k + 1];
        s->v[k] += dt * acc[2 * k];
    }
    mbs_integrate(s->model, s->q, e->dq, s->q);
}

/* Stages 2-5 over h with the na active contacts gathered (stage 1); *exponentials counts them. */
static int exponential_step(mbs_stepper *st, int na, double h, int *exponentials)
{
    mbs_system *s = st->sys;
    expo *e = st->impl;
    if (na == 0) {
        euler_step(st, h);
        return MBS_OK;
    }
    const double *q = linearisation_point(e, s, h);
    contact_jacobians(e, s, q, na);
    if (contact_space_dynamics(e, s, q, na) != MBS_OK) return MBS_ERR_MODEL;
    int passes = 0;
    if (average_forces(e, s, na, h, &passes) != MBS_OK) return MBS_ERR_MODEL;
    *exponentials += passes;
    project_on_cones(e, s, na);
    advance_state(e, s, na, h);
    return MBS_OK;
}

/* Touch-down splitting. Contacts are found at the start of a step (stage 1), so a point that
 * lands during a step starts the next one on its spring as deep as the rest of the step took
 * it: at 10 ms and 1 m/s several millimetres, hundreds of newtons on a foot of a few hundred
 * grams, which then leaves the ground again. Solo's landings in solo_jump at δt = 10 ms so
 * touched, left and touched again on alternate steps: 9 touch-downs per foot in 4 s where every
 * scheme at 0.1 ms counts 3. A sub-step at whose end a point that was free at its start
 * penetrates is therefore taken again, shortened to where the earliest such point reached the
 * surface and a hundredth of δt past it, so that the point is found touching; the rest of the
 * step follows with it on its spring, in equal sub-steps of at most δt / landing_substeps (4 by
 * default), each linearised again: the landing changes the robot's motion fast, and the rest of a
 * 10 ms step linearised once at the touch-down carried Solo's feet in solo_jump 0.12 mm out of the
 * ground where the 0.1 ms reference holds them in it, so that they landed a second time (the
 * summary counts that: it sees the contacts between sub-steps); 2 sub-steps did not remove that
 * bounce, 3 did. A point touching at the sub-step's start that had left the surface before the
 * touch-down moves the split to its lift-off (first_event says why). At most SPLITS splits per
 * step. The check (one forward
 * kinematics at the sub-step's end) runs only in steps where a free point is near the surface.
 * Where the point reached the surface: the gap's
 * parabola through its value and rate at the start and its value at the end (exact for the
 * constant acceleration of a step of explicit Euler in flight). A line through the two values
 * does not do: a foot that the body's fall and the leg's gains pull down at 70 m/s² while it
 * still rises at 3 cm/s reaches the ground late in the step, and the line put it early, four
 * splits in a row, before the step was taken whole. */
enum { SPLITS = 4 };
static const double SPLIT_OVERSHOOT = 0.01;   /* of δt */

/* The gaps of the free contacts and their rates (the point's velocity along the normal, from
 * the last mbs_contact_forces) into e->gap0, e->rate0; the number of them that could reach the
 * surface within h: a gap under what the point covers at its rate and REACH_ACCELERATION (only
 * those are checked after the sub-step; a swing foot high above the ground costs nothing). A
 * point that lands faster than that bound allows is found at the next step, as with split = 0. */
static const double REACH_ACCELERATION = 200;   /* m/s², 20 g */

static int free_gaps(expo *e, const mbs_system *s, double h)
{
    int near = 0;
    for (int i = 0; i < s->ncontacts; i++) {
        double n[3], pt[3], ctr[3];
        const mbs_contact *c = &s->contacts[i];
        e->gap0[i] = INFINITY;
        if (c->active) {
            /* an active contact's gap is minus its depth (first_event looks for its lift-off) */
            e->gap0[i] = -c->depth;
            e->rate0[i] = c->dp[0] * c->normal[0] + c->dp[1] * c->normal[1] + c->dp[2] * c->normal[2];
            continue;
        }
        if (!mbsi_contact_gap(s, c, &e->gap0[i], n, pt, ctr, NULL)) continue;
        e->rate0[i] = c->dp[0] * n[0] + c->dp[1] * n[1] + c->dp[2] * n[2];
        if (e->gap0[i] <= fabs(e->rate0[i]) * h + 0.5 * REACH_ACCELERATION * h * h) near++;
        else e->gap0[i] = INFINITY;
    }
    return near;
}

/* The first τ in (0, 1] at which g0 + r τ + a τ² reaches 0, given its value g1 = g0 + r + a < 0
 * at τ = 1 and g0 > 0 (r is the rate times the sub-step). */
static double parabola_root(double g0, double r, double g1)
{
    double a = g1 - g0 - r;
    if (fabs(a) < 1e-12 * (fabs(g0) + fabs(r))) return g0 / (g0 - g1);
    /* the smaller positive root of a τ² + r τ + g0, in the form that does not cancel */
    double d = r * r - 4 * a * g0;
    if (d < 0) d = 0;
    double qq = -0.5 * (r + copysign(sqrt(d), r));
    double t1 = qq / a, t2 = qq != 0 ? g0 / qq : INFINITY, t = 1;
    if (t1 > 0 && t1 < t) t = t1;
    if (t2 > 0 && t2 < t) t = t2;
    return t;
}

/* The fraction of the sub-step at which the first contact free at its start reached the surface,
 * from the gaps at both ends; 1 when none penetrates at the end. When one did, and a contact
 * active at the start had left the surface before it, the fraction at which that one left:
 * events are taken in their order. Why: a foot whose last touching corner leaves and whose
 * other corner lands within one step was never seen in the air, where the reference sees it hop
 * (Romeo's walk with the stiffness doubled, at 5 ms: a 4.8 ms hop of the left sole at 1.68 s). */
static double first_event(expo *e, mbs_system *s, double h)
{
    mbs_forward_kinematics(s->model, s->data, s->q, NULL, NULL);
    double f = 1;
    for (int i = 0; i < s->ncontacts; i++) {
        double g, n[3], pt[3], ctr[3];
        if (!(e->gap0[i] > 0) || e->gap0[i] == INFINITY) continue;
        if (!mbsi_contact_gap(s, &s->contacts[i], &g, n, pt, ctr, NULL) || !(g < 0)) continue;
        double fi = parabola_root(e->gap0[i], e->rate0[i] * h, g);
        if (fi < f) f = fi;
    }
    if (f < 1)
        for (int i = 0; i < s->ncontacts; i++) {
            double g = INFINITY, n[3], pt[3], ctr[3];
            if (!(e->gap0[i] <= 0)) continue;
            mbsi_contact_gap(s, &s->contacts[i], &g, n, pt, ctr, NULL);
            if (!(g > 0)) continue;
            double fi = parabola_root(-e->gap0[i], -e->rate0[i] * h, -g);
            if (fi < f) f = fi;
        }
    return f;
}

/* One step, the stages 1-5 of the comment at the top of this file, split at touch-downs. */
static int step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    mbs_system *s = st->sys;
    expo *e = st->impl;
    double left = dt, piece = dt;   /* the sub-step length after a touch-down (comment above SPLITS) */
    int exponentials = 0, touches = 0;
    double t_sub = s->t;   /* the sub-step's start; the system's clock moves only when the step ends */
    e->last_subs = 0;
    for (int sub = 0; left > 0; sub++) {
        int na = gather_active(e, s);
        e->last_subs++;
        /* the contacts between sub-steps count too: a point that left at the end of the last step
         * and lands again inside this one was free at this step's start */
        if (s->substep) s->substep(s->substep_user, s, t_sub);
        double h = left <= piece * (1 + 1e-9) ? left : piece;
        int check = e->split && touches < SPLITS && na < s->ncontacts && free_gaps(e, s, h) > 0;
        if (check) {
            memcpy(e->q0, s->q, (size_t)s->nq * sizeof(double));
            memcpy(e->v0, s->v, (size_t)s->nv * sizeof(double));
            memcpy(e->c0, s->contacts, (size_t)s->ncontacts * sizeof(mbs_contact));
        }
        if (exponential_step(st, na, h, &exponentials) != MBS_OK) return MBS_ERR_MODEL;
        if (check) {
            double f = first_event(e, s, h), hs = f * h + SPLIT_OVERSHOOT * dt;
            if (hs < h) {
                /* again from the start of the sub-step, up to just past the touch-down */
                memcpy(s->q, e->q0, (size_t)s->nq * sizeof(double));
                memcpy(s->v, e->v0, (size_t)s->nv * sizeof(double));
                memcpy(s->contacts, e->c0, (size_t)s->ncontacts * sizeof(mbs_contact));
                h = hs;
                if (exponential_step(st, na, h, &exponentials) != MBS_OK) return MBS_ERR_MODEL;
                touches++;
                /* the rest of the step in equal pieces of at most dt / landing_substeps */
                double rest = left - h;
                if (rest > 0) {
                    /* at least one piece: a rest of a few roundings would make the count 0 (or −0) */
                    double pieces = ceil(rest * e->landing_substeps / dt - 1e-9);
                    piece = rest / (pieces < 1 ? 1 : pieces);
                }
            }
        }
        t_sub += h;
        left = h < left ? left - h : 0;
        if (sub == 0 && left == 0) break;
        /* a split step reports each contact's force averaged over the whole step, as an unsplit
         * one does: the last sub-step alone may be a sliver whose average is a landing's damper
         * force (300 N for a trotting foot where the step's average is 60) */
        for (int i = 0; i < s->ncontacts; i++)
            for (int k = 0; k < 3; k++)
                e->impulse[3 * i + k] = (sub ? e->impulse[3 * i + k] : 0) + h * s->contacts[i].lambda[k];
        if (left == 0)
            for (int i = 0; i < s->ncontacts; i++)
                for (int k = 0; k < 3; k++) s->contacts[i].lambda[k] = e->impulse[3 * i + k] / dt;
    }
    if (stats) stats->iterations = exponentials;
    return MBS_OK;
}

/* Checkpoints: the closed form's warm start (the previous step's eigenvectors), so that a resumed
 * run decomposes as the uninterrupted one did, to the bit; everything else is scratch. */
static void state(mbs_stepper *st, mbsi_state *s)
{
    expo *e = st->impl;
    mbsi_modal_state(&e->modal, s);
}

/* 1 when the averages λ̄ and λ̄₂ of the na active contacts (3 each in lb, lb2) push and lie inside
 * their cones: the first pass stands (classify would change nothing) and no cone trims a force. */
static int inside_cones(const mbs_system *s, const int *act, int na, const double *lb, const double *lb2)
{
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[act[a]];
        const double mu = mbsi_contact_material(s, c)->mu, *n = c->normal;
        for (int k = 0; k < 2; k++) {
            const double *l = (k ? lb2 : lb) + 3 * a;
            double ln = l[0] * n[0] + l[1] * n[1] + l[2] * n[2], t2 = 0;
            for (int r = 0; r < 3; r++) t2 += (l[r] - ln * n[r]) * (l[r] - ln * n[r]);
            if (!(ln > 0) || !(sqrt(t2) <= mu * ln)) return 0;
        }
    }
    return 1;
}

/* The analytical Jacobians of a step that takes the closed form in one piece (expo_derivatives.c);
 * differences (through the registry: forward or central, as the call asks) for any other: a
 * touch-down split, a second pass, a
 * force trimmed to its cone, Padé. Whether the step splits is known only by taking it, and only
 * when a free contact is near the surface; the passes and the cones are judged on the averages
 * the derivatives compute. The registry saved the state and puts it back. */
static int derivatives(mbs_stepper *st, double dt, double *A, double *B)
{
    mbs_system *s = st->sys;
    expo *e = st->impl;
    mbsi_derivatives_ws *dw = &st->dw;
    const size_t cb = (size_t)s->ncontacts * sizeof(mbs_contact);
    /* the anchors the step's gather places or moves, as functions of the state; the contacts as
     * that update leaves them (dw->contacts2) */
    mbsi_step_anchor_derivatives(st, s->q, s->v);
    int na = collect_active(e, s);
    double beta = na > 0 ? proportional_beta(s, e->act, na) : 0;
    int modal = beta >= 0 && e->method != METHOD_PADE && (e->method == METHOD_MODAL || e->max_mat_mult == MBS_EXPM_FULL);
    if (na > 0 && !modal) return MBSI_DERIVATIVES_FALLBACK;
    int kinematics = 1;   /* the anchors' update left the kinematics at (q, v) in s->data */
    if (e->split && na < s->ncontacts && free_gaps(e, s, dt) > 0) {
        /* a free point near the surface: the step says whether it lands inside it */
        memcpy(s->contacts, dw->contacts, cb);
        mbs_step_stats stats;
        memset(&stats, 0, sizeof stats);
        int rc = step(st, dt, &stats);
        if (rc != MBS_OK) return rc;
        if (e->last_subs != 1) return MBSI_DERIVATIVES_FALLBACK;
        memcpy(s->q, dw->q0, (size_t)s->nq * sizeof(double));
        memcpy(s->v, dw->v0, (size_t)s->nv * sizeof(double));
        memcpy(s->contacts, dw->contacts2, cb);
        na = collect_active(e, s);
        kinematics = 0;
    }
    int rc = mbsi_expo_derivatives(&e->dws, st, dt, e->act, na, e->linearise == AT_MIDPOINT, beta, kinematics, A, B);
    if (rc != MBS_OK) return rc;
    return inside_cones(s, e->act, na, e->dws.lb, e->dws.lb2) ? MBS_OK : MBSI_DERIVATIVES_FALLBACK;
}

const mbs_stepper_type mbsi_stepper_expo = {
    {"expo", "exponential integrator (Hammoud et al. 2022): stiff viscoelastic contacts at 5-40 ms steps",
     &(const mbs_option_table){"expo", expo_spec, (int)(sizeof expo_spec / sizeof *expo_spec), NULL, 0, sizeof(expo_options)}},
    init, step, fini, 0, 0, state, derivatives,
};
