/* test_options.c — the one option mechanism: every controller's and stepper's table is sound
 * (defaults parse, are in range, keys unique, every option documented), values are checked as
 * documented, docs/scenarios.md holds exactly the tables the code declares, and the control
 * layer's interface: a controller from the registry, a user's control callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mbs.h"

#define SCEN(name) MBS_SOURCE_DIR "/scenarios/" name

static void check_table(const mbs_scheme_info *info)
{
    const mbs_option_table *t = info->options;
    CHECK(t != NULL && info->name && info->summary && info->summary[0], "%s: no table, name or summary", info->name);
    if (!t) return;
    void *o = calloc(1, t->size + 1);
    mbs_error err;
    mbs_error_clear(&err);
    CHECK(mbs_options_defaults(t, o, &err) == MBS_OK, "%s: a default does not parse: %s", info->name, err.msg);
    for (int i = 0; i < mbs_options_count(t); i++) {
        size_t off;
        const mbs_option_spec *s = mbs_options_at(t, i, &off);
        CHECK(s->key && s->key[0] && s->doc && s->doc[0] && s->unit, "%s: option %d lacks a key, a doc or a unit", info->name, i);
        CHECK(off < t->size, "%s.%s: its field lies outside the options struct", info->name, s->key);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(mbs_options_at(t, j, NULL)->key, s->key) != 0, "%s: option '%s' twice", info->name, s->key);
        if (s->def && s->kind != MBS_OPT_TEXT)
            CHECK(mbs_options_set(t, NULL, s->key, s->def, &err) == MBS_OK, "%s.%s: default '%s' refused: %s", info->name,
                  s->key, s->def, err.msg);
    }
    free(o);
}

static void test_every_table(void)
{
    CHECK(mbs_controller_count() >= 6 && mbs_stepper_count() >= 6, "registries: %d controllers, %d steppers",
          mbs_controller_count(), mbs_stepper_count());
    for (int i = 0; i < mbs_controller_count(); i++) check_table(mbs_controller_at(i));
    for (int i = 0; i < mbs_stepper_count(); i++) check_table(mbs_stepper_at(i));
    CHECK(mbs_controller_find("trot") == mbs_controller_at(4) || mbs_controller_find("trot") != NULL, "trot not found");
    CHECK(mbs_controller_find("fly") == NULL, "an unknown controller was found");
}

/* Values are checked as the tables say: kinds, ranges (open and closed), words, aliases. */
static void test_values(void)
{
    typedef struct { double x; int n, e, b; } opts;
    static const mbs_option_spec spec[] = {
        {"x", MBS_OPT_REAL, "m", 0, 1, MBS_OPT_OPEN_LO, "0.5", NULL, offsetof(opts, x), "a length"},
        {"n", MBS_OPT_INT, "", -1, 4, 0, "2", "full=-1", offsetof(opts, n), "a count"},
        {"e", MBS_OPT_ENUM, "", 0, 0, 0, "b", "a b c", offsetof(opts, e), "a choice"},
        {"b", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(opts, b), "a switch"},
    };
    const mbs_option_table t = {"demo", spec, 4, NULL, 0, sizeof(opts)};
    opts o;
    mbs_error err;
    mbs_error_clear(&err);
    CHECK(mbs_options_defaults(&t, &o, &err) == MBS_OK && o.x == 0.5 && o.n == 2 && o.e == 1 && o.b == 1, "defaults");
    CHECK(mbs_options_set(&t, &o, "x", "1", &err) == MBS_OK && o.x == 1, "x = 1 (closed upper bound)");
    CHECK(mbs_options_set(&t, &o, "x", "0", &err) != MBS_OK && strstr(err.msg, "out of range") && strstr(err.msg, "(0, 1] m"),
          "x = 0 (open lower bound): '%s'", err.msg);
    CHECK(mbs_options_set(&t, &o, "x", "1e-3x", &err) != MBS_OK && strstr(err.msg, "malformed number '1e-3x'"), "x malformed: '%s'", err.msg);
    CHECK(mbs_options_set(&t, &o, "x", "nan", &err) != MBS_OK, "x = nan accepted");
    CHECK(mbs_options_set(&t, &o, "n", "full", &err) == MBS_OK && o.n == -1, "alias full");
    CHECK(mbs_options_set(&t, &o, "n", "5", &err) != MBS_OK && strstr(err.msg, "out of range: 5"), "n = 5: '%s'", err.msg);
    CHECK(mbs_options_set(&t, &o, "n", " 3", &err) != MBS_OK, "n with a leading blank accepted");
    CHECK(mbs_options_set(&t, &o, "n", "3.0", &err) != MBS_OK && strstr(err.msg, "whole number"), "n = 3.0: '%s'", err.msg);
    CHECK(mbs_options_set(&t, &o, "e", "c", &err) == MBS_OK && o.e == 2, "e = c");
    CHECK(mbs_options_set(&t, &o, "e", "d", &err) != MBS_OK && strstr(err.msg, "one of: a b c"), "e = d: '%s'", err.msg);
    CHECK(mbs_options_set(&t, &o, "b", "2", &err) != MBS_OK, "b = 2 accepted");
    CHECK(mbs_options_set(&t, &o, "y", "1", &err) != MBS_OK && strstr(err.msg, "'y'") && strstr(err.msg, "x, n, e, b"),
          "unknown key: '%s'", err.msg);
    /* validating without storing leaves the struct alone */
    o.x = 0.25;
    CHECK(mbs_options_set(&t, NULL, "x", "0.75", &err) == MBS_OK && o.x == 0.25, "check-only stored a value");
    /* typed values: numbers as numbers, words as words, checked by the same table, no text parsed */
    const mbs_option good[] = {MBS_OPTION("x", 0.75), MBS_OPTION("n", 3), MBS_OPTION_WORD("n", "full"), MBS_OPTION_WORD("e", "a"),
                               MBS_OPTION("b", 0)};
    for (int i = 0; i < 5; i++) CHECK(mbs_options_apply(&t, &o, &good[i], &err) == MBS_OK, "typed %s refused: %s", good[i].key, err.msg);
    CHECK(o.x == 0.75 && o.n == -1 && o.e == 0 && o.b == 0, "typed values stored: %g %d %d %d", o.x, o.n, o.e, o.b);
    const mbs_option bad[] = {MBS_OPTION("x", 0), MBS_OPTION("x", NAN), MBS_OPTION_WORD("x", "big"), MBS_OPTION("n", 3.5),
                              MBS_OPTION("n", 5), MBS_OPTION("e", 1), MBS_OPTION("b", 2), MBS_OPTION("y", 1)};
    for (int i = 0; i < 8; i++)
        CHECK(mbs_options_apply(&t, &o, &bad[i], &err) != MBS_OK && strstr(err.msg, bad[i].key), "typed %s = %g accepted: '%s'",
              bad[i].key, bad[i].value, err.msg);
    /* text parsed once into a typed value that applies to the same result */
    mbs_option p;
    CHECK(mbs_option_parse(&t, "x", "0.125", &p, &err) == MBS_OK && p.value == 0.125 && !p.word, "parse x");
    CHECK(mbs_option_parse(&t, "n", "full", &p, &err) == MBS_OK && p.value == -1 && !p.word, "parse the alias full");
    CHECK(mbs_option_parse(&t, "e", "c", &p, &err) == MBS_OK && p.word && strcmp(p.word, "c") == 0, "parse e = c");
    CHECK(mbs_options_apply(&t, &o, &p, &err) == MBS_OK && o.e == 2, "apply the parsed e");
    CHECK(mbs_option_parse(&t, "n", "3.0", &p, &err) != MBS_OK && strstr(err.msg, "3.0"), "parse n = 3.0: '%s'", err.msg);
}

/* The text between `begin` and the next `end` in doc equals want; reports the first difference. */
static void check_block(const char *doc, const char *begin, const char *end, const char *want)
{
    const char *a = strstr(doc, begin), *b = a ? strstr(a, end) : NULL;
    CHECK(a && b, "docs/scenarios.md lacks the block '%.40s': add its marker lines, then run tools/gen/update_docs.py", begin);
    if (!a || !b) return;
    a += strlen(begin);
    size_t i = 0, len = (size_t)(b - a);
    while (i < len && want[i] && a[i] == want[i]) i++;
    int same = i == len && want[i] == '\0';
    CHECK(same, "docs/scenarios.md's '%.40s' differs from the code's table (run tools/gen/update_docs.py):\n  docs: ...%.60s\n  code: ...%.60s",
          begin, a + i, want + i);
}

/* docs/scenarios.md holds the tables ./sim --options-markdown prints, between their markers:
 * the keys of every section, and every controller's and stepper's options. */
static void test_docs_agree(void)
{
    FILE *f = fopen(MBS_SOURCE_DIR "/docs/scenarios.md", "rb");
    CHECK(f != NULL, "docs/scenarios.md missing");
    if (!f) return;
    static char doc[1 << 18];
    size_t len = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[len] = '\0';
    static const char *const sections[] = {"model", "contact", "environment", "controller", "stepper", "run", "output"};
    char begin[160], want[16384];
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++) {
        snprintf(begin, sizeof begin, "<!-- keys [%s]: written by ./sim --options-markdown; do not edit -->\n", sections[i]);
        CHECK(mbs_scenario_keys_markdown(sections[i], want, sizeof want) < (int)sizeof want, "[%s] table too long", sections[i]);
        check_block(doc, begin, "<!-- end of keys -->", want);
    }
    int n = mbs_sim_options_text(1, NULL, 0);
    char *all = malloc((size_t)n + 1);
    mbs_sim_options_text(1, all, (size_t)n + 1);
    check_block(doc, "<!-- options: written by ./sim --options-markdown; do not edit -->\n", "<!-- end of options -->", all);
    free(all);
}

typedef struct probe { int calls; double last_t; } probe;

static void zero_torque(void *user, double t, const double *q, const double *v, double *tau)
{
    (void)q;
    (void)v;
    probe *p = user;
    p->calls++;
    p->last_t = t;
    tau[6] = 0;   /* overwrite one joint of the scenario's controller */
}

/* A user's control callback runs once per controller period after the scenario's controller. */
static void test_user_control(void)
{
    mbs_error err;
    const char *sets[] = {"run.duration=0.4"};
    mbs_scenario *sc = mbs_scenario_load(SCEN("solo_squat.ini"), sets, 1, &err);
    CHECK(sc != NULL, "load: %s", err.msg);
    if (!sc) return;
    mbs_sim *sim = mbs_sim_new(sc, &err);
    CHECK(sim != NULL, "sim: %s", err.msg);
    probe p = {0, -1};
    mbs_sim_set_control(sim, zero_torque, &p);
    mbs_sim_summary sum;
    CHECK(sim && mbs_sim_run(sim, NULL, &sum, &err) == MBS_OK, "run: %s", err.msg);
    CHECK(p.calls == 10 && fabs(p.last_t - 0.36) < 1e-12, "callback: %d calls, last at t = %g (expected 10, 0.36)", p.calls,
          p.last_t);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* A controller from the registry, without a scenario: pd holds the posture it was given. */
static void test_controller_api(void)
{
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(SCEN("solo_squat.ini"), NULL, 0, &err);
    if (!sc) { CHECK(0, "load: %s", err.msg); return; }
    mbs_sim *sim = mbs_sim_new(sc, &err);
    mbs_system *sys = mbs_sim_system(sim);
    const mbs_option bad[] = {MBS_OPTION("kp", -1)};
    mbs_system_finalize(sys, NULL);
    mbs_controller *c = mbs_controller_new("pd", sys, mbs_scenario_q0(sc), 0.01, bad, 1, &err);
    CHECK(c == NULL && strncmp(err.msg, "kp: ", 4) == 0 && strstr(err.msg, "out of range"), "kp = -1: '%s'", err.msg);
    const mbs_option opts[] = {MBS_OPTION("kp", 10), MBS_OPTION("kd", 0), MBS_OPTION_WORD("feedforward", "none")};
    mbs_system_finalize(sys, NULL);
    c = mbs_controller_new("pd", sys, mbs_scenario_q0(sc), 0.01, opts, 3, &err);
    CHECK(c != NULL, "pd: %s", err.msg);
    int nq = mbs_model_nq(mbs_scenario_model(sc)), nv = mbs_model_nv(mbs_scenario_model(sc));
    double *q = malloc(sizeof(double) * (size_t)nq), *v = calloc((size_t)nv, sizeof(double)), *tau = malloc(sizeof(double) * (size_t)nv);
    memcpy(q, mbs_scenario_q0(sc), sizeof(double) * (size_t)nq);
    q[7] += 0.1;   /* the first joint 0.1 rad off its posture: τ = −kp · 0.1 there, 0 elsewhere */
    if (c) mbs_controller_compute(c, 0, q, v, tau);
    double worst = 0;
    for (int k = 0; k < nv; k++) worst = check_worst(worst, fabs(tau[k] - (k == 6 ? -1.0 : 0.0)));
    CHECK(c && worst < 1e-12, "pd torque off by %g", worst);
    mbs_controller_free(c);
    free(q); free(v); free(tau);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* A stepper that cannot step says why through its error record, one convention for all. */
static void test_stepper_error(void)
{
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(SCEN("chain10.ini"), NULL, 0, &err);
    if (!sc) { CHECK(0, "load: %s", err.msg); return; }
    mbs_system *sys = mbs_system_new(mbs_scenario_model(sc), 0, &err);
    mbs_system_finalize(sys, NULL);
    mbs_stepper *st = sys ? mbs_stepper_new("variational", sys, NULL, 0, &err) : NULL;
    CHECK(st != NULL, "variational: %s", err.msg);
    if (st) {
        int rc = mbs_stepper_step(st, -1e-3, NULL);
        const mbs_error *e = mbs_stepper_last_error(st);
        CHECK(rc == MBS_ERR_ARG && e->code == MBS_ERR_ARG && strstr(e->msg, "not a positive number"), "negative step: rc %d, '%s'",
              rc, e->msg);
        rc = mbs_stepper_step(st, 1e-3, NULL);
        CHECK(rc == MBS_OK && mbs_stepper_last_error(st)->code == MBS_OK, "a good step after a bad one: rc %d", rc);
    }
    mbs_stepper_free(st);
    mbs_system_free(sys);
    mbs_scenario_free(sc);
}

/* [model] bound_mass reaches the loader: every moving body weighs at least that much. */
static void test_bound_mass_key(void)
{
    mbs_error err;
    const char *sets[] = {"model.bound_mass=10"};
    mbs_scenario *sc = mbs_scenario_load(SCEN("solo_squat.ini"), sets, 1, &err);
    CHECK(sc != NULL, "load: %s", err.msg);
    if (!sc) return;
    const mbs_model *m = mbs_scenario_model(sc);
    int light = 0;
    for (int b = 0; b < mbs_model_nbodies(m); b++) {
        double mass, com[3], Ic[9];
        mbs_body_inertia(m, b, &mass, com, Ic);
        light += mass < 10 - 1e-12;
    }
    CHECK(light == 0, "bound_mass = 10: %d bodies lighter", light);
    mbs_scenario_free(sc);
}

int main(void)
{
    RUN(test_every_table);
    RUN(test_values);
    RUN(test_docs_agree);
    RUN(test_user_control);
    RUN(test_controller_api);
    RUN(test_stepper_error);
    RUN(test_bound_mass_key);
    return check_summary("test_options");
}
