/* The window dump: host copies of the window, turned into PyTorch's
 * layout, written as .npy files and a manifest into a temporary directory
 * that becomes the dump by one rename. */
#include "dump.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "dispatch.h"
#include "npy.h"
#include "output_path.h"
#include "version.h"

int dump_check_target(const char *dir, char *why, size_t n)
{
    struct stat st;
    if (!*dir) {
        snprintf(why, n, "--dump needs a directory");
        return -1;
    }
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            snprintf(why, n, "--dump %s exists and is not a directory", dir);
            return -1;
        }
        DIR *dh = opendir(dir);
        if (!dh) {
            snprintf(why, n, "--dump %s cannot be read: %s", dir, strerror(errno));
            return -1;
        }
        struct dirent *e;
        int empty = 1;
        while (empty && (e = readdir(dh)))
            empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
        closedir(dh);
        if (!empty) {
            snprintf(why, n, "--dump %s is not empty (a dump goes into a new or empty "
                     "directory)", dir);
            return -1;
        }
        /* the dump is renamed over it */
        if (output_path_pinned("--dump", dir, why, n))
            return -1;
    }
    /* The dump is made beside it: its parent must take a new directory. */
    char parent[1200];
    snprintf(parent, sizeof parent, "%s", dir);
    size_t len = strlen(parent);
    while (len > 1 && parent[len - 1] == '/')
        parent[--len] = '\0';
    char *slash = strrchr(parent, '/');
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == parent)
        parent[1] = '\0';
    else
        *slash = '\0';
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode) || access(parent, W_OK) != 0) {
        snprintf(why, n, "--dump %s: its parent directory %s does not exist or is not "
                 "writable", dir, parent);
        return -1;
    }
    return output_path_folder_takes_new("--dump", dir, parent, why, n);
}

/* Removes what a failed dump left in its temporary directory (the noise
 * pass's dump a directory inside it). */
static void remove_tree(const char *tmp)
{
    DIR *dh = opendir(tmp);
    if (dh) {
        struct dirent *e;
        char path[4200];
        struct stat st;
        while ((e = readdir(dh)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
                if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                    remove_tree(path);
                else
                    unlink(path);
            }
        closedir(dh);
    }
    rmdir(tmp);
}

/* What one dump writes, kept while it is written. */
typedef struct dump_job {
    const dump_window *w;
    const char *dir; /* where its files go */
    model_tensor *tensors;
    int n_tensors;
    input_spec in;
    int effective, accum; /* over all its windows */
    int *split;           /* `accum` sizes: each window's split, in order */
    int valid_items;
    const char *no_noise; /* the gradient check's dump: why it has no noise/ */
    int has_noise;        /* the gradient check's dump: noise/ is written */
    char why[400];
} dump_job;

static int write_array(dump_job *j, const char *file, npy_dtype type, const int64_t *shape,
                       int ndim, const void *data)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", j->dir, file);
    return npy_write(path, type, shape, ndim, data, j->why, sizeof j->why);
}

/* PyTorch's shape of tensor t, and its floats from `vec` (the parameter
 * vector's layout) in that shape's row-major order, into out. */
static int torch_shape(const model_tensor *t, int64_t *shape)
{
    if (t->vector) {
        shape[0] = t->rows;
        return 1;
    }
    shape[0] = t->torch_is_transpose ? t->cols : t->rows;
    shape[1] = t->torch_is_transpose ? t->rows : t->cols;
    return 2;
}

static void torch_order(const model_tensor *t, const float *vec, float *out)
{
    const float *src = vec + t->offset;
    size_t rows = (size_t)t->rows, cols = (size_t)t->cols;
    if (t->cols == 1 || t->torch_is_transpose) {
        memcpy(out, src, rows * cols * sizeof *out);
        return;
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            out[r * cols + c] = src[c * rows + r];
}

static int write_tensors(dump_job *j)
{
    size_t largest = 0;
    for (int i = 0; i < j->n_tensors; i++) {
        size_t elems = (size_t)j->tensors[i].rows * (size_t)j->tensors[i].cols;
        largest = elems > largest ? elems : largest;
    }
    float *host = malloc(largest * sizeof *host);
    if (!host) {
        snprintf(j->why, sizeof j->why, "out of host memory for the dump");
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < j->n_tensors && !rc; i++) {
        const model_tensor *t = &j->tensors[i];
        int64_t shape[2];
        int ndim = torch_shape(t, shape);
        for (int role = 0; role < 2 && !rc; role++) {
            char file[MODEL_TENSOR_NAME + 16];
            snprintf(file, sizeof file, "%s.%s.npy", role ? "grad" : "param", t->name);
            torch_order(t, role ? j->w->grad : j->w->m->initial, host);
            rc = write_array(j, file, NPY_F32, shape, ndim, host);
        }
    }
    free(host);
    return rc;
}

/* Window i's buffer 0 into the host arrays at its examples' place: x its
 * inputs (through fp32 where the compute storage is narrower), labels and
 * mask. */
static int read_window(dump_job *j, int i, void *x, int *labels, int *mask)
{
    backend *b = j->w->m->b;
    const dataset *d = &j->w->data[i];
    const input_buffer *ib = &d->buf[0];
    size_t e = (size_t)d->effective_batch, nx = (size_t)j->in.width * e;
    size_t items = e * (size_t)j->in.loss_items, at = (size_t)i * e;
    float *staging = NULL;
    int rc = BK_OK;
    /* the data's own storage: made in its dtype, whatever the backend's now;
     * its fp32 copy is the dump's, outside the cap as every check's memory
     * is (beside the config's need under a cap of exactly it, it would not
     * fit, and a run at the planner's answer would lose its dump) */
    if (j->in.kind != INPUT_TOKENS && d->x_storage != STORAGE_F32 &&
        !(rc = bk_alloc_apart(b, nx * sizeof(float), (void **)&staging)))
        rc = b->ops->to_f32(b, ib->x, d->x_storage, staging, nx);
    /* 4 bytes an input either way: an fp32 feature or an int32 token id */
    if (!rc)
        rc = bk_download(b, (char *)x + at * (size_t)j->in.width * 4,
                         staging ? staging : ib->x, nx * 4);
    bk_free_apart(b, staging, nx * sizeof(float));
    if (!rc)
        rc = bk_download(b, labels + at * (size_t)j->in.loss_items, ib->labels,
                         items * sizeof(int));
    if (!rc)
        rc = bk_download(b, mask + at * (size_t)j->in.loss_items, ib->valid,
                         items * sizeof(int));
    if (rc)
        snprintf(j->why, sizeof j->why, "reading the window back: %s", b->error);
    return rc ? -1 : 0;
}

/* inputs.npy, labels.npy, mask.npy: input buffer 0 of every window, their
 * examples concatenated in order. */
static int write_window_data(dump_job *j)
{
    size_t e = (size_t)j->effective, items = e * (size_t)j->in.loss_items;
    void *x = malloc(e * (size_t)j->in.width * 4);
    int *labels = malloc(items * sizeof *labels), *mask = malloc(items * sizeof *mask);
    int fail = 0;
    if (!x || !labels || !mask) {
        snprintf(j->why, sizeof j->why, "out of host memory for the dump");
        fail = -1;
    }
    for (int i = 0; i < j->w->n_data && !fail; i++)
        fail = read_window(j, i, x, labels, mask);
    int64_t xs[2] = {(int64_t)e, j->in.width}, ys[2] = {(int64_t)e, j->in.loss_items};
    if (!fail)
        fail = write_array(j, "inputs.npy", j->in.kind == INPUT_TOKENS ? NPY_I32 : NPY_F32,
                           xs, 2, x);
    if (!fail)
        fail = write_array(j, "labels.npy", NPY_I32, ys, 2, labels);
    if (!fail)
        fail = write_array(j, "mask.npy", NPY_I32, ys, 2, mask);
    free(x);
    free(labels);
    free(mask);
    return fail;
}

/* A JSON string: the names here are plain, but a quote or a backslash
 * would still come out right. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void json_entry(FILE *f, const char *name, const char *role, const char *file,
                       const int64_t *shape, int ndim, const char *type, int last)
{
    fputs("    {\"name\": ", f);
    json_string(f, name);
    fprintf(f, ", \"role\": \"%s\", \"file\": ", role);
    json_string(f, file);
    fputs(", \"shape\": [", f);
    for (int i = 0; i < ndim; i++)
        fprintf(f, "%s%lld", i ? ", " : "", (long long)shape[i]);
    fprintf(f, "], \"dtype\": \"%s\"}%s\n", type, last ? "" : ",");
}

static int write_manifest(FILE *f, void *ctx, char *why, size_t n)
{
    (void)why;
    (void)n;
    const dump_job *j = ctx;
    const dump_window *w = j->w;
    const model_spec *s = &w->m->spec;
    const split *sp = w->sp;
    fprintf(f, "{\n  \"format\": \"accubench-dump\", \"version\": 1,\n");
    fprintf(f, "  \"accubench_version\": \"%s\",\n  \"model\": ", ACCUBENCH_VERSION);
    json_string(f, s->name);
    fprintf(f, ", \"kind\": \"%s\", \"shape\": {", s->kind->name);
    for (int i = 0; i < s->kind->n_dims; i++)
        fprintf(f, "%s\"%s\": %d", i ? ", " : "", s->kind->dims[i].key, s->dims[i]);
    for (int i = 0; i < s->kind->n_constants; i++)
        fprintf(f, ", \"%s\": %.9g", s->kind->constants[i].key, s->kind->constants[i].value);
    fprintf(f, "},\n  \"input\": {\"kind\": \"%s\", \"width\": %d, \"vocab\": %d, "
            "\"classes\": %d, \"loss_items\": %d},\n",
            j->in.kind == INPUT_TOKENS ? "tokens" : "features", j->in.width, j->in.vocab,
            j->in.classes, j->in.loss_items);
    char rule[64];
    fprintf(f, "  \"dtype\": \"%s\", \"grad_dtype\": \"%s\", \"reduction\": \"%s\", "
            "\"reduction_exact\": %s, \"reduction_scale\": \"%s\", \"optimizer\": \"%s\", "
            "\"seed\": %llu,\n",
            dtype_name(w->dtype), grad_dtype_name(w->grad_dtype), reduction_name(w->reduction),
            reduction_info_of(w->reduction)->exact ? "true" : "false",
            reduction_rule(w->reduction, rule, sizeof rule),
            optimizer_name(w->optimizer), (unsigned long long)w->seed);
    fprintf(f, "  \"effective\": %d, \"micro\": %d, \"accum\": %d,\n  \"split\": [",
            j->effective, sp->micro, j->accum);
    for (int k = 0; k < j->accum; k++)
        fprintf(f, "%s%d", k ? ", " : "", j->split[k]);
    fprintf(f, "],\n  \"valid_items\": %d,\n  \"loss\": %.9g, \"loss_sum\": %.9g,\n",
            j->valid_items, w->loss_sum / j->valid_items, w->loss_sum);
    if (w->noise)
        fprintf(f, "  \"noise_windows\": %d, \"window_effective\": %d, "
                "\"grad_noise_scale\": %.9g, \"grad_noise_scale_err\": %.9g,\n",
                w->noise->windows, sp->effective, w->noise->scale, w->noise->scale_err);
    if (j->has_noise)
        fputs("  \"noise_dump\": \"noise\",\n", f);
    else if (j->no_noise) {
        fputs("  \"no_noise_dump\": ", f);
        json_string(f, j->no_noise);
        fputs(",\n", f);
    }
    fputs("  \"tensors\": [\n", f);
    for (int i = 0; i < j->n_tensors; i++) {
        const model_tensor *t = &j->tensors[i];
        int64_t shape[2];
        int ndim = torch_shape(t, shape);
        for (int role = 0; role < 2; role++) {
            char file[MODEL_TENSOR_NAME + 16];
            snprintf(file, sizeof file, "%s.%s.npy", role ? "grad" : "param", t->name);
            json_entry(f, t->name, role ? "grad" : "param", file, shape, ndim, "float32", 0);
        }
    }
    int64_t e = j->effective;
    int64_t xs[2] = {e, j->in.width}, ys[2] = {e, j->in.loss_items};
    json_entry(f, "inputs", "input", "inputs.npy", xs, 2,
               j->in.kind == INPUT_TOKENS ? "int32" : "float32", 0);
    json_entry(f, "labels", "label", "labels.npy", ys, 2, "int32", 0);
    json_entry(f, "mask", "mask", "mask.npy", ys, 2, "int32", 1);
    fprintf(f, "  ]\n}\n");
    return 0;
}

/* One dump's files into j->dir, which exists: the manifest last, so that
 * a directory with one is whole. */
static int write_files(dump_job *j)
{
    const dump_window *w = j->w;
    const split *sp = w->sp;
    j->effective = sp->effective * w->n_data;
    j->accum = sp->accum * w->n_data;
    j->split = malloc((size_t)j->accum * sizeof *j->split);
    if (!j->split) {
        snprintf(j->why, sizeof j->why, "out of host memory for the dump");
        return -1;
    }
    for (int k = 0; k < j->accum; k++)
        j->split[k] = split_micro_size(sp, k % sp->accum);
    j->valid_items = 0;
    for (int i = 0; i < w->n_data; i++)
        j->valid_items += dataset_valid_count(&w->data[i], 0, 0, w->data[i].effective_batch);
    char path[4300];
    snprintf(path, sizeof path, "%s/manifest.json", j->dir);
    int rc = write_tensors(j) || write_window_data(j) ||
             atomic_write_file(path, write_manifest, j, j->why, sizeof j->why);
    free(j->split);
    j->split = NULL;
    return rc ? -1 : 0;
}

int dump_write(const char *dir, const dump_window *w, const dump_window *noise,
               const char *no_noise, char *why, size_t n)
{
    dump_job j = {.w = w, .no_noise = no_noise, .has_noise = noise != NULL};
    const model_spec *s = &w->m->spec;
    model_input(s, &j.in);
    if (!s->kind->tensors) {
        snprintf(why, n, "cannot dump %s: its kind lists no tensors", s->name);
        return -1;
    }
    j.n_tensors = s->kind->tensors(s, NULL, 0);
    j.tensors = calloc((size_t)j.n_tensors, sizeof *j.tensors);
    char target[1200], tmp[1300], sub[1400];
    snprintf(target, sizeof target, "%s", dir);
    size_t len = strlen(target);
    while (len > 1 && target[len - 1] == '/')
        target[--len] = '\0';
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", target, (long)getpid());
    snprintf(sub, sizeof sub, "%s/noise", tmp);
    if (!j.tensors) {
        snprintf(why, n, "out of host memory for the dump");
        return -1;
    }
    s->kind->tensors(s, j.tensors, j.n_tensors);
    if (mkdir(tmp, 0777) != 0) {
        snprintf(why, n, "cannot create %s: %s", tmp, strerror(errno));
        free(j.tensors);
        return -1;
    }
    /* The noise pass's windows first, in the same format: the top
     * manifest, written last of all, names a noise/ that is whole. */
    int rc = 0;
    if (noise) {
        dump_job nj = j;
        nj.w = noise;
        nj.dir = sub;
        nj.has_noise = 0;
        nj.no_noise = NULL;
        if (mkdir(sub, 0777) != 0) {
            snprintf(j.why, sizeof j.why, "cannot create %s: %s", sub, strerror(errno));
            rc = 1;
        } else if (write_files(&nj)) {
            snprintf(j.why, sizeof j.why, "noise/: %s", nj.why);
            rc = 1;
        }
    }
    j.dir = tmp;
    if (!rc)
        rc = write_files(&j);
    if (!rc && rename(tmp, target) != 0) {
        /* Not "rename TMP to DIR": the line below names paths under TMP
         * by DIR, which would make it "rename DIR to DIR". */
        snprintf(j.why, sizeof j.why, "cannot move the dump's temporary folder to %s: %s", target,
                 strerror(errno));
        rc = 1;
    }
    if (rc) {
        /* The reason names the file by the folder asked for: its
         * temporary (DIR.tmp.PID) is removed here, and a name that no
         * longer exists would say nothing to the reader. */
        const char *at = strstr(j.why, tmp);
        if (at)
            snprintf(why, n, "%.*s%s%s; nothing of it kept", (int)(at - j.why), j.why, target,
                     at + strlen(tmp));
        else
            snprintf(why, n, "%s; nothing of it kept", j.why);
        remove_tree(tmp);
    }
    free(j.tensors);
    return rc ? -1 : 0;
}
