/* scenario.c — scenario files (INI, read by libinih) into an mbs_scenario. Every key is
 * checked against one table (its section, kind, count and range), so that an unknown key, a
 * malformed number or an out-of-range value is reported with the file, line and key; the
 * model is loaded and joint and frame names resolved here too, so that a scenario that loads
 * can run. The format is documented in docs/scenarios.md. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "mbs/control.h"
#include "sim_internal.h"

struct mbs_scenario_entry {
    char *section, *key, *value;
    int line;            /* 0: --set override */
    int dead;            /* replaced by an override */
};

/* ---- the key table ---- */

typedef enum { K_NUM, K_INT, K_BOOL, K_VEC, K_STR, K_NAMES, K_ENUM, K_POINT } key_kind;   /* K_POINT: a name then a K_VEC */

enum { OPEN_LO = 1, OPEN_HI = 2 };

typedef struct keyspec {
    const char *section, *key;     /* key "q.*": any key with that prefix */
    key_kind kind;
    int nmin, nmax;                /* numbers in a K_VEC */
    double lo, hi;                 /* range of every number */
    int open;                      /* OPEN_LO / OPEN_HI: the bound itself is out of range */
    int multi;                     /* may be given more than once (each a separate item) */
    const char *words;             /* K_ENUM: the accepted words, space-separated */
} keyspec;

#define BIG 1e300
static const keyspec KEYS[] = {
    {"model", "urdf", K_STR, 0, 0, 0, 0, 0, 0, NULL},
    {"model", "floating", K_BOOL, 0, 0, 0, 1, 0, 0, NULL},
    {"model", "base_position", K_VEC, 3, 3, -1e4, 1e4, 0, 0, NULL},
    {"model", "base_rpy", K_VEC, 3, 3, -10, 10, 0, 0, NULL},
    {"model", "q.*", K_NUM, 0, 0, -1e4, 1e4, 0, 0, NULL},
    {"contact", "stiffness", K_NUM, 0, 0, 0, 1e12, 0, 0, NULL},
    {"contact", "damping", K_NUM, 0, 0, 0, 1e10, 0, 0, NULL},
    {"contact", "stiffness_tangent", K_NUM, 0, 0, 0, 1e12, 0, 0, NULL},
    {"contact", "damping_tangent", K_NUM, 0, 0, 0, 1e10, 0, 0, NULL},
    {"contact", "friction", K_NUM, 0, 0, 0, 100, 0, 0, NULL},
    {"contact", "frames", K_NAMES, 0, 0, 0, 0, 0, 1, NULL},
    {"contact", "radius", K_NUM, 0, 0, 0, 1, OPEN_HI, 0, NULL},
    {"contact", "offset", K_VEC, 3, 3, -10, 10, 0, 0, NULL},
    {"contact", "points", K_POINT, 3, 3, -10, 10, 0, 1, NULL},
    {"environment", "ground", K_BOOL, 0, 0, 0, 1, 0, 0, NULL},
    {"environment", "ground_height", K_NUM, 0, 0, -1e4, 1e4, 0, 0, NULL},
    {"environment", "plane", K_VEC, 4, 4, -1e4, 1e4, 0, 1, NULL},
    {"environment", "box", K_VEC, 6, 7, -1e4, 1e4, 0, 1, NULL},
    {"controller", "type", K_STR, 0, 0, 0, 0, 0, 0, NULL},
    {"controller", "dt", K_NUM, 0, 0, 0, 10, OPEN_LO, 0, NULL},
    {"stepper", "name", K_STR, 0, 0, 0, 0, 0, 0, NULL},
    {"stepper", "dt", K_NUM, 0, 0, 0, 1, OPEN_LO, 0, NULL},
    {"run", "duration", K_NUM, 0, 0, 0, 1e7, OPEN_LO, 0, NULL},
    {"run", "max_velocity", K_NUM, 0, 0, 0, BIG, OPEN_LO, 0, NULL},
    {"run", "box", K_VEC, 6, 6, -BIG, BIG, 0, 0, NULL},
    {"output", "csv", K_STR, 0, 0, 0, 0, 0, 0, NULL},
    {"output", "every", K_INT, 0, 0, 1, 1e9, 0, 0, NULL},
};
#define NKEYS ((int)(sizeof KEYS / sizeof *KEYS))
static const char *const SECTIONS[] = {"model", "contact", "environment", "controller", "stepper", "run", "output"};
#define NSECTIONS ((int)(sizeof SECTIONS / sizeof *SECTIONS))

/* Keys every scenario must set (the rest have defaults). */
static const char *const REQUIRED[][2] = {{"model", "urdf"}, {"controller", "dt"}, {"stepper", "dt"}, {"run", "duration"}};

/* ---- reading the file ---- */

typedef struct header {
    char name[MBS_NAME_LEN];
    int line;
} header;

typedef struct reader {
    const char *pos, *end;   /* the text still to read (no NUL byte in it, not NUL-terminated) */
    int line;            /* lines handed to inih so far: the line of the current key */
    int long_line;       /* first line longer than inih's buffer, 0 when none */
    int nheaders, cap;   /* every [section] line, so that an unknown (even empty) section is */
    header *headers;     /* reported at its own line */
    int nomem;
} reader;

/* Notes a "[name]" line (inih calls handlers only for keys). */
static void note_header(reader *r, const char *line, int n)
{
    int i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
    if (i >= n || line[i] != '[') return;
    const char *close = memchr(line + i, ']', (size_t)(n - i));
    if (!close) return;   /* inih reports it as a syntax error */
    if (r->nheaders == r->cap) {
        header *h = realloc(r->headers, (size_t)(r->cap = 2 * r->cap + 8) * sizeof *h);
        if (!h) { r->nomem = 1; return; }
        r->headers = h;
    }
    header *h = &r->headers[r->nheaders++];
    /* inih strips white space inside the brackets the same way */
    const char *a = line + i + 1, *b = close;
    while (a < b && (*a == ' ' || *a == '\t')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
    snprintf(h->name, sizeof h->name, "%.*s", (int)(b - a), a);
    h->line = r->line;
}

/* fgets over the text in memory, counting lines so that the handler knows where it is (inih
 * passes no line number to handlers unless built with INI_HANDLER_LINENO, which Debian's is not). */
static char *read_line(char *str, int num, void *stream)
{
    reader *r = stream;
    if (r->pos >= r->end) return NULL;
    const char *nl = memchr(r->pos, '\n', (size_t)(r->end - r->pos));
    size_t len = nl ? (size_t)(nl - r->pos) : (size_t)(r->end - r->pos);
    int n = len < (size_t)num ? (int)len : num;   /* num or more: too long either way */
    r->line++;
    if (n + 1 > num - 1) {
        /* inih would read the rest of the line as a new one: refuse it instead */
        if (!r->long_line) r->long_line = r->line;
        str[0] = '\0';
    } else {
        memcpy(str, r->pos, (size_t)n);
        str[n] = '\n';
        str[n + 1] = '\0';
        note_header(r, r->pos, n);
    }
    r->pos += len + (nl != NULL);
    return str;
}

typedef struct parse_ctx {
    mbs_scenario *sc;
    reader rd;
    int nomem;
    int outside_line;    /* first key before any [section] */
} parse_ctx;

static int add_entry(mbs_scenario *sc, const char *section, const char *key, const char *value, int line)
{
    if (sc->nentries % 32 == 0) {
        mbs_scenario_entry *e = realloc(sc->entries, (size_t)(sc->nentries + 32) * sizeof *e);
        if (!e) return -1;
        sc->entries = e;
    }
    mbs_scenario_entry *e = &sc->entries[sc->nentries];
    e->section = mbs_strdup(section);
    e->key = mbs_strdup(key);
    e->value = mbs_strdup(value);
    e->line = line;
    e->dead = 0;
    if (!e->section || !e->key || !e->value) {
        free(e->section); free(e->key); free(e->value);
        return -1;
    }
    sc->nentries++;
    return 0;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    parse_ctx *c = user;
    if (!section[0]) {
        if (!c->outside_line) c->outside_line = c->rd.line;
        return 1;
    }
    if (add_entry(c->sc, section, name, value, c->rd.line)) c->nomem = 1;
    return 1;
}

/* ---- messages ---- */

static void where(const mbs_scenario *sc, const mbs_scenario_entry *e, char *buf, size_t n)
{
    if (e->line > 0) snprintf(buf, n, "%s:%d: [%s] %s", sc->path, e->line, e->section, e->key);
    else snprintf(buf, n, "%s: --set %s.%s=%s", sc->path, e->section, e->key, e->value);
}

static int fail_at(const mbs_scenario *sc, const mbs_scenario_entry *e, mbs_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail_at(const mbs_scenario *sc, const mbs_scenario_entry *e, mbs_error *err, int code, const char *fmt, ...)
{
    char w[MBS_PATH_LEN + 256], what[400];
    where(sc, e, w, sizeof w);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return mbs_fail(err, code, "%s: %s", w, what);
}

static const mbs_scenario_entry *find(const mbs_scenario *sc, const char *section, const char *key)
{
    const mbs_scenario_entry *found = NULL;
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (!e->dead && strcmp(e->section, section) == 0 && strcmp(e->key, key) == 0) found = e;
    }
    return found;
}

int mbs_scenario_line(const mbs_scenario *sc, const char *section, const char *key)
{
    const mbs_scenario_entry *e = sc ? find(sc, section, key) : NULL;
    return e ? e->line : -1;
}

void mbs_scenario_where(const mbs_scenario *sc, const char *section, const char *key, char *buf, size_t n)
{
    const mbs_scenario_entry *e = find(sc, section, key);
    if (e) where(sc, e, buf, n);
    else snprintf(buf, n, "%s: [%s] %s", sc->path, section, key);
}

/* ---- values ---- */

static const keyspec *spec_of(const char *section, const char *key)
{
    for (int i = 0; i < NKEYS; i++) {
        const keyspec *k = &KEYS[i];
        if (strcmp(k->section, section) != 0) continue;
        size_t n = strlen(k->key);
        if (n >= 2 && k->key[n - 1] == '*' ? strncmp(k->key, key, n - 1) == 0 && key[n - 1] : strcmp(k->key, key) == 0)
            return k;
    }
    return NULL;
}

/* Parses up to max numbers separated by spaces, tabs or commas; returns the count, or -1 with
 * the offending word in bad when a word is not a finite number. */
static int parse_numbers(const char *s, double *out, int max, char *bad, size_t nbad)
{
    int n = 0;
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) return n;
        const char *w = p;
        while (*p && *p != ' ' && *p != '\t' && *p != ',') p++;
        char word[128];
        size_t len = (size_t)(p - w) < sizeof word - 1 ? (size_t)(p - w) : sizeof word - 1;
        memcpy(word, w, len);
        word[len] = '\0';
        char *end;
        errno = 0;
        double x = strtod(word, &end);
        if (end == word || *end || !isfinite(x) || errno == ERANGE) {
            snprintf(bad, nbad, "%s", word);
            return -1;
        }
        if (n < max) out[n] = x;
        n++;
    }
}

static void range_text(const keyspec *k, char *buf, size_t n)
{
    if (k->hi >= BIG) snprintf(buf, n, "%s %g", k->open & OPEN_LO ? ">" : ">=", k->lo);
    else snprintf(buf, n, "in %s%g, %g%s", k->open & OPEN_LO ? "(" : "[", k->lo, k->hi, k->open & OPEN_HI ? ")" : "]");
}

static int in_range(const keyspec *k, double x)
{
    if (k->open & OPEN_LO ? !(x > k->lo) : !(x >= k->lo)) return 0;
    if (k->open & OPEN_HI ? !(x < k->hi) : !(x <= k->hi)) return 0;
    return 1;
}

static int word_index(const char *words, const char *w)
{
    int i = 0;
    size_t n = strlen(w);
    for (const char *p = words; *p; i++) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, w, n) == 0) return i;
        if (!e) break;
        p = e + 1;
    }
    return -1;
}

/* The name and the numbers of a K_POINT value "NAME x y z": the name (at most n - 1 bytes)
 * into name, and a pointer to the text of the numbers; 1 when the first word is missing or
 * too long. */
static int split_point(const char *value, char *name, size_t n, const char **rest)
{
    *rest = value;
    return mbs_next_word(rest, name, n) <= 0;
}

/* A K_POINT value: a frame name (resolved against the model later), then exactly nmin numbers
 * in the key's range. */
static int check_point(const mbs_scenario *sc, const mbs_scenario_entry *e, const keyspec *k, double *x, int *count,
                       mbs_error *err)
{
    char name[MBS_NAME_LEN], bad[128], rng[64];
    const char *rest = NULL;
    if (split_point(e->value, name, sizeof name, &rest))
        return fail_at(sc, e, err, MBS_ERR_PARSE, "expected a frame name and %d numbers, got '%s'", k->nmin, e->value);
    char *end;
    strtod(name, &end);
    if (*end == '\0')   /* the whole first word is a number: the frame was left out */
        return fail_at(sc, e, err, MBS_ERR_PARSE, "expected a frame name before the numbers, got '%s'", e->value);
    int n = parse_numbers(rest, x, k->nmax, bad, sizeof bad);
    if (n < 0) return fail_at(sc, e, err, MBS_ERR_PARSE, "malformed number '%s'", bad);
    if (n != k->nmin) return fail_at(sc, e, err, MBS_ERR_PARSE, "expected a frame name and %d numbers, got %d numbers", k->nmin, n);
    for (int i = 0; i < n; i++)
        if (!in_range(k, x[i])) {
            range_text(k, rng, sizeof rng);
            return fail_at(sc, e, err, MBS_ERR_ARG, "out of range: %g (must be %s)", x[i], rng);
        }
    *count = n;
    return MBS_OK;
}

/* Checks one entry against its spec; numbers go to x (up to 7). */
static int check_value(const mbs_scenario *sc, const mbs_scenario_entry *e, const keyspec *k, double *x, int *count,
                       mbs_error *err)
{
    char bad[128], rng[64];
    *count = 0;
    switch (k->kind) {
    case K_POINT:
        return check_point(sc, e, k, x, count, err);
    case K_STR:
        if (!e->value[0]) return fail_at(sc, e, err, MBS_ERR_PARSE, "empty value");
        return MBS_OK;
    case K_NAMES:
        if (!e->value[0]) return fail_at(sc, e, err, MBS_ERR_PARSE, "empty list of names");
        return MBS_OK;
    case K_ENUM:
        if (word_index(k->words, e->value) < 0)
            return fail_at(sc, e, err, MBS_ERR_PARSE, "'%s' is not one of: %s", e->value, k->words);
        x[0] = word_index(k->words, e->value);
        return MBS_OK;
    case K_NUM: case K_INT: case K_BOOL: case K_VEC: {
        int nmin = k->kind == K_VEC ? k->nmin : 1, nmax = k->kind == K_VEC ? k->nmax : 1;
        int n = parse_numbers(e->value, x, nmax, bad, sizeof bad);
        if (n < 0) return fail_at(sc, e, err, MBS_ERR_PARSE, "malformed number '%s'", bad);
        if (n < nmin || n > nmax) {
            if (nmin == 1 && nmax == 1) return fail_at(sc, e, err, MBS_ERR_PARSE, "malformed number '%s' (expected one number)", e->value);
            if (nmin == nmax) return fail_at(sc, e, err, MBS_ERR_PARSE, "expected %d numbers, got %d", nmin, n);
            return fail_at(sc, e, err, MBS_ERR_PARSE, "expected %d to %d numbers, got %d", nmin, nmax, n);
        }
        for (int i = 0; i < n; i++) {
            if ((k->kind == K_INT || k->kind == K_BOOL) && x[i] != floor(x[i]))
                return fail_at(sc, e, err, MBS_ERR_PARSE, "malformed number '%s' (expected an integer)", e->value);
            if (k->kind == K_BOOL && x[i] != 0 && x[i] != 1)
                return fail_at(sc, e, err, MBS_ERR_ARG, "out of range: %s (expected 0 or 1)", e->value);
            if (!in_range(k, x[i])) {
                range_text(k, rng, sizeof rng);
                return fail_at(sc, e, err, MBS_ERR_ARG, "out of range: %g (must be %s)", x[i], rng);
            }
        }
        *count = n;
        return MBS_OK;
    }
    }
    return MBS_OK;
}

/* The numbers of a single-valued key (the defaults stay when it is absent). */
static void get_nums(const mbs_scenario *sc, const char *section, const char *key, double *out, int n)
{
    const mbs_scenario_entry *e = find(sc, section, key);
    if (!e) return;
    char bad[128];
    double x[8];
    int got = parse_numbers(e->value, x, 8, bad, sizeof bad);
    for (int i = 0; i < n && i < got; i++) out[i] = x[i];
}

static double get_num(const mbs_scenario *sc, const char *section, const char *key, double def)
{
    get_nums(sc, section, key, &def, 1);
    return def;
}

/* ---- --set overrides ---- */

/* Copies [a, b) without surrounding white space; non-zero when it does not fit. */
static int trim_copy(char *dst, size_t n, const char *a, const char *b)
{
    while (a < b && (*a == ' ' || *a == '\t')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
    if ((size_t)(b - a) >= n) return 1;
    memcpy(dst, a, (size_t)(b - a));
    dst[b - a] = '\0';
    return 0;
}

static int apply_override(mbs_scenario *sc, const char *ov, mbs_error *err)
{
    const char *eq = ov ? strchr(ov, '=') : NULL;
    const char *dot = ov ? strchr(ov, '.') : NULL;
    if (!ov || !eq || !dot || dot > eq)
        return mbs_fail(err, MBS_ERR_ARG, "%s: bad --set '%s': expected section.key=value", sc->path, ov ? ov : "(null)");
    char section[MBS_NAME_LEN], key[MBS_NAME_LEN], value[512];
    /* white space around the parts is dropped, as inih drops it in the file */
    if (trim_copy(section, sizeof section, ov, dot) || trim_copy(key, sizeof key, dot + 1, eq) ||
        trim_copy(value, sizeof value, eq + 1, eq + strlen(eq)))
        return mbs_fail(err, MBS_ERR_ARG, "%s: bad --set '%s': section, key or value too long", sc->path, ov);
    if (!section[0] || !key[0])
        return mbs_fail(err, MBS_ERR_ARG, "%s: bad --set '%s': expected section.key=value", sc->path, ov);
    /* the override replaces every value the file gave that key */
    for (int i = 0; i < sc->nentries; i++)
        if (strcmp(sc->entries[i].section, section) == 0 && strcmp(sc->entries[i].key, key) == 0) sc->entries[i].dead = 1;
    if (add_entry(sc, section, key, value, 0)) return mbs_fail(err, MBS_ERR_NOMEM, "out of memory");
    return MBS_OK;
}

/* ---- building the scenario ---- */

static void rpy_to_quat(const double rpy[3], double q[4])
{
    double cr = cos(rpy[0] / 2), sr = sin(rpy[0] / 2), cp = cos(rpy[1] / 2), sp = sin(rpy[1] / 2);
    double cy = cos(rpy[2] / 2), sy = sin(rpy[2] / 2);
    /* q = qz(yaw) qy(pitch) qx(roll): R = Rz Ry Rx, the URDF rpy convention */
    q[0] = sr * cp * cy - cr * sp * sy;
    q[1] = cr * sp * cy + sr * cp * sy;
    q[2] = cr * cp * sy - sr * sp * cy;
    q[3] = cr * cp * cy + sr * sp * sy;
}

static int known_section(const char *name)
{
    for (int s = 0; s < NSECTIONS; s++)
        if (strcmp(name, SECTIONS[s]) == 0) return 1;
    return mbs_stepper_find(name) != NULL;   /* a scheme's options: the scheme checks them */
}

/* "file:line: unknown section [name] (known: ...)"; where is "file:line" or the --set. */
static int unknown_section(const char *where_, const char *name, mbs_error *err)
{
    char names[256] = "";
    for (int s = 0; s < mbs_stepper_count(); s++) {
        strncat(names, s ? ", " : "", sizeof names - strlen(names) - 1);
        strncat(names, mbs_stepper_at(s)->name, sizeof names - strlen(names) - 1);
    }
    return mbs_fail(err, MBS_ERR_PARSE,
                    "%s: unknown section [%s] (known: model, contact, environment, controller, stepper, run, output, "
                    "or a stepper's name for its options: %s)", where_, name, names);
}

/* Entry i repeats a key given before it (not an override's replaced one): an error. */
static int given_twice(const mbs_scenario *sc, int i, mbs_error *err)
{
    const mbs_scenario_entry *e = &sc->entries[i];
    for (int j = 0; j < i; j++) {
        const mbs_scenario_entry *o = &sc->entries[j];
        if (!o->dead && strcmp(o->section, e->section) == 0 && strcmp(o->key, e->key) == 0)
            return fail_at(sc, e, err, MBS_ERR_PARSE, "given twice (first at line %d)", o->line);
    }
    return MBS_OK;
}

/* A stepper's or controller's option: its value checked by its table, nothing created. */
static int check_option(const mbs_scenario *sc, const mbs_scenario_entry *e, const mbs_option_table *t, mbs_error *err)
{
    mbs_error e1;
    mbs_error_clear(&e1);
    if (mbs_options_set(t, NULL, e->key, e->value, &e1) != MBS_OK) return fail_at(sc, e, err, e1.code, "%s", e1.msg);
    return MBS_OK;
}

/* A [controller] key other than type and dt: an option of the chosen controller, checked by its
 * table; an option of another controller only earns a warning (switching the type with --set
 * controller.type=pd should not force the user to delete the gait's keys), but its value is
 * still checked by the table that has it. */
static int check_controller_key(const mbs_scenario *sc, const mbs_scenario_entry *e, const mbs_scheme_info *ctrl,
                                mbs_error *err)
{
    const mbs_option_table *t = ctrl->options;
    if (!mbs_options_find(t, e->key, NULL)) {
        t = NULL;
        for (int c = 0; !t && c < mbs_controller_count(); c++)
            if (mbs_options_find(mbs_controller_at(c)->options, e->key, NULL)) t = mbs_controller_at(c)->options;
        if (!t) return fail_at(sc, e, err, MBS_ERR_PARSE, "unknown key '%s' in section [controller] (controller '%s' "
                               "has no such option)", e->key, ctrl->name);
        char w[MBS_PATH_LEN + 256];
        where(sc, e, w, sizeof w);
        mbs_warn(err, "%s: not used by controller type '%s' (ignored)", w, ctrl->name);
    }
    return check_option(sc, e, t, err);
}

/* Checks every entry: its section, its key (and controller type), its value. */
static int check_entries(mbs_scenario *sc, mbs_error *err)
{
    /* the controller first: its option table decides which [controller] keys exist */
    const mbs_scenario_entry *te = find(sc, "controller", "type");
    const char *type = te ? te->value : "pd";
    const mbs_scheme_info *ctrl = mbs_controller_find(type);
    if (!ctrl) {
        char names[256] = "";
        for (int c = 0; c < mbs_controller_count(); c++) {
            strncat(names, c ? " " : "", sizeof names - strlen(names) - 1);
            strncat(names, mbs_controller_at(c)->name, sizeof names - strlen(names) - 1);
        }
        return fail_at(sc, te, err, MBS_ERR_PARSE, "'%s' is not one of: %s", type, names);
    }
    snprintf(sc->controller, sizeof sc->controller, "%s", type);
    for (int i = 0; i < sc->nentries; i++) {
        mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead) continue;
        if (!known_section(e->section)) {
            /* sections of the file were checked at their header lines: this is a --set */
            char w[MBS_PATH_LEN + 256];
            snprintf(w, sizeof w, "%s: --set %s.%s=%s", sc->path, e->section, e->key, e->value);
            return unknown_section(w, e->section, err);
        }
        const keyspec *k = spec_of(e->section, e->key);
        const mbs_scheme_info *scheme = mbs_stepper_find(e->section);
        if (!k && (scheme || strcmp(e->section, "controller") == 0)) {
            if (given_twice(sc, i, err)) return MBS_ERR_PARSE;
            int rc = scheme ? check_option(sc, e, scheme->options, err) : check_controller_key(sc, e, ctrl, err);
            if (rc != MBS_OK) return rc;
            continue;
        }
        if (!k) return fail_at(sc, e, err, MBS_ERR_PARSE, "unknown key '%s' in section [%s]", e->key, e->section);
        if (!k->multi && given_twice(sc, i, err)) return MBS_ERR_PARSE;
        double x[8];
        int n;
        if (check_value(sc, e, k, x, &n, err)) return err ? err->code : MBS_ERR_PARSE;
    }
    for (size_t r = 0; r < sizeof REQUIRED / sizeof *REQUIRED; r++)
        if (!find(sc, REQUIRED[r][0], REQUIRED[r][1]))
            return mbs_fail(err, MBS_ERR_PARSE, "%s: [%s] %s: missing (every scenario must set it)", sc->path,
                            REQUIRED[r][0], REQUIRED[r][1]);
    return MBS_OK;
}

static void read_controller(mbs_scenario *sc)
{
    sc->controller_dt = get_num(sc, "controller", "dt", 0);
}

#define MAX_SUBSTEPS 1e9    /* stepper steps per controller period */
#define MAX_PERIODS 1e15    /* controller periods per run */

/* Checks that need several keys at once. */
static int check_together(mbs_scenario *sc, mbs_error *err)
{
    const mbs_scenario_entry *sdt = find(sc, "stepper", "dt");
    if (sc->dt > sc->controller_dt * (1 + 1e-9))
        return fail_at(sc, sdt, err, MBS_ERR_ARG, "out of range: %g is longer than the controller period [controller] dt = %g",
                       sc->dt, sc->controller_dt);
    double ratio = sc->controller_dt / sc->dt;
    /* the loop counts sub-steps per controller period in an int and controller periods in a
     * long: bounds far beyond any real run keep both conversions defined */
    if (!(ratio <= MAX_SUBSTEPS))
        return fail_at(sc, sdt, err, MBS_ERR_ARG,
                       "out of range: %g makes %.3g steps per controller period [controller] dt = %g (at most %g)",
                       sc->dt, ratio, sc->controller_dt, MAX_SUBSTEPS);
    double periods = sc->duration / sc->controller_dt;
    if (!(periods <= MAX_PERIODS))
        return fail_at(sc, find(sc, "run", "duration"), err, MBS_ERR_ARG,
                       "out of range: %g is %.3g controller periods of %g s (at most %g)", sc->duration, periods,
                       sc->controller_dt, MAX_PERIODS);
    if (fabs(ratio - floor(ratio + 0.5)) > 1e-6 * ratio)
        return fail_at(sc, sdt, err, MBS_ERR_ARG,
                       "out of range: %g does not divide the controller period [controller] dt = %g into whole steps",
                       sc->dt, sc->controller_dt);
    if (sc->duration < sc->controller_dt)
        return fail_at(sc, find(sc, "run", "duration"), err, MBS_ERR_ARG,
                       "out of range: %g is shorter than one controller period (%g)", sc->duration, sc->controller_dt);
    for (int k = 0; k < 3; k++)
        if (!(sc->box_min[k] < sc->box_max[k]))
            return fail_at(sc, find(sc, "run", "box"), err, MBS_ERR_ARG,
                           "out of range: the box is xmin ymin zmin xmax ymax zmax with each min < max");
    return MBS_OK;
}

static void scenario_dir(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, n, ".");
    else if (slash == path) snprintf(dir, n, "/");
    else snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

static int load_model(mbs_scenario *sc, mbs_error *err)
{
    const mbs_scenario_entry *e = find(sc, "model", "urdf");
    char dir[MBS_PATH_LEN];
    scenario_dir(sc->path, dir, sizeof dir);
    if (e->value[0] == '/' || !strchr(sc->path, '/')) snprintf(sc->urdf, sizeof sc->urdf, "%s", e->value);
    else if ((size_t)snprintf(sc->urdf, sizeof sc->urdf, "%s/%s", dir, e->value) >= sizeof sc->urdf)
        return fail_at(sc, e, err, MBS_ERR_ARG, "path too long");
    FILE *f = fopen(sc->urdf, "rb");
    if (!f) return fail_at(sc, e, err, MBS_ERR_IO, "cannot open '%s': %s", sc->urdf, strerror(errno));
    fclose(f);
    mbs_error merr;
    mbs_error_clear(&merr);
    sc->model = mbs_model_from_urdf(sc->urdf, sc->floating, &merr);
    /* the model's warnings join the scenario's, one line each */
    for (char *line = merr.warnings, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) { mbs_warn(err, "%s", line); break; }
        *nl = '\0';
        mbs_warn(err, "%s", line);
    }
    if (!sc->model) return fail_at(sc, e, err, merr.code ? merr.code : MBS_ERR_MODEL, "%s", merr.msg);
    return MBS_OK;
}

static int initial_posture(mbs_scenario *sc, mbs_error *err)
{
    const mbs_model *m = sc->model;
    sc->q0 = calloc((size_t)mbs_model_nq(m) + 1, sizeof(double));
    if (!sc->q0) return mbs_fail(err, MBS_ERR_NOMEM, "out of memory");
    mbs_neutral(m, sc->q0);
    const mbs_scenario_entry *bp = find(sc, "model", "base_position"), *br = find(sc, "model", "base_rpy");
    int root_free = mbs_model_njoints(m) > 0 && mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER;
    if ((bp || br) && !root_free)
        return fail_at(sc, bp ? bp : br, err, MBS_ERR_ARG, "the model has no free-flyer root (set floating = 1)");
    if (root_free) {
        int iq = mbs_joint_idx_q(m, 0);
        get_nums(sc, "model", "base_position", sc->q0 + iq, 3);
        double rpy[3] = {0, 0, 0};
        get_nums(sc, "model", "base_rpy", rpy, 3);
        rpy_to_quat(rpy, sc->q0 + iq + 3);
    }
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "model") != 0 || strncmp(e->key, "q.", 2) != 0) continue;
        int j = mbs_joint_id(m, e->key + 2);
        if (j < 0) return fail_at(sc, e, err, MBS_ERR_ARG, "no joint '%s' in model '%s'", e->key + 2, mbs_model_name(m));
        if (mbs_joint_nq(m, j) != 1)
            return fail_at(sc, e, err, MBS_ERR_ARG, "joint '%s' has %d coordinates; only 1-coordinate joints are set "
                           "this way", e->key + 2, mbs_joint_nq(m, j));
        sc->q0[mbs_joint_idx_q(m, j)] = get_num(sc, "model", e->key, 0);
    }
    return MBS_OK;
}

/* Appends a contact point on frame name (checked to exist) from entry e. */
static int add_contact(mbs_scenario *sc, const mbs_scenario_entry *e, const char *name, const double offset[3],
                       double radius, mbs_error *err)
{
    if (mbs_frame_id(sc->model, name) < 0)
        return fail_at(sc, e, err, MBS_ERR_ARG, "no frame '%s' in model '%s'", name, mbs_model_name(sc->model));
    if (sc->ncontacts >= MBS_SIM_MAX_CONTACTS)
        return fail_at(sc, e, err, MBS_ERR_ARG, "out of range: more than %d contact points", MBS_SIM_MAX_CONTACTS);
    mbs_scenario_contact *c = &sc->contacts[sc->ncontacts++];
    snprintf(c->frame, sizeof c->frame, "%s", name);
    memcpy(c->offset, offset, sizeof c->offset);
    c->radius = radius;
    return MBS_OK;
}

/* [contact] points: one "FRAME x y z" per line, each point with its own offset in its frame
 * (after the points of `frames`, in file order). */
static int read_points(mbs_scenario *sc, double radius, mbs_error *err)
{
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "contact") != 0 || strcmp(e->key, "points") != 0) continue;
        char name[MBS_NAME_LEN], bad[128];
        const char *rest = NULL;
        double x[3] = {0, 0, 0};
        split_point(e->value, name, sizeof name, &rest);   /* checked by check_point */
        parse_numbers(rest, x, 3, bad, sizeof bad);
        int rc = add_contact(sc, e, name, x, radius, err);
        if (rc != MBS_OK) return rc;
    }
    return MBS_OK;
}

static int read_contacts(mbs_scenario *sc, mbs_error *err)
{
    mbs_material *mt = &sc->material;
    mt->k_normal = get_num(sc, "contact", "stiffness", 1e5);
    mt->b_normal = get_num(sc, "contact", "damping", 300);
    mt->k_tangent = get_num(sc, "contact", "stiffness_tangent", mt->k_normal);
    mt->b_tangent = get_num(sc, "contact", "damping_tangent", mt->b_normal);
    mt->mu = get_num(sc, "contact", "friction", 1);
    double offset[3] = {0, 0, 0}, radius = get_num(sc, "contact", "radius", 0);
    get_nums(sc, "contact", "offset", offset, 3);
    /* frames: names separated by spaces or commas, over one or more lines */
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "contact") != 0 || strcmp(e->key, "frames") != 0) continue;
        const char *p = e->value;
        char name[MBS_NAME_LEN];
        for (int len; (len = mbs_next_word(&p, name, sizeof name)) != 0;) {
            if (len < 0) return fail_at(sc, e, err, MBS_ERR_ARG, "frame name too long");
            int rc = add_contact(sc, e, name, offset, radius, err);
            if (rc != MBS_OK) return rc;
        }
    }
    return read_points(sc, radius, err);
}

static int read_environment(mbs_scenario *sc, mbs_error *err)
{
    mbs_environment *env = &sc->env;
    if (get_num(sc, "environment", "ground", 1) != 0) {
        mbs_plane *g = &env->planes[env->nplanes++];
        g->normal[0] = g->normal[1] = 0;
        g->normal[2] = 1;
        g->offset = get_num(sc, "environment", "ground_height", 0);
        g->material = sc->material;
    }
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "environment") != 0) continue;
        double x[8] = {0};
        char bad[128];
        int n = parse_numbers(e->value, x, 8, bad, sizeof bad);
        if (strcmp(e->key, "plane") == 0) {
            double nn = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
            if (!(nn > 1e-12)) return fail_at(sc, e, err, MBS_ERR_ARG, "out of range: the normal (first 3 numbers) is zero");
            if (env->nplanes >= MBS_MAX_PLANES) return fail_at(sc, e, err, MBS_ERR_ARG, "out of range: more than %d planes", MBS_MAX_PLANES);
            mbs_plane *p = &env->planes[env->nplanes++];
            for (int k = 0; k < 3; k++) p->normal[k] = x[k] / nn;
            p->offset = x[3];
            p->material = sc->material;
        } else if (strcmp(e->key, "box") == 0) {
            if (!(x[3] > 0 && x[4] > 0 && x[5] > 0))
                return fail_at(sc, e, err, MBS_ERR_ARG, "out of range: half sizes (numbers 4 to 6) must be > 0");
            if (env->nboxes >= MBS_MAX_BOXES) return fail_at(sc, e, err, MBS_ERR_ARG, "out of range: more than %d boxes", MBS_MAX_BOXES);
            mbs_box *b = &env->boxes[env->nboxes++];
            memcpy(b->center, x, 3 * sizeof(double));
            memcpy(b->half, x + 3, 3 * sizeof(double));
            double yaw = n > 6 ? x[6] : 0, c = cos(yaw), s = sin(yaw);
            double R[9] = {c, s, 0, -s, c, 0, 0, 0, 1};   /* about z, column-major */
            memcpy(b->R, R, sizeof R);
            b->material = sc->material;
        }
    }
    return MBS_OK;
}

int mbs_scenario_scheme_options(const mbs_scenario *sc, const char *scheme, mbs_option *opts, int *idx)
{
    int n = 0;
    for (int i = 0; i < sc->noptions; i++)
        if (strcmp(sc->options[i].scheme, scheme) == 0) {
            opts[n].key = sc->options[i].key;
            opts[n].value = sc->options[i].value;
            if (idx) idx[n] = i;
            n++;
        }
    return n;
}

void mbs_scenario_option_where(const mbs_scenario *sc, int i, char *buf, size_t n)
{
    const mbs_scenario_option *o = &sc->options[i];
    if (o->line > 0) snprintf(buf, n, "%s:%d: [%s] %s", sc->path, o->line, o->scheme, o->key);
    else snprintf(buf, n, "%s: --set %s.%s=%s", sc->path, o->scheme, o->key, o->value);
}

/* The controller's options against each other (the jump's phases within its period, say). */
static int check_controller(const mbs_scenario *sc, mbs_error *err)
{
    mbs_option opts[MBS_SIM_MAX_OPTIONS];
    int idx[MBS_SIM_MAX_OPTIONS];
    int n = mbs_scenario_scheme_options(sc, "controller", opts, idx);
    const char *key = NULL;
    mbs_error e;
    mbs_error_clear(&e);
    if (mbs_controller_check(sc->controller, opts, n, &key, &e) == MBS_OK) return MBS_OK;
    char w[MBS_PATH_LEN + 256];
    int at = -1;
    for (int i = 0; key && i < n; i++)
        if (strcmp(opts[i].key, key) == 0) at = idx[i];
    if (at >= 0) mbs_scenario_option_where(sc, at, w, sizeof w);
    else mbs_scenario_where(sc, "controller", "type", w, sizeof w);
    return mbs_fail(err, e.code, "%s: %s", w, e.msg);
}

/* The whole file in memory (not NUL-terminated: the reader stops at len), so that
 * the reader can count lines; NULL with err filled on failure. */
static char *read_scenario_file(const char *path, size_t *len_out, mbs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) { mbs_fail(err, MBS_ERR_IO, "%s: cannot open scenario: %s", path, strerror(errno)); return NULL; }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            char *t = realloc(text, cap = 2 * cap + 8192);
            if (!t) { free(text); fclose(f); mbs_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
            text = t;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096) break;
    }
    int rerr = ferror(f);
    fclose(f);
    if (rerr) {
        free(text);
        mbs_fail(err, MBS_ERR_IO, "%s: read error", path);
        return NULL;
    }
    *len_out = len;
    return text;
}

mbs_scenario *mbs_scenario_load(const char *path, const char *const *overrides, int noverrides, mbs_error *err)
{
    if (err) mbs_error_clear(err);
    if (!path) { mbs_fail(err, MBS_ERR_ARG, "mbs_scenario_load: no file"); return NULL; }
    size_t len = 0;
    char *text = read_scenario_file(path, &len, err);
    if (!text) return NULL;
    mbs_scenario *sc = mbs_scenario_load_text(path, text, len, overrides, noverrides, err);
    free(text);
    return sc;
}

mbs_scenario *mbs_scenario_load_text(const char *path, const char *text, size_t len, const char *const *overrides,
                                     int noverrides, mbs_error *err)
{
    if (err) mbs_error_clear(err);
    if (!path || (!text && len)) { mbs_fail(err, MBS_ERR_ARG, "mbs_scenario_load_text: no name or no text"); return NULL; }
    if (!text) text = "";
    mbs_scenario *sc = calloc(1, sizeof *sc);
    if (!sc) { mbs_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    snprintf(sc->path, sizeof sc->path, "%s", path);
    if (len && memchr(text, '\0', len)) {
        mbs_fail(err, MBS_ERR_PARSE, "%s: not a text file (NUL byte)", path);
        goto fail;
    }
    parse_ctx ctx = {sc, {text, text + len, 0, 0, 0, 0, NULL, 0}, 0, 0};
    int bad_line = ini_parse_stream(read_line, &ctx.rd, on_key, &ctx);
    if (ctx.nomem || ctx.rd.nomem || bad_line == -2) {
        free(ctx.rd.headers);
        mbs_fail(err, MBS_ERR_NOMEM, "out of memory");
        goto fail;
    }
    /* an unknown section, at its header line: reported before the keys in it */
    for (int i = 0; i < ctx.rd.nheaders; i++) {
        const header *h = &ctx.rd.headers[i];
        if (known_section(h->name) || (bad_line > 0 && bad_line < h->line)) continue;
        char w[MBS_PATH_LEN + 16];
        snprintf(w, sizeof w, "%s:%d", path, h->line);
        unknown_section(w, h->name, err);
        free(ctx.rd.headers);
        goto fail;
    }
    free(ctx.rd.headers);
    int first = 0;
    const char *why = NULL;
    if (bad_line > 0) { first = bad_line; why = "syntax error (expected [section] or key = value)"; }
    if (ctx.rd.long_line && (!first || ctx.rd.long_line <= first)) { first = ctx.rd.long_line; why = "line too long (at most 197 characters)"; }
    if (ctx.outside_line && (!first || ctx.outside_line <= first)) { first = ctx.outside_line; why = "key outside any [section]"; }
    if (first) { mbs_fail(err, MBS_ERR_PARSE, "%s:%d: %s", path, first, why); goto fail; }

    for (int i = 0; overrides && i < noverrides; i++)
        if (apply_override(sc, overrides[i], err)) goto fail;
    if (check_entries(sc, err)) goto fail;

    /* every value is valid now: read them with their defaults */
    sc->floating = (int)get_num(sc, "model", "floating", 1);
    read_controller(sc);
    const mbs_scenario_entry *name = find(sc, "stepper", "name");
    snprintf(sc->stepper, sizeof sc->stepper, "%s", name ? name->value : "expo");
    if (!mbs_stepper_find(sc->stepper)) {
        char known[256] = "";
        for (int s = 0; s < mbs_stepper_count(); s++) {
            strncat(known, s ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, mbs_stepper_at(s)->name, sizeof known - strlen(known) - 1);
        }
        if (name) fail_at(sc, name, err, MBS_ERR_ARG, "unknown stepper '%s' (known: %s)", sc->stepper, known);
        else mbs_fail(err, MBS_ERR_ARG, "%s: [stepper] name: unknown stepper '%s' (the default; known: %s)", path, sc->stepper, known);
        goto fail;
    }
    sc->dt = get_num(sc, "stepper", "dt", 0);
    sc->duration = get_num(sc, "run", "duration", 0);
    sc->max_velocity = get_num(sc, "run", "max_velocity", 1e3);
    double box[6] = {-1e3, -1e3, -10, 1e3, 1e3, 1e3};
    get_nums(sc, "run", "box", box, 6);
    memcpy(sc->box_min, box, sizeof sc->box_min);
    memcpy(sc->box_max, box + 3, sizeof sc->box_max);
    const mbs_scenario_entry *csv = find(sc, "output", "csv");
    if (csv) snprintf(sc->csv, sizeof sc->csv, "%s", csv->value);
    sc->csv_every = (int)get_num(sc, "output", "every", 1);
    if (check_together(sc, err)) goto fail;

    /* scheme options: every section named after a stepper, and the controller's keys, for
     * mbs_sim_new to hand over */
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || spec_of(e->section, e->key)) continue;
        int ctrl = strcmp(e->section, "controller") == 0;
        if (!mbs_stepper_find(e->section) && !ctrl) continue;
        /* another controller's key was warned about and is left out */
        if (ctrl && !mbs_options_find(mbs_controller_find(sc->controller)->options, e->key, NULL)) continue;
        if (sc->noptions >= MBS_SIM_MAX_OPTIONS) { fail_at(sc, e, err, MBS_ERR_ARG, "out of range: too many scheme options"); goto fail; }
        mbs_scenario_option *o = &sc->options[sc->noptions++];
        if (strlen(e->key) >= sizeof o->key || strlen(e->value) >= sizeof o->value) {
            fail_at(sc, e, err, MBS_ERR_ARG, "key or value too long");
            goto fail;
        }
        snprintf(o->scheme, sizeof o->scheme, "%s", e->section);
        snprintf(o->key, sizeof o->key, "%s", e->key);
        snprintf(o->value, sizeof o->value, "%s", e->value);
        o->line = e->line;
    }

    if (check_controller(sc, err) || load_model(sc, err) || initial_posture(sc, err) || read_contacts(sc, err) ||
        read_environment(sc, err))
        goto fail;
    return sc;
fail:
    mbs_scenario_free(sc);
    return NULL;
}

void mbs_scenario_free(mbs_scenario *sc)
{
    if (!sc) return;
    for (int i = 0; i < sc->nentries; i++) {
        free(sc->entries[i].section);
        free(sc->entries[i].key);
        free(sc->entries[i].value);
    }
    free(sc->entries);
    free(sc->q0);
    mbs_model_free(sc->model);
    free(sc);
}
