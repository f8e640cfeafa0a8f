/* The GPT model: presets and custom shapes (and the reasons a shape is
 * refused), the parameter count against nanoGPT's, the FLOPs, the memory
 * need to the byte, the tensor list; the whole model's gradient against
 * central finite differences of a float64 forward pass written here from
 * the definitions (GPT-2's block, not the backend's ops), and the
 * accumulated gradient against the full batch's at uneven splits with
 * padding.
 *
 * Tolerances. The model runs in fp32 (unit roundoff 6e-8) over a few
 * hundred terms per sum: its loss and gradient carry relative errors of a
 * few 1e-7 on this shape. The finite differences run in float64 with
 * h = 1e-5 on weights of order 0.3: truncation ~h^2 = 1e-10, cancellation
 * ~1e-16 / h = 1e-11. So 1e-4 leaves a margin of a hundred, while a real
 * bug (a head's rows swapped, a missing residual, a transposed weight, the
 * wrong attention scale) is off by 1e-2 or more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flop_count.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "gpt.h"
#include "decoder_head.h"
#include "gradcheck.h"
#include "registry.h"
#include "rng.h"
#include "step.h"

static char why[600];

static void test_presets(void)
{
    static const struct {
        const char *name;
        int d, layers, heads, seq, vocab;
    } want[] = {
        {"gpt-tiny", 64, 2, 4, 32, 512},
        {"gpt-small", 768, 12, 12, 1024, 50304},
        {"gpt-medium", 1024, 24, 16, 1024, 50304},
        {"gpt-large", 1280, 36, 20, 1024, 50304},
        {"gpt-xl", 1600, 48, 25, 1024, 50304},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        model_spec s;
        CHECK(model_spec_parse(want[i].name, &s, why, sizeof why) == 0);
        CHECK(s.kind == &gpt_kind && strcmp(s.name, want[i].name) == 0);
        CHECK(s.dims[GPT_D] == want[i].d && s.dims[GPT_LAYERS] == want[i].layers &&
              s.dims[GPT_HEADS] == want[i].heads && s.dims[GPT_SEQ] == want[i].seq &&
              s.dims[GPT_VOCAB] == want[i].vocab);
        CHECK(s.dims[GPT_VOCAB] % 64 == 0);
        CHECK(strstr(model_names(), want[i].name) != NULL);
    }
    /* nanoGPT's GPT-2 small with its padded vocabulary: 124,475,904
     * parameters with the tied head counted once, "123.69M" printed
     * without the position table. */
    model_spec s;
    CHECK(model_spec_parse("gpt-small", &s, why, sizeof why) == 0);
    CHECK(model_param_count(&s) == 124475904);
    CHECK(model_param_count(&s) - 1024 * 768 == 123689472);
    /* 6 x (12 L d^2 + V d) x tokens + 12 L d T x tokens. */
    double tokens = 8.0 * 1024, w = 12.0 * 12 * 768 * 768 + 50304.0 * 768;
    CHECK(model_flops_per_step(&s, 8) == 6 * w * tokens + 12.0 * 12 * 768 * 1024 * tokens);
    input_spec in;
    model_input(&s, &in);
    CHECK(in.kind == INPUT_TOKENS && in.width == 1024 && in.vocab == 50304 &&
          in.classes == 50304 && in.loss_items == 1024);
}

static void test_shapes(void)
{
    model_spec s, t;
    CHECK(model_spec_parse("gpt:d=1024,layers=24,heads=16,seq=1024,vocab=50304", &s, why,
                           sizeof why) == 0);
    CHECK(strcmp(s.name, "gpt:d=1024,layers=24,heads=16,seq=1024,vocab=50304") == 0);
    CHECK(model_spec_parse("gpt-medium", &t, why, sizeof why) == 0);
    CHECK(memcmp(s.dims, t.dims, sizeof s.dims) == 0);
    CHECK(model_param_count(&s) == model_param_count(&t));
    CHECK(model_spec_parse("gpt:vocab=2;seq=1;heads=1;layers=1;d=1", &s, why, sizeof why) == 0);
    CHECK(strcmp(s.name, "gpt:d=1,layers=1,heads=1,seq=1,vocab=2") == 0);

    const struct {
        const char *text, *reason;
    } bad[] = {
        {"gpt:d=64,layers=2,heads=5,seq=8,vocab=64", "heads=5 does not divide d=64"},
        {"gpt:d=0,layers=2,heads=1,seq=8,vocab=64", "d must be between 1 and 65536, got '0'"},
        {"gpt:d=64,layers=0,heads=1,seq=8,vocab=64", "layers must be between 1 and 96"},
        {"gpt:d=64,layers=2,heads=0,seq=8,vocab=64", "heads must be between 1 and 1024"},
        {"gpt:d=64,layers=2,heads=1,seq=0,vocab=64", "seq must be between 1 and 32768"},
        {"gpt:d=64,layers=2,heads=1,seq=8,vocab=1", "vocab must be between 2 and 2097152"},
        {"gpt:d=65536,layers=96,heads=64,seq=1024,vocab=50304", "parameters; at most 2^40"},
        {"gpt:d=64,layers=2,heads=4,seq=8", "gives no vocab (gpt:d=N,layers=N,heads=N,seq=N,vocab=N)"},
        {"gpt:d=64,layers=2,heads=4,seq=8,vocab=64,ctx=8", "unknown key 'ctx'"},
        {"gpt", "model 'gpt' needs a shape: gpt:d=N,layers=N,heads=N,seq=N,vocab=N"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        int rc = model_spec_parse(bad[i].text, &s, why, sizeof why);
        CHECK(rc == -1 && strstr(why, bad[i].reason) && strstr(why, bad[i].text) &&
              !strchr(why, '\n'));
        if (rc != -1 || !strstr(why, bad[i].reason))
            fprintf(stderr, "  '%s': got \"%s\"\n", bad[i].text, why);
    }
    /* A GPT beside MLPs in one list. */
    model_spec list[3];
    CHECK(model_spec_list_parse("tiny,gpt:d=32,layers=1,heads=2,seq=8,vocab=64,gpt-tiny", list,
                                3, why, sizeof why) == 3);
    CHECK(list[1].kind == &gpt_kind && list[1].dims[GPT_SEQ] == 8 && list[2].kind == &gpt_kind);
}

/* The tensors tile the parameter vector exactly, in order, with nanoGPT's
 * names and nn.Linear's [out, in]. */
static void test_tensors(void)
{
    model_spec s;
    CHECK(model_spec_parse("gpt:d=16,layers=3,heads=2,seq=8,vocab=64", &s, why, sizeof why) == 0);
    int n = gpt_kind.tensors(&s, NULL, 0);
    CHECK(n == 2 + 12 * 3 + 2);
    model_tensor *t = calloc((size_t)n, sizeof *t);
    CHECK(gpt_kind.tensors(&s, t, n) == n);
    size_t next = 0;
    for (int i = 0; i < n; i++) {
        CHECK(t[i].offset == next);
        next += (size_t)(t[i].rows * t[i].cols);
    }
    CHECK(next == model_param_count(&s));
    CHECK(strcmp(t[0].name, "transformer.wte.weight") == 0 && t[0].rows == 16 &&
          t[0].cols == 64 && t[0].torch_is_transpose);
    CHECK(strcmp(t[1].name, "transformer.wpe.weight") == 0 && t[1].cols == 8);
    CHECK(strcmp(t[4].name, "transformer.h.0.attn.c_attn.weight") == 0 && t[4].rows == 48 &&
          t[4].cols == 16 && !t[4].torch_is_transpose);
    CHECK(strcmp(t[2 + 12 + 12].name, "transformer.h.2.ln_1.weight") == 0);
    CHECK(strcmp(t[13].name, "transformer.h.0.mlp.c_proj.bias") == 0 && t[13].rows == 16);
    CHECK(strcmp(t[12].name, "transformer.h.0.mlp.c_proj.weight") == 0 && t[12].rows == 16 &&
          t[12].cols == 64);
    CHECK(strcmp(t[n - 1].name, "transformer.ln_f.bias") == 0);
    free(t);
}

/* ------------------------------------------------ the float64 reference */

static void layernorm(const double *x, const double *g, const double *b, double *y, int d)
{
    double mean = 0, var = 0;
    for (int c = 0; c < d; c++)
        mean += x[c];
    mean /= d;
    for (int c = 0; c < d; c++)
        var += (x[c] - mean) * (x[c] - mean);
    double rstd = 1 / sqrt(var / d + 1e-5);
    for (int c = 0; c < d; c++)
        y[c] = (x[c] - mean) * rstd * g[c] + b[c];
}

/* y[r] = sum_c W[r, c] x[c] + b[r], W column-major [out x in] at w. */
static void linear(const double *w, const double *b, const double *x, double *y, int out, int in)
{
    for (int r = 0; r < out; r++) {
        double acc = b[r];
        for (int c = 0; c < in; c++)
            acc += w[r + (size_t)c * out] * x[c];
        y[r] = acc;
    }
}

static double gelu(double x)
{
    return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

/* GPT-2's forward over `batch` sequences and its loss: the sum of the
 * valid tokens' cross-entropies times `scale`. */
static double ref_loss(const gpt_layout *l, const double *w, const int *tok, const int *lab,
                       const int *ok, int batch, double scale)
{
    int d = l->d, t = l->seq, hd = l->head_dim, v = l->vocab;
    double *x = calloc((size_t)t * d, sizeof *x), *a = calloc((size_t)t * d, sizeof *a);
    double *qkv = calloc((size_t)t * 3 * d, sizeof *qkv), *y = calloc((size_t)t * d, sizeof *y);
    double *h = calloc((size_t)t * 4 * d, sizeof *h), *o = calloc((size_t)4 * d, sizeof *o);
    double *p = calloc((size_t)t, sizeof *p), *logits = calloc((size_t)v, sizeof *logits);
    double loss = 0;
    for (int q = 0; q < batch; q++) {
        const int *tq = tok + (size_t)q * t;
        for (int i = 0; i < t; i++)
            for (int c = 0; c < d; c++)
                x[i * d + c] = w[l->wte + (size_t)tq[i] * d + c] + w[l->wpe + (size_t)i * d + c];
        for (int li = 0; li < l->layers; li++) {
            const double *bw = w + l->layer0 + (size_t)li * l->layer_size;
            for (int i = 0; i < t; i++) {
                layernorm(x + i * d, bw + l->ln1_g, bw + l->ln1_b, a + i * d, d);
                linear(bw + l->qkv_w, bw + l->qkv_b, a + i * d, qkv + i * 3 * d, 3 * d, d);
            }
            for (int hh = 0; hh < l->heads; hh++)
                for (int i = 0; i < t; i++) {
                    const double *qi = qkv + i * 3 * d + hh * hd;
                    double mx = -INFINITY, sum = 0;
                    for (int j = 0; j <= i; j++) {
                        const double *kj = qkv + j * 3 * d + d + hh * hd;
                        double s = 0;
                        for (int c = 0; c < hd; c++)
                            s += qi[c] * kj[c];
                        p[j] = s / sqrt((double)hd);
                        mx = p[j] > mx ? p[j] : mx;
                    }
                    for (int j = 0; j <= i; j++)
                        sum += p[j] = exp(p[j] - mx);
                    for (int c = 0; c < hd; c++) {
                        double acc = 0;
                        for (int j = 0; j <= i; j++)
                            acc += p[j] / sum * qkv[j * 3 * d + 2 * d + hh * hd + c];
                        y[i * d + hh * hd + c] = acc;
                    }
                }
            for (int i = 0; i < t; i++) {
                linear(bw + l->proj_w, bw + l->proj_b, y + i * d, o, d, d);
                for (int c = 0; c < d; c++)
                    x[i * d + c] += o[c];
                layernorm(x + i * d, bw + l->ln2_g, bw + l->ln2_b, a + i * d, d);
                linear(bw + l->fc_w, bw + l->fc_b, a + i * d, h + i * 4 * d, 4 * d, d);
                for (int c = 0; c < 4 * d; c++)
                    h[i * 4 * d + c] = gelu(h[i * 4 * d + c]);
                linear(bw + l->fcp_w, bw + l->fcp_b, h + i * 4 * d, o, d, 4 * d);
                for (int c = 0; c < d; c++)
                    x[i * d + c] += o[c];
            }
        }
        for (int i = 0; i < t; i++) {
            if (!ok[(size_t)q * t + i])
                continue;
            layernorm(x + i * d, w + l->lnf_g, w + l->lnf_b, a + i * d, d);
            double mx = -INFINITY, sum = 0;
            for (int k = 0; k < v; k++) {
                double acc = 0;
                for (int c = 0; c < d; c++)
                    acc += w[l->wte + (size_t)k * d + c] * a[i * d + c];
                logits[k] = acc;
                mx = acc > mx ? acc : mx;
            }
            for (int k = 0; k < v; k++)
                sum += exp(logits[k] - mx);
            loss += log(sum) + mx - logits[lab[(size_t)q * t + i]];
        }
    }
    free(x), free(a), free(qkv), free(y), free(h), free(o), free(p), free(logits);
    return loss * scale;
}

/* Weights far from the identity, so that every path shows in the loss
 * and the gradient: LayerNorm gains around 1 and shifts around 0, the QKV
 * weights large enough that the scores are of order one (attention far
 * from uniform), the rest of order 0.4. */
static void random_weights(const gpt_layout *l, float *w, uint64_t seed)
{
    rng r = {seed};
    size_t d = (size_t)l->d;
    for (size_t i = 0; i < l->n_params; i++)
        w[i] = rng_uniform(&r, -0.4f, 0.4f);
    for (int li = 0; li <= l->layers; li++) {
        size_t base = l->layer0 + (size_t)li * l->layer_size;
        size_t gains[2] = {base + l->ln1_g, base + l->ln2_g};
        if (li == l->layers)
            gains[0] = gains[1] = l->lnf_g;
        for (int k = 0; k < 2; k++)
            for (size_t c = 0; c < d; c++)
                w[gains[k] + c] = 1.0f + rng_uniform(&r, -0.3f, 0.3f);
        if (li < l->layers)
            for (size_t c = 0; c < 3 * d * d; c++)
                w[base + l->qkv_w + c] = rng_uniform(&r, -1.2f, 1.2f);
    }
}

typedef struct fixture {
    backend *b;
    model m;
    dataset d;
    gpt_layout l;
    backend_ops unfused; /* the backend's ops without its fused attention */
} fixture;

/* The GPT on the CPU backend, its attention fused (the backend's own) or
 * not: the products, softmax and permutes that a backend without the fused
 * op runs (the CUDA backend), checked here on the CPU. */
static int fixture_make_with(fixture *f, const char *shape, int effective, float *weights,
                             int fused)
{
    memset(f, 0, sizeof *f);
    if (cpu_backend_create(DTYPE_FP32, &f->b, why, sizeof why) != BK_OK)
        return -1;
    if (!fused) {
        f->unfused = *f->b->ops;
        f->unfused.attention_forward = NULL;
        f->unfused.attention_backward = NULL;
        f->b->ops = &f->unfused;
    }
    model_spec s;
    CHECK(model_spec_parse(shape, &s, why, sizeof why) == 0);
    optimizer_config opt = {OPT_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, OPT_AT_STEP};
    input_spec in;
    model_input(&s, &in);
    CHECK(model_create(f->b, &s, &opt, 3, &f->m) == BK_OK);
    CHECK(f->m.spec.fused_attention == fused);
    CHECK(dataset_create(f->b, &in, effective, 1, 11, &f->d) == BK_OK);
    gpt_layout_of(&s, &f->l);
    if (weights) {
        random_weights(&f->l, weights, 77);
        memcpy(f->m.initial, weights, f->m.n_params * sizeof(float));
        CHECK(model_reset(&f->m) == BK_OK);
    }
    return 0;
}

static int fixture_make(fixture *f, const char *shape, int effective, float *weights)
{
    return fixture_make_with(f, shape, effective, weights, 1);
}

static void fixture_free(fixture *f)
{
    dataset_destroy(&f->d);
    model_destroy(&f->m);
    CHECK(f->b->mem_in_use == 0);
    f->b->ops->destroy(f->b);
}

/* The accumulated gradient of an uneven split (6 = 4 + 2, sequences of 1
 * to 5 valid tokens) against d(loss)/d(w) by finite differences of the
 * float64 forward, every parameter; and the fp32 loss against the float64
 * loss. */
static void test_finite_differences(int fused)
{
    const char *shape = "gpt:d=8,layers=2,heads=2,seq=5,vocab=13";
    enum { E = 6 };
    float *w32 = malloc(4096 * sizeof *w32);
    fixture f;
    if (fixture_make_with(&f, shape, E, w32, fused))
        return;
    size_t n = f.m.n_params;
    CHECK(n < 4096);
    split sp;
    CHECK(split_make(E, 4, 1, &sp, why, sizeof why) == 0);
    step_runner run;
    CHECK(step_runner_init(&run, &f.m, &f.d, &sp, MODE_ASYNC, REDUCTION_SUM) == BK_OK);
    CHECK(step_window(&run, 0) == BK_OK);
    float *g = malloc(n * sizeof *g), loss_sum = 0;
    CHECK(bk_download(f.b, g, f.m.grads, n * sizeof *g) == BK_OK);
    CHECK(bk_download(f.b, &loss_sum, run.loss_sum, sizeof loss_sum) == BK_OK);

    const input_buffer *ib = &f.d.buf[0];
    int valid = dataset_valid_count(&f.d, 0, 0, E);
    CHECK(valid > E && valid < E * 5); /* padding in the window */
    double *w = malloc(n * sizeof *w), scale = 1.0 / valid;
    for (size_t i = 0; i < n; i++)
        w[i] = w32[i];
    double want = ref_loss(&f.l, w, ib->x, ib->labels, ib->valid, E, 1.0);
    CHECK(fabs(loss_sum - want) <= 1e-5 * want);

    double num = 0, den = 0, worst = 0;
    size_t worst_at = 0;
    for (size_t i = 0; i < n; i++) {
        double keep = w[i], h = 1e-5;
        w[i] = keep + h;
        double up = ref_loss(&f.l, w, ib->x, ib->labels, ib->valid, E, scale);
        w[i] = keep - h;
        double down = ref_loss(&f.l, w, ib->x, ib->labels, ib->valid, E, scale);
        w[i] = keep;
        double fd = (up - down) / (2 * h), diff = g[i] - fd;
        num += diff * diff;
        den += fd * fd;
        if (fabs(diff) > worst)
            worst = fabs(diff), worst_at = i;
    }
    double err = sqrt(num / den);
    CHECK(den > 0 && err < 1e-4);
    if (!(err < 1e-4))
        fprintf(stderr, "  finite differences (attention %s): relative error %.3g, worst "
                "%.3g at %zu\n", fused ? "fused" : "unfused", err, worst, worst_at);
    step_runner_free(&run);
    free(g), free(w), free(w32);
    fixture_free(&f);
}

/* The accumulated gradient equals the full batch's for every split of 7
 * sequences (uneven ones among them), and mean-of-means does not. */
static void test_accumulation(int fused)
{
    const char *shape = "gpt:d=16,layers=2,heads=4,seq=6,vocab=32";
    enum { E = 7 };
    float *w = malloc(8192 * sizeof *w);
    fixture f;
    if (fixture_make_with(&f, shape, E, w, fused))
        return;
    CHECK(f.m.n_params < 8192);
    const int micros[] = {1, 2, 3, 4, 7};
    for (size_t i = 0; i < sizeof micros / sizeof micros[0]; i++) {
        for (reduction red = REDUCTION_SUM; red <= REDUCTION_MEAN_OF_MEANS; red++) {
            split sp;
            CHECK(split_make(E, micros[i], 1, &sp, why, sizeof why) == 0);
            step_runner run;
            CHECK(step_runner_init(&run, &f.m, &f.d, &sp, MODE_ASYNC, red) == BK_OK);
            double err = -1, loss = 0;
            CHECK(grad_check(&run, &err, &loss, NULL, NULL) == BK_OK);
            CHECK(isfinite(loss) && loss > 0);
            if (red == REDUCTION_SUM || micros[i] == E)
                CHECK(err >= 0 && err < 1e-5);
            else
                CHECK(err > 1e-3); /* micro-batches of unequal valid tokens */
            step_runner_free(&run);
        }
    }
    free(w);
    fixture_free(&f);
}

/* The FLOPs per step are what the products of a window do, counted as
 * they are issued (flop_count.h): the 6 x weights and the attention term
 * are the exact count, for every split, attention fused or not. */
static void test_flops_are_the_gemms(int fused)
{
    fixture f;
    if (fixture_make_with(&f, "gpt:d=16,layers=3,heads=4,seq=6,vocab=40", 7, NULL, fused))
        return;
    const int micros[] = {1, 3, 7};
    for (size_t i = 0; i < sizeof micros / sizeof micros[0]; i++) {
        split sp;
        CHECK(split_make(7, micros[i], 1, &sp, why, sizeof why) == 0);
        step_runner run;
        CHECK(step_runner_init(&run, &f.m, &f.d, &sp, MODE_ASYNC, REDUCTION_SUM) == BK_OK);
        flop_count fc;
        flop_count_begin(&fc, f.b);
        CHECK(step_window(&run, 0) == BK_OK);
        CHECK(flop_count_end(f.b) == model_flops_per_step(&f.m.spec, 7));
        step_runner_free(&run);
    }
    fixture_free(&f);
}

/* What the model and its data allocate is the memory need, to the byte;
 * and the activations list has a buffer per block's piece. */
static void test_memory(void)
{
    fixture f;
    if (fixture_make(&f, "gpt:d=16,layers=3,heads=2,seq=8,vocab=64", 9, NULL))
        return;
    activations a;
    CHECK(activations_create(&f.m, 4, BK_ALLOC_HELD, &a) == BK_OK);
    CHECK(a.count == 12 + 3 * 11);
    memory_need need;
    model_memory_need(&f.m.spec, DTYPE_FP32, OPT_ADAMW, 4, 9, 1, &need);
    CHECK(f.b->mem_in_use == need.total - need.loss_sum); /* that one is the runner's */
    CHECK(a.bytes == need.activations && f.d.bytes == need.inputs);
    activations_destroy(&f.m, &a, BK_ALLOC_HELD);
    /* bf16: half of every activation but the fp32 ones (the LayerNorm
     * statistics, the residual stream's gradient), plus that gradient's
     * bf16 copy for the GEMMs. */
    model_spec xl;
    CHECK(model_spec_parse("gpt-xl", &xl, why, sizeof why) == 0);
    size_t bytes32 = activations_bytes(&xl, STORAGE_F32, 2);
    size_t bytes16 = activations_bytes(&xl, STORAGE_BF16, 2);
    size_t stats = (size_t)(2 * 48) * 2 * 2048 * sizeof(float);
    size_t dres = (size_t)1600 * 2048 * sizeof(float), dres_c = dres / 2; /* N = 2 x 1024 */
    /* The head's chunk buffers: one sequence of 1024 tokens in both
     * storages (its logits are over 1 MiB), the statistics fp32. */
    size_t head_stats = (size_t)2 * 1024 * sizeof(float);
    size_t head32 = (size_t)(2 * 1600 + 2 * 50304) * 1024 * 4 + head_stats;
    size_t head16 = (size_t)(2 * 1600 + 2 * 50304) * 1024 * 2 + head_stats;
    CHECK(bytes32 - stats - dres - head32 == 2 * (bytes16 - stats - dres - dres_c - head16));
    fixture_free(&f);
}

/* The GPT's head chunk (decoder_head.h). */
static int gpt_head_chunk(const model_spec *s, storage st, int capacity)
{
    gpt_layout l;
    gpt_layout_of(s, &l);
    decoder_head h = {.d = l.d, .seq = l.seq, .vocab = l.vocab, .chunk_bytes = s->head_chunk_bytes};
    return decoder_head_chunk(&h, st, capacity);
}

/* The LM head runs in chunks of whole sequences whose logits stay within
 * 1 MiB: the logits of the whole micro-batch are never allocated. */
static void test_head_chunks(void)
{
    model_spec s;
    CHECK(model_spec_parse("gpt:d=128,layers=4,heads=4,seq=64,vocab=2048", &s, why,
                           sizeof why) == 0);
    /* 2048 x 64 fp32 logits are 512 KiB a sequence: 2 sequences a chunk. */
    CHECK(gpt_head_chunk(&s, STORAGE_F32, 16) == 128);
    CHECK(gpt_head_chunk(&s, STORAGE_BF16, 16) == 256);
    CHECK(gpt_head_chunk(&s, STORAGE_F32, 1) == 64);
    /* Growing the micro-batch from 8 to 16 sequences adds no logits: the
     * 512 tokens more cost what the blocks keep of them, and the logits
     * and their gradient alone would be 2 x 2048 x 512 floats. */
    size_t grow = activations_bytes(&s, STORAGE_F32, 16) - activations_bytes(&s, STORAGE_F32, 8);
    size_t d = 128, t = 64, h = 4, layers = 4, tokens = 512;
    size_t per_token = (11 * d + t * h) + layers * (16 * d + t * h + 4);
    CHECK(grow == tokens * per_token * sizeof(float));
    /* Fused, no scores and no attention scratch: each block keeps a
     * log-sum-exp per head and token where it kept T x H probabilities. */
    s.fused_attention = 1;
    grow = activations_bytes(&s, STORAGE_F32, 16) - activations_bytes(&s, STORAGE_F32, 8);
    per_token = 7 * d + layers * (16 * d + h + 4);
    CHECK(grow == tokens * per_token * sizeof(float));
    s.fused_attention = 0;
    /* One sequence's logits over 1 MiB: a chunk is that one sequence. */
    CHECK(model_spec_parse("gpt-small", &s, why, sizeof why) == 0);
    CHECK(gpt_head_chunk(&s, STORAGE_BF16, 8) == 1024);
    /* A backend's own chunk (a GPU's 512 MiB): 5 of GPT-2 small's bf16
     * sequences of 103 MB, 2 in fp32; never past the micro-batch; and the
     * memory need grows by exactly the head's larger buffers. */
    size_t cpu_need = activations_bytes(&s, STORAGE_BF16, 8);
    s.head_chunk_bytes = (size_t)512 << 20;
    CHECK(gpt_head_chunk(&s, STORAGE_BF16, 8) == 5 * 1024);
    CHECK(gpt_head_chunk(&s, STORAGE_F32, 8) == 2 * 1024);
    CHECK(gpt_head_chunk(&s, STORAGE_BF16, 3) == 3 * 1024);
    size_t extra = (size_t)4 * 1024; /* tokens more a chunk holds */
    size_t head_elems = 2 * 50304 + 2 * 768; /* logits, dlogits; x, dx */
    CHECK(activations_bytes(&s, STORAGE_BF16, 8) - cpu_need ==
          extra * (head_elems * 2 + 2 * sizeof(float)));
}

int main(void)
{
    test_presets();
    test_shapes();
    test_tensors();
    test_memory();
    test_head_chunks();
    for (int fused = 0; fused <= 1; fused++) {
        test_flops_are_the_gemms(fused);
        test_accumulation(fused);
        test_finite_differences(fused);
    }
    return check_finish("test_gpt");
}
