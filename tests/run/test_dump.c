/* The window dump read back: every file a .npy of the shape PyTorch gives
 * the tensor (an nn.Linear weight [out, in], an embedding [vocab, d]),
 * holding the model's starting weights and the accumulated gradient; the
 * manifest's split and counts; and the dumped parameters and window, put
 * into a fresh model and dataset, giving the dumped gradient again in one
 * full-batch pass. Targets that exist and are not empty directories are
 * refused, and a dump that cannot be finished leaves nothing. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "dump.h"
#include "gradcheck.h"
#include "noise_dump.h"
#include "noise_pass.h"
#include "registry.h"
#include "step.h"

static char why[600];
static char root[256];

/* ------------------------------------------------ a small .npy reader */

typedef struct npy {
    char descr[8];
    int ndim;
    int64_t shape[4];
    size_t count;
    void *data;
} npy;

static int npy_read(const char *path, npy *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char pre[10];
    int rc = -1;
    char header[1024];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY\x01\x00", 8) != 0)
        goto done;
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (hlen >= sizeof header || fread(header, 1, hlen, f) != hlen || (10 + hlen) % 64)
        goto done;
    header[hlen] = '\0';
    const char *d = strstr(header, "'descr': '"), *s = strstr(header, "'shape': (");
    if (!d || !s || !strstr(header, "'fortran_order': False") || header[hlen - 1] != '\n')
        goto done;
    snprintf(out->descr, sizeof out->descr, "%.3s", d + 10);
    out->count = 1;
    for (const char *p = s + 10; *p != ')' && out->ndim < 4;) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p)
            goto done;
        out->shape[out->ndim++] = v;
        out->count *= (size_t)v;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    out->data = malloc(out->count * 4 + 1);
    if (out->data && fread(out->data, 4, out->count, f) == out->count && fgetc(f) == EOF)
        rc = 0;
done:
    fclose(f);
    return rc;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = calloc(1, 1 << 20);
    if (text)
        text[fread(text, 1, (1 << 20) - 1, f)] = '\0';
    fclose(f);
    return text;
}

static int shape_is(const npy *a, int ndim, int64_t s0, int64_t s1)
{
    return a->ndim == ndim && a->shape[0] == s0 && (ndim == 1 || a->shape[1] == s1);
}

/* A tensor's file back into the parameter vector's layout. */
static void from_torch(const model_tensor *t, const float *arr, float *vec)
{
    size_t rows = (size_t)t->rows, cols = (size_t)t->cols;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            vec[t->offset + c * rows + r] =
                t->cols == 1 || t->torch_is_transpose ? arr[c * rows + r] : arr[r * cols + c];
}

static int no_leftovers(void)
{
    DIR *dh = opendir(root);
    struct dirent *e;
    int clean = 1;
    while (dh && (e = readdir(dh)))
        clean &= strstr(e->d_name, ".tmp.") == NULL;
    if (dh)
        closedir(dh);
    return clean;
}

/* --------------------------------------------------------------- tests */

/* Shapes a person would write for the model: name, torch shape. */
typedef struct expect {
    const char *name;
    int ndim;
    int64_t s0, s1;
} expect;

static void check_dump(const char *shape, int effective, int micro, const char *split_text,
                       const expect *shapes, int n_shapes)
{
    backend *b;
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    model_spec s;
    CHECK(model_spec_parse(shape, &s, why, sizeof why) == 0);
    optimizer_config opt = {OPT_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, OPT_AT_STEP};
    input_spec in;
    model_input(&s, &in);
    model m, m2;
    dataset d, d2;
    CHECK(model_create(b, &s, &opt, 5, &m) == BK_OK);
    CHECK(dataset_create(b, &in, effective, 2, 5, &d) == BK_OK);
    size_t n = m.n_params;
    float *window = malloc(n * sizeof *window);
    split sp;
    CHECK(split_make(effective, micro, 1, &sp, why, sizeof why) == 0);
    step_runner run;
    CHECK(step_runner_init(&run, &m, &d, &sp, MODE_ASYNC, REDUCTION_SUM) == BK_OK);
    double err, loss;
    CHECK(grad_check(&run, &err, &loss, window, NULL) == BK_OK);
    step_runner_free(&run);

    char dir[400], path[600];
    static int dumps; /* a folder each: one kind may be dumped at two shapes */
    snprintf(dir, sizeof dir, "%s/%s.%d", root, s.kind->name, dumps++);
    CHECK(dump_check_target(dir, why, sizeof why) == 0);
    dump_window w = {.m = &m, .data = &d, .n_data = 1, .sp = &sp, .dtype = DTYPE_FP32,
                     .reduction = REDUCTION_SUM, .optimizer = OPT_ADAMW, .seed = 5,
                     .loss_sum = loss, .grad = window};
    CHECK(dump_write(dir, &w, NULL, "no noise scale: \"none\" here", why, sizeof why) == 0);
    CHECK(no_leftovers());
    /* Once written, the directory is no target for another dump. */
    CHECK(dump_check_target(dir, why, sizeof why) == -1 && strstr(why, "is not empty"));

    /* The manifest. */
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    char *manifest = read_text(path), text[200];
    CHECK(manifest != NULL);
    int valid = dataset_valid_count(&d, 0, 0, effective);
    snprintf(text, sizeof text, "\"split\": [%s]", split_text);
    CHECK(manifest && strstr(manifest, text));
    snprintf(text, sizeof text, "\"valid_items\": %d,", valid);
    CHECK(manifest && strstr(manifest, text));
    snprintf(text, sizeof text, "\"kind\": \"%s\"", s.kind->name);
    CHECK(manifest && strstr(manifest, text));
    CHECK(manifest && strstr(manifest, "\"format\": \"accubench-dump\", \"version\": 1"));
    /* The reduction's row says whether a checker may hold the gradient to
     * the full batch's. */
    CHECK(manifest && strstr(manifest, "\"reduction\": \"sum\", \"reduction_exact\": true,"));
    /* What the gradient was held in between micro-batches. */
    CHECK(manifest && strstr(manifest, "\"dtype\": \"fp32\", \"grad_dtype\": \"fp32\","));
    /* No noise pass's windows: the manifest says why, in JSON. */
    CHECK(manifest && strstr(manifest, "\"no_noise_dump\": \"no noise scale: \\\"none\\\" here\","));
    CHECK(manifest && !strstr(manifest, "noise_windows"));

    /* Every tensor: its shape, and the weights and gradient it holds. */
    int nt = s.kind->tensors(&s, NULL, 0);
    model_tensor *t = calloc((size_t)nt, sizeof *t);
    s.kind->tensors(&s, t, nt);
    float *params = calloc(n, sizeof *params), *grads = calloc(n, sizeof *grads);
    int shapes_seen = 0;
    for (int i = 0; i < nt; i++) {
        npy p, g;
        snprintf(path, sizeof path, "%s/param.%s.npy", dir, t[i].name);
        CHECK(npy_read(path, &p) == 0);
        snprintf(path, sizeof path, "%s/grad.%s.npy", dir, t[i].name);
        CHECK(npy_read(path, &g) == 0);
        CHECK(strcmp(p.descr, "<f4") == 0 && strcmp(g.descr, "<f4") == 0);
        CHECK(p.ndim == g.ndim && p.shape[0] == g.shape[0] && p.shape[1] == g.shape[1]);
        CHECK(p.count == (size_t)(t[i].rows * t[i].cols));
        snprintf(text, sizeof text, "\"name\": \"%s\", \"role\": \"grad\"", t[i].name);
        CHECK(manifest && strstr(manifest, text));
        for (int k = 0; k < n_shapes; k++)
            if (strcmp(shapes[k].name, t[i].name) == 0) {
                CHECK(shape_is(&p, shapes[k].ndim, shapes[k].s0, shapes[k].s1));
                shapes_seen++;
            }
        if (p.data && g.data && p.count == (size_t)(t[i].rows * t[i].cols)) {
            from_torch(&t[i], p.data, params);
            from_torch(&t[i], g.data, grads);
        }
        free(p.data);
        free(g.data);
    }
    CHECK(shapes_seen == n_shapes);
    CHECK(memcmp(params, m.initial, n * sizeof *params) == 0);
    CHECK(memcmp(grads, window, n * sizeof *grads) == 0);

    /* The window's data: shapes, and the mask's count. */
    npy x, y, mask;
    snprintf(path, sizeof path, "%s/inputs.npy", dir);
    CHECK(npy_read(path, &x) == 0 && shape_is(&x, 2, effective, in.width));
    CHECK(strcmp(x.descr, in.kind == INPUT_TOKENS ? "<i4" : "<f4") == 0);
    snprintf(path, sizeof path, "%s/labels.npy", dir);
    CHECK(npy_read(path, &y) == 0 && shape_is(&y, 2, effective, in.loss_items));
    snprintf(path, sizeof path, "%s/mask.npy", dir);
    CHECK(npy_read(path, &mask) == 0 && shape_is(&mask, 2, effective, in.loss_items));
    int ones = 0;
    for (size_t i = 0; mask.data && i < mask.count; i++)
        ones += ((int *)mask.data)[i];
    CHECK(ones == valid);

    /* A fresh model from other weights and other data, given the dump's:
     * one pass over the whole window gives the dumped gradient. */
    CHECK(model_create(b, &s, &opt, 99, &m2) == BK_OK);
    memcpy(m2.initial, params, n * sizeof *params);
    CHECK(model_reset(&m2) == BK_OK);
    CHECK(dataset_create(b, &in, effective, 1, 99, &d2) == BK_OK);
    size_t items = (size_t)effective * in.loss_items;
    if (x.data && y.data && mask.data) {
        CHECK(bk_upload(b, d2.buf[0].x, x.data, x.count * 4) == BK_OK);
        CHECK(bk_upload(b, d2.buf[0].labels, y.data, items * sizeof(int)) == BK_OK);
        CHECK(bk_upload(b, d2.buf[0].valid, mask.data, items * sizeof(int)) == BK_OK);
        memcpy(d2.buf[0].valid_host, mask.data, items * sizeof(int));
    }
    split whole;
    CHECK(split_make(effective, effective, 1, &whole, why, sizeof why) == 0);
    CHECK(step_runner_init(&run, &m2, &d2, &whole, MODE_ASYNC, REDUCTION_SUM) == BK_OK);
    CHECK(step_window(&run, 0) == BK_OK);
    float *again = malloc(n * sizeof *again);
    CHECK(bk_download(b, again, m2.grads, n * sizeof *again) == BK_OK);
    double rel = relative_error(again, grads, n);
    CHECK(rel < 1e-5);
    step_runner_free(&run);

    free(x.data), free(y.data), free(mask.data), free(again);
    free(params), free(grads), free(t), free(manifest), free(window);
    dataset_destroy(&d2);
    model_destroy(&m2);
    dataset_destroy(&d);
    model_destroy(&m);
    CHECK(b->mem_in_use == 0);
    b->ops->destroy(b);
}

static void test_targets(void)
{
    char path[400], inner[500];
    /* A file. */
    snprintf(path, sizeof path, "%s/file", root);
    FILE *f = fopen(path, "w");
    fclose(f);
    CHECK(dump_check_target(path, why, sizeof why) == -1 &&
          strstr(why, "exists and is not a directory") && strstr(why, path));
    /* A directory with something in it. */
    snprintf(path, sizeof path, "%s/full", root);
    mkdir(path, 0777);
    snprintf(inner, sizeof inner, "%s/x", path);
    fclose(fopen(inner, "w"));
    CHECK(dump_check_target(path, why, sizeof why) == -1 && strstr(why, "is not empty"));
    /* No parent. */
    snprintf(path, sizeof path, "%s/none/dump", root);
    CHECK(dump_check_target(path, why, sizeof why) == -1 &&
          strstr(why, "parent directory") && !strchr(why, '\n'));
    /* An empty directory, and a new one (trailing slash and all). */
    snprintf(path, sizeof path, "%s/empty", root);
    mkdir(path, 0777);
    CHECK(dump_check_target(path, why, sizeof why) == 0);
    snprintf(path, sizeof path, "%s/new/", root);
    CHECK(dump_check_target(path, why, sizeof why) == 0);
}

/* A dump that cannot be made leaves nothing behind. */
static void test_failed_dump_leaves_nothing(void)
{
    backend *b;
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    model_spec s;
    CHECK(model_spec_parse("tiny", &s, why, sizeof why) == 0);
    optimizer_config opt = {OPT_SGD, 1e-3f, 0, 0, 0, 0, OPT_AT_STEP};
    input_spec in;
    model_input(&s, &in);
    model m;
    dataset d;
    CHECK(model_create(b, &s, &opt, 1, &m) == BK_OK);
    CHECK(dataset_create(b, &in, 4, 1, 1, &d) == BK_OK);
    split sp;
    split_make(4, 2, 1, &sp, why, sizeof why);
    float *g = calloc(m.n_params, sizeof *g);
    dump_window w = {.m = &m, .data = &d, .n_data = 1, .sp = &sp, .grad = g};
    dump_noise_fields fields = {.windows = 1, .scale = 1, .scale_err = 1};
    dump_window nw = w;
    nw.noise = &fields;
    /* The target is a non-empty directory: everything is written (the
     * noise pass's windows in a directory of their own), the rename fails,
     * and the temporary goes, all of it. */
    char path[400];
    snprintf(path, sizeof path, "%s/full", root);
    CHECK(dump_write(path, &w, &nw, NULL, why, sizeof why) == -1);
    char want[600];
    snprintf(want, sizeof want, "cannot move the dump's temporary folder to %s: ", path);
    CHECK(strstr(why, want) != NULL); /* never "rename DIR to DIR" */
    CHECK(no_leftovers());
    free(g);
    dataset_destroy(&d);
    model_destroy(&m);
    b->ops->destroy(b);
}

/* The noise pass's windows in noise/: drawn again as the pass draws them,
 * those the estimate used, concatenated in order; the split each window's
 * in turn; the gradient the mean over every valid item of all of them,
 * which is each window's own mean gradient weighted back by its valid
 * items. */
static void test_noise_windows(void)
{
    backend *b;
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    model_spec s;
    CHECK(model_spec_parse("tiny", &s, why, sizeof why) == 0);
    optimizer_config opt = {OPT_SGD, 1e-3f, 0, 0, 0, 0, OPT_AT_STEP};
    input_spec in;
    model_input(&s, &in);
    model m;
    CHECK(model_create(b, &s, &opt, 3, &m) == BK_OK);
    split sp;
    CHECK(split_make(8, 3, 1, &sp, why, sizeof why) == 0); /* 3 + 3 + 2 */
    noise_dump nd;
    CHECK(noise_dump_build(&m, &sp, 7, 3, &nd) == BK_OK && nd.n_windows == 3);
    /* The same data as noise_window_data gives the pass. */
    dataset again;
    CHECK(noise_window_data(&m, &sp, 7, 1, &again) == BK_OK);
    CHECK(memcmp(again.buf[0].valid_host, nd.windows[1].buf[0].valid_host,
                 8 * sizeof(int)) == 0);
    dataset_destroy(&again);
    /* The gradient: each window's mean over its valid items, weighted. */
    size_t n = m.n_params;
    float *one = malloc(n * sizeof *one), *want = calloc(n, sizeof *want);
    split whole;
    CHECK(split_make(8, 8, 1, &whole, why, sizeof why) == 0);
    int valid = 0;
    for (int i = 0; i < nd.n_windows; i++) {
        step_runner run;
        CHECK(step_runner_init(&run, &m, &nd.windows[i], &whole, MODE_ASYNC,
                               REDUCTION_SUM) == BK_OK);
        CHECK(step_window(&run, 0) == BK_OK);
        CHECK(bk_download(b, one, m.grads, n * sizeof *one) == BK_OK);
        int v = dataset_valid_count(&nd.windows[i], 0, 0, 8);
        for (size_t k = 0; k < n; k++)
            want[k] += one[k] * (float)v;
        valid += v;
        step_runner_free(&run);
    }
    for (size_t k = 0; k < n; k++)
        want[k] /= (float)valid;
    CHECK(valid == nd.valid && relative_error(nd.grad, want, n) < 1e-5);

    dump_window w = {.m = &m, .data = &nd.windows[0], .n_data = 1, .sp = &sp,
                     .dtype = DTYPE_FP32, .reduction = REDUCTION_SUM, .grad = nd.grad};
    dump_noise_fields fields = {.windows = 3, .scale = 12.5, .scale_err = 2.25};
    dump_window nw = w;
    nw.data = nd.windows;
    nw.n_data = nd.n_windows;
    nw.loss_sum = nd.loss_sum;
    nw.noise = &fields;
    char dir[400], path[600], text[200];
    snprintf(dir, sizeof dir, "%s/noisy", root);
    CHECK(dump_write(dir, &w, &nw, NULL, why, sizeof why) == 0);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    char *top = read_text(path);
    CHECK(top && strstr(top, "\"noise_dump\": \"noise\",") && !strstr(top, "no_noise_dump") &&
          !strstr(top, "noise_windows"));
    snprintf(path, sizeof path, "%s/noise/manifest.json", dir);
    char *manifest = read_text(path);
    CHECK(manifest && strstr(manifest, "\"effective\": 24, \"micro\": 3, \"accum\": 9,"));
    CHECK(manifest && strstr(manifest, "\"split\": [3, 3, 2, 3, 3, 2, 3, 3, 2]"));
    snprintf(text, sizeof text, "\"valid_items\": %d,", valid);
    CHECK(manifest && strstr(manifest, text));
    CHECK(manifest && strstr(manifest, "\"noise_windows\": 3, \"window_effective\": 8, "
                                       "\"grad_noise_scale\": 12.5, \"grad_noise_scale_err\": 2.25,"));
    npy x, mask;
    snprintf(path, sizeof path, "%s/noise/inputs.npy", dir);
    CHECK(npy_read(path, &x) == 0 && shape_is(&x, 2, 24, in.width));
    snprintf(path, sizeof path, "%s/noise/mask.npy", dir);
    CHECK(npy_read(path, &mask) == 0 && shape_is(&mask, 2, 24, 1));
    /* Window 2's examples after windows 0 and 1's. */
    CHECK(mask.data && memcmp((int *)mask.data + 16, nd.windows[2].buf[0].valid_host,
                              8 * sizeof(int)) == 0);
    free(x.data), free(mask.data), free(top), free(manifest), free(one), free(want);
    noise_dump_free(&nd);
    model_destroy(&m);
    CHECK(b->mem_in_use == 0);
    b->ops->destroy(b);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/accubench-test-dump.%ld", (long)getpid());
    CHECK(mkdir(root, 0777) == 0);
    test_targets();
    static const expect mlp[] = {
        {"layers.0.weight", 2, 12, 12}, {"layers.0.bias", 1, 12, 0},
        {"layers.2.weight", 2, 5, 12},  {"layers.2.bias", 1, 5, 0},
    };
    check_dump("mlp:hidden=12,layers=2,classes=5", 7, 3, "3, 3, 1", mlp, 4);
    static const expect gpt[] = {
        {"transformer.wte.weight", 2, 13, 8},
        {"transformer.wpe.weight", 2, 5, 8},
        {"transformer.h.0.ln_1.weight", 1, 8, 0},
        {"transformer.h.0.attn.c_attn.weight", 2, 24, 8},
        {"transformer.h.0.attn.c_attn.bias", 1, 24, 0},
        {"transformer.h.0.attn.c_proj.weight", 2, 8, 8},
        {"transformer.h.1.mlp.c_fc.weight", 2, 32, 8},
        {"transformer.h.1.mlp.c_proj.weight", 2, 8, 32},
        {"transformer.ln_f.bias", 1, 8, 0},
    };
    check_dump("gpt:d=8,layers=2,heads=2,seq=5,vocab=13", 5, 2, "2, 2, 1", gpt, 9);
    /* A layer of one input (or one output) is still a matrix: nn.Linear(1, 3)
     * holds a [3, 1] weight, and load_state_dict refuses a [3] in its place. */
    static const expect narrow[] = {
        {"layers.0.weight", 2, 1, 1}, {"layers.0.bias", 1, 1, 0},
        {"layers.1.weight", 2, 3, 1}, {"layers.1.bias", 1, 3, 0},
    };
    check_dump("mlp:hidden=1,layers=1,classes=3", 5, 2, "2, 2, 1", narrow, 4);
    static const expect linear[] = {{"linear.weight", 2, 3, 1}, {"linear.bias", 1, 3, 0}};
    check_dump("linear:in=1,classes=3", 5, 2, "2, 2, 1", linear, 2);
    static const expect gpt1[] = {
        {"transformer.h.0.attn.c_attn.weight", 2, 3, 1},
        {"transformer.h.0.attn.c_proj.weight", 2, 1, 1},
        {"transformer.h.0.mlp.c_fc.weight", 2, 4, 1},
        {"transformer.h.0.mlp.c_proj.weight", 2, 1, 4},
        {"transformer.h.0.ln_1.weight", 1, 1, 0},
    };
    check_dump("gpt:d=1,layers=1,heads=1,seq=3,vocab=5", 3, 2, "2, 1", gpt1, 5);
    static const expect llama1[] = {
        {"model.layers.0.mlp.gate_proj.weight", 2, 1, 4},
        {"model.layers.0.mlp.down_proj.weight", 2, 4, 1},
        {"model.layers.0.input_layernorm.weight", 1, 4, 0},
    };
    check_dump("llama:d=4,layers=1,heads=2,kv_heads=1,ffn=1,seq=3,vocab=5,tied=0", 3, 2, "2, 1",
               llama1, 3);
    test_failed_dump_leaves_nothing();
    test_noise_windows();
    CHECK(check_remove_tree(root) == 0);
    return check_finish("test_dump");
}
