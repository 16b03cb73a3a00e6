/* options.c — option tables: validation, defaults and storage for every stepper and
 * controller (the declarations and the format are in mbs/options.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "mbs/options.h"

int mbs_options_count(const mbs_option_table *t)
{
    return t ? t->n + (t->base ? t->base->n : 0) : 0;
}

const mbs_option_spec *mbs_options_at(const mbs_option_table *t, int i, size_t *offset)
{
    int nb = t && t->base ? t->base->n : 0;
    if (!t || i < 0 || i >= mbs_options_count(t)) return NULL;
    const mbs_option_spec *s = i < nb ? &t->base->spec[i] : &t->spec[i - nb];
    if (offset) *offset = s->offset + (i < nb ? t->base_offset : 0);
    return s;
}

const mbs_option_spec *mbs_options_find(const mbs_option_table *t, const char *key, size_t *offset)
{
    for (int i = 0; key && i < mbs_options_count(t); i++) {
        const mbs_option_spec *s = mbs_options_at(t, i, offset);
        if (strcmp(s->key, key) == 0) return s;
    }
    return NULL;
}

int mbsi_word_index(const char *words, const char *w)
{
    size_t n = strlen(w);
    int i = 0;
    for (const char *p = words; p && *p; i++) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, w, n) == 0) return i;
        if (!e) break;
        p = e + 1;
    }
    return -1;
}

/* An INT alias "name=value" among words; 1 with its value when w is one. */
static int alias_value(const char *words, const char *w, long *x)
{
    size_t n = strlen(w);
    for (const char *p = words; p && *p;) {
        const char *e = strchr(p, ' '), *eq = strchr(p, '=');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (eq && eq < p + len && (size_t)(eq - p) == n && strncmp(p, w, n) == 0) {
            *x = strtol(eq + 1, NULL, 10);
            return 1;
        }
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static int in_range(const mbs_option_spec *s, double x)
{
    if (s->open & MBS_OPT_OPEN_LO ? !(x > s->lo) : !(x >= s->lo)) return 0;
    if (s->open & MBS_OPT_OPEN_HI ? !(x < s->hi) : !(x <= s->hi)) return 0;
    return 1;
}

void mbs_option_range_text(const mbs_option_spec *s, char *buf, size_t n)
{
    const char *u = s->unit && s->unit[0] ? " " : "", *unit = s->unit ? s->unit : "";
    switch (s->kind) {
    case MBS_OPT_BOOL: snprintf(buf, n, "0 or 1"); return;
    case MBS_OPT_ENUM: snprintf(buf, n, "one of: %s", s->words); return;
    case MBS_OPT_TEXT: snprintf(buf, n, "a list of names"); return;
    case MBS_OPT_REAL: case MBS_OPT_INT: {
        char alias[96] = "";
        if (s->kind == MBS_OPT_INT && s->words) snprintf(alias, sizeof alias, " (or %s)", s->words);
        const char *what = s->kind == MBS_OPT_INT ? "a whole number " : "";
        if (s->hi >= 1e300) snprintf(buf, n, "%s%s %g%s%s%s", what, s->open & MBS_OPT_OPEN_LO ? ">" : ">=", s->lo, u, unit, alias);
        else snprintf(buf, n, "%sin %s%g, %g%s%s%s%s", what, s->open & MBS_OPT_OPEN_LO ? "(" : "[", s->lo, s->hi,
                      s->open & MBS_OPT_OPEN_HI ? ")" : "]", u, unit, alias);
        return;
    }
    }
    buf[0] = '\0';
}

/* The option's value from text into *field (when not NULL); MBS_OK or an error naming both. */
static int parse(const mbs_option_table *t, const mbs_option_spec *s, const char *value, void *field, mbs_error *err)
{
    char rng[160];
    mbs_option_range_text(s, rng, sizeof rng);
    const char *v = value ? value : "";
    switch (s->kind) {
    case MBS_OPT_ENUM: {
        int i = mbsi_word_index(s->words, v);
        if (i < 0) return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: '%s' is not one of: %s", t->name, s->key, v, s->words);
        if (field) *(int *)field = i;
        return MBS_OK;
    }
    case MBS_OPT_TEXT:
        if (!v[0]) return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: empty list of names", t->name, s->key);
        if (strlen(v) >= MBS_OPTION_TEXT_LEN)
            return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: longer than %d characters", t->name, s->key, MBS_OPTION_TEXT_LEN - 1);
        if (field) snprintf((char *)field, MBS_OPTION_TEXT_LEN, "%s", v);
        return MBS_OK;
    case MBS_OPT_REAL: {
        char *end = NULL;
        errno = 0;
        double x = strtod(v, &end);
        if (end == v || *end || errno == ERANGE || !isfinite(x))
            return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: malformed number '%s' (must be %s)", t->name, s->key, v, rng);
        if (!in_range(s, x)) return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: out of range: %g (must be %s)", t->name, s->key, x, rng);
        if (field) *(double *)field = x;
        return MBS_OK;
    }
    case MBS_OPT_INT: case MBS_OPT_BOOL: {
        long x;
        if (!(s->kind == MBS_OPT_INT && alias_value(s->words, v, &x))) {
            /* the whole text a whole number: no blanks, no sign that strtol would skip */
            char *end = NULL;
            errno = 0;
            int digit = (v[0] >= '0' && v[0] <= '9') || (v[0] == '-' && v[1] >= '0' && v[1] <= '9');
            x = digit ? strtol(v, &end, 10) : 0;
            if (!digit || *end || errno)
                return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: '%s' is not a whole number (must be %s)", t->name, s->key, v, rng);
            if (s->kind == MBS_OPT_BOOL ? (x != 0 && x != 1) : !in_range(s, (double)x))
                return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: out of range: %ld (must be %s)", t->name, s->key, x, rng);
        }
        if (field) *(int *)field = (int)x;
        return MBS_OK;
    }
    }
    return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: option of unknown kind", t->name, s->key);
}

int mbs_options_defaults(const mbs_option_table *t, void *opts, mbs_error *err)
{
    for (int i = 0; i < mbs_options_count(t); i++) {
        size_t off;
        const mbs_option_spec *s = mbs_options_at(t, i, &off);
        if (s->kind == MBS_OPT_TEXT && (!s->def || !s->def[0])) {
            if (opts) ((char *)opts + off)[0] = '\0';
            continue;
        }
        if (s->kind == MBS_OPT_REAL && !s->def) {   /* no default of its own: the scheme derives one */
            if (opts) *(double *)((char *)opts + off) = NAN;
            continue;
        }
        int rc = parse(t, s, s->def, opts ? (char *)opts + off : NULL, err);
        if (rc != MBS_OK) return rc;
    }
    return MBS_OK;
}

/* The spec of option key of t and its field's offset, or an error listing t's options. */
static const mbs_option_spec *spec_of(const mbs_option_table *t, const char *key, size_t *off, mbs_error *err)
{
    const mbs_option_spec *s = mbs_options_find(t, key, off);
    if (!s) {
        char known[512] = "";
        for (int i = 0; i < mbs_options_count(t); i++) {
            strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, mbs_options_at(t, i, NULL)->key, sizeof known - strlen(known) - 1);
        }
        if (!known[0]) mbsi_fail(err, MBS_ERR_ARG, "'%s' has no option '%s'", t ? t->name : "?", key ? key : "(null)");
        else mbsi_fail(err, MBS_ERR_ARG, "'%s' has no option '%s' (options: %s)", t->name, key ? key : "(null)", known);
    }
    return s;
}

int mbs_options_set(const mbs_option_table *t, void *opts, const char *key, const char *value, mbs_error *err)
{
    size_t off;
    const mbs_option_spec *s = spec_of(t, key, &off, err);
    if (!s) return MBS_ERR_ARG;
    return parse(t, s, value, opts ? (char *)opts + off : NULL, err);
}

int mbs_option_parse(const mbs_option_table *t, const char *key, const char *value, mbs_option *out, mbs_error *err)
{
    size_t off;
    const mbs_option_spec *s = spec_of(t, key, &off, err);
    if (!s) return MBS_ERR_ARG;
    union { double x; int i; char text[MBS_OPTION_TEXT_LEN]; } field;
    int rc = parse(t, s, value, &field, err);
    if (rc != MBS_OK) return rc;
    out->key = key;
    out->word = NULL;
    out->value = 0;
    switch (s->kind) {
    case MBS_OPT_REAL: out->value = field.x; break;
    case MBS_OPT_INT: case MBS_OPT_BOOL: out->value = field.i; break;
    case MBS_OPT_ENUM: case MBS_OPT_TEXT: out->word = value; break;
    }
    return MBS_OK;
}

int mbs_options_apply(const mbs_option_table *t, void *opts, const mbs_option *o, mbs_error *err)
{
    if (!o) return mbsi_fail(err, MBS_ERR_ARG, "no option (NULL)");
    size_t off;
    const mbs_option_spec *s = spec_of(t, o->key, &off, err);
    if (!s) return MBS_ERR_ARG;
    void *field = opts ? (char *)opts + off : NULL;
    char rng[160];
    mbs_option_range_text(s, rng, sizeof rng);
    /* a word is text by nature: the table's own parser reads it (an ENUM's word, an alias) */
    if (o->word) {
        if (s->kind == MBS_OPT_REAL || s->kind == MBS_OPT_BOOL)
            return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: '%s' is a word where a number is wanted (must be %s)", t->name, s->key,
                             o->word, rng);
        return parse(t, s, o->word, field, err);
    }
    const double x = o->value;
    switch (s->kind) {
    case MBS_OPT_ENUM: case MBS_OPT_TEXT:
        return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: wants a word, not the number %g (must be %s)", t->name, s->key, x, rng);
    case MBS_OPT_REAL:
        if (!isfinite(x) || !in_range(s, x))
            return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: out of range: %g (must be %s)", t->name, s->key, x, rng);
        if (field) *(double *)field = x;
        return MBS_OK;
    case MBS_OPT_INT: case MBS_OPT_BOOL:
        if (!(x == floor(x)) || fabs(x) > 2e9)
            return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: %g is not a whole number (must be %s)", t->name, s->key, x, rng);
        if (s->kind == MBS_OPT_BOOL ? (x != 0 && x != 1) : !in_range(s, x))
            return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: out of range: %g (must be %s)", t->name, s->key, x, rng);
        if (field) *(int *)field = (int)x;
        return MBS_OK;
    }
    return mbsi_fail(err, MBS_ERR_ARG, "%s.%s: option of unknown kind", t->name, s->key);
}

void *mbs_options_new(const mbs_option_table *t, const mbs_option *opts, int n, mbs_error *err)
{
    if (n < 0 || (n > 0 && !opts)) {
        mbsi_fail(err, MBS_ERR_ARG, "%d options given at %s", n, opts ? "an array" : "NULL");
        return NULL;
    }
    void *o = calloc(1, t && t->size ? t->size : 1);
    if (!o) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    mbs_error e;
    mbs_error_clear(&e);
    if (mbs_options_defaults(t, o, &e) != MBS_OK) {
        mbsi_fail(err, e.code, "%s (a default of the table)", e.msg);
        free(o);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (mbs_options_apply(t, o, &opts[i], &e) != MBS_OK) {
            mbsi_fail(err, e.code, "%s: %s", opts[i].key ? opts[i].key : "(null)", e.msg);
            free(o);
            return NULL;
        }
    return o;
}

int mbs_options_describe(const mbs_scheme_info *info, int markdown, char *buf, size_t n)
{
    mbs_text b = {buf, buf ? n : 0, 0};
    if (buf && n) buf[0] = '\0';
    const mbs_option_table *t = info->options;
    int count = mbs_options_count(t);
    if (markdown) {
        mbsi_textf(&b, "#### `%s`\n\n%s.\n\n", info->name, info->summary);
        if (!count) { mbsi_textf(&b, "No options.\n"); return (int)b.len; }
        mbsi_textf(&b, "| key | value | default | what it does |\n|---|---|---|---|\n");
    } else {
        mbsi_textf(&b, "  %-18s %s\n", info->name, info->summary);
    }
    for (int i = 0; i < count; i++) {
        const mbs_option_spec *s = mbs_options_at(t, i, NULL);
        char rng[160];
        mbs_option_range_text(s, rng, sizeof rng);
        const char *def = s->def ? s->def : "derived";
        if (s->kind == MBS_OPT_TEXT && (!s->def || !s->def[0])) def = "required";
        if (markdown) mbsi_textf(&b, "| `%s` | %s | %s | %s |\n", s->key, rng, def, s->doc);
        else mbsi_textf(&b, "      %s = %s: %s; %s\n", s->key, def, rng, s->doc);
    }
    return (int)b.len;
}

const mbs_scheme_info *mbsi_scheme_find(const mbs_scheme_info *(*at)(int), int count, const char *name)
{
    for (int i = 0; name && i < count; i++)
        if (strcmp(at(i)->name, name) == 0) return at(i);
    return NULL;
}

void mbsi_scheme_names(const mbs_scheme_info *(*at)(int), int count, const char *sep, char *buf, size_t n)
{
    mbs_text b = {buf, n, 0};
    if (n) buf[0] = '\0';
    for (int i = 0; i < count; i++) mbsi_textf(&b, "%s%s", i ? sep : "", at(i)->name);
}
