/* The execution modes as a backend sees them. The CUDA backend relies on
 * how the harness drives each mode through the table: what is allocated per
 * micro-batch and with which allocator, where the host waits, and what may
 * happen during a graph capture (no upload, download, sync or plain
 * allocation: CUDA refuses those while a stream is captured). A recording
 * backend, the CPU backend with counting wrappers, checks each mode. */
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dataset.h"
#include "model.h"
#include "names.h"
#include "step.h"

typedef struct counts {
    int alloc, free, transient_alloc, transient_free, upload, download, sync;
    int captures, launches, in_capture_forbidden;
    exec_mode transient_mode_seen; /* b->transient_mode at a transient alloc */
} counts;

static counts n;
static int capturing;
static const backend_ops *cpu_ops;
static backend_ops rec_ops;
static int graph_token;

static int rec_alloc(backend *b, size_t bytes, void **out)
{
    n.alloc++;
    n.in_capture_forbidden += capturing;
    return cpu_ops->alloc(b, bytes, out);
}

static void rec_free(backend *b, void *p)
{
    n.free++;
    cpu_ops->free(b, p);
}

static int rec_alloc_transient(backend *b, size_t bytes, void **out)
{
    n.transient_alloc++;
    n.transient_mode_seen = b->transient_mode;
    return cpu_ops->alloc_transient(b, bytes, out);
}

static void rec_free_transient(backend *b, void *p)
{
    n.transient_free++;
    cpu_ops->free_transient(b, p);
}

static int rec_upload(backend *b, void *dst, const void *src, size_t bytes)
{
    n.upload++;
    n.in_capture_forbidden += capturing;
    return cpu_ops->upload(b, dst, src, bytes);
}

static int rec_download(backend *b, void *dst, const void *src, size_t bytes)
{
    n.download++;
    n.in_capture_forbidden += capturing;
    return cpu_ops->download(b, dst, src, bytes);
}

static int rec_sync(backend *b)
{
    n.sync++;
    n.in_capture_forbidden += capturing;
    return cpu_ops->sync(b);
}

/* The CPU runs the captured ops as they are issued; a replay does nothing. */
static int rec_graph_begin(backend *b)
{
    (void)b;
    capturing = 1;
    return BK_OK;
}

static int rec_graph_end(backend *b, void **graph)
{
    (void)b;
    capturing = 0;
    n.captures++;
    *graph = &graph_token;
    return BK_OK;
}

static int rec_graph_launch(backend *b, void *graph)
{
    (void)b;
    CHECK(graph == &graph_token);
    n.launches++;
    return BK_OK;
}

static void rec_graph_destroy(backend *b, void *graph)
{
    (void)b;
    (void)graph;
}

static void test_names(void)
{
    for (int m = 0; m < MODE_COUNT; m++) {
        exec_mode back;
        CHECK(mode_parse(mode_name((exec_mode)m), &back) == 0 && back == (exec_mode)m);
    }
    exec_mode m;
    CHECK(mode_parse("alloc-async", &m) == 0 && m == MODE_ALLOC_ASYNC);
    CHECK(mode_parse("graphs", &m) == -1);
    CHECK(mode_parse("", &m) == -1);
}

#define EFFECTIVE 16
#define MICRO 4 /* K = 4 */

static void test_mode(backend *b, model *m, dataset *d, exec_mode mode)
{
    const int accum = EFFECTIVE / MICRO, steps = 2;
    /* z per layer, h per hidden layer, two gradient buffers. */
    const int tensors = m->layout.n_linear + (m->layout.n_linear - 1) + 2;
    split sp;
    char why[128];
    CHECK(split_make(EFFECTIVE, MICRO, 1, &sp, why, sizeof why) == 0);
    memset(&n, 0, sizeof n);
    step_runner s;
    int rc = step_runner_init(&s, m, d, &sp, mode, REDUCTION_SUM);
    CHECK(rc == BK_OK);
    if (rc) {
        fprintf(stderr, "  %s: %s\n", mode_name(mode), b->error);
        return;
    }
    CHECK(b->transient_mode == (mode == MODE_ALLOC_ASYNC ? MODE_ALLOC_ASYNC : MODE_ALLOC));
    CHECK(n.in_capture_forbidden == 0);
    CHECK(n.captures == (mode == MODE_GRAPH ? d->count : 0));
    CHECK(!capturing);

    memset(&n, 0, sizeof n);
    for (int i = 0; i < steps; i++)
        CHECK(step_run(&s) == BK_OK);
    int allocating = mode == MODE_ALLOC || mode == MODE_ALLOC_ASYNC;
    CHECK(n.transient_alloc == (allocating ? steps * accum * tensors : 0));
    CHECK(n.transient_free == n.transient_alloc);
    if (allocating)
        CHECK(n.transient_mode_seen == mode);
    CHECK(n.alloc == 0 && n.free == 0);     /* nothing else allocated in a step */
    CHECK(n.download == 0);                 /* nothing read back in a step */
    CHECK(n.sync == (mode == MODE_SYNC ? steps * accum : 0));
    CHECK(n.launches == (mode == MODE_GRAPH ? steps : 0));
    CHECK(n.upload <= steps);               /* at most the AdamW numbers */
    if (mode == MODE_GRAPH)
        CHECK(n.upload == steps);           /* ...uploaded before every replay */
    step_runner_free(&s);
}

int main(void)
{
    test_names();

    backend *b;
    char why[320];
    if (cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) != BK_OK) {
        fprintf(stderr, "%s\n", why);
        return 1;
    }
    cpu_ops = b->ops;
    rec_ops = *cpu_ops;
    rec_ops.alloc = rec_alloc;
    rec_ops.free = rec_free;
    rec_ops.alloc_transient = rec_alloc_transient;
    rec_ops.free_transient = rec_free_transient;
    rec_ops.upload = rec_upload;
    rec_ops.download = rec_download;
    rec_ops.sync = rec_sync;
    rec_ops.graph_begin = rec_graph_begin;
    rec_ops.graph_end = rec_graph_end;
    rec_ops.graph_launch = rec_graph_launch;
    rec_ops.graph_destroy = rec_graph_destroy;
    b->ops = &rec_ops;

    optimizer_config opt = {.kind = OPT_ADAMW, .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f,
                            .eps = 1e-8f, .weight_decay = 0.01f};
    model m;
    dataset d;
    CHECK(model_create(b, model_preset_find("tiny"), &opt, 3, &m) == BK_OK);
    CHECK(dataset_create(b, &m.layout, EFFECTIVE, 2, 3, &d) == BK_OK);
    for (int mode = 0; mode < MODE_COUNT; mode++)
        test_mode(b, &m, &d, (exec_mode)mode);
    dataset_destroy(&d);
    model_destroy(&m);
    CHECK(b->mem_in_use == 0);
    b->ops = cpu_ops;
    b->ops->destroy(b);
    return check_finish("test_modes");
}
