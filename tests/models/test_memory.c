/* The memory arithmetic and the memory cap.
 *
 * model_memory_need against numbers worked out by hand for preset S, the
 * same need against what the CPU backend is actually asked for when the
 * model, its data and a step runner (one micro-batch's activations and the
 * step's loss sum) are built and stepped under a cap of exactly it, and the cap
 * that dispatch.h enforces for every backend (how --mem-cap emulates a
 * smaller GPU). */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dataset.h"
#include "dispatch.h"
#include "model.h"
#include "split.h"
#include "step.h"
#include "test_spec.h"

/* Preset S: hidden 1024, 4 hidden layers, 1024 classes, so 5 linear layers
 * of 1024 x 1024 weights and 1024 biases each:
 *   params      = 5 * (1024 * 1024 + 1024)          = 5,248,000
 * fp32, AdamW, micro 64, effective 256, 2 input buffers:
 *   weights     = 5,248,000 * 4                      = 20,992,000
 *   gradients   = the same                           = 20,992,000
 *   optimizer   = m and v, and the device copy of the
 *                 AdamW numbers (7 floats)           = 41,984,028
 *   activations = (5 z + 4 h + 2 gradient) * 1024 * 64 * 4 = 2,883,584
 *   loss sum    = the step's one float                =          4
 *   inputs      = 2 * (1024 * 256 * 4 x + 2 * 256 * 4 labels/valid
 *                      + (256 + 1) * 4 scales)       = 2 * 1,051,652 = 2,103,304
 *   total                                            = 88,954,920
 * bf16 adds the bf16 compute copy (2 bytes a parameter) and halves the
 * activations and x:
 *   compute copy = 10,496,000; activations = 1,441,792;
 *   inputs = 2 * (524,288 + 2,048 + 1,028) = 1,054,728; total = 96,960,552
 * SGD keeps no optimizer state. */
static void test_need_by_hand(void)
{
    model_spec spec = test_spec("S");
    CHECK(model_param_count(&spec) == 5248000);

    memory_need n;
    model_memory_need(&spec, DTYPE_FP32, OPT_ADAMW, 64, 256, 2, &n);
    CHECK(n.weights == 20992000);
    CHECK(n.master_copy == 0);
    CHECK(n.gradients == 20992000);
    CHECK(n.optimizer_state == 41984028);
    CHECK(n.activations == 2883584);
    CHECK(n.loss_sum == 4);
    CHECK(n.inputs == 2103304);
    CHECK(n.total == 88954920);

    model_memory_need(&spec, DTYPE_TF32, OPT_ADAMW, 64, 256, 2, &n);
    CHECK(n.total == 88954920); /* tf32 stores fp32 */

    model_memory_need(&spec, DTYPE_BF16, OPT_ADAMW, 64, 256, 2, &n);
    CHECK(n.weights == 20992000);
    CHECK(n.master_copy == 10496000);
    CHECK(n.gradients == 20992000);
    CHECK(n.optimizer_state == 41984028);
    CHECK(n.activations == 1441792);
    CHECK(n.inputs == 1054728);
    CHECK(n.total == 96960552);

    model_memory_need(&spec, DTYPE_FP32, OPT_SGD, 64, 256, 2, &n);
    CHECK(n.optimizer_state == 0);
    CHECK(n.total == 88954920 - 41984028);

    /* Only the activations follow the micro-batch, linearly. */
    memory_need n1, n2;
    model_memory_need(&spec, DTYPE_FP32, OPT_ADAMW, 1, 256, 2, &n1);
    model_memory_need(&spec, DTYPE_FP32, OPT_ADAMW, 2, 256, 2, &n2);
    CHECK(n1.activations == 11 * 1024 * 4);
    CHECK(n2.total - n1.total == n1.activations);
    CHECK(n1.inputs == n.inputs);
}

/* What a run allocates for a config, asked of the backend: the model and
 * its data (the sweep opens them outside the cap), then the step runner
 * under a cap of exactly the need: its activations and its loss sum fit,
 * a step runs, and the peak is the need to the byte. With either optimizer
 * (SGD keeps no state at all), in each dtype the CPU backend computes in
 * (bf16 adds the compute copy and halves the activations). */
static void test_need_matches_allocations(dtype dt, optimizer_kind kind)
{
    backend *b;
    char why[320];
    CHECK(cpu_backend_create(dt, &b, why, sizeof why) == BK_OK);
    if (!b)
        return;
    model_spec p = test_spec("tiny");
    optimizer_config opt = {.kind = kind, .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f,
                            .eps = 1e-8f};
    model m;
    dataset d;
    input_spec in;
    split sp;
    step_runner run;
    model_input(&p, &in);
    memory_need n;
    model_memory_need(&p, dt, kind, 16, 48, 3, &n);
    CHECK(model_create(b, &p, &opt, 1, &m) == BK_OK);
    CHECK(dataset_create(b, &in, 48, 3, 2, &d) == BK_OK);
    CHECK(split_make(48, 16, 1, &sp, why, sizeof why) == 0);
    b->mem_cap = n.total;
    int rc = step_runner_init(&run, &m, &d, &sp, MODE_ASYNC, REDUCTION_SUM);
    CHECK(rc == BK_OK);
    if (rc != BK_OK) {
        fprintf(stderr, "  %s %s: a cap of the need %zu: %s\n", dtype_name(dt),
                kind == OPT_SGD ? "sgd" : "adamw", n.total, b->error);
    } else {
        b->mem_peak = b->mem_in_use;
        CHECK(step_run(&run) == BK_OK && b->ops->sync(b) == BK_OK);
        long long diff = (long long)b->mem_peak - (long long)n.total;
        CHECK(diff == 0 && b->mem_in_use == n.total);
        if (diff != 0)
            fprintf(stderr, "  %s %s: peak %zu, need %zu\n", dtype_name(dt),
                    kind == OPT_SGD ? "sgd" : "adamw", b->mem_peak, n.total);
        CHECK(run.acts.bytes == n.activations && d.bytes == n.inputs);
        step_runner_free(&run);
    }
    b->mem_cap = 0;
    dataset_destroy(&d);
    model_destroy(&m);
    CHECK(b->mem_in_use == 0);
    b->ops->destroy(b);
}

/* The cap: an allocation that would pass it fails with BK_OOM before the
 * device is asked, leaves the accounting as it was and says why; frees give
 * the room back; the peak is kept. */
static void test_cap(void)
{
    backend *b;
    char why[320];
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    if (!b)
        return;
    b->mem_cap = 1000;
    void *p1, *p2, *p3;
    CHECK(bk_alloc(b, 600, &p1) == BK_OK);
    CHECK(b->mem_in_use == 600);
    CHECK(bk_alloc(b, 401, &p2) == BK_OOM);
    CHECK(p2 == NULL);
    CHECK(b->mem_in_use == 600);
    CHECK(strstr(b->error, "memory cap of 1000 bytes") != NULL);
    CHECK(bk_alloc(b, 400, &p2) == BK_OK); /* exactly at the cap fits */
    CHECK(b->mem_in_use == 1000 && b->mem_peak == 1000);
    CHECK(bk_alloc_from(b, BK_ALLOC_PLAIN, 1, &p3) == BK_OOM); /* transients count too */
    bk_free(b, p1, 600);
    CHECK(b->mem_in_use == 400);
    CHECK(bk_alloc_from(b, BK_ALLOC_PLAIN, 500, &p3) == BK_OK);
    CHECK(b->mem_in_use == 900);
    bk_free_from(b, BK_ALLOC_PLAIN, p3, 500);
    bk_free(b, p2, 400);
    CHECK(b->mem_in_use == 0);
    CHECK(b->mem_peak == 1000);
    bk_free(b, NULL, 123); /* freeing nothing changes nothing */
    CHECK(b->mem_in_use == 0);
    b->mem_cap = 0; /* no cap: large requests go to the device */
    CHECK(bk_alloc(b, 4096, &p1) == BK_OK);
    bk_free(b, p1, 4096);
    b->ops->destroy(b);
}

/* Held apart from the cap (a check's buffer beside the step): made past
 * the cap, and while held the cap still gives its every byte to what is
 * allocated under it; in use (and the peak) count it like any other. */
static void test_apart(void)
{
    backend *b;
    char why[320];
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    if (!b)
        return;
    b->mem_cap = 1000;
    void *step, *check, *more;
    CHECK(bk_alloc(b, 700, &step) == BK_OK);
    CHECK(bk_alloc_apart(b, 800, &check) == BK_OK);
    CHECK(b->mem_in_use == 1500 && b->mem_apart == 800 && b->mem_cap == 1000);
    CHECK(bk_alloc(b, 300, &more) == BK_OK); /* the cap's last bytes */
    CHECK(b->mem_in_use == 1800 && b->mem_peak == 1800);
    void *over;
    CHECK(bk_alloc(b, 1, &over) == BK_OOM);
    CHECK(strstr(b->error, "(1000 in use already)") != NULL);
    bk_free(b, more, 300);
    bk_free_apart(b, check, 800);
    CHECK(b->mem_in_use == 700 && b->mem_apart == 0);
    CHECK(bk_alloc(b, 301, &over) == BK_OOM); /* its bytes gone, the cap as it was */
    bk_free_apart(b, NULL, 5); /* freeing nothing changes nothing */
    CHECK(b->mem_apart == 0);
    bk_free(b, step, 700);
    CHECK(b->mem_in_use == 0);
    b->ops->destroy(b);
}

/* The CPU's buffers are page-aligned, small ones too: where a buffer sits
 * in its page is then the same in every runner (cpu_alloc says why), so
 * the A/A pair of a small model holds its buffers alike. */
static void test_page_aligned(void)
{
    backend *b;
    char why[320];
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    if (!b)
        return;
    static const size_t sizes[] = {1, 100, 4095, 4097, 70000, 1 << 20};
    void *p[sizeof sizes / sizeof *sizes];
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        CHECK(bk_alloc(b, sizes[i], &p[i]) == BK_OK);
        CHECK(((uintptr_t)p[i] & 4095) == 0);
    }
    CHECK(b->mem_in_use == 1 + 100 + 4095 + 4097 + 70000 + (1 << 20)); /* bytes asked for */
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        bk_free(b, p[i], sizes[i]);
    b->ops->destroy(b);
}

int main(void)
{
    test_need_by_hand();
    for (dtype dt = DTYPE_FP32; dt < DTYPE_COUNT; dt++)
        if (dt != DTYPE_TF32) { /* a tensor-core mode: the CPU refuses it */
            test_need_matches_allocations(dt, OPT_ADAMW);
            test_need_matches_allocations(dt, OPT_SGD);
        }
    test_cap();
    test_apart();
    test_page_aligned();
    return check_finish("test_memory");
}
