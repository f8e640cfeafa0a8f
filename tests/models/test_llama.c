/* The Llama model: presets and their parameter counts against Hugging
 * Face's, custom shapes and the reasons a shape is refused, the tensor
 * list in Hugging Face's names; the whole model's gradient against central
 * finite differences of a float64 forward pass written here from Hugging
 * Face's LlamaForCausalLM (LlamaRMSNorm, apply_rotary_pos_emb with
 * rotate_half, repeat_kv, LlamaMLP; not the backend's ops), with attention
 * fused and not, the LM head tied and not, grouped and multi-query; and
 * the FLOPs against the products issued, attention unfused (the contract
 * test counts it fused).
 *
 * Tolerances as test_gpt.c's: the model runs in fp32 over a few hundred
 * terms per sum; the float64 finite differences with h = 1e-5 carry
 * errors far below that; 1e-4 leaves a margin of a hundred, while a
 * real bug (a kv head given to the wrong query heads, the rotary halves
 * swapped or its sign flipped, a missing residual) is off by 1e-2 or more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "flop_count.h"
#include "llama.h"
#include "registry.h"
#include "rng.h"
#include "step.h"

static char why[600];

/* Llama 3's shapes and Hugging Face's parameter counts
 * (sum(p.numel() for p in LlamaForCausalLM(config).parameters()), the tied
 * head counted once). */
static void test_presets(void)
{
    static const struct {
        const char *name;
        int dims[8];
        size_t params;
    } want[] = {
        {"llama3-8b", {4096, 32, 32, 8, 14336, 2048, 128256, 0}, 8030261248u},
        {"llama3.2-1b", {2048, 16, 32, 8, 8192, 2048, 128256, 1}, 1235814400u},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        model_spec s;
        CHECK(model_spec_parse(want[i].name, &s, why, sizeof why) == 0);
        CHECK(s.kind == &llama_kind && strcmp(s.name, want[i].name) == 0);
        CHECK(memcmp(s.dims, want[i].dims, sizeof want[i].dims) == 0);
        CHECK(model_param_count(&s) == want[i].params);
        CHECK(strstr(model_names(), want[i].name) != NULL);
    }
    model_spec s;
    const char *small[] = {"llama-tiny", "llama-cpu"};
    for (size_t i = 0; i < 2; i++) {
        CHECK(model_spec_parse(small[i], &s, why, sizeof why) == 0);
        CHECK(s.kind == &llama_kind && strstr(model_names(), small[i]));
    }
    /* 6 x (L (2 d^2 + 2 d kv + 3 d f) + V d) x tokens + 12 L d T x tokens. */
    CHECK(model_spec_parse("llama3-8b", &s, why, sizeof why) == 0);
    double tokens = 2.0 * 2048, d = 4096, kv = 1024, f = 14336;
    double w = 32 * (2 * d * d + 2 * d * kv + 3 * d * f) + 128256 * d;
    CHECK(model_flops_per_step(&s, 2) == 6 * w * tokens + 12 * 32 * d * 2048 * tokens);
    input_spec in;
    model_input(&s, &in);
    CHECK(in.kind == INPUT_TOKENS && in.width == 2048 && in.vocab == 128256 &&
          in.classes == 128256 && in.loss_items == 2048);
}

static void test_shapes(void)
{
    model_spec s, t;
    const char *form = "llama:d=4096,layers=32,heads=32,kv_heads=8,ffn=14336,seq=2048,"
                       "vocab=128256,tied=0";
    CHECK(model_spec_parse(form, &s, why, sizeof why) == 0);
    CHECK(strcmp(s.name, form) == 0);
    CHECK(model_spec_parse("llama3-8b", &t, why, sizeof why) == 0);
    CHECK(memcmp(s.dims, t.dims, sizeof s.dims) == 0);
    const struct {
        const char *text, *reason;
    } bad[] = {
        {"llama:d=64,layers=2,heads=4,kv_heads=3,ffn=8,seq=8,vocab=64,tied=0",
         "kv_heads=3 does not divide heads=4"},
        {"llama:d=64,layers=2,heads=5,kv_heads=5,ffn=8,seq=8,vocab=64,tied=0",
         "heads=5 does not divide d=64"},
        {"llama:d=24,layers=2,heads=8,kv_heads=2,ffn=8,seq=8,vocab=64,tied=0",
         "the head dimension d/heads=3 is odd"},
        {"llama:d=64,layers=2,heads=4,kv_heads=2,ffn=0,seq=8,vocab=64,tied=0",
         "ffn must be between 1 and 1048576, got '0'"},
        {"llama:d=64,layers=2,heads=4,kv_heads=2,ffn=8,seq=8,vocab=64,tied=2",
         "tied must be between 0 and 1"},
        {"llama:d=64,layers=2,heads=4,kv_heads=2,ffn=8,seq=8,vocab=64",
         "gives no tied (llama:d=N,layers=N,heads=N,kv_heads=N,ffn=N,seq=N,vocab=N,tied=N)"},
        {"llama:d=65536,layers=80,heads=64,kv_heads=8,ffn=1048576,seq=8,vocab=64,tied=0",
         "parameters; at most 2^40"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        int rc = model_spec_parse(bad[i].text, &s, why, sizeof why);
        CHECK(rc == -1 && strstr(why, bad[i].reason) && strstr(why, bad[i].text) &&
              !strchr(why, '\n'));
        if (rc != -1 || !strstr(why, bad[i].reason))
            fprintf(stderr, "  '%s': got \"%s\"\n", bad[i].text, why);
    }
}

/* The tensors tile the parameter vector in order, with Hugging Face's
 * names and shapes; tied, there is no lm_head.weight. */
static void test_tensors(void)
{
    for (int tied = 0; tied <= 1; tied++) {
        model_spec s;
        char text[160];
        snprintf(text, sizeof text,
                 "llama:d=16,layers=3,heads=4,kv_heads=2,ffn=24,seq=8,vocab=64,tied=%d", tied);
        CHECK(model_spec_parse(text, &s, why, sizeof why) == 0);
        int n = llama_kind.tensors(&s, NULL, 0);
        CHECK(n == 1 + 9 * 3 + 1 + !tied);
        model_tensor *t = calloc((size_t)n, sizeof *t);
        CHECK(llama_kind.tensors(&s, t, n) == n);
        size_t next = 0;
        for (int i = 0; i < n; i++) {
            CHECK(t[i].offset == next);
            next += (size_t)(t[i].rows * t[i].cols);
        }
        CHECK(next == model_param_count(&s));
        CHECK(strcmp(t[0].name, "model.embed_tokens.weight") == 0 && t[0].rows == 16 &&
              t[0].cols == 64 && t[0].torch_is_transpose && t[0].grad_twice == tied);
        CHECK(strcmp(t[1].name, "model.layers.0.input_layernorm.weight") == 0);
        CHECK(strcmp(t[2].name, "model.layers.0.self_attn.q_proj.weight") == 0 &&
              t[2].rows == 16 && t[2].cols == 16);
        CHECK(strcmp(t[3].name, "model.layers.0.self_attn.k_proj.weight") == 0 &&
              t[3].rows == 8 && t[3].cols == 16 && !t[3].torch_is_transpose);
        CHECK(strcmp(t[7].name, "model.layers.0.mlp.gate_proj.weight") == 0 &&
              t[7].rows == 24 && t[7].cols == 16);
        CHECK(strcmp(t[9].name, "model.layers.0.mlp.down_proj.weight") == 0 &&
              t[9].rows == 16 && t[9].cols == 24);
        CHECK(strcmp(t[28].name, "model.norm.weight") == 0);
        if (!tied)
            CHECK(strcmp(t[29].name, "lm_head.weight") == 0 && t[29].torch_is_transpose &&
                  t[29].rows == 16 && t[29].cols == 64);
        free(t);
    }
}

/* ------------------------------------------------ the float64 reference */

static void rmsnorm(const double *x, const double *g, double *y, int d)
{
    double sq = 0;
    for (int c = 0; c < d; c++)
        sq += x[c] * x[c];
    double rstd = 1 / sqrt(sq / d + 1e-5);
    for (int c = 0; c < d; c++)
        y[c] = x[c] * rstd * g[c];
}

/* y[r] = sum_c W[r, c] x[c], W column-major [out x in] at w. */
static void project(const double *w, const double *x, double *y, int out, int in)
{
    for (int r = 0; r < out; r++) {
        double acc = 0;
        for (int c = 0; c < in; c++)
            acc += w[r + (size_t)c * out] * x[c];
        y[r] = acc;
    }
}

/* apply_rotary_pos_emb on one head at position pos:
 * x cos + rotate_half(x) sin, rotate_half(x) = cat(-x2, x1). */
static void rotate(double *x, int hd, int pos)
{
    int half = hd / 2;
    for (int e = 0; e < half; e++) {
        double angle = pos / pow(500000.0, 2.0 * e / hd);
        double x1 = x[e], x2 = x[e + half];
        x[e] = x1 * cos(angle) - x2 * sin(angle);
        x[e + half] = x2 * cos(angle) + x1 * sin(angle);
    }
}

static double silu(double x) { return x / (1 + exp(-x)); }

/* LlamaForCausalLM's forward over `batch` sequences and its loss: the sum
 * of the valid tokens' cross-entropies times `scale`. */
static double ref_loss(const llama_layout *l, const double *w, const int *tok, const int *lab,
                       const int *ok, int batch, double scale)
{
    int d = l->d, t = l->seq, hd = l->head_dim, v = l->vocab, kv = l->kv_dim, f = l->ffn;
    int group = l->heads / l->kv_heads;
    double *x = calloc((size_t)t * d, sizeof *x), *a = calloc((size_t)t * d, sizeof *a);
    double *q = calloc((size_t)t * d, sizeof *q), *k = calloc((size_t)t * kv, sizeof *k);
    double *vv = calloc((size_t)t * kv, sizeof *vv), *y = calloc((size_t)t * d, sizeof *y);
    double *g = calloc((size_t)f, sizeof *g), *u = calloc((size_t)f, sizeof *u);
    double *o = calloc((size_t)d, sizeof *o), *p = calloc((size_t)t, sizeof *p);
    double *logits = calloc((size_t)v, sizeof *logits);
    double loss = 0;
    for (int s = 0; s < batch; s++) {
        const int *ts = tok + (size_t)s * t;
        for (int i = 0; i < t; i++)
            for (int c = 0; c < d; c++)
                x[i * d + c] = w[l->embed + (size_t)ts[i] * d + c];
        for (int li = 0; li < l->layers; li++) {
            const double *bw = w + l->layer0 + (size_t)li * l->layer_size;
            for (int i = 0; i < t; i++) {
                rmsnorm(x + i * d, bw + l->norm1, a + i * d, d);
                project(bw + l->q_w, a + i * d, q + i * d, d, d);
                project(bw + l->k_w, a + i * d, k + i * kv, kv, d);
                project(bw + l->v_w, a + i * d, vv + i * kv, kv, d);
                for (int h = 0; h < l->heads; h++)
                    rotate(q + i * d + h * hd, hd, i);
                for (int h = 0; h < l->kv_heads; h++)
                    rotate(k + i * kv + h * hd, hd, i);
            }
            for (int h = 0; h < l->heads; h++) {
                int kh = h / group; /* repeat_kv */
                for (int i = 0; i < t; i++) {
                    double mx = -INFINITY, sum = 0;
                    for (int j = 0; j <= i; j++) {
                        double sc = 0;
                        for (int c = 0; c < hd; c++)
                            sc += q[i * d + h * hd + c] * k[j * kv + kh * hd + c];
                        p[j] = sc / sqrt((double)hd);
                        mx = p[j] > mx ? p[j] : mx;
                    }
                    for (int j = 0; j <= i; j++)
                        sum += p[j] = exp(p[j] - mx);
                    for (int c = 0; c < hd; c++) {
                        double acc = 0;
                        for (int j = 0; j <= i; j++)
                            acc += p[j] / sum * vv[j * kv + kh * hd + c];
                        y[i * d + h * hd + c] = acc;
                    }
                }
            }
            for (int i = 0; i < t; i++) {
                project(bw + l->o_w, y + i * d, o, d, d);
                for (int c = 0; c < d; c++)
                    x[i * d + c] += o[c];
                rmsnorm(x + i * d, bw + l->norm2, a + i * d, d);
                project(bw + l->gate_w, a + i * d, g, f, d);
                project(bw + l->up_w, a + i * d, u, f, d);
                for (int c = 0; c < f; c++)
                    g[c] = silu(g[c]) * u[c];
                project(bw + l->down_w, g, o, d, f);
                for (int c = 0; c < d; c++)
                    x[i * d + c] += o[c];
            }
        }
        for (int i = 0; i < t; i++) {
            if (!ok[(size_t)s * t + i])
                continue;
            rmsnorm(x + i * d, w + l->norm_f, a + i * d, d);
            double mx = -INFINITY, sum = 0;
            for (int c = 0; c < v; c++) {
                double acc = 0;
                for (int e = 0; e < d; e++)
                    acc += w[l->head + (size_t)c * d + e] * a[i * d + e];
                logits[c] = acc;
                mx = acc > mx ? acc : mx;
            }
            for (int c = 0; c < v; c++)
                sum += exp(logits[c] - mx);
            double want = logits[lab[(size_t)s * t + i]];
            loss += log(sum) + mx - want;
        }
    }
    free(x), free(a), free(q), free(k), free(vv), free(y), free(g), free(u), free(o), free(p);
    free(logits);
    return loss * scale;
}

/* Weights far from the identity, so that every path shows in the loss and
 * the gradient: norm gains around 1, q and k large enough that the scores
 * are of order one (attention far from uniform), the rest of order 0.4. */
static void random_weights(const llama_layout *l, float *w, uint64_t seed)
{
    rng r = {seed};
    size_t d = (size_t)l->d, kv = (size_t)l->kv_dim;
    for (size_t i = 0; i < l->n_params; i++)
        w[i] = rng_uniform(&r, -0.4f, 0.4f);
    for (int li = 0; li < l->layers; li++) {
        size_t base = l->layer0 + (size_t)li * l->layer_size;
        for (size_t c = 0; c < d; c++) {
            w[base + l->norm1 + c] = 1.0f + rng_uniform(&r, -0.3f, 0.3f);
            w[base + l->norm2 + c] = 1.0f + rng_uniform(&r, -0.3f, 0.3f);
        }
        for (size_t c = 0; c < d * d; c++)
            w[base + l->q_w + c] = rng_uniform(&r, -1.2f, 1.2f);
        for (size_t c = 0; c < kv * d; c++)
            w[base + l->k_w + c] = rng_uniform(&r, -1.2f, 1.2f);
    }
    for (size_t c = 0; c < d; c++)
        w[l->norm_f + c] = 1.0f + rng_uniform(&r, -0.3f, 0.3f);
}

typedef struct fixture {
    backend *b;
    model m;
    dataset d;
    llama_layout l;
    backend_ops unfused; /* the backend's ops without its fused attention */
} fixture;

/* The Llama on the CPU backend, its attention fused (the backend's own) or
 * not (what the CUDA backend runs, checked here on the CPU); the weights
 * random_weights' when `weights` is given. */
static int fixture_make(fixture *f, const char *shape, int effective, float *weights, int fused)
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
    llama_layout_of(&s, &f->l);
    if (weights) {
        random_weights(&f->l, weights, 77);
        memcpy(f->m.initial, weights, f->m.n_params * sizeof(float));
        CHECK(model_reset(&f->m) == BK_OK);
    }
    return 0;
}

static void fixture_free(fixture *f)
{
    dataset_destroy(&f->d);
    model_destroy(&f->m);
    CHECK(f->b->mem_in_use == 0);
    f->b->ops->destroy(f->b);
}

/* The accumulated gradient of an uneven split (6 = 4 + 2, padded
 * sequences) against d(loss)/d(w) by finite differences of the float64
 * forward, every parameter; and the fp32 loss against the float64 loss. */
static void test_finite_differences(const char *shape, int fused)
{
    enum { E = 6, MAX_PARAMS = 8192 };
    float *w32 = malloc(MAX_PARAMS * sizeof *w32);
    fixture f;
    if (fixture_make(&f, shape, E, w32, fused))
        return;
    size_t n = f.m.n_params;
    CHECK(n < MAX_PARAMS);
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
    fprintf(stderr, "  %s, attention %s: loss %.9g (float64 %.9g), gradient relative error "
            "%.3g, worst %.3g at %zu\n", shape, fused ? "fused" : "unfused", loss_sum, want,
            err, worst, worst_at);
    step_runner_free(&run);
    free(g), free(w), free(w32);
    fixture_free(&f);
}

/* The FLOPs per step are what the products of a window do, counted as
 * they are issued (flop_count.h), attention unfused: the repeated key and
 * value heads make the products of every query head. */
static void test_flops_unfused(void)
{
    fixture f;
    if (fixture_make(&f, "llama:d=16,layers=3,heads=4,kv_heads=2,ffn=24,seq=6,vocab=40,tied=1",
                     7, NULL, 0))
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
 * the activations list has a buffer per block's piece; and in bf16 every
 * activation but the fp32 ones (the RMSNorms' rstd, the residual stream's
 * gradient, the head's statistics) is half, plus that gradient's bf16 copy
 * for the GEMMs: on Llama 3 8B at 2 sequences. */
static void test_memory(void)
{
    fixture f;
    if (fixture_make(&f, "llama:d=16,layers=3,heads=4,kv_heads=2,ffn=24,seq=8,vocab=64,tied=0",
                     9, NULL, 1))
        return;
    activations a;
    CHECK(activations_create(&f.m, 4, BK_ALLOC_HELD, &a) == BK_OK);
    CHECK(a.count == 14 + 3 * 12);
    memory_need need;
    model_memory_need(&f.m.spec, DTYPE_FP32, OPT_ADAMW, 4, 9, 1, &need);
    CHECK(f.b->mem_in_use == need.total - need.loss_sum); /* that one is the runner's */
    CHECK(a.bytes == need.activations && f.d.bytes == need.inputs);
    activations_destroy(&f.m, &a, BK_ALLOC_HELD);
    fixture_free(&f);

    model_spec s;
    CHECK(model_spec_parse("llama3-8b", &s, why, sizeof why) == 0);
    size_t bytes32 = activations_bytes(&s, STORAGE_F32, 2);
    size_t bytes16 = activations_bytes(&s, STORAGE_BF16, 2);
    size_t n = 2 * 2048, rstd = (size_t)2 * 32 * n * sizeof(float);
    size_t dres = (size_t)4096 * n * sizeof(float), dres_c = dres / 2;
    size_t head_stats = (size_t)2048 * sizeof(float); /* one sequence a chunk */
    CHECK(bytes32 - rstd - dres - head_stats ==
          2 * (bytes16 - rstd - dres - dres_c - head_stats));
}

int main(void)
{
    test_presets();
    test_memory();
    test_shapes();
    test_tensors();
    test_flops_unfused();
    /* Grouped (2 query heads a kv head), untied; multi-query (one kv head),
     * tied. Head dimension 4: two rotary frequencies. */
    const char *shapes[] = {
        "llama:d=16,layers=2,heads=4,kv_heads=2,ffn=12,seq=5,vocab=13,tied=0",
        "llama:d=16,layers=2,heads=4,kv_heads=1,ffn=10,seq=5,vocab=11,tied=1",
    };
    for (int s = 0; s < 2; s++)
        for (int fused = 0; fused <= 1; fused++)
            test_finite_differences(shapes[s], fused);
    return check_finish("test_llama");
}
