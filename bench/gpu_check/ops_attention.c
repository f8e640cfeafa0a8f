/* Causal attention on the device against the CPU's fused op, in both of
 * the device's arrangements: its fused op (backend_ops.attention_forward,
 * where it has one) and the unfused path the model takes without it (the
 * permutes, strided-batched GEMMs and causal softmax of
 * harness/models/attention.c, run here on the device's ops with the fused
 * entries taken out). Each output is judged on its own: y, the
 * log-sum-exps (fused), and dq, dk and dv, parts of one dqkv buffer.
 *
 * The fused backward on both sides reads the CPU's y and log-sum-exps, so
 * that the check judges the backward alone; the unfused one reads its own
 * probabilities (it keeps no log-sum-exp). Outputs start as NaN (the
 * scratch's poison): an element the op never writes fails. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "attention.h"
#include "attention_kind.h"
#include "dispatch.h"
#include "gpu_check.h"

/* One shape: head dim, heads, sequence length, sequences. */
typedef struct att_shape {
    int hd, heads, t, batch;
} att_shape;

typedef struct att_out {
    float *y, *lse, *dqkv; /* host copies, fp32 */
} att_out;

static size_t cols_of(att_shape a) { return (size_t)a.t * (size_t)a.batch; }
static size_t d_of(att_shape a) { return (size_t)a.hd * (size_t)a.heads; }

/* The fused op on `side`: y and lse from qkv, then dqkv from dy and `in`'s
 * y and lse (the CPU's; NULL: its own). */
static int run_fused(scratch *sc, int side, storage s, att_shape a, const float *qkv,
                     const float *dy, const att_out *in, att_out *out)
{
    backend *b = sc->b[side];
    size_t n = cols_of(a), d = d_of(a), nl = (size_t)a.heads * n;
    float scale = attention_scale(a.hd);
    void *dqkv_in, *dy_d, *y, *lse, *y_given = NULL, *lse_given = NULL, *dqkv;
    int rc;
    if ((rc = put(sc, side, s, qkv, 3 * d * n, &dqkv_in)) ||
        (rc = put(sc, side, s, dy, d * n, &dy_d)) ||
        (rc = dev_alloc(sc, side, d * n * storage_bytes(s), &y)) ||
        (rc = dev_alloc(sc, side, nl * sizeof(float), &lse)) ||
        (rc = dev_alloc(sc, side, 3 * d * n * storage_bytes(s), &dqkv)) ||
        (rc = bk_attention_forward(b, dqkv_in, y, lse, scale, a.hd, a.heads, a.t, a.batch)) ||
        (rc = get(b, s, y, d * n, out->y)) ||
        (rc = get(b, STORAGE_F32, lse, nl, out->lse)))
        return rc;
    if (in && ((rc = put(sc, side, s, in->y, d * n, &y_given)) ||
               (rc = put(sc, side, STORAGE_F32, in->lse, nl, &lse_given))))
        return rc;
    if ((rc = bk_attention_backward(b, dqkv_in, in ? y_given : y, in ? lse_given : lse, dy_d,
                                    dqkv, scale, a.hd, a.heads, a.t, a.batch)))
        return rc;
    return get(b, s, dqkv, 3 * d * n, out->dqkv);
}

/* The unfused path on the device (its ops table without the fused
 * entries, as ACCUBENCH_CUDA_ATTENTION=unfused gives it): y, then dqkv
 * from dy and its own probabilities. */
static int run_unfused(scratch *sc, int side, storage s, att_shape a, const float *qkv,
                       const float *dy, att_out *out)
{
    backend *b = sc->b[side];
    const backend_ops *ops = b->ops;
    backend_ops unfused = *ops;
    unfused.attention_forward = NULL;
    unfused.attention_backward = NULL;
    size_t n = cols_of(a), d = d_of(a), es = storage_bytes(s);
    size_t tt = (size_t)a.t * (size_t)a.t * (size_t)a.heads * (size_t)a.batch;
    layer_pass lp = {.m = NULL, .b = b, .cs = s, .es = es, .n = (int)n};
    attention_pass ap = {.lp = &lp, .hd = a.hd, .heads = a.heads, .t = a.t, .batch = a.batch,
                         .fused = 0};
    void *kept, *probs, *scores, *heads, *y, *dy_d, *dqkv;
    int rc;
    if ((rc = dev_alloc(sc, side, 3 * d * n * es, &kept)) ||
        (rc = dev_alloc(sc, side, tt * es, &probs)) ||
        (rc = dev_alloc(sc, side, tt * es, &scores)) ||
        (rc = dev_alloc(sc, side, 4 * d * n * es, &heads)) ||
        (rc = dev_alloc(sc, side, d * n * es, &y)) ||
        (rc = dev_alloc(sc, side, 3 * d * n * es, &dqkv)) ||
        (rc = put(sc, side, s, dy, d * n, &dy_d)))
        return rc;
    /* q, k and v where the projection writes them on this path */
    void *qkv_at = attention_qkv_at(&ap, kept, heads);
    if ((rc = put_into(b, s, qkv, 3 * d * n, qkv_at)))
        return rc;
    b->ops = &unfused;
    rc = attention_forward(&ap, kept, probs, scores, heads, y);
    if (!rc)
        rc = attention_backward(&ap, kept, probs, y, dy_d, scores, heads, dqkv);
    b->ops = ops;
    if (rc || (rc = get(b, s, y, d * n, out->y)))
        return rc;
    return get(b, s, dqkv, 3 * d * n, out->dqkv);
}

/* Part p (0 q, 1 k, 2 v) of a [3d x n] token-layout buffer, into [d x n]. */
static void part_of(const float *all, size_t d, size_t n, int p, float *out)
{
    for (size_t c = 0; c < n; c++)
        for (size_t r = 0; r < d; r++)
            out[c * d + r] = all[c * 3 * d + (size_t)p * d + r];
}

/* Records y (and lse) and the three gradients of `got` against `want`. */
static void judge(sides *x, const char *path, const char *split, att_shape a, const att_out *got,
                  const att_out *want, int with_lse, float *part_got, float *part_want)
{
    static const char *grad[3] = {"dq", "dk", "dv"};
    size_t n = cols_of(a), d = d_of(a);
    char check[48];
    snprintf(check, sizeof check, "attention %s y", path);
    record(check, x->dt, split, rel_err(got->y, want->y, d * n), op_tolerance(x->dt), NULL);
    if (with_lse) {
        snprintf(check, sizeof check, "attention %s lse", path);
        record(check, x->dt, split, rel_err(got->lse, want->lse, (size_t)a.heads * n),
               op_tolerance(x->dt), NULL);
    }
    for (int p = 0; p < 3; p++) {
        part_of(got->dqkv, d, n, p, part_got);
        part_of(want->dqkv, d, n, p, part_want);
        snprintf(check, sizeof check, "attention %s %s", path, grad[p]);
        record(check, x->dt, split, rel_err(part_got, part_want, d * n), op_tolerance(x->dt),
               NULL);
    }
}

/* A failure shows in sc->host_failed. */
static void att_alloc(scratch *sc, att_shape a, att_out *o)
{
    size_t n = cols_of(a), d = d_of(a);
    o->y = host_alloc(sc, d * n);
    o->lse = host_alloc(sc, (size_t)a.heads * n);
    o->dqkv = host_alloc(sc, 3 * d * n);
}

/* One shape: the CPU's fused op once, then the device's fused op (where it
 * has one) and its unfused path, each judged per tensor. */
static void check_attention(sides *x, att_shape a)
{
    const char *check = "attention";
    /* each path's rows named by the attention table's words */
    const char *fused = attention_name(ATTENTION_FUSED);
    const char *unfused = attention_name(ATTENTION_UNFUSED);
    char split[24], path_check[48];
    snprintf(split, sizeof split, "%dx%dx%dx%d", a.hd, a.heads, a.t, a.batch);
    size_t n = cols_of(a), d = d_of(a);
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    /* q and k in [-1.5, 1.5): scores of a few units at hd 64, so the
     * probabilities are neither uniform nor one-hot. Rounded to TF32 in a
     * tf32 run, as the GEMM checks' inputs are: the unfused path's first
     * products then measure the arrangement, not the inputs' rounding. */
    int tf32 = x->dt == DTYPE_TF32;
    float *qkv = host_random_as(&sc, &x->r, 3 * d * n, -1.5f, 1.5f, x->st[DEV], tf32);
    float *dy = host_random_as(&sc, &x->r, d * n, -1, 1, x->st[DEV], tf32);
    float *part_got = host_alloc(&sc, d * n), *part_want = host_alloc(&sc, d * n);
    att_out want, got;
    att_alloc(&sc, a, &want);
    att_alloc(&sc, a, &got);
    NEED_HOST();
    if (!x->b[CPU]->ops->attention_forward) {
        record(check, x->dt, split, NAN, 0, "the CPU reference has no fused attention");
        goto done;
    }
    TRY(x->b[CPU], run_fused(&sc, CPU, x->st[CPU], a, qkv, dy, NULL, &want));
    check = path_check;
    if (x->b[DEV]->ops->attention_forward) {
        snprintf(path_check, sizeof path_check, "attention %s", fused);
        TRY(x->b[DEV], run_fused(&sc, DEV, x->st[DEV], a, qkv, dy, &want, &got));
        judge(x, fused, split, a, &got, &want, 1, part_got, part_want);
    }
    snprintf(path_check, sizeof path_check, "attention %s", unfused);
    TRY(x->b[DEV], run_unfused(&sc, DEV, x->st[DEV], a, qkv, dy, &got));
    judge(x, unfused, split, a, &got, &want, 0, part_got, part_want);
done:
    scratch_free(&sc);
}

/* GPT-2 small's attention (hd 64, 12 heads, T = 1024: the benchmark's
 * shape, one sequence); the Llama's head dim 128 (its grouped-query key
 * and value heads are repeated into the [3d x N] buffer before attention,
 * by repeat_kv, checked with the Llama's ops); hd 80; hd 256 (tiles of 32
 * on CUDA); and shapes off the tiles: T not a whole number of 64-query
 * tiles over two sequences, and an odd head dim 7. The CPU checked
 * against itself (--device cpu, the script's rehearsal) leaves out GPT-2
 * small's shape: the same code at the smaller shapes, without its ~10 s a
 * dtype on two cores. */
void check_attention_ops(sides *x)
{
    static const att_shape shapes[] = {
        {64, 12, 1024, 1}, {128, 4, 256, 1}, {80, 2, 130, 1},
        {256, 1, 70, 1},   {32, 3, 100, 2},  {7, 3, 33, 2},
    };
    int rehearsal = strcmp(x->b[DEV]->name, "cpu") == 0;
    for (size_t i = rehearsal ? 1 : 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_attention(x, shapes[i]);
}
