/* The execution modes as a backend sees them. The CUDA backend relies on
 * how the harness drives each mode through the table: what is allocated per
 * micro-batch and with which allocator, where the host waits, and what may
 * happen during a graph capture (no upload, download, sync or plain
 * allocation: CUDA refuses those while a stream is captured). A recording
 * backend, the CPU backend with counting wrappers, checks each mode. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dataset.h"
#include "model.h"
#include "step.h"
#include "test_spec.h"

typedef struct counts {
    int alloc, free, transient_alloc, transient_free, upload, download, sync;
    int captures, launches, in_capture_forbidden;
    int transient_mismatch;        /* frees from another allocator than the allocs */
    int allocator_seen;            /* the allocator of the transient allocs, -1: several */
} counts;

static counts n;
static int capturing;
static const backend_ops *cpu_ops;
static backend_ops rec_ops;
static int graph_token;
/* GEMMs issued in all, and how many had been when the first capture began;
 * the nonzero entries of `watched`'s gradients and loss sum then. */
static int gemms, gemms_at_first_capture = -1, nonzero_at_first_capture = -1;
static const step_runner *watched;

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

static int rec_alloc_transient(backend *b, bk_allocator from, size_t bytes, void **out)
{
    if (n.transient_alloc++ == 0)
        n.allocator_seen = (int)from;
    else if (n.allocator_seen != (int)from)
        n.allocator_seen = -1;
    return cpu_ops->alloc_transient(b, from, bytes, out);
}

static void rec_free_transient(backend *b, bk_allocator from, void *p)
{
    n.transient_free++;
    n.transient_mismatch += (int)from != n.allocator_seen;
    cpu_ops->free_transient(b, from, p);
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
static int rec_gemm(backend *b, const gemm_desc *g)
{
    gemms++;
    return cpu_ops->gemm(b, g);
}

static int rec_graph_begin(backend *b)
{
    (void)b;
    if (gemms_at_first_capture < 0) {
        gemms_at_first_capture = gemms;
        if (watched) {
            size_t n_params = watched->m->n_params;
            float *g = malloc((n_params + 1) * sizeof *g);
            CHECK(g != NULL);
            if (g && cpu_ops->download(b, g, watched->m->grads, n_params * sizeof *g) == BK_OK &&
                cpu_ops->download(b, &g[n_params], watched->loss_sum, sizeof *g) == BK_OK) {
                nonzero_at_first_capture = 0;
                for (size_t i = 0; i <= n_params; i++)
                    nonzero_at_first_capture += g[i] != 0;
            }
            free(g);
        }
    }
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

#define EFFECTIVE 16
#define MICRO 4 /* K = 4 */

/* What each mode must do, stated here independently of the table: a mode
 * added to it is tested by its line here (and fails until it has one). */
typedef struct mode_expect {
    const char *name;
    int syncs_per_micro; /* host syncs after each micro-batch */
    int graph;           /* captured once per buffer, replayed each step */
    int allocates;       /* activations per micro-batch ... */
    bk_allocator from;   /* ... from this allocator */
} mode_expect;

static const mode_expect EXPECT[] = {
    {"async", 0, 0, 0, BK_ALLOC_HELD},
    {"sync", 1, 0, 0, BK_ALLOC_HELD},
    {"graph", 0, 1, 0, BK_ALLOC_HELD},
    {"alloc", 0, 0, 1, BK_ALLOC_PLAIN},
    {"alloc-async", 0, 0, 1, BK_ALLOC_STREAM_ORDERED},
};

static const mode_expect *expect_of(exec_mode mode)
{
    for (size_t i = 0; i < sizeof EXPECT / sizeof EXPECT[0]; i++)
        if (strcmp(EXPECT[i].name, mode_name(mode)) == 0)
            return &EXPECT[i];
    return NULL;
}

static void test_mode(backend *b, model *m, dataset *d, exec_mode mode)
{
    const int accum = EFFECTIVE / MICRO, steps = 2;
    const mode_expect *want = expect_of(mode);
    CHECK(want != NULL);
    if (!want) {
        fprintf(stderr, "  mode %s: no expectation in test_modes.c\n", mode_name(mode));
        return;
    }
    /* Every activation buffer the model lists, once per micro-batch. */
    activations probe;
    CHECK(activations_create(m, MICRO, BK_ALLOC_HELD, &probe) == BK_OK);
    const int tensors = probe.count;
    CHECK(tensors > 0);
    activations_destroy(m, &probe, BK_ALLOC_HELD);
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
    CHECK(n.in_capture_forbidden == 0);
    CHECK(n.captures == (want->graph ? d->count : 0));
    CHECK(!capturing);

    memset(&n, 0, sizeof n);
    for (int i = 0; i < steps; i++)
        CHECK(step_run(&s) == BK_OK);
    CHECK(n.transient_alloc == (want->allocates ? steps * accum * tensors : 0));
    CHECK(n.transient_free == n.transient_alloc);
    if (want->allocates)
        CHECK(n.allocator_seen == (int)want->from);
    CHECK(n.transient_mismatch == 0);
    CHECK(n.alloc == 0 && n.free == 0);     /* nothing else allocated in a step */
    CHECK(n.download == 0);                 /* nothing read back in a step */
    CHECK(n.sync == (want->syncs_per_micro ? steps * accum : 0));
    CHECK(n.launches == (want->graph ? steps : 0));
    CHECK(n.upload <= steps);               /* at most the AdamW numbers */
    if (want->graph)
        CHECK(n.upload == steps);           /* ...uploaded before every replay */
    step_runner_free(&s);
}

/* Graph mode runs one eager window of the split before it captures (what
 * a GEMM shape needs on first use must not happen inside a capture), and
 * the capture begins with the gradients and the loss sum zeroed again. */
static void test_graph_after_eager_window(model *m, dataset *d)
{
    split sp;
    char why[128];
    CHECK(split_make(EFFECTIVE, MICRO, 1, &sp, why, sizeof why) == 0);
    gemms = 0;
    gemms_at_first_capture = nonzero_at_first_capture = -1;
    step_runner s;
    watched = &s;
    CHECK(step_runner_init(&s, m, d, &sp, MODE_GRAPH, REDUCTION_SUM) == BK_OK);
    watched = NULL;
    int before = gemms;
    CHECK(step_window(&s, 0) == BK_OK); /* one window, eagerly, to count it */
    int window = gemms - before;
    CHECK(window > 0);
    CHECK(gemms_at_first_capture == window);
    CHECK(nonzero_at_first_capture == 0);
    step_runner_free(&s);
}

/* A mode needing graph capture is refused on a backend without the graph
 * ops, with the one line the run prints; every mode runs where they are. */
static void test_backend_check(backend *b, const backend_ops *without_graphs)
{
    char why[200];
    for (int mode = 0; mode < MODE_COUNT; mode++)
        CHECK(mode_check_backend(mode, b, why, sizeof why) == 0);
    const backend_ops *with = b->ops;
    b->ops = without_graphs;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        int refused = mode_check_backend(mode, b, why, sizeof why) != 0;
        CHECK(refused == (mode_info_of(mode)->graph != 0));
        if (refused)
            CHECK(strstr(why, "needs graph capture") && strstr(why, b->name));
    }
    b->ops = with;
}

int main(void)
{

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
    rec_ops.gemm = rec_gemm;
    rec_ops.graph_begin = rec_graph_begin;
    rec_ops.graph_end = rec_graph_end;
    rec_ops.graph_launch = rec_graph_launch;
    rec_ops.graph_destroy = rec_graph_destroy;
    b->ops = &rec_ops;

    optimizer_config opt = {.kind = OPT_ADAMW, .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f,
                            .eps = 1e-8f, .weight_decay = 0.01f};
    model m;
    dataset d;
    model_spec tiny = test_spec("tiny");
    input_spec in;
    model_input(&tiny, &in);
    CHECK(model_create(b, &tiny, &opt, 3, &m) == BK_OK);
    CHECK(dataset_create(b, &in, EFFECTIVE, 2, 3, &d) == BK_OK);
    for (int mode = 0; mode < MODE_COUNT; mode++)
        test_mode(b, &m, &d, (exec_mode)mode);
    test_graph_after_eager_window(&m, &d);
    test_backend_check(b, cpu_ops);
    dataset_destroy(&d);
    model_destroy(&m);
    CHECK(b->mem_in_use == 0);
    b->ops = cpu_ops;
    b->ops->destroy(b);
    return check_finish("test_modes");
}
