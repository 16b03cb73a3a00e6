/* test_noalloc.c — after mbs_data_new, no algorithm of the library calls the allocator.
 * The test is linked with -Wl,--wrap for malloc, calloc, realloc and aligned_alloc, so every
 * call the library makes goes through the counters of alloc_count.h (this works under the
 * sanitizers too); each test starts with its ALLOC_GUARD, which fails without the wrap. */
#include <stdlib.h>

#include "check.h"
#include "testmodels.h"

#include "alloc_count.h"

static void exercise(mbs_model *m)
{
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    size_t n2 = (size_t)nv * nv;
    mbs_data *d = mbs_data_new(m);
    double *q = calloc((size_t)nq, 8), *q2 = calloc((size_t)nq, 8), *v = calloc((size_t)nv, 8);
    double *a = calloc((size_t)nv, 8), *out = calloc((size_t)nv + nq, 8), *M = calloc(n2, 8);
    double *D1 = calloc(n2, 8), *D2 = calloc(n2, 8), *D3 = calloc(n2, 8), *J = calloc(6 * (size_t)nv, 8);
    double *fext = calloc(6 * (size_t)mbs_model_nbodies(m), 8);
    unsigned long long seed = 3;
    tm_random_state(m, &seed, q, v, a, NULL);
    mbs_random_configuration(m, &seed, q2);
    double R[9], p[3], o6[6], c[3], vc[3];
    long before = allocations;
    mbs_forward_kinematics(m, d, q, v, a);
    mbs_compute_frame_placement(m, d, q, 0, R, p);
    mbs_frame_velocity(m, d, 0, NULL, MBS_LOCAL, o6);
    mbs_frame_classical_acceleration(m, d, 0, NULL, MBS_LOCAL, o6);
    mbs_compute_joint_jacobians(m, d, q);
    mbs_compute_frame_jacobian(m, d, q, 0, NULL, MBS_LOCAL_WORLD_ALIGNED, J, 6);
    mbs_frame_jdot_v(m, d, q, v, 0, NULL, MBS_LOCAL, o6);
    mbs_rnea(m, d, q, v, a, out);
    mbs_rnea_fext(m, d, q, v, a, fext, out);
    mbs_gravity(m, d, q, out);
    mbs_nonlinear_effects(m, d, q, v, out);
    mbs_crba(m, d, q, M);
    mbs_ltdl(m, d, M);
    mbs_ltdl_solve(m, d, out, 1, nv);
    mbs_aba(m, d, q, v, a, out);
    mbs_aba_fext(m, d, q, v, a, fext, out);
    mbs_abi_factor(m, d, q);
    mbs_abi_solve(m, d, M, nv, nv);
    mbs_abi(m, d, q, a, out);
    mbs_minverse(m, d, q, M);
    mbs_kinetic_energy(m, d, q, v);
    mbs_potential_energy(m, d, q);
    mbs_center_of_mass(m, d, q, v, c, vc);
    mbs_rnea_derivatives(m, d, q, v, a, D1, D2, D3);
    mbs_aba_derivatives(m, d, q, v, a, out, D1, D2, D3);
    mbs_integrate(m, q, v, q2);
    mbs_difference(m, q, q2, out);
    mbs_interpolate(m, q, q2, 0.3, q2);
    mbs_dintegrate(m, q, v, MBS_ARG0, D1);
    mbs_dintegrate(m, q, v, MBS_ARG1, D1);
    mbs_ddifference(m, q, q2, MBS_ARG0, D1);
    mbs_ddifference(m, q, q2, MBS_ARG1, D1);
    mbs_normalize(m, q2);
    CHECK(allocations == before, "%s: %ld allocations after mbs_data_new", mbs_model_name(m), allocations - before);
    free(q); free(q2); free(v); free(a); free(out); free(M); free(D1); free(D2); free(D3); free(J); free(fext);
    mbs_data_free(d);
}

static void test_robots(void)
{
    ALLOC_GUARD();
    static const char *files[] = {"urdf/solo12.urdf", "urdf/romeo.urdf", "urdf/robosimian.urdf"};
    for (int k = 0; k < 3; k++) {
        mbs_model *m = mbs_model_from_urdf(tm_path(files[k]), NULL, NULL);
        CHECK(m != NULL, "cannot load %s", files[k]);
        if (m) exercise(m);
        mbs_model_free(m);
    }
}

static void test_random_tree(void)
{
    ALLOC_GUARD();
    mbs_model *m = tm_random_tree(12, 1, 5);
    exercise(m);
    mbs_model_free(m);
}

/* Every registered stepper, on Solo standing on the ground with four foot contacts. */
static void test_steppers(void)
{
    ALLOC_GUARD();
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, NULL);
    CHECK(m != NULL, "cannot load solo12");
    if (!m) return;
    /* the registered steppers, then the variational one with each of its other root finders, nmdp
     * on position-based dynamics and nmdp with the contact-wise dissipation */
    static const char *variants[][3] = {{"variational", "solver", "newton"}, {"variational", "solver", "broyden"},
                                        {"variational", "solver", "tree_newton"}, {"nmdp", "dynamics", "pbd"},
                                        {"nmdp", "dissipation", "contact"}};
    const int nvi = (int)(sizeof variants / sizeof *variants);
    for (int k = 0; k < mbs_stepper_count() + nvi; k++) {
        int extra = k >= mbs_stepper_count();
        const char *const *var = extra ? variants[k - mbs_stepper_count()] : NULL;
        const char *name = extra ? var[0] : mbs_stepper_at(k)->name;
        mbs_option opt = tm_opt(extra ? var[1] : "solver", extra ? var[2] : "");
        mbs_error err;
        mbs_system *s = tm_solo_standing(m, -0.001, 1e5, 300, 1);   /* feet 1 mm into the ground */
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new(name, s, extra ? &opt : NULL, extra, &err);
        CHECK(st != NULL, "stepper %s %s: %s", name, opt.word ? opt.word : "", err.msg);
        if (!st) { mbs_system_free(s); continue; }
        mbs_stepper_step(st, 1e-3, NULL);   /* first step: lazy set-up is allowed */
        long before = allocations;
        for (int i = 0; i < 5; i++) mbs_stepper_step(st, 1e-3, NULL);
        CHECK(allocations == before, "stepper %s %s: %ld allocations in 5 steps", name, opt.word ? opt.word : "",
              allocations - before);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    mbs_model_free(m);
}

/* The workspace a stepper carves grows with the system's contact capacity: with the most contact
 * points a scenario takes (MBS_SIM_MAX_CONTACTS: a capsule of small radius is that many spheres)
 * every stepper, its derivatives' workspace included, is created within 1 GB (the scenario
 * fuzzer's limit is 2 GB for one allocation; expo's derivatives once asked 3.6 GB for a cube of
 * the contact count). */
static void test_most_contacts(void)
{
    ALLOC_GUARD();
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, NULL);
    CHECK(m != NULL, "cannot load solo12");
    if (!m) return;
    for (int k = 0; k < mbs_stepper_count(); k++) {
        const char *name = mbs_stepper_at(k)->name;
        mbs_error err;
        mbs_system *s = mbs_system_new(m, MBS_SIM_MAX_CONTACTS, &err);
        const double n[3] = {0, 0, 1};
        mbs_material mat = {1e5, 1e5, 300, 300, 1};
        mbs_system_add_plane(s, n, 0, &mat, &err);
        for (int c = 0; c < MBS_SIM_MAX_CONTACTS; c++) {
            const double p[3] = {0, 0, -0.16 * c / MBS_SIM_MAX_CONTACTS};
            mbs_system_add_contact(s, c % 2 ? "FL_LOWER_LEG" : "HR_LOWER_LEG", p, 0.001, &err);
        }
        CHECK(mbs_system_ncontacts(s) == MBS_SIM_MAX_CONTACTS, "%d contacts", mbs_system_ncontacts(s));
        mbs_system_finalize(s, NULL);
        size_t before = allocated_bytes;
        mbs_stepper *st = mbs_stepper_new(name, s, NULL, 0, &err);
        CHECK(st != NULL, "stepper %s with %d contacts: %s", name, MBS_SIM_MAX_CONTACTS, err.msg);
        double gb = (double)(allocated_bytes - before) / (1 << 30);
        printf("  %-18s with %d contact points: %.3f GB allocated at creation\n", name, MBS_SIM_MAX_CONTACTS, gb);
        CHECK(allocated_bytes - before < ((size_t)1 << 30), "stepper %s with %d contacts: %.3g GB", name,
              MBS_SIM_MAX_CONTACTS, gb);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    mbs_model_free(m);
}

/* A whole simulation from a scenario: between the first and the last controller period (the
 * controller's references, IK and feed-forward, the steps, the checks) nothing is allocated. */
static long first_period = -1, last_period;
static int count_period(void *user, double t, double duration)
{
    (void)user; (void)t; (void)duration;
    if (first_period < 0) first_period = allocations;
    last_period = allocations;
    return 0;
}

/* Every scenario, and with them every registered controller (pd through an override), runs
 * without an allocation between its first and last controller period. */
static void test_scenarios(void)
{
    ALLOC_GUARD();
    static const char *files[] = {"scenarios/solo_trot.ini", "scenarios/solo_jump.ini", "scenarios/solo_squat.ini",
                                  "scenarios/romeo_walk.ini", "scenarios/romeo_walk_quasistatic.ini",
                                  "scenarios/solo_squat_tsid.ini", "scenarios/chain10.ini", "scenarios/robosimian_walk.ini",
                                  "scenarios/robosimian_jump.ini", "scenarios/rimless_wheel.ini", "scenarios/compass_gait.ini", "scenarios/passive_walker.ini",
                                  "scenarios/solo_mpc_stand.ini", "scenarios/solo_mpc_trot.ini", "scenarios/solo_jump_opt.ini",
                                  "scenarios/solo_rough.ini", "scenarios/solo_squat.ini"};
    static const char *pd[] = {"controller.type=pd"};
    int seen[16] = {0};
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
        mbs_error err;
        int last = k + 1 == sizeof files / sizeof *files;   /* the last: solo_squat under pd */
        /* the model-predictive controller plans 30 knots each period: a tenth of a second of it,
         * pushed inside that time (a push computes the base's Jacobian in the step loop) */
        static const char *short_run[] = {"run.duration=0.1", "run.push=0.02 0 15 0 0.05"};
        /* the trot's: past its first lift-off (0.2 s), a swinging foot's contact switched off in the plan */
        static const char *short_trot[] = {"run.duration=0.24", "run.push=0.02 0 15 0 0.05"};
        /* the jump's optimisation (at the first period, counted too: a solve allocates nothing) a
         * short one */
        static const char *short_jump[] = {"controller.iterations=2", "controller.horizon=0.2", "controller.apex_time=0.1",
                                           "run.duration=0.3"};
        int mpc = strstr(files[k], "mpc") != NULL, jump = strstr(files[k], "jump_opt") != NULL;
        int trot = strstr(files[k], "mpc_trot") != NULL;
        const char **sets = last ? pd : trot ? short_trot : mpc ? short_run : jump ? short_jump : NULL;
        int nsets = last ? 1 : mpc ? 2 : jump ? 4 : 0;
        mbs_scenario *sc = mbs_scenario_load(tm_path(files[k]), sets, nsets, &err);
        for (int c = 0; sc && c < mbs_controller_count() && c < 16; c++)
            seen[c] |= strcmp(mbs_controller_at(c)->name, mbs_scenario_controller(sc)) == 0;
        CHECK(sc != NULL, "%s: %s", files[k], err.msg);
        mbs_error_free(&err);
        if (!sc) continue;
        mbs_sim *sim = mbs_sim_new(sc, &err);
        CHECK(sim != NULL, "%s: %s", files[k], err.msg);
        if (sim) {
            mbs_sim_run_options o = {.csv = "", .progress = count_period};
            mbs_sim_summary sum;
            first_period = -1;
            CHECK(mbs_sim_run(sim, &o, &sum, &err) == MBS_OK, "%s: %s", files[k], err.msg);
            CHECK(first_period >= 0 && last_period == first_period, "%s: %ld allocations during the run", files[k],
                  last_period - first_period);
            mbs_sim_free(sim);
        }
        mbs_scenario_free(sc);
    }
    for (int c = 0; c < mbs_controller_count() && c < 16; c++)
        CHECK(seen[c], "controller '%s' is in no scenario of the allocation test", mbs_controller_at(c)->name);
}

int main(void)
{
    RUN(test_steppers);
    RUN(test_most_contacts);
    RUN(test_robots);
    RUN(test_random_tree);
    RUN(test_scenarios);
    return check_summary("test_noalloc");
}
