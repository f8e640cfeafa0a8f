/* gpu-check's shared parts: the result list every check appends to, the
 * two-sided scratch buffers of an op check, and the checks themselves. */
#ifndef ACCUBENCH_GPU_CHECK_H
#define ACCUBENCH_GPU_CHECK_H

#include <math.h>
#include <stddef.h>

#include "backend.h"
#include "rng.h"

/* ------------------------------------------------------------ results */

typedef struct check_result {
    char check[48], dtype[8], split[24];
    double error, tolerance;
    int passed;
    char note[200];
} check_result;

/* The tolerances of one op and of a whole model: the dtype table's. */
static inline double op_tolerance(dtype d) { return dtype_info_of(d)->op_tolerance; }
static inline double model_tolerance(dtype d) { return dtype_info_of(d)->model_tolerance; }

/* Appends a result (printed at once); passed = error <= tolerance. */
void record(const char *check, dtype d, const char *split, double error, double tolerance,
            const char *note);
/* A check that could not run: the backend said why. */
void record_failure(const char *check, dtype d, const char *split, const backend *b);
/* Relative L2 error, NaN when either side has a NaN. */
double rel_err(const float *got, const float *want, size_t n);

int check_results_count(void);
int check_results_failed(void);
/* The results CSV, reserved before anything is checked as accubench run
 * reserves its own (csv_existing.h: a regular file or nothing, locked,
 * an existing gpu-check CSV only with `replace`, anything else never),
 * then rewritten whole after every result, through a temporary and a
 * rename (atomic_file.h): on disk it is a whole file or absent, never cut
 * mid-line, and a run cut short keeps every row written. Returns 0, or -1
 * with the reason. */
int check_results_open_csv(const char *path, int replace, char *why, size_t why_len);
/* Writes it a last time where no result was (a new file gets its header)
 * and lets the lock go: 0, or -1 with the reason a write failed. */
int check_results_close_csv(char *why, size_t why_len);

/* ------------------------------------------------------------ buffers */

/* The two sides of an op check: [CPU] the reference, [DEV] the device. */
enum { CPU = 0, DEV = 1 };

typedef struct sides {
    backend *b[2];
    storage st[2]; /* each side's compute storage: fp32, and the device's */
    dtype dt;
    rng r;
} sides;

/* What one check holds, freed together: device buffers on each side and
 * host arrays. A host allocation that fails sets host_failed. */
#define SCRATCH_MAX 16
typedef struct scratch {
    backend *b[2];
    void *dev[2][SCRATCH_MAX];
    size_t bytes[2][SCRATCH_MAX];
    int n_dev[2];
    void *host[SCRATCH_MAX];
    int n_host, host_failed;
} scratch;

int dev_alloc(scratch *sc, int side, size_t bytes, void **out);
float *host_alloc(scratch *sc, size_t n);
/* n random values in [lo, hi), rounded to storage s (so that both sides
 * start from the same numbers), and to TF32 when `tf32`. */
float *host_random_as(scratch *sc, rng *r, size_t n, float lo, float hi, storage s, int tf32);
float *host_random(scratch *sc, rng *r, size_t n, float lo, float hi, storage s);
void scratch_free(scratch *sc);
/* A device buffer on `side` holding host[0..n) in storage s. */
int put(scratch *sc, int side, storage s, const float *host, size_t n, void **out);
/* host[0..n) into an existing device buffer, in storage s. */
int put_into(backend *b, storage s, const float *host, size_t n, void *dev);
/* host[0..n) = the device buffer in storage s, widened to fp32. */
int get(backend *b, storage s, const void *dev, size_t n, float *host);

/* Inside a check (which names `check`, `split`, `x` and `sc`): on failure
 * record the check as failed, with the backend's reason, and clean up. */
#define TRY(b, call)                                                          \
    do {                                                                      \
        if ((call) != BK_OK) {                                                \
            record_failure(check, x->dt, split, (b));                         \
            goto done;                                                        \
        }                                                                     \
    } while (0)

#define NEED_HOST()                                                           \
    do {                                                                      \
        if (sc.host_failed) {                                                 \
            record(check, x->dt, split, NAN, 0, "out of host memory");        \
            goto done;                                                        \
        }                                                                     \
    } while (0)

/* ------------------------------------------------------------- checks */

/* Every op on fresh random inputs, device against CPU (ops.c). */
void check_ops(sides *x);
/* The transformer ops and the strided-batched GEMM (ops_transformer.c),
 * called from check_ops. */
void check_transformer_ops(sides *x);
/* The Llama's ops: RMSNorm, SwiGLU, rotary, the repeat of the key and
 * value heads (ops_llama.c), called from check_ops. */
void check_llama_ops(sides *x);
/* Causal attention, the device's fused op and its unfused path, each
 * against the CPU's fused op (ops_attention.c), called from check_ops. */
void check_attention_ops(sides *x);

/* The model (model.c). */
#define MODEL_PRESET "S"
#define MODEL_EFFECTIVE 32
#define MODEL_SEED 7

/* The CPU's full-batch gradient and loss: the reference every dtype's
 * windows are held to. */
int cpu_reference(backend *cpu, float **grads, float *loss, size_t *n_params);
void check_model(backend *dev, dtype dt, const float *ref_grads, float ref_loss,
                 size_t n_params);
/* A small GPT's windows against the CPU, per dtype (the reference made on
 * `cpu` each time). */
#define GPT_CHECK_SHAPE "gpt:d=128,layers=2,heads=4,seq=64,vocab=1024"
#define GPT_CHECK_EFFECTIVE 16
void check_gpt_model(backend *cpu, backend *dev, dtype dt);
/* The same for a small Llama (grouped-query, untied), recompute none and
 * block. */
#define LLAMA_CHECK_SHAPE "llama:d=128,layers=2,heads=4,kv_heads=2,ffn=352,seq=64,vocab=1024,tied=0"
#define LLAMA_CHECK_EFFECTIVE 16
void check_llama_model(backend *cpu, backend *dev, dtype dt);
/* The real shapes (gpu-check --real-shapes): GPT-2 small at one sequence,
 * a 12-layer GPT (GPT_DEEP_SHAPE) for depth drift, and the ops at GPT-2
 * small's sizes, logits of more than 2^31 elements among them. */
#define GPT_DEEP_SHAPE "gpt:d=256,layers=12,heads=4,seq=128,vocab=1024"
#define GPT_DEEP_EFFECTIVE 8
void check_gpt_real(backend *cpu, backend *dev, dtype dt);
void check_ops_real(sides *x);
void check_transformer_ops_real(sides *x);
/* Every mode against async, for the MLP and the small GPT. */
void check_modes(backend *dev, dtype dt);
void check_probe(backend *dev, dtype dt);
/* The device's step timer against the host's clock. */
void check_timing(backend *dev, dtype dt);

#endif
