/* bench_dynamics.c — median µs per call of the Featherstone layer on Solo, Romeo, Robosimian
 * and on chains and binary trees of 10 to 200 bodies. Same protocol as the Pinocchio figures in
 * tests/data/reference/peer_timings.md: batches of 100 calls over 100 random states, the
 * median over batches (the robots' batches taken in rounds over every robot and algorithm,
 * robots_table). Ends with `key: value` lines, among them our speed-up over Pinocchio 3.7:
 * our figures are live (this run), Pinocchio's are recorded (read from peer_timings.md, which says
 * on which machine; its main table is undated, its same-minute table is of 2026-11-23), so each
 * speed-up is a live figure over a recorded one, and the output says so beside it. Writes
 * robots.dat, chains.dat and trees.dat into --data DIR and, when gnuplot is installed, docs/images/dynamics.png
 * (tools/bench/plot_dynamics.gp). A full run (not --quick) also writes the tables of docs/benchmarks.md
 * into <data>/tables.md (tools/bench/bench_doc.h), which tools/bench/bench_doc.py puts into the document
 * (make bench-dynamics).
 *   bench_dynamics [--quick] [--data DIR] [--images DIR] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mbs.h"
#include "bench_tool.h"
#include "bench_doc.h"

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

#define NSTATES 100
#define NBATCH 300

typedef struct bench {
    const mbs_model *m;
    mbs_data *d;
    int nq, nv;
    double *q, *v, *a, *tau;      /* NSTATES states */
    double *out, *M, *D1, *D2, *D3;
} bench;

enum { FK, JAC, RNEA, CRBA, ABA, ABI, MINV, LTDL, RNEA_D, ABA_D, INTEGRATE, DIFFERENCE, NALG };
static const char *alg_names[NALG] = {"fk", "jacobians", "rnea", "crba", "aba", "abi", "minverse", "ltdl",
                                      "rnea_derivatives", "aba_derivatives", "integrate", "difference"};

static void call(bench *b, int alg, int s)
{
    const double *q = b->q + (size_t)b->nq * s, *v = b->v + (size_t)b->nv * s;
    const double *a = b->a + (size_t)b->nv * s, *tau = b->tau + (size_t)b->nv * s;
    switch (alg) {
    case FK: mbs_forward_kinematics(b->m, b->d, q, v, a); break;
    case JAC: mbs_compute_joint_jacobians(b->m, b->d, q); break;
    case RNEA: mbs_rnea(b->m, b->d, q, v, a, b->out); break;
    case CRBA: mbs_crba(b->m, b->d, q, b->M); break;
    case ABA: mbs_aba(b->m, b->d, q, v, tau, b->out); break;
    case ABI: mbs_abi(b->m, b->d, q, tau, b->out); break;
    case MINV: mbs_minverse(b->m, b->d, q, b->D3); break;
    case LTDL: /* factor the M of the previous CRBA call and solve one right-hand side */
        mbs_ltdl(b->m, b->d, b->M);
        memcpy(b->out, tau, sizeof(double) * (size_t)b->nv);
        mbs_ltdl_solve(b->m, b->d, b->out, 1, b->nv);
        break;
    case RNEA_D: mbs_rnea_derivatives(b->m, b->d, q, v, a, b->D1, b->D2, b->D3); break;
    case ABA_D: mbs_aba_derivatives(b->m, b->d, q, v, tau, b->out, b->D1, b->D2, b->D3); break;
    case INTEGRATE: mbs_integrate(b->m, q, v, b->D1); break;
    case DIFFERENCE: mbs_difference(b->m, q, b->q + (size_t)b->nq * ((s + 1) % NSTATES), b->out); break;
    }
}

/* One batch: µs per call over the NSTATES states. */
static double batch_us(bench *b, int alg)
{
    if (alg == LTDL) mbs_crba(b->m, b->d, b->q, b->M);
    double t0 = tool_now();
    for (int s = 0; s < NSTATES; s++) call(b, alg, s);
    return (tool_now() - t0) / NSTATES * 1e6;
}

static double median_of(double *t, int n)
{
    qsort(t, (size_t)n, sizeof(double), tool_cmp_double);
    return t[n / 2];
}

static double median_us(bench *b, int alg, int nbatch)
{
    double *t = malloc(sizeof(double) * (size_t)nbatch);
    batch_us(b, alg);    /* warm-up */
    for (int k = 0; k < nbatch; k++) t[k] = batch_us(b, alg);
    double med = median_of(t, nbatch);
    free(t);
    return med;
}

/* The robots' table: the batches of every (robot, algorithm) pair taken in ROUNDS rounds of
 * consecutive batches of each pair, after one untimed batch that brings its data back into the
 * caches, so that a stretch of time in which the machine is slower (a busy neighbour on a
 * shared host, a clock that drops under sustained load) falls on every pair alike rather than on
 * one robot's column; the median over each pair's batches then leaves it out as long as it lasts
 * less than half the run. Within a round the batches follow each other as in Pinocchio's
 * protocol (without the untimed batch, the smallest algorithms paid for data that the larger
 * ones had evicted: difference on Robosimian about half as slow again). */
enum { ROUNDS = 30 };
static void robots_table(bench *b, int nrobots, int nbatch, double res[][NALG])
{
    double *t = malloc(sizeof(double) * (size_t)nbatch * (size_t)nrobots * NALG);
    const int per_round = (nbatch + ROUNDS - 1) / ROUNDS;
    for (int k0 = 0; k0 < nbatch; k0 += per_round) {
        int k1 = k0 + per_round < nbatch ? k0 + per_round : nbatch;
        for (int r = 0; r < nrobots; r++)
            for (int alg = 0; alg < NALG; alg++) {
                batch_us(&b[r], alg);
                for (int k = k0; k < k1; k++) t[((size_t)r * NALG + alg) * (size_t)nbatch + k] = batch_us(&b[r], alg);
            }
    }
    for (int r = 0; r < nrobots; r++)
        for (int alg = 0; alg < NALG; alg++) res[r][alg] = median_of(t + ((size_t)r * NALG + alg) * (size_t)nbatch, nbatch);
    free(t);
}

static void setup(bench *b, const mbs_model *m)
{
    b->m = m;
    b->d = mbs_data_new(m);
    b->nq = mbs_model_nq(m);
    b->nv = mbs_model_nv(m);
    size_t nq = (size_t)b->nq, nv = (size_t)b->nv;
    b->q = malloc(sizeof(double) * nq * NSTATES);
    b->v = malloc(sizeof(double) * nv * NSTATES);
    b->a = malloc(sizeof(double) * nv * NSTATES);
    b->tau = malloc(sizeof(double) * nv * NSTATES);
    b->out = malloc(sizeof(double) * (nq + nv));
    b->M = malloc(sizeof(double) * nv * nv);
    b->D1 = malloc(sizeof(double) * (nv * nv + nq));
    b->D2 = malloc(sizeof(double) * nv * nv);
    b->D3 = malloc(sizeof(double) * nv * nv);
    unsigned long long seed = 12345;
    for (int s = 0; s < NSTATES; s++) {
        mbs_random_configuration(m, &seed, b->q + nq * (size_t)s);
        for (size_t k = 0; k < nv; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            b->v[nv * (size_t)s + k] = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            b->a[nv * (size_t)s + k] = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            b->tau[nv * (size_t)s + k] = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
        }
    }
}

/* What peer_timings.md records of Pinocchio 3.7: (A) the main table, µs per call at -O3
 * -march=native (its Solo, Romeo, Robosimian columns are the table's 1st, 3rd and 5th), undated in
 * the file; (B) the same-minute re-measurement (a dated section, columns 1 to 3, fewer algorithms);
 * NAN where a table has no row for an algorithm or the file is absent. Rows are matched by the
 * first word of their label. The machine is the file's opening sentence ("Measured on ..."), the
 * date of (B) the end of its section title. */
typedef struct peer {
    double a[3][NALG], b[3][NALG];
    char machine[512], date_b[64];
} peer;

static void read_pinocchio(const char *path, peer *p)
{
    static const struct { const char *label; int alg; } rows[] = {
        {"forwardKinematics", FK}, {"computeJointJacobians", JAC}, {"rnea", RNEA}, {"crba", CRBA},
        {"aba", ABA}, {"computeMinverse", MINV}, {"computeRNEADerivatives", RNEA_D}, {"computeABADerivatives", ABA_D},
        {"integrate", INTEGRATE}, {"difference", DIFFERENCE}};
    for (int r = 0; r < 3; r++)
        for (int a = 0; a < NALG; a++) p->a[r][a] = p->b[r][a] = NAN;
    snprintf(p->machine, sizeof p->machine, "(not given)");
    snprintf(p->date_b, sizeof p->date_b, "(undated)");
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[1024];
    int table = 0;   /* 1: (A), 2: (B) */
    int in_machine = 0;
    size_t ml = 0;
    while (fgets(line, sizeof line, f)) {
        /* the machine: the sentence that starts "Measured on", up to its full stop */
        if (!ml && strncmp(line, "Measured on", 11) == 0) in_machine = 1;
        if (in_machine) {
            line[strcspn(line, "\n")] = 0;
            char *stop = strstr(line, ". ");
            if (!stop && line[0] && line[strlen(line) - 1] == '.') stop = line + strlen(line) - 1;
            if (stop) *stop = 0;
            int k = snprintf(p->machine + ml, sizeof p->machine - ml, "%s%s", ml ? " " : "", line + (ml ? 0 : 12));
            if (k > 0 && ml + (size_t)k < sizeof p->machine) ml += (size_t)k;
            if (stop || !line[0]) in_machine = 0;
            continue;
        }
        if (strncmp(line, "## ", 3) == 0) {
            table = strstr(line, "Same-minute") ? 2 : strstr(line, "Pinocchio") ? 1 : 0;
            if (table == 2) {
                const char *c = strrchr(line, ',');
                if (c) {
                    snprintf(p->date_b, sizeof p->date_b, "%s", c + 1 + (c[1] == ' '));
                    p->date_b[strcspn(p->date_b, "\n")] = 0;
                }
            }
        }
        if (!table || line[0] != '|') continue;
        char label[128];
        if (sscanf(line, "| %127s", label) != 1) continue;
        for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
            if (strcmp(label, rows[k].label) != 0) continue;
            const char *c = line + 1;
            for (int col = 1; col <= 5 && (c = strchr(c, '|')); col++) {
                c++;
                if (table == 1 && col % 2 == 1) p->a[col / 2][rows[k].alg] = strtod(c, NULL);
                if (table == 2 && col <= 3) p->b[col - 1][rows[k].alg] = strtod(c, NULL);
            }
        }
    }
    fclose(f);
}

static void teardown(bench *b)
{
    free(b->q); free(b->v); free(b->a); free(b->tau); free(b->out); free(b->M);
    free(b->D1); free(b->D2); free(b->D3);
    mbs_data_free(b->d);
}

/* Every algorithm on mbs_model_chain's models of sizes[] links with the given branching (1: a
 * chain, 2: a binary tree), fixed base: printed, into out, and as the block `name` of the tables.
 * The derivatives, which fill nv x nv matrices, are left out (-1) above 100 bodies. */
static void series(bench_doc *doc, const char *name, const char *title, int branching, const int *sizes, int ns, int nbatch,
                   double out[][NALG])
{
    mbs_chain_options o = {0.1, 1.0, 0, 1, NULL, 0, 0, branching};
    printf("\n# %s: us per call\n%-18s", title, "bodies");
    for (int s = 0; s < ns; s++) printf(" %8d", sizes[s]);
    printf("\n");
    for (int s = 0; s < ns; s++) {
        mbs_model *m = mbs_model_chain(sizes[s], &o, NULL);
        bench b;
        setup(&b, m);
        for (int alg = 0; alg < NALG; alg++)
            out[s][alg] = (alg == RNEA_D || alg == ABA_D || alg == MINV) && sizes[s] > 100 ? -1
                                                                                    : median_us(&b, alg, nbatch / 3 + 1);
        teardown(&b);
        mbs_model_free(m);
    }
    bench_doc_begin(doc, name);
    bench_doc_printf(doc, "```\n# %s: us per call (-1: not run)\n%-18s", title, "bodies");
    for (int s = 0; s < ns; s++) bench_doc_printf(doc, " %8d", sizes[s]);
    bench_doc_printf(doc, "\n");
    for (int alg = 0; alg < NALG; alg++) {
        printf("%-18s", alg_names[alg]);
        bench_doc_printf(doc, "%-18s", alg_names[alg]);
        for (int s = 0; s < ns; s++) {
            printf(" %8.3f", out[s][alg]);
            bench_doc_printf(doc, " %8.3f", out[s][alg]);
        }
        printf("\n");
        bench_doc_printf(doc, "\n");
    }
    bench_doc_printf(doc, "```\n");
    bench_doc_end(doc, name);
}

/* The least-squares slope of log(time) against log(bodies) of one algorithm's series. */
static double growth_exponent(const int *sizes, int ns, double t[][NALG], int alg)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int s = 0; s < ns; s++) {
        double x = log((double)sizes[s]), y = log(t[s][alg]);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    return (ns * sxy - sx * sy) / (ns * sxx - sx * sx);
}

/* Median milliseconds to load a model (a file, or an MJCF string when xml is given), over n loads. */
static double load_ms(const char *path, const char *xml, int n)
{
    double t[64];
    n = n > 64 ? 64 : n;
    for (int i = 0; i < n; i++) {
        mbs_error err;
        double t0 = tool_now();
        mbs_model *m = xml ? mbs_model_from_mjcf_string(xml, "chain30.xml", NULL, &err)
                     : path && strstr(path, ".urdf") ? mbs_model_from_urdf(path, NULL, &err) : mbs_model_from_mjcf(path, NULL, &err);
        t[i] = 1e3 * (tool_now() - t0);
        mbs_model_free(m);
        mbs_error_free(&err);
        if (!m) return NAN;
    }
    qsort(t, (size_t)n, sizeof t[0], tool_cmp_double);
    return t[n / 2];
}

/* Loading times: the URDF robots, a generated MJCF chain of 30 bodies (each a hinge, a capsule
 * whose inertia the loader computes, a site, a default class) and the Menagerie robots of
 * ../shared/reference/mjcf when present. key: value lines (issue 41's goal: <= 5 ms for 30 bodies). */
static void loading(const char *const *robots, int nrobots)
{
    enum { N = 31 };
    char *xml = malloc(1 << 16);
    if (!xml) return;
    size_t len = (size_t)snprintf(xml, 1 << 16, "<mujoco model='chain30'><compiler autolimits='true'/><default><default class='link'>"
                                  "<joint axis='0 1 0' range='-90 90' damping='0.1' armature='0.01'/>"
                                  "<geom type='capsule' size='0.02 0.05'/></default></default><worldbody>");
    for (int i = 0; i < 30; i++)
        len += (size_t)snprintf(xml + len, (1 << 16) - len, "<body name='b%d' pos='0 0 -0.1' childclass='link'>"
                                "<joint name='j%d'/><geom pos='0 0 -0.05'/><site name='s%d' pos='0 0 -0.1'/>", i, i, i);
    for (int i = 0; i < 30; i++) len += (size_t)snprintf(xml + len, (1 << 16) - len, "</body>");
    snprintf(xml + len, (1 << 16) - len, "</worldbody></mujoco>");
    printf("\n# model loading, median ms over %d loads\n", N);
    for (int r = 0; r < nrobots; r++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/urdf/%s.urdf", MBS_SOURCE_DIR, robots[r]);
        printf("load_ms_urdf_%s: %.3f\n", robots[r], load_ms(path, NULL, N));
    }
    printf("load_ms_mjcf_chain30: %.3f\n", load_ms(NULL, xml, N));
    free(xml);
    static const char *const menagerie[] = {"go2", "anymal_c", "h1", "panda"};
    for (int r = 0; r < 4; r++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/../shared/reference/mjcf/%s_nomesh.xml", MBS_SOURCE_DIR, menagerie[r]);
        FILE *f = fopen(path, "rb");
        if (!f) {
            printf("# skipped: ../shared/reference not found\n");
            break;
        }
        fclose(f);
        printf("load_ms_mjcf_%s: %.3f\n", menagerie[r], load_ms(path, NULL, N));
    }
}

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args args;
    int status = tool_parse_args(argc, argv, "bench_dynamics", MBS_SOURCE_DIR, NULL, &args);
    if (status) return status;
    int quick = args.quick;
    const char *data = args.data, *images = args.images;
    bench_doc doc;
    bench_doc_open(&doc, data, "make bench-dynamics", !quick);
    int nbatch = quick ? 30 : NBATCH;
    static const char *robots[3] = {"solo12", "romeo", "robosimian"};
    double res[3][NALG];
    printf("# bench_dynamics: run %s; %s\n", doc.stamp, doc.machine);
    printf("# median microseconds per call, %d batches of %d calls over random states, in %d rounds over every\n"
           "# (robot, algorithm)\n", nbatch, NSTATES, ROUNDS);
    printf("%-12s", "algorithm");
    for (int r = 0; r < 3; r++) printf(" %12s", robots[r]);
    printf("\n");
    mbs_model *models[3];
    bench robot_bench[3];
    for (int r = 0; r < 3; r++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/urdf/%s.urdf", MBS_SOURCE_DIR, robots[r]);
        mbs_error err;
        models[r] = mbs_model_from_urdf(path, NULL, &err);
        if (!models[r]) { fprintf(stderr, "bench_dynamics: %s\n", err.msg); return 1; }
        setup(&robot_bench[r], models[r]);
    }
    robots_table(robot_bench, 3, nbatch, res);
    for (int r = 0; r < 3; r++) teardown(&robot_bench[r]);
    bench_doc_begin(&doc, "dynamics-robots");
    bench_doc_printf(&doc, "```\n# median microseconds per call, %d batches of %d calls over random states, in %d rounds over\n"
                     "# every (robot, algorithm)\n%-18s", nbatch, NSTATES, ROUNDS,
                     "algorithm");
    for (int r = 0; r < 3; r++) bench_doc_printf(&doc, " %12s", robots[r]);
    bench_doc_printf(&doc, "\n");
    for (int alg = 0; alg < NALG; alg++) {
        printf("%-18s", alg_names[alg]);
        bench_doc_printf(&doc, "%-18s", alg_names[alg]);
        for (int r = 0; r < 3; r++) {
            printf(" %8.3f", res[r][alg]);
            bench_doc_printf(&doc, " %12.3f", res[r][alg]);
        }
        printf("\n");
        bench_doc_printf(&doc, "\n");
    }
    bench_doc_printf(&doc, "```\n");
    bench_doc_end(&doc, "dynamics-robots");
    static const int sizes[] = {10, 20, 50, 100, 200};
    enum { NS = sizeof sizes / sizeof *sizes };
    double ch[NS][NALG], tr[NS][NALG];
    series(&doc, "dynamics-chains", "chains (revolute, alternating y/x axes)", 1, sizes, NS, nbatch, ch);
    series(&doc, "dynamics-trees", "binary trees (revolute, link k on link (k-1)/2, depth-first numbering)", 2, sizes, NS,
           nbatch, tr);

    /* Pinocchio: recorded figures; ours: live. The speed-up divides one by the other. */
    peer pin;
    read_pinocchio(MBS_SOURCE_DIR "/tests/data/reference/peer_timings.md", &pin);
    printf("\n# speed-up over Pinocchio 3.7.0 = Pinocchio's us / ours. Ours: LIVE, this run (%s, %s).\n"
           "# Pinocchio's: RECORDED in tests/data/reference/peer_timings.md (not measured by this program), on %s:\n"
           "#   A: its main table, -O3 -march=native, median of 1000 batches of 100 calls; undated in the file\n"
           "#   B: its same-minute re-measurement of %s, same flags, median of 300 batches of 100 calls (rnea, crba, aba,\n"
           "#      ABA derivatives only)\n"
           "# so every ratio below is a live figure over a recorded one, not two figures of the same minute\n",
           doc.stamp, doc.machine, pin.machine, pin.date_b);
    char why[160];
    int other_machine = bench_doc_peer_mismatch(why, sizeof why);
    if (other_machine)
        printf("# THIS MACHINE IS NOT THE RECORDS' (%s): the ratios compare machines as much as code\n", why);
    printf("%-18s", "algorithm");
    for (int r = 0; r < 3; r++) printf(" %26s", robots[r]);
    printf("\n%-18s", "");
    for (int r = 0; r < 3; r++) printf(" %8s %8s %8s", "ours", "vs A", "vs B");
    printf("\n");
    FILE *fr = tool_open_data("bench_dynamics", data, "robots.dat");
    if (fr) fprintf(fr, "# algorithm (those Pinocchio was timed on), then per robot (solo12 romeo robosimian): ours_us pinocchio_us "
                        "(ours live, Pinocchio's recorded: peer_timings.md's main table)\n");
    bench_doc_begin(&doc, "dynamics-pinocchio");
    bench_doc_printf(&doc, "| algorithm | Solo-12 (nv 18) | Romeo (nv 37) | Robosimian (nv 38) |\n|---|---|---|---|\n");
    int below2 = 0, ncmp = 0;
    double worst = INFINITY;
    const char *worst_alg = "", *worst_robot = "";
    for (int alg = 0; alg < NALG; alg++) {
        if (isnan(pin.a[0][alg])) continue;
        if (fr) {
            fprintf(fr, "%s", alg_names[alg]);
            for (int r = 0; r < 3; r++) fprintf(fr, " %.4f %.4f", res[r][alg], pin.a[r][alg]);
            fprintf(fr, "\n");
        }
        printf("%-18s", alg_names[alg]);
        bench_doc_printf(&doc, "| %s |", alg_names[alg]);
        for (int r = 0; r < 3; r++) {
            double ra = pin.a[r][alg] / res[r][alg], rb = pin.b[r][alg] / res[r][alg];
            printf(" %8.3f %7.2fx", res[r][alg], ra);
            if (isnan(rb)) printf(" %8s", "-");
            else printf(" %7.2fx", rb);
            bench_doc_printf(&doc, " %.3g / %.2f (**%.2f×**)", res[r][alg], pin.a[r][alg], ra);
            if (!isnan(rb)) bench_doc_printf(&doc, "; B %.2f (%.2f×)", pin.b[r][alg], rb);
            bench_doc_printf(&doc, " |");
            double lo = isnan(rb) ? ra : fmin(ra, rb);
            ncmp++;
            below2 += lo < 2;
            if (lo < worst) { worst = lo; worst_alg = alg_names[alg]; worst_robot = robots[r]; }
        }
        printf("\n");
        bench_doc_printf(&doc, "\n");
    }
    if (fr) fclose(fr);
    char tail[320] = "";
    if (other_machine)
        snprintf(tail, sizeof tail, " **This run's machine is not the records'** (%s): the ratios compare machines as much as code.",
                 why);
    bench_doc_printf(&doc, "\nEach cell: ours (live, this run) / Pinocchio's recorded µs per call (table A of `peer_timings.md`: "
                           "undated, median of 1000 batches) and the speed-up; \"B\": Pinocchio's same-minute re-measurement of %s "
                           "(median of 300 batches) and the speed-up over it. Pinocchio's figures were measured on %s; ours on the "
                           "machine named below. Every ratio divides a recorded figure by a live one. Against issue 17's goal of "
                           "2× on every algorithm and robot: %d of %d pairs (algorithm, robot) reach 2× against every record (A, and B "
                           "where it has the algorithm); the lowest is %s on %s, %.2f×.%s\n", pin.date_b, pin.machine, ncmp - below2, ncmp,
                     worst_alg, worst_robot, worst, tail);
    bench_doc_end(&doc, "dynamics-pinocchio");
    printf("# issue 17's goal, 2x Pinocchio on every algorithm and robot: %d of %d pairs at 2x or more against every record; "
           "lowest %s on %s, %.2fx\n", ncmp - below2, ncmp, worst_alg, worst_robot, worst);

    for (int t = 0; t < 2; t++) {
        FILE *fc = tool_open_data("bench_dynamics", data, t ? "trees.dat" : "chains.dat");
        if (!fc) continue;
        fprintf(fc, "# bodies");
        for (int alg = 0; alg < NALG; alg++) fprintf(fc, " %s", alg_names[alg]);
        fprintf(fc, "   (us per call; -1: not run)\n");
        for (int s = 0; s < NS; s++) {
            fprintf(fc, "%d", sizes[s]);
            for (int alg = 0; alg < NALG; alg++) fprintf(fc, " %.4f", (t ? tr : ch)[s][alg]);
            fprintf(fc, "\n");
        }
        fclose(fc);
    }
    tool_plot(MBS_SOURCE_DIR, "plot_dynamics.gp", data, images, "", "dynamics.png");
    printf("\n");
    for (int r = 0; r < 3; r++)
        for (int alg = 0; alg < NALG; alg++) printf("%s_%s_us: %.3f\n", robots[r], alg_names[alg], res[r][alg]);
    /* the speed-ups: ours live over Pinocchio's recorded figures (A: the main table; B: the same-minute table) */
    for (int r = 0; r < 3; r++)
        for (int alg = 0; alg < NALG; alg++) {
            if (!isnan(pin.a[r][alg]))
                printf("%s_%s_speedup_vs_pinocchio: %.2f\n", robots[r], alg_names[alg], pin.a[r][alg] / res[r][alg]);
            if (!isnan(pin.b[r][alg]))
                printf("%s_%s_speedup_vs_pinocchio_same_minute_record: %.2f\n", robots[r], alg_names[alg], pin.b[r][alg] / res[r][alg]);
        }
    for (int s = 0; s < NS; s++) {
        printf("chain%d_rnea_us: %.3f\n", sizes[s], ch[s][RNEA]);
        printf("chain%d_aba_us: %.3f\n", sizes[s], ch[s][ABA]);
        printf("chain%d_abi_us: %.3f\n", sizes[s], ch[s][ABI]);
    }
    for (int s = 0; s < NS; s++) {
        printf("tree%d_crba_us: %.3f\n", sizes[s], tr[s][CRBA]);
        printf("tree%d_ltdl_us: %.3f\n", sizes[s], tr[s][LTDL]);
    }
    /* growth exponents: fk, rnea, aba and abi are linear on both; CRBA and LTDL grow with the
     * depth, n on a chain and ~log2 n on a binary tree */
    static const int grown[] = {FK, RNEA, ABA, ABI, CRBA, LTDL};
    bench_doc_begin(&doc, "dynamics-growth");
    bench_doc_printf(&doc, "```\n");
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 6; k++) {
            double g = growth_exponent(sizes, NS, t ? tr : ch, grown[k]);
            printf("%s_%s_growth_exponent: %.3f\n", t ? "tree" : "chain", alg_names[grown[k]], g);
            bench_doc_printf(&doc, "%s_%s_growth_exponent: %.3f\n", t ? "tree" : "chain", alg_names[grown[k]], g);
        }
    bench_doc_printf(&doc, "```\n");
    bench_doc_end(&doc, "dynamics-growth");
    bench_doc_close(&doc);
    loading(robots, 3);
    for (int r = 0; r < 3; r++) mbs_model_free(models[r]);
    return 0;
}
