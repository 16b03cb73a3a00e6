/* xml_load.h — what the two XML model loaders (urdf.c, mjcf.c) share: reading a file, parsing it
 * with libxml2 so that the first error is reported with its line, messages that name the file,
 * line and element, the one number parser, and the inertia helpers. Private to src/model/. */
#ifndef MBS_XML_LOAD_H
#define MBS_XML_LOAD_H

#include <stddef.h>

#include <libxml/tree.h>

#include "../base/base.h"
#include "mbs/model.h"

/* Where messages come from: the file (shown when a node has no document of its own), the
 * record, and the element the messages talk about ("link 'a'", "body 'torso'"). */
typedef struct mbsi_xml_src {
    const char *file;
    mbs_error *err;
    const char *kind;           /* "robot", "link", "joint", "body", ... */
    const char *owner;          /* its name, NULL when not known yet */
} mbsi_xml_src;

/* Fills the error as "file:line: kind 'owner': what", the file being the document n comes from
 * (an included file) or s->file; returns -1 so callers can `return mbsi_xml_fail(...)`. */
int mbsi_xml_fail(const mbsi_xml_src *s, const xmlNode *n, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The file a node was read from (its document's URL), s->file when unknown. */
const char *mbsi_xml_file(const mbsi_xml_src *s, const xmlNode *n);
/* A builder call failed (its message in s->err): the same code and message, with file and line. */
int mbsi_xml_builder_failed(const mbsi_xml_src *s, const xmlNode *n);

/* mbs_model_finalize in a record of its own: its error gets the file name (s->file) in s->err;
 * its warnings are passed on with the file name when pass_warnings. 0, or -1 on error. */
int mbsi_xml_finalize(const mbsi_xml_src *s, mbs_model *m, int pass_warnings);

/* First child element with this local name, NULL when none. */
const xmlNode *mbsi_xml_child(const xmlNode *n, const char *name);
/* 1 when n is an element of that local name. */
int mbsi_xml_is(const xmlNode *n, const char *name);

/* Exactly `count` finite, whitespace-separated numbers from attribute `key` of n. Returns 1 when
 * read, 0 when absent and not required (out untouched), -1 on error (filled). With count < 0,
 * between 1 and -count numbers are accepted and their number is returned. */
int mbsi_xml_numbers(const mbsi_xml_src *s, const xmlNode *n, const char *key, int count, double *out, int required);

/* Parses buf (len bytes) as the document `file` (its URL: what messages name) with a private
 * parser context: no network, no external entities, nothing printed; the first error libxml2
 * raises (its line and message) becomes an MBS_ERR_PARSE in err. NULL on failure. */
xmlDoc *mbsi_xml_parse(const char *buf, int len, const char *file, mbs_error *err);

/* A whole file from malloc (NUL-terminated; *len without it); NULL with an MBS_ERR_IO message
 * naming the file (`what`: "a URDF file", "an MJCF file", for a directory) on failure. */
char *mbsi_read_whole_file(const char *path, size_t *len, const char *what, mbs_error *err);

/* A loader's body: the model from the document in buf (len bytes) named `file` in messages, or
 * NULL with err filled; opt is the loader's options as its caller gave them (may be NULL). */
typedef mbs_model *(*mbsi_xml_loader)(const void *opt, const char *buf, int len, const char *file, mbs_error *err);
/* The frame both loaders' entry points share: err cleared, src (a path when from_file, else the
 * document itself, shown as `name`) checked and read, then fn run in the C numeric locale (model
 * files write '.' whatever the caller's locale) on a fresh record that err takes over (warnings
 * included). api names the entry point in the message for a NULL src; what says what the file
 * should be ("a URDF file"), for a directory. */
mbs_model *mbsi_xml_load(int from_file, const char *src, const char *name, const char *api, const char *what,
                         mbsi_xml_loader fn, const void *opt, mbs_error *err);

/* Eigenvalues of a symmetric 3x3 matrix (column-major) in increasing order. */
void mbsi_sym3_eigenvalues(const double A[9], double ev[3]);
/* out = R Ic Rᵀ. */
void mbsi_rotate_inertia(const double R[9], const double Ic[9], double out[9]);

#endif
