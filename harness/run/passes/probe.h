/* Finding the largest micro-batch that fits, by probing the allocator.
 *
 * The arithmetic of model_memory_need says what a config should take; the
 * device says what it will give. The probe asks the device: for a candidate
 * micro-batch it allocates each piece of the config's memory need through
 * bk_alloc (so the user's --mem-cap applies, and a real cudaMalloc failure
 * counts the same), frees them all, and binary-searches on the answer.
 * Works with any backend through the table. Where the device is not here,
 * the search runs on the arithmetic alone: the exact need against a cap. */
#ifndef ACCUBENCH_PROBE_H
#define ACCUBENCH_PROBE_H

#include <stdio.h>

#include "backend.h"
#include "model_need.h"

typedef struct probe_request {
    const model_spec *model;
    dtype dtype;
    optimizer_kind optimizer;
    /* The effective batch the accumulation is planned for; its input
     * buffers are part of every candidate's need. 0: none given, every
     * candidate runs unaccumulated (effective = micro). */
    int effective;
    int input_buffers;
    /* Largest micro-batch considered; 0 = the effective batch, or
     * PROBE_DEFAULT_MAX_MICRO when there is none. */
    int max_micro;
    /* Nonzero: plan from the arithmetic against this many bytes, nothing
     * allocated (the device is not here: b is its outline). */
    size_t arithmetic_cap;
    /* Ranks the effective batch is shared over (0 or 1: one): each
     * accumulates its share, effective / devices. */
    int devices;
} probe_request;

/* The largest batch the command line accepts (options.c). */
#define PROBE_DEFAULT_MAX_MICRO (1 << 20)

typedef struct probe_result {
    int micro;          /* the largest micro-batch that fits and splits the
                           effective batch over the devices; 0: none does */
    int fits;           /* the largest that fits (micro, or more where the
                           devices leave it no split) */
    int effective;      /* what the accumulation was planned for */
    int devices;        /* over how many ranks (1: one) */
    int accum, last;    /* each rank's accumulation steps and last micro-batch */
    int bound;          /* the largest micro-batch the search considered */
    memory_need need;   /* the memory need of `micro` */
    int probes;         /* candidates tried */
} probe_result;

/* BK_OK with the largest micro-batch in out; BK_OOM when not even a
 * micro-batch of 1 fits (out->micro = 0); another status when the backend
 * failed otherwise. The reason is in b->error. Nothing stays allocated. */
int probe_find_max_micro(backend *b, const probe_request *req, probe_result *out);

/* Whether the need fits now: BK_OK, BK_OOM or another failure. Allocates
 * every non-empty piece, then frees them all. */
int probe_fits(backend *b, const memory_need *need);

/* The answer for a person: the micro-batch, its memory need piece by piece,
 * and the accumulation that reaches the effective batch. */
void probe_print(FILE *f, const char *model_name, const probe_request *req,
                 const probe_result *r, size_t mem_cap);

/* For an answer from the arithmetic: what the cap leaves beside the exact
 * need, and what on `device_label` that margin must hold. */
void probe_print_margin(FILE *f, const char *device_label, const probe_result *r, size_t cap);

#endif
