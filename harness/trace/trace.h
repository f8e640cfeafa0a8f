/* Activity records: what the device did, one record per interval.
 *
 * The CUPTI collector fills these on a GPU; on the CPU backend the harness
 * records each dispatched operation itself. The analysis (trace_analysis.h)
 * and the timeline export read only this array, never a CUDA header. */
#ifndef ACCUBENCH_TRACE_H
#define ACCUBENCH_TRACE_H

#include <stddef.h>
#include <stdint.h>

typedef enum trace_kind {
    TRACE_KERNEL = 0,   /* device work: a kernel, or one CPU dispatch */
    TRACE_LAUNCH = 1,   /* a host call that launches device work */
    TRACE_RUNTIME = 2,  /* any other runtime / driver API call */
    TRACE_MEMCPY = 3,
    TRACE_MEMSET = 4,
    TRACE_SYNC = 5,     /* a host wait on the device */
    TRACE_RANGE = 6,    /* an NVTX range (run, config, step, micro, ...) */
    TRACE_KIND_COUNT
} trace_kind;

typedef struct trace_record {
    trace_kind kind;
    uint64_t start_ns, end_ns; /* one clock for every record of a trace */
    uint32_t stream;           /* device stream, or host thread for host records */
    uint32_t correlation;      /* links a TRACE_LAUNCH to its TRACE_KERNEL; 0 = none */
    int32_t step;              /* the step the record belongs to, -1 = none */
    int32_t depth;             /* nesting depth of a TRACE_RANGE */
    const char *name;          /* interned: lives as long as the recorder */
} trace_record;

typedef struct trace_recorder {
    trace_record *records;
    size_t count, capacity;
    uint64_t dropped;        /* records that did not fit: counted, never silent */
    int32_t current_step;    /* stamped on every record added */
    int32_t range_depth;
    size_t open_ranges[16];  /* indices of TRACE_RANGE records still open */
    char **names;            /* interned strings */
    size_t name_count, name_capacity;
} trace_recorder;

/* A recorder that keeps at most `capacity` records. */
int trace_recorder_init(trace_recorder *r, size_t capacity);
void trace_recorder_free(trace_recorder *r);
void trace_recorder_clear(trace_recorder *r);

/* Monotonic host clock in nanoseconds. */
uint64_t trace_now_ns(void);

/* Returns a copy of `name` owned by the recorder (the same pointer for the
 * same text), or NULL when out of memory. */
const char *trace_intern(trace_recorder *r, const char *name);

/* Appends a record (name is interned). Returns 0, or -1 when it was dropped. */
int trace_add(trace_recorder *r, trace_kind kind, const char *name,
              uint64_t start_ns, uint64_t end_ns, uint32_t stream,
              uint32_t correlation);

/* Nested host ranges: push opens a TRACE_RANGE, pop closes the innermost. */
void trace_range_push(trace_recorder *r, const char *name);
void trace_range_pop(trace_recorder *r);

#endif
