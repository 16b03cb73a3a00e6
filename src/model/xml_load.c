/* xml_load.c — the pieces the URDF and MJCF loaders share (xml_load.h). */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "xml_load.h"
#include "../spatial/spatial.h"

/* No XML_PARSE_NOENT / XML_PARSE_DTDLOAD: external entities are never read; no
 * XML_PARSE_HUGE: libxml2 keeps its entity-amplification limits; NOERROR / NOWARNING:
 * libxml2 never prints, its message goes into mbs_error instead. */
#define XML_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES)

const char *mbsi_xml_file(const mbsi_xml_src *s, const xmlNode *n)
{
    return n && n->doc && n->doc->URL ? (const char *)n->doc->URL : s->file;
}

int mbsi_xml_fail(const mbsi_xml_src *s, const xmlNode *n, int code, const char *fmt, ...)
{
    char what[MBS_ERROR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    long line = n ? xmlGetLineNo(n) : 0;
    const char *file = mbsi_xml_file(s, n);
    if (s->owner)
        mbsi_fail(s->err, code, "%s:%ld: %s '%s': %s", file, line, s->kind, s->owner, what);
    else
        mbsi_fail(s->err, code, "%s:%ld: %s: %s", file, line, s->kind, what);
    return -1;
}

int mbsi_xml_builder_failed(const mbsi_xml_src *s, const xmlNode *n)
{
    char msg[MBS_ERROR_MSG_LEN];
    memcpy(msg, s->err->msg, sizeof msg);
    msg[sizeof msg - 1] = 0;
    return mbsi_xml_fail(s, n, s->err->code ? s->err->code : MBS_ERR_NOMEM, "%s", msg);
}

int mbsi_xml_finalize(const mbsi_xml_src *s, mbs_model *m, int pass_warnings)
{
    mbs_error fe;
    mbs_error_clear(&fe);
    if (mbs_model_finalize(m, &fe) != MBS_OK) {
        mbsi_fail(s->err, fe.code ? fe.code : MBS_ERR_MODEL, "%s: %s", s->file, fe.msg);
        mbs_error_free(&fe);
        return -1;
    }
    for (char *line = fe.warnings, *nl; pass_warnings && line && *line; line = nl + 1) {
        if (!(nl = strchr(line, '\n'))) break;
        *nl = 0;
        mbsi_warn(s->err, "%s: %s", s->file, line);
    }
    mbs_error_free(&fe);
    return 0;
}

/* Namespaces are ignored on purpose: Drake's URDFs put a default namespace on <robot>. */
const xmlNode *mbsi_xml_child(const xmlNode *n, const char *name)
{
    for (const xmlNode *k = n->children; k; k = k->next)
        if (mbsi_xml_is(k, name)) return k;
    return NULL;
}

int mbsi_xml_is(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* strtod runs in the C locale (mbsi_in_c_locale). */
int mbsi_xml_numbers(const mbsi_xml_src *s, const xmlNode *n, const char *key, int count, double *out, int required)
{
    xmlChar *value = xmlGetProp(n, BAD_CAST key);
    if (!value) {
        if (!required) return 0;
        return mbsi_xml_fail(s, n, MBS_ERR_MODEL, "<%s> is missing attribute '%s'", (const char *)n->name, key);
    }
    const char *p = (const char *)value;
    int most = count < 0 ? -count : count, got = 0, status = 1;
    for (;;) {
        while (is_space(*p)) p++;
        if (!*p) break;
        char *end;
        double x = strtod(p, &end);
        if (end == p || (*end && !is_space(*end))) {
            status = mbsi_xml_fail(s, n, MBS_ERR_MODEL, "<%s> attribute %s=\"%s\": not a number", (const char *)n->name,
                                   key, (const char *)value);
            break;
        }
        if (!isfinite(x)) {
            status = mbsi_xml_fail(s, n, MBS_ERR_MODEL, "<%s> attribute %s=\"%s\": value is not finite",
                                   (const char *)n->name, key, (const char *)value);
            break;
        }
        if (got < most) out[got] = x;
        got++;
        p = end;
    }
    if (status == 1 && count >= 0 && got != count)
        status = mbsi_xml_fail(s, n, MBS_ERR_MODEL, "<%s> attribute %s=\"%s\": expected %d number%s, got %d",
                               (const char *)n->name, key, (const char *)value, count, count > 1 ? "s" : "", got);
    else if (status == 1 && count < 0 && (got < 1 || got > most))
        status = mbsi_xml_fail(s, n, MBS_ERR_MODEL, "<%s> attribute %s=\"%s\": expected 1 to %d numbers, got %d",
                               (const char *)n->name, key, (const char *)value, most, got);
    else if (status == 1 && count < 0)
        status = got;
    xmlFree(value);
    return status;
}

/* The first error libxml2 raises while parsing: the cause, where the last one (what the context
 * keeps) is often a consequence far below, such as "Premature end of data" at the file's end. */
typedef struct first_xml_error {
    int seen, line;
    char what[MBS_ERROR_MSG_LEN];
} first_xml_error;

/* The parser context's structured error handler (its SAX serror, which XML_PARSE_NOERROR leaves
 * alone): keeps the first error only; data is the parser context, whose _private holds the record. */
static void keep_first_error(void *data, xmlErrorPtr e)
{
    xmlParserCtxt *px = data;
    first_xml_error *fe = px ? px->_private : NULL;
    if (!fe || fe->seen || !e || e->level < XML_ERR_ERROR) return;
    fe->seen = 1;
    fe->line = e->line;
    snprintf(fe->what, sizeof fe->what, "%s", e->message ? e->message : "not well-formed");
}

xmlDoc *mbsi_xml_parse(const char *buf, int len, const char *file, mbs_error *err)
{
    xmlInitParser();
    xmlParserCtxt *px = xmlNewParserCtxt();
    if (!px) {
        mbsi_fail(err, MBS_ERR_NOMEM, "%s: out of memory", file);
        return NULL;
    }
    first_xml_error first = {0, 0, ""};
    px->_private = &first;
    px->sax->serror = keep_first_error;
    xmlDoc *doc = xmlCtxtReadMemory(px, buf, len, file, NULL, XML_OPTIONS);
    if (!doc) {
        const xmlError *e = xmlCtxtGetLastError(px);
        char what[MBS_ERROR_MSG_LEN] = "not well-formed";
        int line = e ? e->line : 0;
        if (first.seen) {
            snprintf(what, sizeof what, "%s", first.what);
            line = first.line;
        } else if (e && e->message) {
            snprintf(what, sizeof what, "%s", e->message);
        }
        size_t n = strlen(what);
        while (n > 0 && (what[n - 1] == '\n' || what[n - 1] == ' ')) what[--n] = 0;
        mbsi_fail(err, MBS_ERR_PARSE, "%s:%d: not a valid XML document: %s", file, line, what);
    }
    xmlFreeParserCtxt(px);
    return doc;
}

char *mbsi_read_whole_file(const char *path, size_t *len, const char *what, mbs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        char why[128] = "";
        if (strerror_r(errno, why, sizeof why) != 0) snprintf(why, sizeof why, "error %d", errno);
        mbsi_fail(err, MBS_ERR_IO, "%s: cannot open: %s", path, why);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1) break;
        char *bigger = realloc(buf, 2 * cap);
        if (!bigger) { free(buf); buf = NULL; break; }
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f), dir = bad && errno == EISDIR;   /* a directory opens; reading it fails so */
    fclose(f);
    if (!buf || bad) {
        free(buf);
        if (dir) mbsi_fail(err, MBS_ERR_IO, "%s: it is a directory, not %s", path, what);
        else mbsi_fail(err, buf ? MBS_ERR_IO : MBS_ERR_NOMEM, "%s: cannot read the file", path);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

typedef struct loader_call {
    mbsi_xml_loader fn;
    const void *opt;
    const char *buf, *file;
    int len;
    mbs_error *err;
    mbs_model *m;
} loader_call;

static mbs_model *in_c_locale(loader_call *l)
{
    locale_t cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = cloc ? uselocale(cloc) : (locale_t)0;
    l->m = l->fn(l->opt, l->buf, l->len, l->file, l->err);
    if (cloc) {
        uselocale(old);
        freelocale(cloc);
    }
    return l->m;
}

mbs_model *mbsi_xml_load(int from_file, const char *src, const char *name, const char *api, const char *what,
                         mbsi_xml_loader fn, const void *opt, mbs_error *err)
{
    mbs_error_clear(err);
    if (!src) {
        mbsi_fail(err, MBS_ERR_ARG, "%s: NULL %s", api, from_file ? "path" : "string");
        return NULL;
    }
    size_t len = 0;
    char *buf = NULL;
    if (from_file) {
        if (!(buf = mbsi_read_whole_file(src, &len, what, err))) return NULL;
        name = src;
    } else {
        len = strlen(src);
        name = name ? name : "<string>";
    }
    mbs_error e;
    mbs_error_clear(&e);
    mbs_model *m = NULL;
    if (len > INT_MAX) {
        mbsi_fail(&e, MBS_ERR_IO, "%s: file too large", name);
    } else {
        loader_call l = {fn, opt, buf ? buf : src, name, (int)len, &e, NULL};
        m = in_c_locale(&l);
    }
    free(buf);
    if (err) *err = e;   /* the caller's record takes over the warnings */
    else mbs_error_free(&e);
    return m;
}

/* Trigonometric closed form. */
void mbsi_sym3_eigenvalues(const double A[9], double ev[3])
{
    double xy = A[3], xz = A[6], yz = A[7];
    double off = xy * xy + xz * xz + yz * yz;
    double q = (A[0] + A[4] + A[8]) / 3;
    double dx = A[0] - q, dy = A[4] - q, dz = A[8] - q;
    double p2 = dx * dx + dy * dy + dz * dz + 2 * off;
    if (off == 0 || p2 == 0) {
        /* Diagonal: the diagonal itself, sorted, exact. */
        double a = A[0], b = A[4], d = A[8], t;
        if (a > b) { t = a; a = b; b = t; }
        if (b > d) { t = b; b = d; d = t; }
        if (a > b) { t = a; a = b; b = t; }
        ev[0] = a; ev[1] = b; ev[2] = d;
        return;
    }
    double p = sqrt(p2 / 6);
    /* r = det((A - qI) / p) / 2 lies in [-1, 1] up to round-off. */
    double det = dx * (dy * dz - yz * yz) - xy * (xy * dz - yz * xz) + xz * (xy * yz - dy * xz);
    double r = det / (2 * p * p * p);
    r = r < -1 ? -1 : (r > 1 ? 1 : r);
    double phi = acos(r) / 3;
    ev[2] = q + 2 * p * cos(phi);
    ev[0] = q + 2 * p * cos(phi + 2.0943951023931957); /* + 2π/3 */
    ev[1] = 3 * q - ev[0] - ev[2];
}

void mbsi_rotate_inertia(const double R[9], const double Ic[9], double out[9])
{
    double Rt[9], T[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Rt[i + 3 * j] = R[j + 3 * i];
    m3_mul(Ic, Rt, T);
    m3_mul(R, T, out);
}
