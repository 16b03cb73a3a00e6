/* mbs/version.h — the library's version, at compile time (the macros) and at run time
 * (mbs_version: the version of the libmbs.a a program was linked with). The macros are the one
 * place the version is written: `make install` takes mbs.pc's Version from MBS_VERSION. */
#ifndef MBS_VERSION_H
#define MBS_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define MBS_VERSION_MAJOR 0
#define MBS_VERSION_MINOR 1
#define MBS_VERSION_PATCH 0
#define MBS_VERSION "0.1.0"   /* "MAJOR.MINOR.PATCH" of the three above */

/* The version of the library linked in, "MAJOR.MINOR.PATCH": MBS_VERSION of its build, which
 * differs from the MBS_VERSION a program was compiled with when headers and library disagree. */
const char *mbs_version(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
