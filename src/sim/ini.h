/* ini.h — the sim layer's reading of INI text (scenario.c's first half): the key = value
 * entries with the line each came from, --set overrides, messages that name the file, the line
 * and the key, and the generic checks of a value against a key's spec (kind, count, range).
 * What the keys mean is scenario.c's. Folder-private. */
#ifndef MBS_INI_H
#define MBS_INI_H

#include <stddef.h>

#include "sim_internal.h"

/* The kinds of value a scenario key takes. */
typedef enum { K_NUM, K_INT, K_BOOL, K_VEC, K_STR, K_NAMES, K_POINT } key_kind;   /* K_POINT: a name then a K_VEC */

enum { OPEN_LO = 1, OPEN_HI = 2 };
#define BIG 1e300   /* a bound that is no bound */

typedef struct keyspec {
    const char *section, *key;     /* key "q.*": any key with that prefix */
    key_kind kind;
    int nmin, nmax;                /* numbers in a K_VEC */
    double lo, hi;                 /* range of every number */
    int open;                      /* OPEN_LO / OPEN_HI: the bound itself is out of range */
    int multi;                     /* may be given more than once (each a separate item) */
    const char *unit;              /* of every number, "" when none */
    const char *def;               /* the default as written in a file; NULL: required; "": none, or see doc */
    const char *doc;               /* one line for docs/scenarios.md */
} keyspec;

struct mbs_scenario_entry {
    char *section, *key, *value;
    int line;            /* 0: --set override */
    int dead;            /* replaced by an override */
    mbs_option typed;    /* a stepper's or controller's option: its value parsed once, when checked */
};

/* Reads the text (len bytes, no NUL in it) into sc->entries. Returns MBS_OK or MBS_ERR_NOMEM.
 * The section headers met before the first malformed line go to names and lines (nheaders of
 * them; free both), so that an unknown section is reported at its header line; *syntax gets
 * the first malformed line's message ("file:line: why"), or stays clear. */
int mbsi_ini_read(mbs_scenario *sc, const char *text, size_t len, char (**names)[MBS_NAME_LEN], int **lines,
                 int *nheaders, mbs_error *syntax, mbs_error *err);
/* The whole file in memory (not NUL-terminated), NULL with err filled. */
char *mbsi_ini_read_file(const char *path, size_t *len_out, mbs_error *err);
/* Applies one --set "section.key=value": replaces every value the file gave that key. */
int mbsi_ini_override(mbs_scenario *sc, const char *ov, mbs_error *err);

/* The live entry of section.key (the last one given), NULL when absent. */
const mbs_scenario_entry *mbsi_ini_find(const mbs_scenario *sc, const char *section, const char *key);
/* "file:line: [section] key" or "file: --set section.key=value" into buf. */
void mbsi_ini_where(const mbs_scenario *sc, const mbs_scenario_entry *e, char *buf, size_t n);
/* Fails with that prefix and a printf-style message; returns code. */
int mbsi_ini_fail_at(const mbs_scenario *sc, const mbs_scenario_entry *e, mbs_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Up to max numbers separated by spaces, tabs or commas; the count, or -1 with the offending
 * word in bad when a word is not a finite number. */
int mbsi_ini_numbers(const char *s, double *out, int max, char *bad, size_t nbad);
/* A K_POINT value's frame name into name and the text of its numbers; 1 when the name is missing. */
int mbsi_ini_split_point(const char *value, char *name, size_t n, const char **rest);
/* Checks entry e against spec k; its numbers (up to 7) into x, how many into *count. */
int mbsi_ini_check_value(const mbs_scenario *sc, const mbs_scenario_entry *e, const keyspec *k, double *x, int *count,
                        mbs_error *err);
/* A key's doc, its accepted values and unit, as one line of docs/scenarios.md's tables. */
void mbsi_ini_describe(const keyspec *k, char *buf, size_t n);
/* The numbers of a single-valued key into out (n of them; left alone when the key is absent). */
void mbsi_ini_nums(const mbs_scenario *sc, const char *section, const char *key, double *out, int n);
/* Its first number, def when absent. */
double mbsi_ini_num(const mbs_scenario *sc, const char *section, const char *key, double def);

#endif
