/* sim.c — the command-line front end. For now it inspects models; scenario runs
 * (./sim FILE.ini) arrive with the contact and stepper layer. */
#include <stdio.h>
#include <string.h>

#include "mbs.h"

static int usage(void)
{
    fprintf(stderr,
            "usage: sim --info MODEL.urdf [--fixed] [--strict]\n"
            "  --info    load a URDF and print its summary as key: value lines\n"
            "  --fixed   attach the root link to the world instead of a free-flyer\n"
            "  --strict  treat physically impossible inertias as errors\n");
    return 2;
}

static const char *type_name(mbs_joint_type t)
{
    switch (t) {
    case MBS_JOINT_REVOLUTE: return "revolute";
    case MBS_JOINT_PRISMATIC: return "prismatic";
    case MBS_JOINT_FREEFLYER: return "free-flyer";
    case MBS_JOINT_PLANAR: return "planar";
    }
    return "?";
}

static int info(const char *path, int fixed, int strict)
{
    mbs_error err;
    mbs_error_clear(&err);
    mbs_urdf_options opt = {!fixed, strict};
    mbs_model *m = mbs_model_from_urdf_opts(path, &opt, &err);
    if (err.nwarnings) fprintf(stderr, "%s", err.warnings);
    if (!m) {
        fprintf(stderr, "sim: %s\n", err.msg);
        return 1;
    }
    printf("model: %s\nfile: %s\nnq: %d\nnv: %d\njoints: %d\nframes: %d\nmass_kg: %.6f\nwarnings: %d\n",
           mbs_model_name(m), path, mbs_model_nq(m), mbs_model_nv(m), mbs_model_njoints(m), mbs_model_nframes(m),
           mbs_model_mass(m), err.nwarnings);
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int par = mbs_joint_parent(m, j);
        printf("joint_%d: %s %s idx_q=%d idx_v=%d parent=%s\n", j, mbs_joint_name(m, j),
               type_name(mbs_joint_type_of(m, j)), mbs_joint_idx_q(m, j), mbs_joint_idx_v(m, j),
               par < 0 ? "world" : mbs_joint_name(m, par));
    }
    mbs_model_free(m);
    return 0;
}

int main(int argc, char **argv)
{
    const char *model = NULL;
    int fixed = 0, strict = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--info") == 0 && i + 1 < argc) model = argv[++i];
        else if (strcmp(argv[i], "--fixed") == 0) fixed = 1;
        else if (strcmp(argv[i], "--strict") == 0) strict = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return usage(), 0;
        else {
            fprintf(stderr, "sim: unknown argument '%s' (scenario files are not supported yet)\n", argv[i]);
            return usage();
        }
    }
    if (!model) return usage();
    return info(model, fixed, strict);
}
