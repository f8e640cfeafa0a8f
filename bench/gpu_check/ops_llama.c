/* The Llama's ops on the device against the CPU reference (the ops of
 * kernels/cuda/cuda_llama_ops.cu against kernels/cpu/cpu_llama_ops.c), on
 * the same random inputs rounded to the device's storage: every output
 * compared, gradients added onto buffers that already hold values where
 * the op accumulates, RMSNorm's rstd given the same on both sides to its
 * backward, so that each check judges one op. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "elementwise.h"
#include "gpu_check.h"

/* y and the per-column rstd (fp32). */
static void check_rmsnorm_forward(sides *x, int dim, int rows)
{
    const char *check = "rmsnorm_forward";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", dim, rows);
    size_t n = (size_t)dim * rows, nr = (size_t)rows, nd = (size_t)dim;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hx = host_random(&sc, &x->r, n, -2, 3, x->st[DEV]);
    float *hg = host_random(&sc, &x->r, nd, 0.5f, 1.5f, STORAGE_F32);
    float *out[2] = {host_alloc(&sc, n + nr), host_alloc(&sc, n + nr)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dx, *dg, *dy, *drstd;
        TRY(b, put(&sc, side, s, hx, n, &dx));
        TRY(b, put(&sc, side, STORAGE_F32, hg, nd, &dg));
        TRY(b, dev_alloc(&sc, side, n * storage_bytes(s), &dy));
        TRY(b, dev_alloc(&sc, side, nr * sizeof(float), &drstd));
        TRY(b, bk_rmsnorm_forward(b, dx, dg, dy, drstd, dim, rows));
        TRY(b, get(b, s, dy, n, out[side]));
        TRY(b, get(b, STORAGE_F32, drstd, nr, out[side] + n));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), "y");
    record("rmsnorm_forward rstd", x->dt, split, rel_err(out[DEV] + n, out[CPU] + n, nr),
           op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* dx and dgamma, each added onto values already there, from the same rstd
 * on both sides (computed here in double from x). */
static void check_rmsnorm_backward(sides *x, int dim, int rows)
{
    const char *check = "rmsnorm_backward";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", dim, rows);
    size_t n = (size_t)dim * rows, nr = (size_t)rows, nd = (size_t)dim;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hx = host_random(&sc, &x->r, n, -2, 3, x->st[DEV]);
    float *hdy = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *hdx = host_random(&sc, &x->r, n, -1, 1, STORAGE_F32); /* fp32: see backend.h */
    float *hg = host_random(&sc, &x->r, nd, 0.5f, 1.5f, STORAGE_F32);
    float *hdg = host_random(&sc, &x->r, nd, -1, 1, STORAGE_F32);
    float *hrstd = host_alloc(&sc, nr);
    float *out[2] = {host_alloc(&sc, n + nd), host_alloc(&sc, n + nd)};
    NEED_HOST();
    for (int c = 0; c < rows; c++) {
        double sq = 0;
        for (int i = 0; i < dim; i++)
            sq += (double)hx[(size_t)c * dim + i] * hx[(size_t)c * dim + i];
        hrstd[c] = (float)(1.0 / sqrt(sq / dim + EW_RMSNORM_EPS));
    }
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dx, *ddy, *ddx, *dg, *ddg, *drstd;
        TRY(b, put(&sc, side, s, hx, n, &dx));
        TRY(b, put(&sc, side, s, hdy, n, &ddy));
        TRY(b, put(&sc, side, STORAGE_F32, hdx, n, &ddx));
        TRY(b, put(&sc, side, STORAGE_F32, hg, nd, &dg));
        TRY(b, put(&sc, side, STORAGE_F32, hdg, nd, &ddg));
        TRY(b, put(&sc, side, STORAGE_F32, hrstd, nr, &drstd));
        TRY(b, bk_rmsnorm_backward(b, ddy, dx, dg, drstd, ddx, ddg, dim, rows));
        TRY(b, get(b, STORAGE_F32, ddx, n, out[side]));
        TRY(b, get(b, STORAGE_F32, ddg, nd, out[side] + n));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), "dx");
    record("rmsnorm_backward dgamma", x->dt, split, rel_err(out[DEV] + n, out[CPU] + n, nd),
           op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* h = silu(gate) up, then dgate and dup from dh; `in_place`: dgate is dh. */
static void check_swiglu(sides *x, size_t n, int in_place)
{
    const char *check = in_place ? "swiglu in place" : "swiglu";
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hg = host_random(&sc, &x->r, n, -8, 8, x->st[DEV]);
    float *hu = host_random(&sc, &x->r, n, -2, 2, x->st[DEV]);
    float *hdh = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, 3 * n), host_alloc(&sc, 3 * n)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        size_t bytes = n * storage_bytes(s);
        void *dg, *du, *ddh, *dh, *ddg, *ddu;
        TRY(b, put(&sc, side, s, hg, n, &dg));
        TRY(b, put(&sc, side, s, hu, n, &du));
        TRY(b, put(&sc, side, s, hdh, n, &ddh));
        TRY(b, dev_alloc(&sc, side, bytes, &dh));
        TRY(b, dev_alloc(&sc, side, bytes, &ddu));
        ddg = ddh;
        if (!in_place)
            TRY(b, dev_alloc(&sc, side, bytes, &ddg));
        TRY(b, bk_swiglu_forward(b, dg, du, dh, n));
        TRY(b, bk_swiglu_backward(b, dg, du, ddh, ddg, ddu, n));
        TRY(b, get(b, s, dh, n, out[side]));
        TRY(b, get(b, s, ddg, n, out[side] + n));
        TRY(b, get(b, s, ddu, n, out[side] + 2 * n));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), "h");
    record(in_place ? "swiglu in place dgate" : "swiglu dgate", x->dt, split,
           rel_err(out[DEV] + n, out[CPU] + n, n), op_tolerance(x->dt), NULL);
    record(in_place ? "swiglu in place dup" : "swiglu dup", x->dt, split,
           rel_err(out[DEV] + 2 * n, out[CPU] + 2 * n, n), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* The rotary turn in place on rows [0, heads * hd) of a buffer with
 * `extra` rows more (as the Llama turns q in its [3d x N] buffer): the
 * whole buffer compared, so a write past the heads shows. */
static void check_rotary(sides *x, int heads, int hd, int t, int batch, int extra, int backward)
{
    const char *check = backward ? "rotary_backward" : "rotary_forward";
    char split[32];
    snprintf(split, sizeof split, "%dx%dx%dx%d", hd, heads, t, batch);
    int ld = heads * hd + extra, cols = t * batch;
    size_t n = (size_t)ld * cols;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hx = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, n), host_alloc(&sc, n)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dx;
        TRY(b, put(&sc, side, s, hx, n, &dx));
        if (backward)
            TRY(b, bk_rotary_backward(b, dx, ld, heads, hd, t, cols, 500000.0f));
        else
            TRY(b, bk_rotary_forward(b, dx, ld, heads, hd, t, cols, 500000.0f));
        TRY(b, get(b, s, dx, n, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* The key and value heads repeated into rows [qd, 3 qd) of a [3 qd x
 * cols] buffer (the rest random, compared too), and back: each kv head's
 * gradient the sum of its group's. The forward is a copy (error 0). */
static void check_repeat_kv(sides *x, int hd, int kv_heads, int group, int cols)
{
    const char *check = "repeat_kv";
    char split[32];
    snprintf(split, sizeof split, "%dx%dx%dx%d", hd, kv_heads, group, cols);
    int qd = hd * kv_heads * group, ld = 3 * qd;
    size_t nkv = (size_t)2 * hd * kv_heads * cols, nd = (size_t)ld * cols;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hkv = host_random(&sc, &x->r, nkv, -1, 1, x->st[DEV]);
    float *hdst = host_random(&sc, &x->r, nd, -1, 1, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, nd + nkv), host_alloc(&sc, nd + nkv)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dkv, *ddst, *dgrad;
        TRY(b, put(&sc, side, s, hkv, nkv, &dkv));
        TRY(b, put(&sc, side, s, hdst, nd, &ddst));
        TRY(b, dev_alloc(&sc, side, nkv * storage_bytes(s), &dgrad));
        char *rows = (char *)ddst + (size_t)qd * storage_bytes(s);
        TRY(b, bk_repeat_kv_forward(b, dkv, rows, ld, hd, kv_heads, group, 2, cols));
        TRY(b, bk_repeat_kv_backward(b, rows, ld, dgrad, hd, kv_heads, group, 2, cols));
        TRY(b, get(b, s, ddst, nd, out[side]));
        TRY(b, get(b, s, dgrad, nkv, out[side] + nd));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], nd), 0, "forward: a copy");
    record("repeat_kv backward", x->dt, split, rel_err(out[DEV] + nd, out[CPU] + nd, nkv),
           op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

void check_llama_ops(sides *x)
{
    /* Llama 3 8B's width and an odd one (a warp's lanes past its end): the
     * loop kernels; 768, the column in registers (cuda_norm_regs.cuh). */
    check_rmsnorm_forward(x, 4096, 300);
    check_rmsnorm_forward(x, 100, 7);
    check_rmsnorm_forward(x, 768, 64);
    check_rmsnorm_backward(x, 4096, 300);
    check_rmsnorm_backward(x, 100, 7);
    check_rmsnorm_backward(x, 768, 64);
    check_swiglu(x, 100003, 0);
    check_swiglu(x, 4096, 1);
    /* Llama 3's head dimension 128 at 2048 positions (the angles' largest),
     * and a small head with k and v's rows past q's. */
    check_rotary(x, 4, 128, 2048, 1, 0, 0);
    check_rotary(x, 4, 128, 2048, 1, 0, 1);
    check_rotary(x, 3, 6, 7, 3, 12, 0);
    check_rotary(x, 3, 6, 7, 3, 12, 1);
    /* Llama 3's 8 kv heads for 32 query heads, and one kv head for 3. */
    check_repeat_kv(x, 128, 8, 4, 64);
    check_repeat_kv(x, 6, 1, 3, 11);
}
