/* The backends this program knows, in one table: `run` and `plan` open
 * theirs from it, the option check and the usage text list its names, and
 * gpu-check picks its device from it. The harness never sees this file: the
 * program opens the backend and its collector and hands them down. */
#ifndef ACCUBENCH_BACKEND_REGISTRY_H
#define ACCUBENCH_BACKEND_REGISTRY_H

#include <stddef.h>

#include "attention_kind.h"
#include "backend.h"
#include "collector.h"
#include "comm.h"
#include "optimizer.h"

typedef struct backend_entry {
    const char *name;        /* what --backend and gpu-check's --device take */
    const char *label;       /* how `auto` names it: "CUDA", "the CPU backend" */
    const char *description; /* one line for the usage text */
    int gpu;                 /* `auto` tries these, in table order, first */
    /* What --dtype auto computes in on this backend, and why. */
    dtype auto_dtype;
    const char *auto_dtype_why;
    /* BK_OK and a ready backend, or an error with a one-line reason. NULL
     * when the backend is not built into this program: `absent` says why. */
    int (*create)(dtype dt, backend **out, char *why, size_t why_len);
    const char *absent;
    /* Non-zero, with a one-line reason, where the backend's own settings
     * (its environment variables) are bad input: `auto` then stops there
     * instead of running elsewhere, and create refuses them too. NULL:
     * none, or not built in. */
    int (*refuses)(char *why, size_t why_len);
    /* The backend without a device (its ops and capabilities, nothing to
     * run on), for plans from the arithmetic where the device is not here;
     * NULL where not built in, or where the backend always opens. */
    void (*outline)(dtype dt, backend *out);
    /* The device activity collector that goes with it, or NULL (then the
     * trace pass uses the dispatch records where those are device work,
     * and has no numbers otherwise; trace_pass.c), and what its records
     * are, for the trace_source metadata. */
    int (*collector)(collector **out, char *why, size_t why_len);
    const char *collector_records;
    /* The all-reduce engine of a data-parallel run on this backend (comm.h:
     * every rank mpirun started), or NULL when it is not built in:
     * `comm_absent` says why. */
    int (*comm_world)(backend *b, comm **out, char *why, size_t why_len);
    const char *comm_absent;
    /* The same engine over this process alone, one rank, where no launcher
     * started it (a sliced --shard on one device: NCCL's one-rank
     * communicator needs no MPI); NULL where the engine needs its
     * launcher (MPI's) or is not built in. */
    int (*comm_solo)(backend *b, comm **out, char *why, size_t why_len);
    /* Where --optimizer-at auto runs the optimizer (optimizer.h), and why. */
    optimizer_at auto_optimizer_at;
    const char *auto_optimizer_at_why;
    /* The environment variable that picks the backend's attention
     * arrangement (attention_kind.h), and the row it runs where that is
     * unset: the backend's own constants (its header), which its
     * constructor reads too. NULL: one arrangement, nothing to pick. */
    const char *attention_env;
    attention_kind attention_default;
} backend_entry;

extern const backend_entry backend_table[];
extern const size_t backend_table_count;

/* The row named `name`, or NULL. */
const backend_entry *backend_find(const char *name);

/* The first row that is (gpu = 1) or is not (gpu = 0) a GPU, or NULL:
 * `auto` falls back to backend_first(0); gpu-check checks backend_first(1)
 * unless told otherwise. */
const backend_entry *backend_first(int gpu);

/* The names joined by sep ("auto, cpu, cuda"), "auto" first if with_auto. */
void backend_names(char *out, size_t len, const char *sep, int with_auto);

/* 0 when `name` is "auto" or a row's name; else -1 and, in why, "unknown
 * backend 'NAME' (known: auto, cpu, cuda)". */
int backend_check_name(const char *name, char *why, size_t why_len);

/* Opens the backend of one row (DTYPE_AUTO: in the row's auto_dtype): BK_OK,
 * or an error with a one-line reason (BK_UNSUPPORTED and `absent` when it is
 * not built in). */
int backend_create(const backend_entry *e, dtype dt, backend **out, char *why,
                   size_t why_len);

/* Opens backend `name`, or for "auto" the first GPU row that answers and
 * else the first other row, saying in `note` which and why ("" when named).
 * BK_OK with *out and *entry, or an error with a one-line reason in why. */
int backend_open(const char *name, dtype dt, backend **out, const backend_entry **entry,
                 char *note, size_t note_len, char *why, size_t why_len);

/* backend_open in the first of dts[0..n) the backend computes in, *at its
 * index; where it opens in none, the first one's status and reason. */
int backend_open_first(const char *name, const dtype *dts, int n, int *at, backend **out,
                       const backend_entry **entry, char *note, size_t note_len, char *why,
                       size_t why_len);

/* The activity collector of an open backend's row, or NULL with the reason
 * in `source`; on success `source` says what it records. */
collector *backend_open_collector(const backend_entry *entry, const backend *b, char *source,
                                  size_t source_len);

#endif
