/* The find-max-micro probe against a fake device whose allocator fails
 * beyond a byte limit: the probe must find exactly the largest micro-batch
 * whose memory need fits, through the device's failures or the user's cap,
 * free everything it took, and pass real errors up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dispatch.h"
#include "model_need.h"
#include "probe.h"
#include "sweep_row.h"
#include "test_spec.h"

/* A device with `limit` bytes and no memory behind the pointers: each
 * allocation is a distinct fake address whose size is remembered. */
#define FAKE_SLOTS 64
typedef struct fake_device {
    size_t limit, in_use;
    int calls, fail_with_error_at; /* the n-th alloc fails with BK_ERROR */
    uintptr_t next;
    uintptr_t ptr[FAKE_SLOTS];
    size_t size[FAKE_SLOTS];
} fake_device;

static int fake_alloc(backend *b, size_t bytes, void **out)
{
    fake_device *f = b->impl;
    *out = NULL;
    f->calls++;
    if (f->fail_with_error_at && f->calls == f->fail_with_error_at) {
        snprintf(b->error, sizeof b->error, "fake: device lost");
        return BK_ERROR;
    }
    if (f->in_use + bytes > f->limit) {
        snprintf(b->error, sizeof b->error, "fake: out of memory for %zu bytes", bytes);
        return BK_OOM;
    }
    for (int i = 0; i < FAKE_SLOTS; i++) {
        if (!f->ptr[i]) {
            f->next += 256;
            f->ptr[i] = f->next;
            f->size[i] = bytes;
            f->in_use += bytes;
            *out = (void *)f->ptr[i];
            return BK_OK;
        }
    }
    snprintf(b->error, sizeof b->error, "fake: out of slots");
    return BK_ERROR;
}

static void fake_free(backend *b, void *p)
{
    fake_device *f = b->impl;
    for (int i = 0; i < FAKE_SLOTS; i++) {
        if (f->ptr[i] == (uintptr_t)p) {
            f->in_use -= f->size[i];
            f->ptr[i] = 0;
            return;
        }
    }
    CHECK(!"free of a pointer the fake never gave out");
}

static int fake_alloc_transient(backend *b, bk_allocator from, size_t bytes, void **out)
{
    (void)from;
    return fake_alloc(b, bytes, out);
}

static void fake_free_transient(backend *b, bk_allocator from, void *p)
{
    (void)from;
    fake_free(b, p);
}

static const backend_ops fake_ops = {
    .alloc = fake_alloc,
    .free = fake_free,
    .alloc_transient = fake_alloc_transient,
    .free_transient = fake_free_transient,
};

static void fake_init(backend *b, fake_device *f, size_t limit, dtype dt)
{
    memset(b, 0, sizeof *b);
    memset(f, 0, sizeof *f);
    f->limit = limit;
    b->ops = &fake_ops;
    b->impl = f;
    b->name = "fake";
    b->dtype = dt;
    b->compute_storage = dt == DTYPE_BF16 ? STORAGE_BF16 : STORAGE_F32;
}

/* The answer by brute force: the largest micro in 1..bound whose need fits. */
static int expected_max(const probe_request *req, size_t limit)
{
    int bound = req->max_micro ? req->max_micro : req->effective;
    int best = 0;
    for (int micro = 1; micro <= bound; micro++) {
        memory_need n;
        model_memory_need(req->model, req->dtype, req->optimizer, micro,
                          req->effective ? req->effective : micro, req->input_buffers, &n);
        if (n.total <= limit)
            best = micro;
    }
    return best;
}

/* probe_print's text for r into text (cap bytes), "" where the stream
 * could not be opened (the check says so). */
static void print_answer(char *text, size_t cap, const char *name, const probe_request *req,
                         const probe_result *r, size_t mem_cap)
{
    text[0] = '\0';
    FILE *mem = fmemopen(text, cap - 1, "w");
    CHECK(mem != NULL);
    if (mem) {
        probe_print(mem, name, req, r, mem_cap);
        fclose(mem);
    }
}

static void test_device_limit(const char *preset, dtype dt, optimizer_kind opt,
                              int effective)
{
    model_spec spec = test_spec(preset);
    probe_request req = {.model = &spec, .dtype = dt, .optimizer = opt,
                         .effective = effective, .input_buffers = 2};
    memory_need at1, at_e;
    model_memory_need(&spec, dt, opt, 1, effective, 2, &at1);
    model_memory_need(&spec, dt, opt, effective, effective, 2, &at_e);
    /* Limits from "micro 1 barely fits" to "everything fits", and between. */
    size_t limits[] = {at1.total, at1.total + 1, (at1.total + at_e.total) / 2,
                       at1.total + (at_e.total - at1.total) / 7, at_e.total - 1, at_e.total,
                       at_e.total * 4};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        backend b;
        fake_device f;
        fake_init(&b, &f, limits[i], dt);
        probe_result r;
        int rc = probe_find_max_micro(&b, &req, &r);
        int want = expected_max(&req, limits[i]);
        CHECK(rc == BK_OK);
        CHECK(r.micro == want);
        if (r.micro != want)
            fprintf(stderr, "  %s %s limit %zu: probe %d, expected %d\n", preset,
                    dtype_name(dt), limits[i], r.micro, want);
        CHECK(r.need.total <= limits[i]);
        CHECK(r.accum == (effective + r.micro - 1) / r.micro);
        CHECK(r.last == effective - (r.accum - 1) * r.micro);
        CHECK(r.probes <= 2 + 20); /* a binary search over <= 2^20 candidates */
        CHECK(f.in_use == 0);      /* everything freed */
        CHECK(b.mem_in_use == 0);
        CHECK(b.mem_peak <= limits[i]);
    }
}

/* The user's cap through dispatch.h on a device with room to spare gives
 * the same answer as a device of that size. */
static void test_cap(void)
{
    model_spec spec = test_spec("M");
    probe_request req = {.model = &spec, .dtype = DTYPE_BF16, .optimizer = OPT_ADAMW,
                         .effective = 256, .input_buffers = 2};
    memory_need at1;
    model_memory_need(&spec, DTYPE_BF16, OPT_ADAMW, 1, 256, 2, &at1);
    size_t cap = at1.total + (size_t)100 * 4096 * 2 * 30; /* room for ~100 examples */
    backend b;
    fake_device f;
    fake_init(&b, &f, SIZE_MAX, DTYPE_BF16);
    b.mem_cap = cap;
    probe_result r;
    CHECK(probe_find_max_micro(&b, &req, &r) == BK_OK);
    CHECK(r.micro == expected_max(&req, cap));
    CHECK(r.micro > 1 && r.micro < 256);
    CHECK(f.in_use == 0 && b.mem_in_use == 0);

    /* The printout names the micro-batch and the accumulation. */
    char text[2048] = "";
    print_answer(text, sizeof text, "M", &req, &r, cap);
    char line[128];
    snprintf(line, sizeof line, "largest micro-batch: %d", r.micro);
    CHECK(strstr(text, line) != NULL);
    snprintf(line, sizeof line, "accumulation steps: %d", r.accum);
    CHECK(strstr(text, line) != NULL);
    if (r.last != r.micro)
        CHECK(strstr(text, "even split:") != NULL);
}

static void test_nothing_fits(void)
{
    model_spec spec = test_spec("S");
    probe_request req = {.model = &spec, .dtype = DTYPE_FP32, .optimizer = OPT_ADAMW,
                         .effective = 64, .input_buffers = 2};
    memory_need at1;
    model_memory_need(&spec, DTYPE_FP32, OPT_ADAMW, 1, 64, 2, &at1);
    backend b;
    fake_device f;
    fake_init(&b, &f, at1.total - 1, DTYPE_FP32);
    probe_result r;
    CHECK(probe_find_max_micro(&b, &req, &r) == BK_OOM);
    CHECK(r.micro == 0);
    CHECK(strstr(b.error, "not even a micro-batch of 1 fits") != NULL);
    CHECK(f.in_use == 0 && b.mem_in_use == 0);
    /* the printout gives micro-batch 1's need, piece by piece; where the
     * state fits the cap, no word of it passing */
    CHECK(r.need.total == at1.total);
    char text[2048], line[128];
    print_answer(text, sizeof text, "S", &req, &r, at1.total - 1);
    snprintf(line, sizeof line, "memory need at micro-batch 1: %zu bytes", at1.total);
    CHECK(strstr(text, line) != NULL);
    snprintf(line, sizeof line, "  weights %zu, compute copy 0, gradients %zu, optimizer %zu,",
             at1.weights, at1.gradients, at1.optimizer_state);
    CHECK(strstr(text, line) != NULL);
    CHECK(strstr(text, "state alone") == NULL);
    /* a cap under the state alone: no split helps, and the text says what
     * cuts the state (SGD only where an optimizer keeps state) */
    size_t state = at1.weights + at1.gradients + at1.optimizer_state;
    print_answer(text, sizeof text, "S", &req, &r, state - 1);
    CHECK(strstr(text, "passes the cap: no split helps; ZeRO's shards across ranks") != NULL);
    CHECK(strstr(text, "SGD (--optimizer sgd)") != NULL);
    r.need.optimizer_state = 0;
    print_answer(text, sizeof text, "S", &req, &r, at1.weights + at1.gradients - 1);
    CHECK(strstr(text, "no split helps") != NULL && strstr(text, "SGD") == NULL);
}

/* A failure that is not a lack of memory ends the search and comes back. */
static void test_error_passes_up(void)
{
    model_spec spec = test_spec("S");
    probe_request req = {.model = &spec, .dtype = DTYPE_FP32, .optimizer = OPT_ADAMW,
                         .effective = 64, .input_buffers = 2};
    backend b;
    fake_device f;
    fake_init(&b, &f, SIZE_MAX, DTYPE_FP32);
    f.fail_with_error_at = 3; /* midway through the first candidate's pieces */
    probe_result r;
    CHECK(probe_find_max_micro(&b, &req, &r) == BK_ERROR);
    CHECK(strstr(b.error, "device lost") != NULL);
    CHECK(f.in_use == 0 && b.mem_in_use == 0);
}

/* Without an effective batch each candidate runs unaccumulated, up to the
 * bound given. */
static void test_no_effective(void)
{
    model_spec spec = test_spec("S");
    probe_request req = {.model = &spec, .dtype = DTYPE_FP32, .optimizer = OPT_SGD,
                         .effective = 0, .input_buffers = 1, .max_micro = 5000};
    memory_need n;
    model_memory_need(&spec, DTYPE_FP32, OPT_SGD, 1234, 1234, 1, &n);
    backend b;
    fake_device f;
    fake_init(&b, &f, n.total, DTYPE_FP32);
    probe_result r;
    CHECK(probe_find_max_micro(&b, &req, &r) == BK_OK);
    CHECK(r.micro == 1234);
    CHECK(r.accum == 1 && r.effective == 1234);
    CHECK(f.in_use == 0);
}

/* Over devices that do not divide E, the split run would take: 10 over 3
 * at up to 3 fitting is 2 x 2 (parts 1, 1, 2 last), for 3 x 2 would leave a
 * device no part of the last micro-batch; 64 over 3 at 22 is one pass of
 * 21, 21 and 22. The printout says the shares differ. */
static void test_ragged_devices(void)
{
    model_spec spec = test_spec("S");
    probe_request req = {.model = &spec, .dtype = DTYPE_FP32, .optimizer = OPT_SGD,
                         .effective = 10, .input_buffers = 1, .max_micro = 3, .devices = 3};
    backend b;
    fake_device f;
    fake_init(&b, &f, SIZE_MAX, DTYPE_FP32);
    probe_result r;
    CHECK(probe_find_max_micro(&b, &req, &r) == BK_OK);
    CHECK(r.fits == 3 && r.micro == 2 && r.accum == 2 && r.last == 2);
    char text[2048] = "";
    print_answer(text, sizeof text, "S", &req, &r, 0);
    CHECK(strstr(text, "(3 fits; 2 is the largest that gives each of the 3 devices") != NULL);
    CHECK(strstr(text, "devices:            3 (3 or 4 examples each)") != NULL);
    CHECK(strstr(text, "even split:") == NULL);

    req.effective = 64;
    req.max_micro = 22;
    CHECK(probe_find_max_micro(&b, &req, &r) == BK_OK);
    CHECK(r.fits == 22 && r.micro == 22 && r.accum == 1 && r.last == 22);
    /* 7 over 3 at up to 2: 2 x 2 leaves 1 for 3 devices, 1 x 3 too: none */
    req.effective = 7;
    req.max_micro = 2;
    CHECK(probe_find_max_micro(&b, &req, &r) == BK_OOM);
    CHECK(r.micro == 0 && strstr(b.error, "no micro-batch up to it splits") != NULL);
    print_answer(text, sizeof text, "S", &req, &r, 0);
    CHECK(strstr(text, "largest micro-batch: none splits 7 examples over 3 devices (2 fits") != NULL);
    CHECK(f.in_use == 0);
}

/* Counts in the printout agree with their nouns: "1 probe", "1 buffer". */
static void test_print_counts(void)
{
    model_spec spec = test_spec("tiny");
    probe_request req = {.model = &spec, .dtype = DTYPE_FP32, .optimizer = OPT_ADAMW,
                         .effective = 8, .input_buffers = 1};
    probe_result r = {.micro = 8, .effective = 8, .accum = 1, .last = 8, .bound = 8,
                      .probes = 1};
    char text[2048] = "";
    print_answer(text, sizeof text, "tiny", &req, &r, 0);
    CHECK(strstr(text, "(1 probe)") != NULL);
    CHECK(strstr(text, "(1 buffer)") != NULL);
    r.micro = 0; /* none fits, after one probe */
    print_answer(text, sizeof text, "tiny", &req, &r, 0);
    CHECK(strstr(text, "none fits (1 probe)") != NULL);
}

/* Whether run takes a config of `micro` on b (sweep_row_fits: the rule
 * run applies before it makes anything). */
static int run_takes(backend *b, const probe_request *req, int micro)
{
    sweep s;
    memset(&s, 0, sizeof s);
    s.b = b;
    memory_need n;
    model_memory_need(req->model, req->dtype, req->optimizer, micro, req->effective,
                      req->input_buffers, &n);
    result_row r;
    memset(&r, 0, sizeof r);
    r.mem_need_bytes = (int64_t)n.total;
    r.params = (int64_t)model_param_count(req->model);
    return sweep_row_fits(&s, &r);
}

/* On a device that is the host's memory (the CPU) with a pretend RAM size:
 * run keeps a tenth of the RAM free and counts the gradient check's host
 * copies (20 bytes a parameter) beside the need, so the plan's answer is
 * the largest micro-batch run takes, not the largest the RAM holds. RAM
 * sizes from "micro 1 barely runs" to a byte short of the whole effective
 * batch; each holds the whole batch's need, so a plan against the RAM
 * alone said 256 at every one. */
static void test_host_ram(void)
{
    model_spec spec = test_spec("S");
    probe_request req = {.model = &spec, .dtype = DTYPE_FP32, .optimizer = OPT_ADAMW,
                         .effective = 256, .input_buffers = 2};
    memory_need at1, at_e;
    model_memory_need(&spec, DTYPE_FP32, OPT_ADAMW, 1, 256, 2, &at1);
    model_memory_need(&spec, DTYPE_FP32, OPT_ADAMW, 256, 256, 2, &at_e);
    double copies = 20.0 * (double)model_param_count(&spec);
    size_t rams[] = {(size_t)((at1.total + copies) / 0.9) + 1,
                     (size_t)(((at1.total + at_e.total) / 2 + copies) / 0.9),
                     (size_t)((at_e.total + copies) / 0.9) - 1};
    for (size_t i = 0; i < sizeof rams / sizeof rams[0]; i++) {
        backend b;
        fake_device f;
        fake_init(&b, &f, rams[i], DTYPE_FP32); /* the allocator refuses past the RAM */
        b.mem_total = rams[i];
        b.caps = BK_CAP_SHARES_HOST_MEMORY;
        probe_result r;
        int rc = probe_find_max_micro(&b, &req, &r);
        CHECK(rc == BK_OK);
        if (rc != BK_OK)
            fprintf(stderr, "  RAM %zu: %s\n", rams[i], b.error);
        CHECK(r.micro >= 1 && r.micro < 256);
        CHECK(run_takes(&b, &req, r.micro));
        CHECK(!run_takes(&b, &req, r.micro + 1));
        /* the rule itself, by hand: need + copies within 90% of the RAM */
        memory_need n;
        model_memory_need(&spec, DTYPE_FP32, OPT_ADAMW, r.micro + 1, 256, 2, &n);
        CHECK(n.total + copies > 0.9 * (double)rams[i]);
        CHECK(r.need.total + copies <= 0.9 * (double)rams[i]);
        if (!run_takes(&b, &req, r.micro) || run_takes(&b, &req, r.micro + 1))
            fprintf(stderr, "  RAM %zu: the plan says %d, run takes %d: %d, %d: %d\n", rams[i],
                    r.micro, r.micro, run_takes(&b, &req, r.micro), r.micro + 1,
                    run_takes(&b, &req, r.micro + 1));
        CHECK(f.in_use == 0 && b.mem_in_use == 0);
    }
    /* None fits: the reason is run's own. */
    backend b;
    fake_device f;
    fake_init(&b, &f, at1.total, DTYPE_FP32);
    b.mem_total = at1.total;
    b.caps = BK_CAP_SHARES_HOST_MEMORY;
    probe_result r;
    CHECK(probe_find_max_micro(&b, &req, &r) == BK_OOM);
    CHECK(strstr(b.error, "gradient check's host copies") != NULL);
}

int main(void)
{
    test_print_counts();
    test_device_limit("S", DTYPE_FP32, OPT_ADAMW, 256);
    test_device_limit("S", DTYPE_BF16, OPT_ADAMW, 100);
    test_device_limit("M", DTYPE_TF32, OPT_SGD, 64);
    test_device_limit("tiny", DTYPE_FP32, OPT_ADAMW, 1000);
    test_cap();
    test_nothing_fits();
    test_error_passes_up();
    test_no_effective();
    test_ragged_devices();
    test_host_ram();
    return check_finish("test_probe");
}
