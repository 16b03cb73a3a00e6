/* test_readme.c — the README's C code cannot drift from the programs `make test` builds and runs:
 * every ```c block of README.md is, byte for byte, one of the examples/ files, and every example appears
 * there. Also the version: one number, written once (include/mbs/version.h), which the library,
 * mbs.pc and the changelog agree with. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mbs.h"

#define MAX_EXAMPLES 32

/* The whole file at MBS_SOURCE_DIR/rel, NUL-terminated (NULL when unreadable); free it. */
static char *slurp(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", MBS_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    for (size_t got; s && (got = fread(s + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) { free(s); s = NULL; }
            else s = t;
        }
    }
    fclose(f);
    if (s) s[n] = '\0';
    return s;
}

static char *example_name[MAX_EXAMPLES], *example_text[MAX_EXAMPLES];
static int nexamples;

static void load_examples(void)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/examples", MBS_SOURCE_DIR);
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot list %s", dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 2, ".c") != 0) continue;
        CHECK(nexamples < MAX_EXAMPLES, "more than %d examples", MAX_EXAMPLES);
        if (nexamples == MAX_EXAMPLES) break;
        char rel[512];
        snprintf(rel, sizeof rel, "examples/%s", e->d_name);
        example_name[nexamples] = strdup(rel);
        example_text[nexamples] = slurp(rel);
        CHECK(example_text[nexamples] != NULL, "cannot read %s", rel);
        nexamples++;
    }
    closedir(d);
}

/* Each ```c block (from the line after its fence to the line before the closing ```) is an
 * example file's whole content; each example is some block. */
static void test_readme_blocks_are_examples(void)
{
    char *readme = slurp("README.md");
    CHECK(readme != NULL, "cannot read README.md");
    if (!readme) return;
    CHECK(nexamples >= 3, "examples/: %d programs, expected at least 3", nexamples);
    int seen[MAX_EXAMPLES] = {0}, nblocks = 0;
    for (char *p = readme; (p = strstr(p, "```c\n")) != NULL;) {
        int line = 1;
        for (char *c = readme; c < p; c++) line += *c == '\n';
        char *body = p + 5, *end = strstr(body, "\n```");
        CHECK(end != NULL, "README.md:%d: a ```c block without its closing fence", line);
        if (!end) break;
        end++;                                   /* the block keeps its last newline */
        size_t len = (size_t)(end - body);
        int match = -1;
        for (int i = 0; i < nexamples; i++)
            if (example_text[i] && strlen(example_text[i]) == len && memcmp(example_text[i], body, len) == 0) match = i;
        CHECK(match >= 0, "README.md:%d: this ```c block is not an examples/*.c file verbatim (copy the file in)", line);
        if (match >= 0) seen[match]++;
        nblocks++;
        p = end + 3;
    }
    CHECK(nblocks > 0, "README.md has no ```c block");
    for (int i = 0; i < nexamples; i++)
        CHECK(seen[i] == 1, "%s appears %d times in README.md as a ```c block (expected once)", example_name[i], seen[i]);
    free(readme);
}

/* mbs_version() is the header's MBS_VERSION, which is MAJOR.MINOR.PATCH; mbs.pc takes it from the
 * header (no second copy in mbs.pc.in); the changelog has a section for it. */
static void test_version(void)
{
    CHECK(strcmp(mbs_version(), MBS_VERSION) == 0, "mbs_version() '%s' != MBS_VERSION '%s'", mbs_version(), MBS_VERSION);
    char parts[64];
    snprintf(parts, sizeof parts, "%d.%d.%d", MBS_VERSION_MAJOR, MBS_VERSION_MINOR, MBS_VERSION_PATCH);
    CHECK(strcmp(parts, MBS_VERSION) == 0, "MBS_VERSION '%s' != MAJOR.MINOR.PATCH '%s'", MBS_VERSION, parts);
    char *pc = slurp("mbs.pc.in");
    CHECK(pc && strstr(pc, "Version: @VERSION@\n"), "mbs.pc.in: Version must be @VERSION@ (make install writes MBS_VERSION)");
    free(pc);
    char *log = slurp("CHANGELOG.md"), heading[80];
    snprintf(heading, sizeof heading, "## [%s]", MBS_VERSION);
    CHECK(log && strstr(log, heading), "CHANGELOG.md: no section '%s'", heading);
    free(log);
    char *lic = slurp("LICENSE");
    CHECK(lic && strstr(lic, "MIT License") && strstr(lic, "Copyright (c) 2026 the mbs authors"), "LICENSE: not the MIT licence");
    free(lic);
}

int main(void)
{
    load_examples();
    RUN(test_readme_blocks_are_examples);
    RUN(test_version);
    for (int i = 0; i < nexamples; i++) {
        free(example_name[i]);
        free(example_text[i]);
    }
    return check_summary("test_readme");
}
