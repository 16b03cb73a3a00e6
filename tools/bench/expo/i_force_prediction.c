/* i_force_prediction.c — part (i) of bench_expo, fig. 5 of Hammoud et al. 2022 (sec. 6.6): at the
 * start of solo_squat with initial base velocities 0 to −0.5 m/s, a foot's normal force from the
 * contact-space linear system (11) with A and b frozen at the start against a fine simulation. */
#include "expo.h"
#include "../../../src/dynamics/dynamics_internal.h"   /* mbsi_ltdl_solve_rows: the expo step's own solve */
#include "../../../src/step/expm.h"   /* the exponential of the frozen linear system */

/* The contact-space linear system (11) at the system's state, as one expo step takes it over the
 * whole step: the active contacts as src/step/expo.c's stage 1 finds them (mbs_contact_forces with
 * update, a just-released contact that still penetrates kept), then J, J̇v, Υ = J M⁻¹Jᵀ and
 * p̈_free = J M⁻¹(τ − h) + J̇v (stage 2) from the same library calls in the same order, and from
 * them A (eq. 11, each contact's K and B as 3x3 blocks in world axes), b = [ṗ0; p̈_free] (the
 * anchor's velocity in b, as expo.c integrates the force law) and x(0) = [p − p0; ṗ − ṗ0]. With
 * Z = [[A, b], [0, 0]], x(t) = [I 0] e^{tZ} [x(0); 1] (eq. 17) at any t from one exponential:
 * A and b frozen at the start, the assumption of sec. 6.6. */
typedef struct lds {
    int na, act[MAXPTS];
    int N;               /* 6 na + 1 */
    double *Z, *z0;      /* N x N (column-major), N */
    double *Kw, *Bw;     /* 9 per active contact */
    double *tZ, *x;      /* N x N, N: scratch of lds_force */
    mbs_expm_ws *ws;
} lds;

static void lds_build(mbs_system *s, lds *L)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    const double *q = s->q, *v = s->v;
    int nv = s->nv;
    memset(L, 0, sizeof *L);
    mbs_contact_forces(s, q, v, 1);
    for (int i = 0; i < s->ncontacts && L->na < MAXPTS; i++) {
        mbs_contact *c = &s->contacts[i];
        if (!c->active && mbsi_contact_penetrates(s, c)) mbsi_contact_activate(c);
        if (c->active) L->act[L->na++] = i;
    }
    int na = L->na, nc = 3 * na, n = 6 * na, N = n + 1, ld = nc + 1;
    L->N = N;
    double *M = xcalloc((size_t)nv * nv, sizeof(double)), *X = xcalloc((size_t)nv * ld, sizeof(double));
    double *Jc = xcalloc((size_t)(nc ? nc : 1) * nv, sizeof(double)), *J6 = xcalloc(6 * (size_t)nv, sizeof(double));
    double *h = xcalloc((size_t)nv, sizeof(double)), *zero = xcalloc((size_t)nv, sizeof(double));
    double *ups = xcalloc((size_t)nc * nc + 1, sizeof(double)), *pdd = xcalloc((size_t)nc + 1, sizeof(double));
    double *off = xcalloc((size_t)nc + 1, sizeof(double));
    L->Kw = xcalloc(9 * (size_t)na + 1, sizeof(double));
    L->Bw = xcalloc(9 * (size_t)na + 1, sizeof(double));
    /* J̇v: the classical acceleration of each touching point with q̈ = 0 */
    touching_points_drift(m, d, s, q, v, zero, L->act, na, off, pdd);
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[L->act[a]];
        world_gain(c->normal, mbsi_contact_material(s, c)->k_normal, mbsi_contact_material(s, c)->k_tangent, L->Kw + 9 * a);
        world_gain(c->normal, mbsi_contact_material(s, c)->b_normal, mbsi_contact_material(s, c)->b_tangent, L->Bw + 9 * a);
    }
    mbs_compute_joint_jacobians(m, d, q);
    for (int a = 0; a < na; a++) {
        mbs_frame_jacobian(m, d, s->contacts[L->act[a]].frame, off + 3 * a, MBS_LOCAL_WORLD_ALIGNED, J6, 6);
        for (int j = 0; j < nv; j++)
            for (int r = 0; r < 3; r++) X[(size_t)ld * j + 3 * a + r] = Jc[3 * a + r + (size_t)nc * j] = J6[r + 6 * j];
    }
    /* M⁻¹[Jᵀ, τ − h] through the LTDL factor, Υ = J M⁻¹Jᵀ (eq. 9), p̈_free (eq. 10) */
    mbs_crba(m, d, q, M);
    mbs_ltdl(m, d, M);
    mbs_nonlinear_effects(m, d, q, v, h);
    for (int j = 0; j < nv; j++) X[(size_t)ld * j + nc] = s->tau[j] - h[j];
    mbsi_ltdl_solve_rows(m, d, X, ld, 0);
    for (int j = 0; j < nv; j++) {
        const double *jk = Jc + (size_t)nc * j, *xk = X + (size_t)ld * j;
        for (int cc = 0; cc < nc; cc++) {
            double w = xk[cc], *u = ups + (size_t)nc * cc;
            for (int r = 0; r < nc; r++) u[r] += jk[r] * w;
        }
        for (int r = 0; r < nc; r++) pdd[r] += jk[r] * xk[nc];
    }
    /* Z = [[0, I, ṗ0], [−ΥK, −ΥB, p̈_free], [0, 0, 0]], z0 = [Δp; Δṗ; 1] */
    L->Z = xcalloc((size_t)N * N, sizeof(double));
    L->z0 = xcalloc((size_t)N, sizeof(double));
    L->tZ = xcalloc((size_t)N * N, sizeof(double));
    L->x = xcalloc((size_t)N, sizeof(double));
    double *Z = L->Z;
    for (int k = 0; k < nc; k++) Z[k + (size_t)N * (nc + k)] = 1;
    for (int b = 0; b < na; b++)
        for (int j = 0; j < 3; j++) {
            double *ck = Z + (size_t)N * (3 * b + j) + nc, *cb = Z + (size_t)N * (nc + 3 * b + j) + nc;
            for (int l = 0; l < 3; l++) {
                const double *u = ups + (size_t)nc * (3 * b + l);
                double kk = -L->Kw[9 * b + l + 3 * j], bk = -L->Bw[9 * b + l + 3 * j];
                for (int i = 0; i < nc; i++) { ck[i] += u[i] * kk; cb[i] += u[i] * bk; }
            }
        }
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[L->act[a]];
        for (int k = 0; k < 3; k++) {
            Z[3 * a + k + (size_t)N * n] = c->dp0[k];
            L->z0[3 * a + k] = c->p[k] - c->p0[k];
            L->z0[nc + 3 * a + k] = c->dp[k] - c->dp0[k];
        }
    }
    for (int r = 0; r < nc; r++) Z[nc + r + (size_t)N * n] = pdd[r];
    L->z0[n] = 1;
    L->ws = mbsi_expm_ws_new(N);
    free(M); free(X); free(Jc); free(J6); free(h); free(zero); free(ups); free(pdd); free(off);
}

static void lds_free(lds *L)
{
    free(L->Z); free(L->z0); free(L->Kw); free(L->Bw); free(L->tZ); free(L->x);
    mbsi_expm_ws_free(L->ws);
    memset(L, 0, sizeof *L);
}

/* The normal force (N) of every contact of s at time t of the frozen linear system:
 * λ = D x(t), D = [−K −B] (eq. 12), along the contact's normal; 0 for a contact that was not active
 * at the start (it is not in the system). */
static void lds_force(const lds *L, const mbs_system *s, double t, double *fn)
{
    int N = L->N, nc = 3 * L->na;
    for (int i = 0; i < s->ncontacts; i++) fn[i] = 0;
    if (L->na == 0) return;
    for (size_t k = 0; k < (size_t)N * N; k++) L->tZ[k] = t * L->Z[k];
    if (mbsi_expm_apply(L->ws, N, L->tZ, N, 1, L->z0, N, L->x, N, MBS_EXPM_FULL, 1, NULL) != 0) {
        fprintf(stderr, "bench_expo: the exponential of the linear system failed\n");
        exit(1);
    }
    for (int a = 0; a < L->na; a++) {
        const mbs_contact *c = &s->contacts[L->act[a]];
        const double *K = L->Kw + 9 * a, *B = L->Bw + 9 * a, *xp = L->x + 3 * a, *xv = L->x + nc + 3 * a;
        double f = 0;
        for (int i = 0; i < 3; i++) {
            double li = 0;
            for (int k = 0; k < 3; k++) li -= K[i + 3 * k] * xp[k] + B[i + 3 * k] * xv[k];
            f += li * c->normal[i];
        }
        fn[L->act[a]] = f;
    }
}

/* Fig. 5: at the start of solo_squat, with the base given an initial vertical velocity, the
 * normal force of each foot predicted over the horizon by the contact-space linear system (11)
 * with A and b frozen at the start (what one expo step of that length assumes), against a fine
 * simulation from the same state with the same torque (the controller's first, held for its 40 ms
 * period as the scenario holds it): explicit Euler at 1/4096 ms, whose force after each step is the
 * spring-damper's at the step's start (the instantaneous force), and explicit Euler at 1/1024 ms as
 * a check of that reference. Sampled every 1/64 ms (the jump at t = 0 decays within a millisecond,
 * between two samples 0.25 ms apart) over 40 ms; errors over the paper's 20 ms and over 40 ms. */
enum { FP_NV = 4, FP_NS = 2560, FP_N20 = 1280, FP_SUB_EULER = 64, FP_SUB_CHECK = 16 };
static const double FP_V0[FP_NV] = {0, -0.1, -0.3, -0.5};
static const double FP_DT = 1e-3 / 64;

void part_i(const char *data, int quick)
{
    (void)quick;   /* a few seconds: the same in a quick run */
    printf("\n## (i) force prediction of the frozen linear system (11) at the start of solo_squat (fig. 5)\n"
           "#   reference: explicit Euler at %.4g ms (instantaneous spring-damper force); check: explicit Euler at %.4g ms; "
           "samples every %.4g ms\n", FP_DT / FP_SUB_EULER * 1e3, FP_DT / FP_SUB_CHECK * 1e3, FP_DT * 1e3);
    printf("#   %-8s %4s %9s %9s %10s %10s %10s %11s %10s %10s %10s %12s\n", "v0_m/s", "na", "f0_FL_N", "peak_FL_N",
           "max_err_N", "max_err_%", "rms_err_%", "mean_err_%", "worst_%", "max40_%", "ref_chk_%", "err20/f(20)%");
    static double ref[FP_NV][FP_NS + 1][MAXPTS], pred[FP_NV][FP_NS + 1][MAXPTS], chk[FP_NV][FP_NS + 1][MAXPTS];
    double emax[FP_NV], erms[FP_NV], emean[FP_NV], eworst[FP_NV], emax40[FP_NV], echk[FP_NV], peak[FP_NV], f0[FP_NV];
    double eend[FP_NV];   /* the error at 20 ms relative to the reference's force there (the weight it carries) */
    int nas[FP_NV], nc = 0;
    char fname[MBS_NAME_LEN] = "";
    for (int iv = 0; iv < FP_NV; iv++) {
        ovl o = {0};
        ov_add(&o, "model.base_velocity=0 0 %.17g 0 0 0", FP_V0[iv]);
        /* the initial state and the controller's first torque (one 40 ms period, one expo step) */
        traj tr;
        mbs_scenario *sc0 = load("solo_squat", &o);
        double cdt = mbs_scenario_controller_dt(sc0);
        mbs_scenario_free(sc0);
        record("solo_squat", &o, "expo", cdt, cdt, &tr);
        rig re, rx, rp;
        rig_new(&re, "solo_squat", &o, "euler");
        rig_new(&rx, "solo_squat", &o, "euler");
        rig_new(&rp, "solo_squat", &o, "expo");
        nc = re.sys->ncontacts;
        if (nc > MAXPTS) nc = MAXPTS;
        snprintf(fname, sizeof fname, "%s", re.sys->contacts[0].name);
        restore(re.sys, &tr, 0);
        restore(rx.sys, &tr, 0);
        restore(rp.sys, &tr, 0);
        lds L;
        lds_build(rp.sys, &L);
        nas[iv] = L.na;
        double fn[MAXPTS];
        for (int k = 0; k <= FP_NS; k++) {
            lds_force(&L, rp.sys, k * FP_DT, fn);
            for (int i = 0; i < nc; i++) pred[iv][k][i] = fn[i];
            for (int j = 0; j < FP_SUB_EULER; j++) {
                mbs_stepper_step(re.st, FP_DT / FP_SUB_EULER, NULL);
                if (j == 0)
                    for (int i = 0; i < nc; i++) ref[iv][k][i] = contact_fn(&re.sys->contacts[i]);
            }
            for (int j = 0; j < FP_SUB_CHECK; j++) {
                mbs_stepper_step(rx.st, FP_DT / FP_SUB_CHECK, NULL);
                if (j == 0)
                    for (int i = 0; i < nc; i++) chk[iv][k][i] = contact_fn(&rx.sys->contacts[i]);
            }
        }
        lds_free(&L);
        rig_free(&re);
        rig_free(&rx);
        rig_free(&rp);
        traj_free(&tr);
        /* errors relative to the reference's peak, the first foot for the figure, every foot for the worst */
        eworst[iv] = 0;
        for (int i = 0; i < nc; i++) {
            double pk = 0, mx = 0, ss = 0, sr = 0, sp = 0, mx40 = 0, mc = 0;
            for (int k = 0; k <= FP_NS; k++) {
                double e = fabs(pred[iv][k][i] - ref[iv][k][i]);
                if (k <= FP_N20) {
                    if (fabs(ref[iv][k][i]) > pk) pk = fabs(ref[iv][k][i]);
                    if (e > mx) mx = e;
                    ss += e * e;
                    double w = k == 0 || k == FP_N20 ? 0.5 : 1;   /* trapezoid: the averages over 20 ms */
                    sr += w * ref[iv][k][i];
                    sp += w * pred[iv][k][i];
                    if (fabs(chk[iv][k][i] - ref[iv][k][i]) > mc) mc = fabs(chk[iv][k][i] - ref[iv][k][i]);
                }
                if (e > mx40) mx40 = e;
            }
            double rel = pk > 0 ? mx / pk : NAN;
            if (rel > eworst[iv]) eworst[iv] = rel;
            if (i == 0) {
                peak[iv] = pk;
                f0[iv] = ref[iv][0][0];
                emax[iv] = mx;
                erms[iv] = sqrt(ss / (FP_N20 + 1)) / pk;
                emean[iv] = fabs(sp - sr) / FP_N20 / pk;
                emax40[iv] = mx40 / pk;
                echk[iv] = mc / pk;
                eend[iv] = fabs(pred[iv][FP_N20][0] - ref[iv][FP_N20][0]) / fabs(ref[iv][FP_N20][0]);
            }
        }
        printf("#   %-8.3g %4d %9.2f %9.2f %10.3f %10.2f %10.2f %11.3f %10.2f %10.2f %10.3f %12.2f\n", FP_V0[iv], nas[iv],
               f0[iv], peak[iv], emax[iv], 100 * emax[iv] / peak[iv], 100 * erms[iv], 100 * emean[iv], 100 * eworst[iv],
               100 * emax40[iv], 100 * echk[iv], 100 * eend[iv]);
        fflush(stdout);
        char kv[16];
        snprintf(kv, sizeof kv, "%02ld", lround(-FP_V0[iv] * 10));
        key("expo_force_prediction_max_err_pct_v%s: %.3f\n", kv, 100 * emax[iv] / peak[iv]);
        key("expo_force_prediction_rms_err_pct_v%s: %.3f\n", kv, 100 * erms[iv]);
    }
    FILE *f = tool_open_data("bench_expo", data, "force_prediction.dat");
    if (f) {
        fprintf(f, "# t_ms  normal force of %s (N): reference (explicit Euler 1/4096 ms), predicted by (11) frozen at t = 0, "
                   "explicit Euler 1/1024 ms; one block per initial base velocity\n", fname);
        for (int iv = 0; iv < FP_NV; iv++) {
            fprintf(f, "%s\"v_z(0) = %g m/s\"\n", iv ? "\n\n" : "", FP_V0[iv]);
            for (int k = 0; k <= FP_NS; k++)
                fprintf(f, "%.4f %.6g %.6g %.6g\n", k * FP_DT * 1e3, ref[iv][k][0], pred[iv][k][0], chk[iv][k][0]);
        }
        fclose(f);
    }
    bench_doc_begin(&doc, "expo-prediction");
    bench_doc_printf(&doc, "| initial base velocity v_z (m/s) | active contacts | %s force at t = 0 (N) | peak over 20 ms (N) | "
                           "max error over 20 ms (N, %% of peak) | RMS error (%% of peak) | error of the 20 ms average (%% of peak) | "
                           "error at 20 ms (%% of the force there) | "
                           "worst foot, max error (%% of its peak) | max error over 40 ms (%% of peak) | reference check: "
                           "Euler 1/1024 ms vs 1/4096 ms, max difference (%% of peak) |\n|---|---|---|---|---|---|---|---|---|---|---|\n", fname);
    for (int iv = 0; iv < FP_NV; iv++)
        bench_doc_printf(&doc, "| %g | %d | %.1f | %.1f | %.2f (%.2f %%) | %.2f | %.3f | %.1f | %.2f | %.2f | %.3f |\n", FP_V0[iv],
                         nas[iv], f0[iv], peak[iv], emax[iv], 100 * emax[iv] / peak[iv], 100 * erms[iv], 100 * emean[iv],
                         100 * eend[iv], 100 * eworst[iv], 100 * emax40[iv], 100 * echk[iv]);
    bench_doc_end(&doc, "expo-prediction");
}
