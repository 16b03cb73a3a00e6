/* test_expo_noalloc.c — an expo step never calls the allocator, whatever its options and
 * however many contacts are active: every variant of the matrix exponential, balanced or
 * not, the closed form for proportional damping (method auto with the full exponential, and
 * method modal) as well as Padé, with contacts touching, sticking, slipping and releasing.
 *
 * Linked like test_noalloc with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc
 * (the Makefile's target-specific TEST_LDFLAGS), so that every call the library makes goes
 * through the counters of alloc_count.h. Linked without that flag, the test's ALLOC_GUARD
 * fails it rather than let it pass a check it cannot make. (test_noalloc covers expo's
 * default options in any case.) */
#include "check.h"
#include "testmodels.h"

#include "alloc_count.h"

/* Solo dropped from 2 cm with a sideways and a spinning velocity, its joints swinging: the
 * feet land one after another, slip, stick, bounce off and land again. */
static void test_solo_every_variant(void)
{
    ALLOC_GUARD();
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    if (!m) { CHECK(0, "solo12: %s", err.msg); return; }
    /* the closed form (method auto or modal with the full exponential, expo_modal.c) and Padé */
    static const char *mmm[8] = {"full", "0", "1", "2", "3", "4", "full", "0"};
    static const char *method[8] = {"auto", "auto", "auto", "auto", "auto", "auto", "pade", "modal"};
    for (int v = 0; v < 8; v++)
        for (int bal = 0; bal <= 1; bal++) {
            mbs_system *s = tm_solo_standing(m, 0.02, 1e5, 300, 0.6);
            int nv = mbs_model_nv(m);
            double q[19], v0[18] = {0}, tau[18] = {0};
            memcpy(q, mbs_system_q(s), sizeof q);
            v0[1] = 0.5;
            v0[5] = 2.0;
            mbs_system_set_state(s, q, v0, 0);
            mbs_option opts[3] = {tm_opt("max_mat_mult", mmm[v]), tm_opt("balance", bal ? "1" : "0"), tm_opt("method", method[v])};
            mbs_system_finalize(s, NULL);
            mbs_stepper *st = mbs_stepper_new("expo", s, opts, 3, &err);
            CHECK(st != NULL, "expo: %s", err.msg);
            if (!st) { mbs_system_free(s); continue; }
            int most = 0, touched = 0;
            long before_steps = allocations;
            for (int i = 0; i < 300; i++) {
                for (int k = 6; k < nv; k++) tau[k] = 0.3 * sin(0.05 * i + k);
                mbs_system_set_tau(s, tau);
                mbs_stepper_step(st, 2e-3, NULL);
                int a = 0;
                for (int c = 0; c < 4; c++) {
                    mbs_contact_info ci;
                    mbs_system_contact(s, c, &ci);
                    a += ci.active;
                }
                most = a > most ? a : most;
                touched |= a > 0;
            }
            CHECK(allocations == before_steps, "max_mat_mult %s balance %d method %s: %ld allocations in 300 steps", mmm[v],
                  bal, method[v], allocations - before_steps);
            CHECK(touched && most >= 2, "max_mat_mult %s balance %d method %s: never more than %d feet down", mmm[v], bal,
                  method[v], most);
            mbs_stepper_free(st);
            mbs_system_free(s);
        }
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_solo_every_variant);
    return check_summary("test_expo_noalloc");
}
