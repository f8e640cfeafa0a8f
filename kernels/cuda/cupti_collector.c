/* The CUPTI collector: device activity through the CUPTI Activity API,
 * delivered as trace records on the host clock (trace_now_ns).
 *
 * Kinds: CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME, DRIVER and
 * SYNCHRONIZATION. CUPTI asks for empty buffers and hands full ones back
 * through two callbacks (possibly from its own thread); each completed buffer
 * is converted at once into a bounded staging recorder on CUPTI's clock.
 * stop() forces a flush (the caller has synchronised the device, so every
 * record is complete), converts the staged records to the host clock with an
 * offset measured at start(), and appends them to the caller's recorder with
 * step -1: the analysis assigns them to steps by their host calls.
 *
 * Records that never arrive are counted into collector.dropped, never lost
 * silently: CUPTI's own dropped count (no buffer space), records delivered
 * without timestamps, and records that did not fit the staging recorder.
 *
 * CUPTI's buffer callbacks carry no user pointer, so there is one collector
 * per process (a second create() fails with a reason). Every CUPTI call is
 * checked; a failure leaves "file:line: call: CUPTI error" in the reason and
 * returns BK_ERROR; nothing exits. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "backend.h"
#include "collector.h"
#include "cupti_collector.h"
#include "cupti_names.h"
#include "trace.h"

/* 8 MiB buffers (CUPTI's suggestion is a few MiB), 8-byte aligned as the
 * Activity API requires. */
#define CUPTI_BUFFER_BYTES ((size_t)8 << 20)
#define CUPTI_BUFFER_ALIGN 8
/* Staged records between start and stop: bounded, drops counted. */
#define CUPTI_MAX_STAGED ((size_t)1 << 20)

static const CUpti_ActivityKind collected_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
#define N_KINDS (sizeof collected_kinds / sizeof collected_kinds[0])

/* What the buffer callbacks share with the collector. */
static struct {
    pthread_mutex_t lock;
    int registered;            /* callbacks registered with CUPTI (once) */
    collector *owner;          /* the one live collector, or NULL */
    trace_recorder staged;     /* CUPTI clock; valid while owner is set */
    int recording;             /* between start and stop */
    unsigned long long incomplete; /* records without timestamps */
    unsigned long long refused;    /* buffers we could not allocate */
    char error[320];           /* the first failure inside a callback */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

typedef struct cupti_impl {
    int64_t offset_ns;        /* host clock = CUPTI clock + offset */
    size_t enabled;           /* collected_kinds[0..enabled) are on */
} cupti_impl;

static void describe(char *out, size_t len, const char *file, int line,
                     const char *call, CUptiResult r)
{
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
        s = "unknown CUPTI error";
    snprintf(out, len, "%s:%d: %s: %s (%d)", file, line, call, s, (int)r);
}

/* Evaluates a CUPTI call; on failure writes the reason to `buf` and jumps
 * to `fail` with rc = BK_ERROR. */
#define CUPTI_CHECK(buf, call)                                                 \
    do {                                                                       \
        CUptiResult cupti_r_ = (call);                                         \
        if (cupti_r_ != CUPTI_SUCCESS) {                                       \
            describe((buf), sizeof(buf), __FILE__, __LINE__, #call, cupti_r_); \
            rc = BK_ERROR;                                                     \
            goto fail;                                                         \
        }                                                                      \
    } while (0)

/* ------------------------------------------------------------ conversion */

static const char *memcpy_name(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
    }
}

static const char *sync_name(CUpti_ActivitySynchronizationType t)
{
    switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "event synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "stream synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "context synchronize";
    default: return "synchronize";
    }
}

/* The API name without CUPTI's version suffix ("cudaLaunchKernel_v7000"). */
static void api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, char *out,
                     size_t len)
{
    const char *name = NULL;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) {
        snprintf(out, len, "%s call %u",
                 domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver",
                 (unsigned)cbid);
        return;
    }
    snprintf(out, len, "%s", name);
    cupti_name_trim(out);
}

/* Stages one record (g.lock held). */
static void stage(const CUpti_Activity *a)
{
    trace_kind kind;
    const char *name;
    char buf[160];
    uint64_t start, end;
    uint32_t stream, corr;

    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
        kind = TRACE_KERNEL;
        name = k->name ? k->name : "kernel";
        start = k->start, end = k->end, stream = k->streamId, corr = k->correlationId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;
        kind = TRACE_MEMCPY;
        name = memcpy_name(m->copyKind);
        start = m->start, end = m->end, stream = m->streamId, corr = m->correlationId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)a;
        kind = TRACE_MEMSET;
        name = "memset";
        start = m->start, end = m->end, stream = m->streamId, corr = m->correlationId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *api = (const CUpti_ActivityAPI *)a;
        api_name(a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                         : CUPTI_CB_DOMAIN_DRIVER_API,
                 api->cbid, buf, sizeof buf);
        kind = cupti_is_launch(buf) ? TRACE_LAUNCH : TRACE_RUNTIME;
        name = buf;
        start = api->start, end = api->end, stream = api->threadId;
        corr = api->correlationId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s =
            (const CUpti_ActivitySynchronization2 *)a;
        kind = TRACE_SYNC;
        name = sync_name(s->type);
        start = s->start, end = s->end, stream = s->streamId, corr = s->correlationId;
        break;
    }
    default:
        return; /* a kind we did not ask for */
    }
    if (start == 0 && end == 0) {
        g.incomplete++; /* CUPTI could not time it: lost, and counted */
        return;
    }
    trace_add(&g.staged, kind, name, start, end, stream, corr);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
                                      size_t *max_records)
{
    *buffer = aligned_alloc(CUPTI_BUFFER_ALIGN, CUPTI_BUFFER_BYTES);
    *size = *buffer ? CUPTI_BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
    if (!*buffer) {
        /* CUPTI drops what it cannot store and counts it (read at stop). */
        pthread_mutex_lock(&g.lock);
        g.refused++;
        pthread_mutex_unlock(&g.lock);
    }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id,
                                      uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx, (void)stream_id, (void)size;
    pthread_mutex_lock(&g.lock);
    if (g.owner && buffer) {
        CUpti_Activity *rec = NULL;
        for (;;) {
            CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &rec);
            if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
                break;
            if (r != CUPTI_SUCCESS) {
                if (!g.error[0])
                    describe(g.error, sizeof g.error, __FILE__, __LINE__,
                             "cuptiActivityGetNextRecord(buffer, valid, &rec)", r);
                break;
            }
            if (g.recording)
                stage(rec);
        }
    }
    pthread_mutex_unlock(&g.lock);
    free(buffer);
}

/* ------------------------------------------------------------ the collector */

/* host clock - CUPTI clock, from the tightest of a few bracketing reads. */
static int calibrate(collector *c, int64_t *offset)
{
    int rc = BK_OK;
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 7; i++) {
        uint64_t gpu = 0, h0 = trace_now_ns();
        CUPTI_CHECK(c->error, cuptiGetTimestamp(&gpu));
        uint64_t h1 = trace_now_ns();
        if (h1 - h0 < best) {
            best = h1 - h0;
            *offset = (int64_t)(h0 + (h1 - h0) / 2) - (int64_t)gpu;
        }
    }
fail:
    return rc;
}

static int disable_kinds(collector *c)
{
    cupti_impl *impl = c->impl;
    int rc = BK_OK;
    while (impl->enabled > 0) {
        CUPTI_CHECK(c->error, cuptiActivityDisable(collected_kinds[impl->enabled - 1]));
        impl->enabled--;
    }
fail:
    return rc;
}

static int collector_start(collector *c)
{
    cupti_impl *impl = c->impl;
    int rc = BK_OK;
    size_t dropped = 0;
    c->error[0] = '\0';
    if (impl->enabled) {
        snprintf(c->error, sizeof c->error, "CUPTI collector started twice");
        return BK_ERROR;
    }
    pthread_mutex_lock(&g.lock);
    trace_recorder_clear(&g.staged);
    g.incomplete = g.refused = 0;
    g.error[0] = '\0';
    g.recording = 1;
    pthread_mutex_unlock(&g.lock);
    /* Reading the count resets it: what follows is this pass's. */
    CUPTI_CHECK(c->error, cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
    if ((rc = calibrate(c, &impl->offset_ns)))
        goto fail;
    for (; impl->enabled < N_KINDS; impl->enabled++)
        CUPTI_CHECK(c->error, cuptiActivityEnable(collected_kinds[impl->enabled]));
    return BK_OK;

fail:
    {
        char first[sizeof c->error];
        memcpy(first, c->error, sizeof first);
        disable_kinds(c);
        memcpy(c->error, first, sizeof first);
    }
    pthread_mutex_lock(&g.lock);
    g.recording = 0;
    pthread_mutex_unlock(&g.lock);
    return rc;
}

static int collector_stop(collector *c, trace_recorder *into)
{
    cupti_impl *impl = c->impl;
    int rc = BK_OK;
    size_t dropped = 0;
    c->error[0] = '\0';
    if ((rc = disable_kinds(c)))
        goto fail;
    /* Forced: deliver every buffer, even one CUPTI still holds open. */
    CUPTI_CHECK(c->error, cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    CUPTI_CHECK(c->error, cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));

fail:
    pthread_mutex_lock(&g.lock);
    g.recording = 0;
    c->dropped += dropped + g.incomplete + g.staged.dropped;
    if (!rc && g.error[0]) {
        snprintf(c->error, sizeof c->error, "%s", g.error);
        rc = BK_ERROR;
    }
    /* Onto the host clock, unstamped: the analysis finds each record's
     * step through its host call. */
    int32_t step = into->current_step;
    into->current_step = -1;
    for (size_t i = 0; i < g.staged.count; i++) {
        const trace_record *r = &g.staged.records[i];
        trace_add(into, r->kind, r->name, (uint64_t)((int64_t)r->start_ns + impl->offset_ns),
                  (uint64_t)((int64_t)r->end_ns + impl->offset_ns), r->stream,
                  r->correlation);
    }
    into->current_step = step;
    trace_recorder_clear(&g.staged);
    pthread_mutex_unlock(&g.lock);
    return rc;
}

static void collector_destroy(collector *c)
{
    if (!c)
        return;
    if (((cupti_impl *)c->impl)->enabled)
        disable_kinds(c);
    /* A forced flush before teardown: no buffer is left inside CUPTI. */
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&g.lock);
    g.owner = NULL;
    g.recording = 0;
    trace_recorder_free(&g.staged);
    pthread_mutex_unlock(&g.lock);
    free(c->impl);
    free(c);
}

static const collector_ops cupti_ops = {
    .start = collector_start,
    .stop = collector_stop,
    .destroy = collector_destroy,
};

int cupti_collector_create(collector **out, char *why, size_t why_len)
{
    int rc = BK_OK;
    char err[320] = "";
    uint64_t now = 0;
    *out = NULL;

    pthread_mutex_lock(&g.lock);
    int busy = g.owner != NULL;
    pthread_mutex_unlock(&g.lock);
    if (busy) {
        snprintf(why, why_len, "a CUPTI collector already exists in this process");
        return BK_UNSUPPORTED;
    }
    collector *c = calloc(1, sizeof *c);
    cupti_impl *impl = calloc(1, sizeof *impl);
    if (!c || !impl) {
        free(c);
        free(impl);
        snprintf(why, why_len, "out of host memory for the CUPTI collector");
        return BK_OOM;
    }
    c->ops = &cupti_ops;
    c->impl = impl;

    /* Fail here, with CUPTI's reason, where CUPTI cannot work (no driver,
     * no GPU, another subscriber such as Nsight Systems). */
    CUPTI_CHECK(err, cuptiGetTimestamp(&now));
    if (!g.registered) {
        CUPTI_CHECK(err, cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
        g.registered = 1;
    }
    CUPTI_CHECK(err, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    CUPTI_CHECK(err, cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));

    pthread_mutex_lock(&g.lock);
    if (trace_recorder_init(&g.staged, CUPTI_MAX_STAGED) != 0) {
        pthread_mutex_unlock(&g.lock);
        snprintf(err, sizeof err, "out of host memory for the CUPTI staging buffer");
        rc = BK_OOM;
        goto fail;
    }
    g.owner = c;
    pthread_mutex_unlock(&g.lock);
    *out = c;
    return BK_OK;

fail:
    snprintf(why, why_len, "CUPTI unavailable: %s", err);
    free(impl);
    free(c);
    return rc;
}
