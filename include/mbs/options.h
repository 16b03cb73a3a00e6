/* mbs/options.h — the one option mechanism of steppers and controllers. Each scheme declares
 * its options once, as a table of specs (key, kind, unit, range, default, one-line doc, and
 * where the value goes in the scheme's typed options struct). The same table validates a
 * value without creating anything, fills the struct, prints `./sim --help` and writes the
 * option tables of docs/scenarios.md. */
#ifndef MBS_OPTIONS_H
#define MBS_OPTIONS_H

#include <stddef.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef enum mbs_option_kind {
    MBS_OPT_REAL,    /* a finite number in the range: a double */
    MBS_OPT_INT,     /* a whole number in the range: an int; `words` may name values ("full=-1") */
    MBS_OPT_BOOL,    /* 0 or 1: an int */
    MBS_OPT_ENUM,    /* one of `words` (space-separated): an int, the word's index */
    MBS_OPT_TEXT     /* a non-empty list of names: a char[MBS_OPTION_TEXT_LEN] */
} mbs_option_kind;

#define MBS_OPTION_TEXT_LEN 256
enum { MBS_OPT_OPEN_LO = 1, MBS_OPT_OPEN_HI = 2 };   /* the bound itself is out of range */

typedef struct mbs_option_spec {
    const char *key;
    mbs_option_kind kind;
    const char *unit;    /* SI unit of the value, "" for a pure number or a word */
    double lo, hi;       /* range of REAL and INT */
    int open;            /* MBS_OPT_OPEN_LO | MBS_OPT_OPEN_HI */
    const char *def;     /* the default, written as in a scenario file; NULL for a REAL whose
                          * default the scheme derives from others (stored as NAN), "" for TEXT: none */
    const char *words;   /* ENUM: the words; INT: optional "name=value" aliases */
    size_t offset;       /* of the field in the options struct */
    const char *doc;     /* one line: what it does, what it is good for */
} mbs_option_spec;

/* A scheme's options: its own specs and, optionally, a shared table (the options of a
 * feedback law every gait uses, say) whose struct sits at base_offset inside this one. */
typedef struct mbs_option_table {
    const char *name;                     /* the scheme, for messages */
    const mbs_option_spec *spec;
    int n;
    const struct mbs_option_table *base;  /* may be NULL */
    size_t base_offset;
    size_t size;                          /* of the options struct */
} mbs_option_table;

/* A scheme option as a typed value: numbers as numbers, words as words. A REAL, INT or BOOL
 * option takes `value` ({"kp", 50}); an ENUM option takes its word ({"method", 0, "modal"}), an
 * INT option may take one of its named values ({"max_mat_mult", 0, "full"}), a TEXT option its
 * names ({"feet", 0, "FL_FOOT FR_FOOT"}). Text (a scenario file, --set, a string from Python) is
 * turned into this once, where it is read, by mbs_option_parse. */
typedef struct mbs_option {
    const char *key;
    double value;        /* a REAL, INT or BOOL option's number (ignored when word is set) */
    const char *word;    /* an ENUM's word, an INT's named value, a TEXT option's names; NULL: the number */
} mbs_option;
/* Initializers: mbs_option o[] = {MBS_OPTION("kp", 50), MBS_OPTION_WORD("method", "modal")}. */
#define MBS_OPTION(key, number) {(key), (number), NULL}
#define MBS_OPTION_WORD(key, word) {(key), 0, (word)}

/* What the registries of steppers and controllers tell about a scheme. */
typedef struct mbs_scheme_info {
    const char *name;
    const char *summary;                  /* one line: the scheme and what it is good for */
    const mbs_option_table *options;      /* never NULL (a table of no options at least) */
} mbs_scheme_info;

/* Number of options of t, its shared table's first. */
int mbs_options_count(const mbs_option_table *t);
/* Option i (0 <= i < count) and the offset of its field in t's struct; NULL when out of range. */
const mbs_option_spec *mbs_options_at(const mbs_option_table *t, int i, size_t *offset);
/* The option named key, or NULL. */
const mbs_option_spec *mbs_options_find(const mbs_option_table *t, const char *key, size_t *offset);
/* Fills the struct at opts with every default. Returns MBS_OK (a table whose default does
 * not parse is a bug the tests catch, reported as MBS_ERR_ARG). */
int mbs_options_defaults(const mbs_option_table *t, void *opts, mbs_error *err);
/* Checks the text key = value against t and, when opts is not NULL, stores it. An unknown key or
 * a bad value is an error whose message names the key, the value and what is accepted. */
int mbs_options_set(const mbs_option_table *t, void *opts, const char *key, const char *value, mbs_error *err);
/* Parses the text value of option key of t, once, into the typed *out (out->key = key; out->word
 * points into value for an ENUM, a TEXT or an INT's named value, so value must outlive out).
 * MBS_OK, or an error as mbs_options_set's. */
int mbs_option_parse(const mbs_option_table *t, const char *key, const char *value, mbs_option *out, mbs_error *err);
/* Checks the typed option o against t (its kind, its range) and, when opts is not NULL, stores it:
 * no text is parsed. An error as mbs_options_set's. */
int mbs_options_apply(const mbs_option_table *t, void *opts, const mbs_option *o, mbs_error *err);
/* A struct of t's options (t->size bytes, from malloc; free it with free()): the defaults, then
 * opts[0..n-1] (typed) in order. NULL with err filled when a key or a value is refused; the
 * message then starts with "key: ". */
void *mbs_options_new(const mbs_option_table *t, const mbs_option *opts, int n, mbs_error *err);
/* The accepted values of an option as text ("in [0, 1e+06] N·m/rad", "one of: riqn newton"). */
void mbs_option_range_text(const mbs_option_spec *s, char *buf, size_t n);

/* Describes a scheme's options into buf (n bytes; returns the length needed, as snprintf):
 * markdown = 1: a heading and a table (docs/scenarios.md), 0: indented lines for --help. */
int mbs_options_describe(const mbs_scheme_info *info, int markdown, char *buf, size_t n);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
