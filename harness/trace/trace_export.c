/* Chrome trace-event JSON writer; the layout is described in the header. */
#include "trace_export.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "plural.h"
#include "trace_analysis.h"
#include "trace_assign.h"

enum { PID_HOST = 1, PID_DEVICE = 2 };
/* Host rows: the ranges, the waits, then one row of calls per host thread
 * (calls of two threads may overlap; one row must nest). */
enum { TID_RANGES = 1, TID_SYNC = 2, TID_CALLS = 10 };

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static const char *category(trace_kind k)
{
    switch (k) {
    case TRACE_KERNEL: return "kernel";
    case TRACE_LAUNCH: return "launch";
    case TRACE_RUNTIME: return "runtime";
    case TRACE_MEMCPY: return "memcpy";
    case TRACE_MEMSET: return "memset";
    case TRACE_SYNC: return "sync";
    case TRACE_RANGE: return "range";
    default: return "other";
    }
}

static void row_of(const trace_record *r, int *pid, unsigned long *tid)
{
    if (is_device_work(r->kind)) {
        *pid = PID_DEVICE;
        *tid = r->stream;
        return;
    }
    *pid = PID_HOST;
    *tid = r->kind == TRACE_RANGE ? TID_RANGES
           : r->kind == TRACE_SYNC ? TID_SYNC
                                   : TID_CALLS + (unsigned long)r->stream; /* its thread */
}

/* Microseconds from the origin, to the nanosecond. */
static double us(uint64_t t, uint64_t origin)
{
    return t >= origin ? (double)(t - origin) / 1e3 : -(double)(origin - t) / 1e3;
}

static void put_meta(FILE *f, const char *what, int pid, long tid, const char *name,
                     int *first)
{
    fputs(*first ? "\n" : ",\n", f);
    *first = 0;
    fprintf(f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d", what, pid);
    if (tid >= 0)
        fprintf(f, ",\"tid\":%ld", tid);
    fputs(",\"args\":{\"name\":", f);
    put_string(f, name);
    fputs("}}", f);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* What the header and the row names need of one step's records: its
 * earliest start (the origin of every time written), whether any launch
 * was recorded at all (else the device is the CPU's dispatches), and the
 * streams and host threads its records sit on, sorted, with repeats. */
typedef struct step_rows {
    uint64_t origin;
    int has_launches;
    uint32_t *streams, *threads;
    size_t n_streams, n_threads;
} step_rows;

/* Fills *s from the records of step `step`; has_launches looks at every
 * record, whatever its step. Returns 0, or -1 out of memory. */
static int collect_step_rows(const trace_record *recs, size_t n, const int32_t *step_of,
                             int step, step_rows *s)
{
    *s = (step_rows){.origin = UINT64_MAX};
    s->streams = malloc((n + 1) * sizeof *s->streams);
    s->threads = malloc((n + 1) * sizeof *s->threads);
    if (!s->streams || !s->threads) {
        free(s->streams);
        free(s->threads);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        s->has_launches |= recs[i].kind == TRACE_LAUNCH;
        if (step_of[i] != step)
            continue;
        if (recs[i].start_ns < s->origin)
            s->origin = recs[i].start_ns;
        if (is_device_work(recs[i].kind))
            s->streams[s->n_streams++] = recs[i].stream;
        else if (recs[i].kind == TRACE_LAUNCH || recs[i].kind == TRACE_RUNTIME)
            s->threads[s->n_threads++] = recs[i].stream;
    }
    qsort(s->streams, s->n_streams, sizeof *s->streams, cmp_u32);
    qsort(s->threads, s->n_threads, sizeof *s->threads, cmp_u32);
    return 0;
}

/* The metadata events that name the two processes and each row (once per
 * distinct host thread and stream), so the viewer labels them. */
static void put_row_names(FILE *f, const step_rows *s, int *first)
{
    put_meta(f, "process_name", PID_HOST, -1, "host", first);
    put_meta(f, "process_name", PID_DEVICE, -1,
             s->has_launches ? "device" : "device (CPU dispatches)", first);
    put_meta(f, "thread_name", PID_HOST, TID_RANGES, "NVTX ranges", first);
    put_meta(f, "thread_name", PID_HOST, TID_SYNC, "host waits", first);
    for (size_t k = 0; k < s->n_threads; k++) {
        if (k > 0 && s->threads[k] == s->threads[k - 1])
            continue;
        char name[64];
        snprintf(name, sizeof name, "launch / API calls, thread %u", s->threads[k]);
        put_meta(f, "thread_name", PID_HOST, (long)TID_CALLS + s->threads[k], name, first);
    }
    for (size_t k = 0; k < s->n_streams; k++) {
        if (k > 0 && s->streams[k] == s->streams[k - 1])
            continue;
        char name[48];
        snprintf(name, sizeof name, s->has_launches ? "stream %u" : "dispatches",
                 s->streams[k]);
        put_meta(f, "thread_name", PID_DEVICE, (long)s->streams[k], name, first);
    }
}

/* Record i as a complete ("X") event, then, for device work whose issuing
 * call is known, the flow from that call to it (*flow_id numbers them). */
static void put_record(FILE *f, const trace_record *recs, size_t i, const ptrdiff_t *host_of,
                       uint64_t origin, unsigned long *flow_id)
{
    const trace_record *r = &recs[i];
    int pid;
    unsigned long tid;
    row_of(r, &pid, &tid);
    uint64_t end = r->end_ns > r->start_ns ? r->end_ns : r->start_ns;
    fputs(",\n{\"ph\":\"X\",\"name\":", f);
    put_string(f, r->name);
    fprintf(f, ",\"cat\":\"%s\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%lu",
            category(r->kind), us(r->start_ns, origin),
            (double)(end - r->start_ns) / 1e3, pid, tid);
    if (r->correlation)
        fprintf(f, ",\"args\":{\"correlation\":%u}", r->correlation);
    fputs("}", f);

    /* The flow from the call that issued this work to the work, each end
     * in the middle of its slice so that it binds to that slice. */
    if (is_device_work(r->kind) && host_of[i] >= 0) {
        const trace_record *h = &recs[host_of[i]];
        int hpid;
        unsigned long htid;
        row_of(h, &hpid, &htid);
        uint64_t hend = h->end_ns > h->start_ns ? h->end_ns : h->start_ns;
        (*flow_id)++;
        fprintf(f, ",\n{\"ph\":\"s\",\"name\":\"launch\",\"cat\":\"flow\","
                   "\"id\":%lu,\"ts\":%.3f,\"pid\":%d,\"tid\":%lu}",
                *flow_id, us(h->start_ns + (hend - h->start_ns) / 2, origin),
                hpid, htid);
        fprintf(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"launch\","
                   "\"cat\":\"flow\",\"id\":%lu,\"ts\":%.3f,\"pid\":%d,"
                   "\"tid\":%lu}",
                *flow_id, us(r->start_ns + (end - r->start_ns) / 2, origin),
                pid, tid);
    }
}

/* How every trace this program writes begins. */
#define TRACE_HEAD "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"accubench\","

int trace_export_replaceable(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1; /* absent (an unreadable one is refused by the write) */
    char head[sizeof TRACE_HEAD];
    size_t got = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    return got == 0 || (got == sizeof head - 1 && !memcmp(head, TRACE_HEAD, got));
}

static int write_events(FILE *f, const trace_record *recs, size_t n,
                        const int32_t *step_of, const ptrdiff_t *host_of,
                        int step, const char *label)
{
    step_rows s;
    if (collect_step_rows(recs, n, step_of, step, &s))
        return -1;

    fputs(TRACE_HEAD "\"config\":", f);
    put_string(f, label ? label : "");
    fprintf(f, ",\"step\":%d,\"origin_ns\":%llu},\"traceEvents\":[", step,
            (unsigned long long)(s.origin == UINT64_MAX ? 0 : s.origin));

    int first = 1;
    put_row_names(f, &s, &first);
    free(s.threads);
    free(s.streams);

    unsigned long flow_id = 0;
    for (size_t i = 0; i < n; i++)
        if (step_of[i] == step)
            put_record(f, recs, i, host_of, s.origin, &flow_id);
    fputs("\n]}\n", f);
    return 0;
}

typedef struct export_job {
    const trace_record *recs;
    size_t n;
    const int32_t *step_of;
    const ptrdiff_t *host_of;
    int step;
    const char *label;
} export_job;

static int write_trace_job(FILE *f, void *ctx, char *why, size_t why_len)
{
    const export_job *j = ctx;
    if (write_events(f, j->recs, j->n, j->step_of, j->host_of, j->step, j->label) != 0) {
        snprintf(why, why_len, "trace export: out of memory");
        return -1;
    }
    return 0;
}

int trace_export_chrome(const char *path, const trace_record *recs, size_t n,
                        int step, const char *label, char *why, size_t why_len)
{
    int32_t *step_of = malloc((n + 1) * sizeof *step_of);
    ptrdiff_t *host_of = malloc((n + 1) * sizeof *host_of);
    int n_steps = 0;
    int rc = -1;

    if (!step_of || !host_of ||
        trace_assign_steps(recs, n, step_of, host_of, &n_steps) != 0) {
        snprintf(why, why_len, "trace export: out of memory");
    } else {
        if (step < 0)
            step = n_steps - 1;
        export_job job = {recs, n, step_of, host_of, step, label};
        if (step < 0 || step >= n_steps)
            snprintf(why, why_len, "trace export: no step %d in the trace (%d %s)",
                     step, n_steps, plural(n_steps, "step", "steps"));
        else
            rc = atomic_write_file(path, write_trace_job, &job, why, why_len);
    }
    free(step_of);
    free(host_of);
    return rc;
}
