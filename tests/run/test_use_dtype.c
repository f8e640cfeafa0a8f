/* One open backend serving several dtypes (backend_ops.use_dtype,
 * bk_use_dtype): the CPU backend's switch changes what differs with the
 * dtype (the storage, the attention arrangement, the library's words) and
 * refuses a dtype it cannot compute in without changing anything; each
 * model and dataset remembers the dtype it was made in; and a model of
 * each dtype, trained in turns on one backend switched between them, ends
 * with the weights, to the bit, of the same model trained alone on a
 * backend opened in its dtype (what a run of --dtype fp32,bf16 relies on
 * when its rounds interleave the two). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dataset.h"
#include "dispatch.h"
#include "model.h"
#include "step.h"
#include "test_cpu_backend.h"
#include "test_spec.h"

#define STEPS 3
#define MODEL "gpt:d=16,layers=2,heads=2,seq=8,vocab=32"

/* A model of one dtype with its data and its runner. */
typedef struct trainee {
    model m;
    dataset d;
    step_runner s;
} trainee;

static int trainee_open(backend *b, dtype dt, trainee *t)
{
    optimizer_config opt = {OPT_ADAMW, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, OPT_AT_STEP};
    model_spec spec = test_spec(MODEL);
    input_spec in;
    split sp;
    char why[200];
    memset(t, 0, sizeof *t);
    model_input(&spec, &in);
    int rc = bk_use_dtype(b, dt);
    if (!rc)
        rc = split_make(8, 4, 1, &sp, why, sizeof why) ? BK_ERROR : BK_OK;
    if (!rc)
        rc = model_create(b, &spec, &opt, 7, &t->m);
    if (!rc)
        rc = dataset_create(b, &in, 8, 2, 11, &t->d);
    if (!rc)
        rc = step_runner_init(&t->s, &t->m, &t->d, &sp, MODE_ASYNC, REDUCTION_SUM);
    return rc;
}

static void trainee_close(trainee *t)
{
    step_runner_free(&t->s);
    dataset_destroy(&t->d);
    model_destroy(&t->m);
}

/* The weights after training, into a fresh host array (NULL on failure). */
static float *weights_of(trainee *t)
{
    size_t bytes = t->m.n_params * sizeof(float);
    float *w = malloc(bytes);
    if (w && bk_download(t->m.b, w, t->m.params, bytes)) {
        free(w);
        w = NULL;
    }
    return w;
}

/* What the switch changes, and a refusal that changes nothing. */
static void test_switch(backend *b)
{
    CHECK(b->dtype == DTYPE_FP32 && b->compute_storage == STORAGE_F32);
    char fp32_library[sizeof b->library];
    snprintf(fp32_library, sizeof fp32_library, "%s", b->library);
    int fused = b->ops->attention_forward != NULL;
    CHECK(bk_use_dtype(b, DTYPE_TF32) == BK_UNSUPPORTED);
    CHECK(strstr(b->error, "tf32") != NULL);
    CHECK(b->dtype == DTYPE_FP32 && b->compute_storage == STORAGE_F32);
    CHECK(bk_use_dtype(b, DTYPE_BF16) == BK_OK);
    CHECK(b->dtype == DTYPE_BF16 && b->compute_storage == STORAGE_BF16);
    CHECK(b->ops->attention_forward == NULL); /* bf16 runs attention unfused */
    CHECK(strcmp(b->library, fp32_library) != 0); /* its bf16 GEMM named beside the BLAS */
    CHECK(strncmp(b->library, fp32_library, strlen(fp32_library)) == 0);
    CHECK(bk_use_dtype(b, DTYPE_FP32) == BK_OK);
    CHECK(b->dtype == DTYPE_FP32 && b->compute_storage == STORAGE_F32);
    CHECK((b->ops->attention_forward != NULL) == fused);
    CHECK(strcmp(b->library, fp32_library) == 0);
}

/* STEPS steps of the model alone on a backend opened in dt. */
static float *alone(dtype dt)
{
    backend *b = test_cpu_backend_of(dt);
    CHECK(b != NULL);
    if (!b)
        return NULL;
    trainee t;
    int rc = trainee_open(b, dt, &t);
    for (int i = 0; i < STEPS && !rc; i++)
        rc = step_run(&t.s);
    CHECK(rc == BK_OK);
    float *w = rc ? NULL : weights_of(&t);
    trainee_close(&t);
    b->ops->destroy(b);
    return w;
}

static void test_turns(void)
{
    float *want32 = alone(DTYPE_FP32), *want16 = alone(DTYPE_BF16);
    backend *b = test_cpu_backend();
    CHECK(b != NULL);
    if (!b || !want32 || !want16)
        goto done;
    test_switch(b);
    trainee t32, t16;
    int rc = trainee_open(b, DTYPE_FP32, &t32);
    if (!rc)
        rc = trainee_open(b, DTYPE_BF16, &t16);
    CHECK(rc == BK_OK);
    CHECK(t32.m.dtype == DTYPE_FP32 && t32.m.storage == STORAGE_F32);
    CHECK(t16.m.dtype == DTYPE_BF16 && t16.m.storage == STORAGE_BF16);
    CHECK(t32.d.x_storage == STORAGE_F32 && t16.d.x_storage == STORAGE_BF16);
    CHECK(t16.m.params_compute != (void *)t16.m.params); /* its bf16 copy */
    /* in turns, the backend switched to each model's dtype before its step */
    for (int i = 0; i < STEPS && !rc; i++) {
        rc = bk_use_dtype(b, t16.m.dtype);
        if (!rc)
            rc = step_run(&t16.s);
        if (!rc)
            rc = bk_use_dtype(b, t32.m.dtype);
        if (!rc)
            rc = step_run(&t32.s);
    }
    CHECK(rc == BK_OK);
    float *got32 = rc ? NULL : weights_of(&t32), *got16 = rc ? NULL : weights_of(&t16);
    size_t bytes = t32.m.n_params * sizeof(float);
    CHECK(got32 && !memcmp(got32, want32, bytes));
    CHECK(got16 && !memcmp(got16, want16, bytes));
    CHECK(got32 && got16 && memcmp(got32, got16, bytes) != 0); /* the dtypes differ */
    free(got32);
    free(got16);
    trainee_close(&t16);
    trainee_close(&t32);
    CHECK(b->mem_in_use == 0); /* each freed as it was allocated, whatever the dtype now */
done:
    if (b)
        b->ops->destroy(b);
    free(want32);
    free(want16);
}

int main(void)
{
    test_turns();
    return check_finish("test_use_dtype");
}
