/* ini.c — INI text into scenario entries (read by libinih), with the line of every key (inih
 * passes none to handlers unless built with INI_HANDLER_LINENO, which Debian's is not, so the
 * reader counts them), --set overrides, located messages, and the generic value checks. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "ini.h"

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
    e->section = mbsi_strdup(section);
    e->key = mbsi_strdup(key);
    e->value = mbsi_strdup(value);
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

void mbsi_ini_where(const mbs_scenario *sc, const mbs_scenario_entry *e, char *buf, size_t n)
{
    if (e->line > 0) snprintf(buf, n, "%s:%d: [%s] %s", sc->path, e->line, e->section, e->key);
    else snprintf(buf, n, "%s: --set %s.%s=%s", sc->path, e->section, e->key, e->value);
}

int mbsi_ini_fail_at(const mbs_scenario *sc, const mbs_scenario_entry *e, mbs_error *err, int code, const char *fmt, ...)
{
    char w[MBS_PATH_LEN + 256], what[400];
    mbsi_ini_where(sc, e, w, sizeof w);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return mbsi_fail(err, code, "%s: %s", w, what);
}

const mbs_scenario_entry *mbsi_ini_find(const mbs_scenario *sc, const char *section, const char *key)
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
    const mbs_scenario_entry *e = sc ? mbsi_ini_find(sc, section, key) : NULL;
    return e ? e->line : -1;
}

void mbs_scenario_where(const mbs_scenario *sc, const char *section, const char *key, char *buf, size_t n)
{
    const mbs_scenario_entry *e = mbsi_ini_find(sc, section, key);
    if (e) mbsi_ini_where(sc, e, buf, n);
    else snprintf(buf, n, "%s: [%s] %s", sc->path, section, key);
}

/* Parses up to max numbers separated by spaces, tabs or commas; returns the count, or -1 with
 * the offending word in bad when a word is not a finite number. */
int mbsi_ini_numbers(const char *s, double *out, int max, char *bad, size_t nbad)
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
    if (k->lo <= -BIG && k->hi >= BIG) snprintf(buf, n, "any");
    else if (k->hi >= BIG) snprintf(buf, n, "%s %g", k->open & OPEN_LO ? ">" : ">=", k->lo);
    else snprintf(buf, n, "in %s%g, %g%s", k->open & OPEN_LO ? "(" : "[", k->lo, k->hi, k->open & OPEN_HI ? ")" : "]");
}

static int in_range(const keyspec *k, double x)
{
    if (k->open & OPEN_LO ? !(x > k->lo) : !(x >= k->lo)) return 0;
    if (k->open & OPEN_HI ? !(x < k->hi) : !(x <= k->hi)) return 0;
    return 1;
}

/* The name and the numbers of a K_POINT value "NAME x y z": the name (at most n - 1 bytes)
 * into name, and a pointer to the text of the numbers; 1 when the first word is missing or
 * too long. */
int mbsi_ini_split_point(const char *value, char *name, size_t n, const char **rest)
{
    *rest = value;
    return mbsi_next_word(rest, name, n) <= 0;
}

/* A K_POINT value: a frame name (resolved against the model later), then exactly nmin numbers
 * in the key's range. */
static int check_point(const mbs_scenario *sc, const mbs_scenario_entry *e, const keyspec *k, double *x, int *count,
                       mbs_error *err)
{
    char name[MBS_NAME_LEN], bad[128], rng[64];
    const char *rest = NULL;
    if (mbsi_ini_split_point(e->value, name, sizeof name, &rest))
        return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "expected a frame name and %d numbers, got '%s'", k->nmin, e->value);
    char *end;
    strtod(name, &end);
    if (*end == '\0')   /* the whole first word is a number: the frame was left out */
        return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "expected a frame name before the numbers, got '%s'", e->value);
    int n = mbsi_ini_numbers(rest, x, k->nmax, bad, sizeof bad);
    if (n < 0) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "malformed number '%s'", bad);
    if (n != k->nmin) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "expected a frame name and %d numbers, got %d numbers", k->nmin, n);
    for (int i = 0; i < n; i++)
        if (!in_range(k, x[i])) {
            range_text(k, rng, sizeof rng);
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: %g (must be %s)", x[i], rng);
        }
    *count = n;
    return MBS_OK;
}

/* Checks one entry against its spec; numbers go to x (up to 7). */
int mbsi_ini_check_value(const mbs_scenario *sc, const mbs_scenario_entry *e, const keyspec *k, double *x, int *count,
                       mbs_error *err)
{
    char bad[128], rng[64];
    *count = 0;
    switch (k->kind) {
    case K_POINT:
        return check_point(sc, e, k, x, count, err);
    case K_STR:
        if (!e->value[0]) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "empty value");
        return MBS_OK;
    case K_NAMES:
        if (!e->value[0]) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "empty list of names");
        return MBS_OK;
    case K_NUM: case K_INT: case K_BOOL: case K_VEC: {
        int nmin = k->kind == K_VEC ? k->nmin : 1, nmax = k->kind == K_VEC ? k->nmax : 1;
        int n = mbsi_ini_numbers(e->value, x, nmax, bad, sizeof bad);
        if (n < 0) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "malformed number '%s'", bad);
        if (n < nmin || n > nmax) {
            if (nmin == 1 && nmax == 1) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "malformed number '%s' (expected one number)", e->value);
            if (nmin == nmax) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "expected %d numbers, got %d", nmin, n);
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "expected %d to %d numbers, got %d", nmin, nmax, n);
        }
        for (int i = 0; i < n; i++) {
            if ((k->kind == K_INT || k->kind == K_BOOL) && x[i] != floor(x[i]))
                return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "malformed number '%s' (expected an integer)", e->value);
            if (k->kind == K_BOOL && x[i] != 0 && x[i] != 1)
                return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: %s (expected 0 or 1)", e->value);
            if (!in_range(k, x[i])) {
                range_text(k, rng, sizeof rng);
                return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: %g (must be %s)", x[i], rng);
            }
        }
        *count = n;
        return MBS_OK;
    }
    }
    return MBS_OK;
}

/* The numbers of a single-valued key (the defaults stay when it is absent). */
void mbsi_ini_nums(const mbs_scenario *sc, const char *section, const char *key, double *out, int n)
{
    const mbs_scenario_entry *e = mbsi_ini_find(sc, section, key);
    if (!e) return;
    char bad[128];
    double x[8];
    int got = mbsi_ini_numbers(e->value, x, 8, bad, sizeof bad);
    for (int i = 0; i < n && i < got; i++) out[i] = x[i];
}

double mbsi_ini_num(const mbs_scenario *sc, const char *section, const char *key, double def)
{
    mbsi_ini_nums(sc, section, key, &def, 1);
    return def;
}

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

int mbsi_ini_override(mbs_scenario *sc, const char *ov, mbs_error *err)
{
    const char *eq = ov ? strchr(ov, '=') : NULL;
    const char *dot = ov ? strchr(ov, '.') : NULL;
    if (!ov || !eq || !dot || dot > eq)
        return mbsi_fail(err, MBS_ERR_ARG, "%s: bad --set '%s': expected section.key=value", sc->path, ov ? ov : "(null)");
    char section[MBS_NAME_LEN], key[MBS_NAME_LEN], value[512];
    /* white space around the parts is dropped, as inih drops it in the file */
    if (trim_copy(section, sizeof section, ov, dot) || trim_copy(key, sizeof key, dot + 1, eq) ||
        trim_copy(value, sizeof value, eq + 1, eq + strlen(eq)))
        return mbsi_fail(err, MBS_ERR_ARG, "%s: bad --set '%s': section, key or value too long", sc->path, ov);
    if (!section[0] || !key[0])
        return mbsi_fail(err, MBS_ERR_ARG, "%s: bad --set '%s': expected section.key=value", sc->path, ov);
    /* the override replaces every value the file gave that key */
    for (int i = 0; i < sc->nentries; i++)
        if (strcmp(sc->entries[i].section, section) == 0 && strcmp(sc->entries[i].key, key) == 0) sc->entries[i].dead = 1;
    if (add_entry(sc, section, key, value, 0)) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    return MBS_OK;
}

/* The whole file in memory (not NUL-terminated: the reader stops at len), so that
 * the reader can count lines; NULL with err filled on failure. */
char *mbsi_ini_read_file(const char *path, size_t *len_out, mbs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) { mbsi_fail(err, MBS_ERR_IO, "%s: cannot open scenario: %s", path, strerror(errno)); return NULL; }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            char *t = realloc(text, cap = 2 * cap + 8192);
            if (!t) { free(text); fclose(f); mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
            text = t;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096) break;
    }
    int rerr = ferror(f), dir = rerr && errno == EISDIR;   /* a directory opens; reading it fails so */
    fclose(f);
    if (rerr) {
        free(text);
        mbsi_fail(err, MBS_ERR_IO, "%s: %s", path, dir ? "it is a directory, not a scenario file" : "read error");
        return NULL;
    }
    *len_out = len;
    return text;
}

int mbsi_ini_read(mbs_scenario *sc, const char *text, size_t len, char (**names)[MBS_NAME_LEN], int **lines,
                 int *nheaders, mbs_error *syntax, mbs_error *err)
{
    *names = NULL;
    *lines = NULL;
    *nheaders = 0;
    parse_ctx ctx = {sc, {text, text + len, 0, 0, 0, 0, NULL, 0}, 0, 0};
    int bad_line = ini_parse_stream(read_line, &ctx.rd, on_key, &ctx);
    int n = 0;
    if (!ctx.nomem && !ctx.rd.nomem && bad_line != -2) {
        *names = malloc(sizeof **names * (size_t)(ctx.rd.nheaders + 1));
        *lines = malloc(sizeof **lines * (size_t)(ctx.rd.nheaders + 1));
    }
    if (!*names || !*lines) {
        free(ctx.rd.headers);
        free(*names);
        free(*lines);
        *names = NULL;
        *lines = NULL;
        return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < ctx.rd.nheaders; i++) {
        const header *h = &ctx.rd.headers[i];
        if (bad_line > 0 && bad_line < h->line) continue;
        memcpy((*names)[n], h->name, sizeof h->name);
        (*lines)[n++] = h->line;
    }
    *nheaders = n;
    free(ctx.rd.headers);
    int first = 0;
    const char *why = NULL;
    if (bad_line > 0) { first = bad_line; why = "syntax error (expected [section] or key = value)"; }
    if (ctx.rd.long_line && (!first || ctx.rd.long_line <= first)) { first = ctx.rd.long_line; why = "line too long (at most 197 characters)"; }
    if (ctx.outside_line && (!first || ctx.outside_line <= first)) { first = ctx.outside_line; why = "key outside any [section]"; }
    if (first) mbsi_fail(syntax, MBS_ERR_PARSE, "%s:%d: %s", sc->path, first, why);
    return MBS_OK;
}

void mbsi_ini_describe(const keyspec *k, char *buf, size_t n)
{
    char rng[64] = "";
    int numbers = k->kind == K_NUM || k->kind == K_VEC || k->kind == K_POINT;
    if (numbers) range_text(k, rng, sizeof rng);
    if (k->kind == K_INT) snprintf(rng, sizeof rng, "a whole number in [%g, %g]", k->lo, k->hi);
    if (k->kind == K_BOOL) snprintf(rng, sizeof rng, "0 or 1");
    const char *unit = k->unit && k->unit[0] && numbers ? k->unit : "";
    snprintf(buf, n, "%s%s%s%s%s", k->doc, rng[0] ? "; " : "", rng, unit[0] ? " " : "", unit);
}
