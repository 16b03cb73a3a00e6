/* sim_mpi.c — ./sim's parameter sweep over the ranks of an MPI job (Open MPI; not a dependency of
 * libmbs: `make sim-mpi` builds it where mpicc exists):
 *
 *   mpirun -n R ./sim-mpi FILE.ini --sweep section.key=V1,V2,... [--sweep ...] [--set ...] [--out sweep.csv] [--quiet]
 *
 * The options are ./sim's sweep options, parsed by the same function (tool.h); --jobs is 1, since
 * each rank runs one combination at a time (more runs at once: more ranks).
 * Combination i runs on rank i mod R; each rank sends its rows to rank 0, which writes the same CSV
 * as `./sim FILE.ini --sweep ... --jobs 1` (every column but the wall-clock ones identical): the
 * header, then the rows in combination order. Errors (a bad key or value) are found by every rank
 * alike before anything runs, and rank 0 reports them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"
#include "tool.h"

#define ROW_LEN 8192
enum { TAG_ROW = 1, TAG_FAIL = 2 };

/* The usage on stderr (after a mistake: returns 2) or, asked for with --help, on stdout (returns
 * -1: the run ends with status 0). */
static int usage_to(int rank, FILE *f)
{
    if (rank == 0)
        fprintf(f, "usage: mpirun -n R sim-mpi FILE.ini --sweep section.key=V1,V2,... [--sweep ...] "
                        "[--set section.key=value ...] [--out sweep.csv] [--quiet]\n"
                        "  the options of `sim FILE.ini --sweep ...` (sim --help); --jobs is 1: one run per rank at a time\n");
    return f == stdout ? -1 : 2;
}

static int usage(int rank) { return usage_to(rank, stderr); }

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    tool_sweep_args sa = {.sets = calloc((size_t)argc + 1, sizeof(char *)),
                          .sweeps = calloc((size_t)argc + 1, sizeof(char *)), .jobs = 1};
    const char **sets = sa.sets, **sweeps = sa.sweeps;
    const char *scenario = NULL;
    int status = sets && sweeps ? 0 : 1;
    for (int i = 1; i < argc && !status; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            status = usage_to(rank, stdout);
            break;
        }
        /* every rank parses alike, but only rank 0 speaks, so a message is printed once */
        int shared = tool_sweep_arg(rank == 0 ? "sim-mpi" : NULL, argc, argv, &i, &sa);
        if (shared < 0) status = usage(rank);
        else if (shared) continue;
        else if (a[0] != '-' && !scenario) scenario = a;
        else {
            if (rank == 0) fprintf(stderr, "sim-mpi: unknown or incomplete argument '%s'\n", a);
            status = usage(rank);
        }
    }
    if (!status && sa.jobs != 1) {
        if (rank == 0) fprintf(stderr, "sim-mpi: --jobs %d: each rank runs one combination at a time; "
                                       "ask mpirun for more ranks (-n)\n", sa.jobs);
        status = usage(rank);
    }
    if (!status && (!scenario || !sa.nsweeps)) status = usage(rank);
    const char *out_path = sa.out;
    mbs_error err;
    mbs_sweep *sw = status ? NULL : mbs_sweep_new(scenario, sets, sa.nsets, sweeps, sa.nsweeps, &err);
    if (!status && !sw) {
        if (rank == 0) fprintf(stderr, "sim-mpi: %s\n", err.msg);
        status = 1;
    }
    FILE *out = NULL;
    if (!status && rank == 0) {
        out = !out_path || strcmp(out_path, "-") == 0 ? stdout : fopen(out_path, "w");
        if (!out) {
            fprintf(stderr, "sim-mpi: cannot write the sweep '%s'\n", out_path);
            status = 1;
        }
    }
    /* every rank stops if rank 0 cannot write */
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status) {
        mbs_sweep_free(sw);
        free(sets);
        free(sweeps);
        MPI_Finalize();
        return status < 0 ? 0 : status;   /* -1: --help */
    }
    long size = mbs_sweep_size(sw);
    char *row = malloc(ROW_LEN);
    int failed = 0;
    if (rank == 0) {
        char header[ROW_LEN];
        mbs_sweep_header(sw, header, sizeof header);
        fputs(header, out);
        /* rows in combination order: rank 0's own, or received from rank i mod R */
        for (long i = 0; i < size; i++) {
            int from = (int)(i % ranks), tag = TAG_ROW;
            if (from == 0) {
                if (mbs_sweep_run(sw, i, NULL, NULL, row, ROW_LEN, &err) != MBS_OK) {
                    snprintf(row, ROW_LEN, "%s", err.msg);
                    tag = TAG_FAIL;
                }
                mbs_error_free(&err);
            } else {
                MPI_Status st;
                MPI_Recv(row, ROW_LEN, MPI_CHAR, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                tag = st.MPI_TAG;
            }
            if (tag == TAG_FAIL) {
                if (!failed && !sa.quiet) fprintf(stderr, "sim-mpi: sweep run %ld failed: %s\n", i, row);
                failed = 1;
            } else {
                fputs(row, out);
            }
        }
        if (out != stdout && fclose(out) != 0) {
            fprintf(stderr, "sim-mpi: error writing the sweep '%s'\n", out_path);
            failed = 1;
        }
        if (!failed && !sa.quiet) fprintf(stderr, "sim-mpi: sweep of %ld runs on %d ranks written to %s\n", size, ranks,
                             out_path ? out_path : "stdout");
    } else {
        for (long i = rank; i < size; i += ranks) {
            int tag = TAG_ROW;
            if (mbs_sweep_run(sw, i, NULL, NULL, row, ROW_LEN, &err) != MBS_OK) {
                snprintf(row, ROW_LEN, "%s", err.msg);
                tag = TAG_FAIL;
            }
            mbs_error_free(&err);
            MPI_Send(row, (int)strlen(row) + 1, MPI_CHAR, 0, tag, MPI_COMM_WORLD);
        }
    }
    free(row);
    mbs_sweep_free(sw);
    free(sets);
    free(sweeps);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed ? 1 : 0;
}
