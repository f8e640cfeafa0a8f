/* Building synthetic activity records for the trace tests. */
#ifndef ACCUBENCH_TEST_TRACE_RECORDS_H
#define ACCUBENCH_TEST_TRACE_RECORDS_H

#include <string.h>

#include "trace.h"

/* A record with times in microseconds (to the nanosecond). */
static inline trace_record rec(trace_kind kind, const char *name, double start_us,
                               double end_us, uint32_t stream, uint32_t corr,
                               int32_t step)
{
    trace_record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.name = name;
    r.start_ns = (uint64_t)(start_us * 1000.0 + 0.5);
    r.end_ns = (uint64_t)(end_us * 1000.0 + 0.5);
    r.stream = stream;
    r.correlation = corr;
    r.step = step;
    return r;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

#endif
