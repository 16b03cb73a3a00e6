/* chain.c — N-link serial chains and b-ary trees generated in code, for tests, benchmarks and
 * scaling studies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "../base/base.h"

mbs_model *mbs_model_chain(int n, const mbs_chain_options *opt, mbs_error *err)
{
    static const mbs_chain_options defaults = {0.1, 1.0, 0, 1, NULL, 0, 0, 0};
    if (!opt) opt = &defaults;
    if (n < 1 || !(opt->link_length > 0) || !(opt->link_mass > 0)) {
        mbsi_fail(err, MBS_ERR_ARG, "mbs_model_chain: need n >= 1 and positive link length and mass");
        return NULL;
    }
    mbs_model *m = mbs_model_new("chain");
    if (!m) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    double l = opt->link_length, mass = opt->link_mass, dir = opt->upward ? 1.0 : -1.0;
    /* by default a uniform rod: I = m l² / 12 across, a thin-rod floor along */
    double I[9] = {mass * l * l / 12, 0, 0, 0, mass * l * l / 12, 0, 0, 0, 1e-3 * mass * l * l};
    if (opt->inertia) memcpy(I, opt->inertia, sizeof I);
    double com[3] = {0, 0, dir * l / 2}, p[3] = {0, 0, dir * l};
    int first = 0, b = opt->branching > 1 ? opt->branching : 1;
    if (opt->floating) {
        if (mbs_model_add_joint(m, -1, MBS_JOINT_FREEFLYER, "root_joint", NULL, NULL, NULL, err) < 0) goto fail;
        if (mbs_model_add_inertia(m, 0, mass, com, I, err)) goto fail;
        first = 1;
    }
    /* Links are numbered k = 0..n−1 breadth-first (link k > 0 hangs from link (k − 1)/b, at its
     * end; siblings side by side along x) but added depth-first, as the builder requires: order[j]
     * is the link added j-th (a pre-order walk), pos[k] the body of link k. A chain is its own
     * order. */
    int *order = malloc(3 * (size_t)n * sizeof(int)), *pos = order + n, *stack = order + 2 * (size_t)n, top = 0, ok = 1;
    if (!order) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto fail; }
    stack[top++] = 0;
    for (int j = 0; top > 0; j++) {
        int k = stack[--top];
        order[j] = k;
        pos[k] = j;
        for (int c = b; c >= 1; c--)   /* the last child pushed first: the first is walked next */
            if ((long)k * b + c < n) stack[top++] = k * b + c;
    }
    for (int j = 0; j < n && ok; j++) {
        int k = order[j], i = first + j;
        int about_x = opt->axis_x ^ (opt->alternate_axes && k % 2);
        double ax[3] = {about_x ? 1.0 : 0.0, about_x ? 0.0 : 1.0, 0};
        double at[3] = {b > 1 && k ? ((k - 1) % b - 0.5 * (b - 1)) * 0.25 * l : 0, 0, dir * l};
        int parent = k ? first + pos[(k - 1) / b] : first - 1;
        char name[32];
        snprintf(name, sizeof name, "joint%d", k + 1);
        ok = mbs_model_add_joint(m, parent, MBS_JOINT_REVOLUTE, name, NULL, i ? at : NULL, ax, err) >= 0 &&
             !mbs_model_add_inertia(m, i, mass, com, I, err);
        snprintf(name, sizeof name, "link%d", k + 1);
        if (ok) mbs_model_set_body_name(m, i, name);
    }
    free(order);
    if (!ok) goto fail;
    if (mbs_model_add_frame(m, "tip", n + first - 1, NULL, p, MBS_FRAME_OP, err) < 0) goto fail;
    if (mbs_model_finalize(m, err)) goto fail;
    return m;
fail:
    mbs_model_free(m);
    return NULL;
}
