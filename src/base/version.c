/* version.c — the version of the library, as its headers had it when it was built. */
#include "mbs/version.h"

const char *mbs_version(void)
{
    return MBS_VERSION;
}
