/* sweep.c — parameter sweeps: the cartesian product of the values given for some scenario keys,
 * each combination a run of its own (the scenario loaded with those overrides), one CSV row per
 * combination: the swept values, then every summary key. Combination i is fixed by i alone (the
 * last key varies fastest), so that rows can be run in any order, on threads or on the ranks of
 * an MPI job, and written in order. A run depends on nothing but its combination: every column
 * but the wall-clock ones is the same whoever runs it. */
#include <stdio.h>
#include <stdlib.h>

#include "sim_internal.h"

#define SWEEP_MAX_KEYS 16
#define SWEEP_MAX_VALUES 4096
#define SWEEP_MAX_COLUMNS 64

struct mbs_sweep {
    char path[MBS_PATH_LEN];
    int nsets;
    char **sets;                          /* the fixed overrides (--set) */
    int nkeys;
    char keys[SWEEP_MAX_KEYS][2 * MBS_NAME_LEN];    /* section.key */
    int nvalues[SWEEP_MAX_KEYS];
    char **values[SWEEP_MAX_KEYS];
    long size;                            /* combinations */
    int ncolumns;                         /* summary keys, in the order of the summary */
    char columns[SWEEP_MAX_COLUMNS][MBS_NAME_LEN];
};

/* The summary's keys in their order: every key any run can print (a floating base's, a
 * sub-stepping scheme's, a maximal-dissipation scheme's, feet's and links' touch-downs), so that
 * every row has the same columns; a run that does not print one leaves it empty. */
static void summary_columns(mbs_sweep *sw)
{
    mbs_sim_summary variants[2];
    memset(variants, 0, sizeof variants);
    variants[0].has_base = 1;
    variants[0].min_dt = 1;
    variants[0].has_link_geometry = 1;
    snprintf(variants[0].max_foot, sizeof variants[0].max_foot, "foot");
    variants[1].substeps = 1;
    variants[1].diverged = 1;   /* for status_detail */
    char text[4096];
    for (int v = 0; v < 2; v++) {
        mbs_sim_summary_format(&variants[v], text, sizeof text);
        for (char *line = text, *nl; *line; line = nl + 1) {
            if (!(nl = strchr(line, '\n'))) break;
            char *colon = strstr(line, ": ");
            if (!colon || colon > nl) continue;
            size_t k = (size_t)(colon - line);
            int seen = 0;
            for (int c = 0; c < sw->ncolumns && !seen; c++)
                seen = strlen(sw->columns[c]) == k && strncmp(sw->columns[c], line, k) == 0;
            if (seen || sw->ncolumns == SWEEP_MAX_COLUMNS || k >= MBS_NAME_LEN) continue;
            /* status and status_detail stay last, in that order */
            int at = sw->ncolumns;
            if (strncmp(line, "status", 6) != 0)
                while (at > 0 && strncmp(sw->columns[at - 1], "status", 6) == 0) at--;
            memmove(sw->columns[at + 1], sw->columns[at], (size_t)(sw->ncolumns - at) * MBS_NAME_LEN);
            memcpy(sw->columns[at], line, k);
            sw->columns[at][k] = 0;
            sw->ncolumns++;
        }
    }
}

void mbs_sweep_free(mbs_sweep *sw)
{
    if (!sw) return;
    for (int i = 0; i < sw->nsets; i++) free(sw->sets[i]);
    free(sw->sets);
    for (int k = 0; k < sw->nkeys; k++) {
        for (int j = 0; j < sw->nvalues[k]; j++) free(sw->values[k][j]);
        free(sw->values[k]);
    }
    free(sw);
}

/* "section.key=V1,V2,...": the key and its values into sweep key k. */
static int parse_sweep(mbs_sweep *sw, const char *spec, mbs_error *err)
{
    const char *eq = strchr(spec, '=');
    const char *dot = strchr(spec, '.');
    if (!eq || !dot || dot > eq || dot == spec || eq == dot + 1)
        return mbsi_fail(err, MBS_ERR_ARG, "--sweep %s: expected section.key=V1,V2,...", spec);
    if (sw->nkeys == SWEEP_MAX_KEYS) return mbsi_fail(err, MBS_ERR_ARG, "--sweep %s: at most %d swept keys", spec, SWEEP_MAX_KEYS);
    int k = sw->nkeys;
    size_t klen = (size_t)(eq - spec);
    if (klen >= sizeof sw->keys[k]) return mbsi_fail(err, MBS_ERR_ARG, "--sweep %s: key too long", spec);
    memcpy(sw->keys[k], spec, klen);
    sw->keys[k][klen] = 0;
    for (int j = 0; j < k; j++)
        if (strcmp(sw->keys[j], sw->keys[k]) == 0) return mbsi_fail(err, MBS_ERR_ARG, "--sweep %s: key swept twice", sw->keys[k]);
    sw->values[k] = calloc(SWEEP_MAX_VALUES, sizeof *sw->values[k]);
    if (!sw->values[k]) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    sw->nkeys++;
    const char *p = eq + 1;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 0) return mbsi_fail(err, MBS_ERR_ARG, "--sweep %s: an empty value", spec);
        if (sw->nvalues[k] == SWEEP_MAX_VALUES)
            return mbsi_fail(err, MBS_ERR_ARG, "--sweep %s: at most %d values per key", spec, SWEEP_MAX_VALUES);
        char *v = malloc(n + 1);
        if (!v) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        memcpy(v, p, n);
        v[n] = 0;
        sw->values[k][sw->nvalues[k]++] = v;
        if (!comma) break;
        p = comma + 1;
    }
    return MBS_OK;
}

/* The overrides of combination i: the fixed ones, then "key=value" of each swept key (into
 * room, each 2 * MBS_PATH_LEN bytes). */
static int overrides(const mbs_sweep *sw, long i, char room[][2 * MBS_PATH_LEN], const char **out)
{
    int n = 0;
    for (int s = 0; s < sw->nsets; s++) out[n++] = sw->sets[s];
    long rest = i;
    for (int k = sw->nkeys - 1; k >= 0; k--) {
        long j = rest % sw->nvalues[k];
        rest /= sw->nvalues[k];
        snprintf(room[k], 2 * MBS_PATH_LEN, "%s=%s", sw->keys[k], sw->values[k][j]);
    }
    for (int k = 0; k < sw->nkeys; k++) out[n++] = room[k];
    return n;
}

mbs_sweep *mbs_sweep_new(const char *path, const char *const *sets, int nsets, const char *const *sweeps, int nsweeps,
                         mbs_error *err)
{
    if (err) mbs_error_clear(err);
    if (!path || nsweeps < 1 || nsets < 0 || (nsets && !sets) || !sweeps) {
        mbsi_fail(err, MBS_ERR_ARG, "mbs_sweep_new: a scenario and at least one swept key are needed");
        return NULL;
    }
    mbs_sweep *sw = calloc(1, sizeof *sw);
    if (!sw) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    snprintf(sw->path, sizeof sw->path, "%s", path);
    sw->sets = calloc((size_t)nsets + 1, sizeof *sw->sets);
    if (!sw->sets) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto fail; }
    for (int i = 0; i < nsets; i++) {
        if (!(sw->sets[i] = mbsi_strdup(sets[i]))) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto fail; }
        sw->nsets++;
    }
    sw->size = 1;
    for (int i = 0; i < nsweeps; i++) {
        if (parse_sweep(sw, sweeps[i], err) != MBS_OK) goto fail;
        if (sw->size > 100000000 / sw->nvalues[sw->nkeys - 1]) {
            mbsi_fail(err, MBS_ERR_ARG, "--sweep: more than 10^8 combinations");
            goto fail;
        }
        sw->size *= sw->nvalues[sw->nkeys - 1];
    }
    /* every value checked before anything runs: the scenario loaded with each value of each key
     * (the sum of the values, not their product), so that a typo fails at once, located */
    const char **ov = calloc((size_t)nsets + 1, sizeof *ov);
    if (!ov) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto fail; }
    for (int k = 0; k < sw->nkeys; k++)
        for (int j = 0; j < sw->nvalues[k]; j++) {
            char one[2 * MBS_PATH_LEN];
            for (int s = 0; s < nsets; s++) ov[s] = sw->sets[s];
            snprintf(one, sizeof one, "%s=%s", sw->keys[k], sw->values[k][j]);
            ov[nsets] = one;
            mbs_scenario *sc = mbs_scenario_load(path, ov, nsets + 1, err);
            if (!sc) { free(ov); goto fail; }
            mbs_scenario_free(sc);
            mbs_error_free(err);   /* the checks' warnings are the runs' to report */
        }
    free(ov);
    summary_columns(sw);
    return sw;
fail:
    mbs_sweep_free(sw);
    return NULL;
}

long mbs_sweep_size(const mbs_sweep *sw) { return sw ? sw->size : 0; }

/* A CSV field: as it is, or quoted (quotes doubled) when it holds a comma, a quote or a newline. */
static void csv_field(mbs_text *b, const char *s, size_t n, int first)
{
    if (!first) mbsi_textf(b, ",");
    int quote = 0;
    for (size_t i = 0; i < n; i++) quote |= s[i] == ',' || s[i] == '"' || s[i] == '\n';
    if (!quote) {
        mbsi_textf(b, "%.*s", (int)n, s);
        return;
    }
    mbsi_textf(b, "\"");
    for (size_t i = 0; i < n; i++) mbsi_textf(b, s[i] == '"' ? "\"\"" : "%c", s[i]);
    mbsi_textf(b, "\"");
}

int mbs_sweep_header(const mbs_sweep *sw, char *buf, size_t n)
{
    mbs_text b = {buf, buf ? n : 0, 0};
    if (buf && n) buf[0] = '\0';
    for (int k = 0; k < sw->nkeys; k++) csv_field(&b, sw->keys[k], strlen(sw->keys[k]), k == 0);
    for (int c = 0; c < sw->ncolumns; c++) csv_field(&b, sw->columns[c], strlen(sw->columns[c]), 0);
    mbsi_textf(&b, "\n");
    return (int)b.len;
}

int mbs_sweep_run(const mbs_sweep *sw, long i, mbs_sim_progress progress, void *user, char *row, size_t n,
                  mbs_error *err)
{
    if (err) mbs_error_clear(err);
    if (!sw || i < 0 || i >= sw->size || !row || n == 0)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_sweep_run: bad sweep, combination %ld or row buffer", i);
    char room[SWEEP_MAX_KEYS][2 * MBS_PATH_LEN];
    const char **ov = calloc((size_t)sw->nsets + SWEEP_MAX_KEYS, sizeof *ov);
    if (!ov) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    int nov = overrides(sw, i, room, ov);
    mbs_scenario *sc = mbs_scenario_load(sw->path, ov, nov, err);
    free(ov);
    if (!sc) return err ? err->code : MBS_ERR_ARG;
    mbs_sim *sim = mbs_sim_new(sc, err);
    if (!sim) {
        mbs_scenario_free(sc);
        return err ? err->code : MBS_ERR_ARG;
    }
    mbs_sim_run_options opt = {.csv = "", .progress = progress, .user = user, .html = ""};
    mbs_sim_summary sum;
    int rc = mbs_sim_run(sim, &opt, &sum, err);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    if (rc != MBS_OK) return rc;   /* an error or an interruption: no row */
    char text[4096];
    mbs_sim_summary_format(&sum, text, sizeof text);
    mbs_text b = {row, n, 0};
    row[0] = 0;
    for (int k = 0; k < sw->nkeys; k++) {
        const char *v = room[k] + strlen(sw->keys[k]) + 1;
        csv_field(&b, v, strlen(v), k == 0);
    }
    for (int c = 0; c < sw->ncolumns; c++) {
        char key[MBS_NAME_LEN + 4];
        snprintf(key, sizeof key, "%s: ", sw->columns[c]);
        const char *at = NULL;
        for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
            if (strncmp(line, key, strlen(key)) == 0) { at = line + strlen(key); break; }
        size_t len = at ? strcspn(at, "\n") : 0;
        csv_field(&b, at ? at : "", len, 0);
    }
    mbsi_textf(&b, "\n");
    if (b.len >= n) return mbsi_fail(err, MBS_ERR_ARG, "mbs_sweep_run: row of %zu bytes does not fit in %zu", b.len, n);
    return MBS_OK;
}
