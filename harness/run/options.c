#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dedupe.h"
#include "noise_pass.h"
#include "parse.h"
#include "registry.h"
#include "repo_path.h"

/* The largest batch anyone should ask of one device; also keeps every
 * product of sizes inside an int. */
#define MAX_BATCH (1 << 20)

void options_defaults(run_options *o)
{
    memset(o, 0, sizeof *o);
    o->effective[0] = 64;
    o->n_effective = 1;
    o->micro_pow2 = 1;
    model_spec_parse("S", &o->models[0], NULL, 0);
    o->n_models = 1;
    o->dtype = DTYPE_AUTO;
    o->modes[0] = MODE_ASYNC;
    o->n_modes = 1;
    o->reductions[0] = REDUCTION_SUM;
    o->n_reductions = 1;
    o->optimizer = (optimizer_config){OPT_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, OPT_AT_STEP};
    o->optimizer_at_auto = 1;
    snprintf(o->backend, sizeof o->backend, "auto");
    o->warmup = 2;
    o->min_samples = 5;
    o->max_samples = 1000;
    o->budget_s = 2.0;
    o->max_noise_pct = 2.0;
    o->max_step_s = 10.0;
    o->seed = 1;
    o->buffers = 3;
    snprintf(o->out_dir, sizeof o->out_dir, "results");
    o->trace_steps = 3;
    o->noise_windows = NOISE_WINDOWS_DEFAULT;
    o->syncs[0] = SYNC_WINDOW;
    o->n_syncs = 1;
}

static int set_int(const char *key, const char *v, long long min, long long max, int *out,
                   char *why, size_t n)
{
    long long x;
    if (parse_int(key, v, min, max, &x, why, n))
        return -1;
    *out = (int)x;
    return 0;
}

static int set_path(const char *key, const char *v, char *out, size_t cap, char *why, size_t n)
{
    if (!*v || strlen(v) >= cap) {
        snprintf(why, n, "%s needs a path of 1 to %zu characters, got '%s'", key, cap - 1, v);
        return -1;
    }
    snprintf(out, cap, "%s", v);
    return 0;
}

/* Parses a comma list with one callback per item. */
typedef int (*item_fn)(run_options *o, const char *key, const char *item, char *why, size_t n);

static int each_item(run_options *o, const char *key, const char *value, item_fn fn, char *why,
                     size_t n)
{
    char *copy = strdup(value), *items[OPT_MAX_LIST]; /* whole, however long */
    if (!copy) {
        snprintf(why, n, "%s: out of memory", key);
        return -1;
    }
    int count = split_list(key, copy, items, OPT_MAX_LIST, why, n), rc = count < 0 ? -1 : 0;
    for (int i = 0; i < count && !rc; i++)
        rc = fn(o, key, items[i], why, n);
    free(copy);
    return rc;
}

/* A list option's entries named twice run once (dedupe.h); the note says
 * so, once per option. */
static void dedupe_list(run_options *o, const char *key, const char *value, void *items,
                        int *count, size_t size, int (*same)(const void *, const void *))
{
    int kept = dedupe_keep_first(items, *count, size, same);
    if (kept < *count) {
        size_t used = strlen(o->note);
        snprintf(o->note + used, sizeof o->note - used, "%s--%s '%s' names an entry more than "
                 "once: each runs once", used ? "; " : "", key, value);
    }
    *count = kept;
}

static int same_mode(const void *a, const void *b)
{
    return *(const exec_mode *)a == *(const exec_mode *)b;
}

static int same_reduction(const void *a, const void *b)
{
    return *(const reduction *)a == *(const reduction *)b;
}

/* The same model is the same kind and shape, however it was spelled. */
static int same_model(const void *a, const void *b)
{
    const model_spec *x = a, *y = b;
    return x->kind == y->kind && !memcmp(x->dims, y->dims, sizeof x->dims);
}

static int add_effective(run_options *o, const char *key, const char *item, char *why, size_t n)
{
    return set_int(key, item, 1, MAX_BATCH, &o->effective[o->n_effective++], why, n);
}

static int add_micro(run_options *o, const char *key, const char *item, char *why, size_t n)
{
    if (strcmp(item, "pow2") == 0) {
        o->micro_pow2 = 1;
        return 0;
    }
    return set_int(key, item, 1, MAX_BATCH, &o->micro[o->n_micro++], why, n);
}

static int add_mode(run_options *o, const char *key, const char *item, char *why, size_t n)
{
    exec_mode m;
    if (mode_parse(item, &m)) {
        snprintf(why, n, "unknown %s '%s' (known: %s)", key, item, mode_names());
        return -1;
    }
    o->modes[o->n_modes++] = m;
    return 0;
}

static int add_reduction(run_options *o, const char *key, const char *item, char *why, size_t n)
{
    reduction r;
    if (reduction_parse(item, &r)) {
        snprintf(why, n, "unknown %s '%s' (known: %s)", key, item, reduction_names());
        return -1;
    }
    o->reductions[o->n_reductions++] = r;
    return 0;
}

/* The most ranks one run may span. */
#define MAX_DEVICES 4096

static int add_devices(run_options *o, const char *key, const char *item, char *why, size_t n)
{
    int d;
    if (set_int(key, item, 1, MAX_DEVICES, &d, why, n))
        return -1;
    for (int i = 0; i < o->n_devices; i++)
        if (o->devices[i] == d)
            return 0;
    o->devices[o->n_devices++] = d;
    return 0;
}

static int add_sync(run_options *o, const char *key, const char *item, char *why, size_t n)
{
    sync_mode m;
    if (sync_parse(item, &m)) {
        snprintf(why, n, "unknown %s '%s' (known: %s)", key, item, sync_names());
        return -1;
    }
    for (int i = 0; i < o->n_syncs; i++)
        if (o->syncs[i] == m)
            return 0;
    o->syncs[o->n_syncs++] = m;
    return 0;
}

int options_is_flag(const char *key)
{
    return strcmp(key, "no-cupti") == 0 || strcmp(key, "quiet") == 0 ||
           strcmp(key, "find-max-micro") == 0;
}

int options_set(run_options *o, const char *key, const char *value, char *why, size_t n)
{
    if (strcmp(key, "no-cupti") == 0 || strcmp(key, "quiet") == 0) {
        int on = value == NULL || strcmp(value, "1") == 0 || strcmp(value, "yes") == 0 ||
                 strcmp(value, "true") == 0;
        if (!on && value && strcmp(value, "0") && strcmp(value, "no") && strcmp(value, "false")) {
            snprintf(why, n, "%s takes yes or no, got '%s'", key, value);
            return -1;
        }
        *(key[0] == 'n' ? &o->no_cupti : &o->quiet) = on;
        return 0;
    }
    if (!value) {
        snprintf(why, n, "--%s needs a value", key);
        return -1;
    }
    if (strcmp(key, "effective") == 0) {
        o->n_effective = 0;
        if (each_item(o, key, value, add_effective, why, n))
            return -1;
        dedupe_list(o, key, value, o->effective, &o->n_effective, sizeof o->effective[0],
                    dedupe_same_int);
        return 0;
    }
    if (strcmp(key, "micro") == 0) {
        o->n_micro = 0;
        o->micro_pow2 = 0;
        if (each_item(o, key, value, add_micro, why, n))
            return -1;
        dedupe_list(o, key, value, o->micro, &o->n_micro, sizeof o->micro[0], dedupe_same_int);
        return 0;
    }
    if (strcmp(key, "model") == 0) {
        model_spec models[OPT_MAX_LIST]; /* the old list stays if the new one is refused */
        int count = model_spec_list_parse(value, models, OPT_MAX_LIST, why, n);
        if (count < 0)
            return -1;
        memcpy(o->models, models, (size_t)count * sizeof models[0]);
        o->n_models = count;
        dedupe_list(o, key, value, o->models, &o->n_models, sizeof o->models[0], same_model);
        return 0;
    }
    if (strcmp(key, "mode") == 0) {
        o->n_modes = 0;
        if (each_item(o, key, value, add_mode, why, n))
            return -1;
        dedupe_list(o, key, value, o->modes, &o->n_modes, sizeof o->modes[0], same_mode);
        return 0;
    }
    if (strcmp(key, "devices") == 0) {
        o->n_devices = 0;
        return each_item(o, key, value, add_devices, why, n);
    }
    if (strcmp(key, "sync") == 0) {
        o->n_syncs = 0;
        return each_item(o, key, value, add_sync, why, n);
    }
    if (strcmp(key, "reduction") == 0) {
        o->n_reductions = 0;
        if (each_item(o, key, value, add_reduction, why, n))
            return -1;
        dedupe_list(o, key, value, o->reductions, &o->n_reductions, sizeof o->reductions[0],
                    same_reduction);
        return 0;
    }
    if (strcmp(key, "dtype") == 0) {
        if (dtype_parse(value, &o->dtype) == 0)
            return 0;
        if (strcmp(value, dtype_name(DTYPE_AUTO)) == 0) {
            o->dtype = DTYPE_AUTO;
            return 0;
        }
        snprintf(why, n, "unknown dtype '%s' (known: %s, %s)", value, dtype_name(DTYPE_AUTO),
                 dtype_names());
        return -1;
    }
    if (strcmp(key, "optimizer") == 0) {
        if (optimizer_parse(value, &o->optimizer.kind) == 0)
            return 0;
        snprintf(why, n, "unknown optimizer '%s' (known: %s)", value, optimizer_names());
        return -1;
    }
    if (strcmp(key, "optimizer-at") == 0) {
        o->optimizer_at_auto = strcmp(value, "auto") == 0;
        if (o->optimizer_at_auto || optimizer_at_parse(value, &o->optimizer.at) == 0)
            return 0;
        snprintf(why, n, "unknown optimizer-at '%s' (known: auto, %s)", value,
                 optimizer_at_names());
        return -1;
    }
    if (strcmp(key, "backend") == 0) {
        /* The program knows which backends it has and checks the name. */
        if (strlen(value) >= sizeof o->backend) {
            snprintf(why, n, "unknown backend '%s'", value);
            return -1;
        }
        snprintf(o->backend, sizeof o->backend, "%s", value);
        return 0;
    }
    if (strcmp(key, "lr") == 0) {
        double lr;
        if (parse_real(key, value, 0, 10, &lr, why, n))
            return -1;
        o->optimizer.lr = (float)lr;
        return 0;
    }
    if (strcmp(key, "steps") == 0)
        return set_int(key, value, 1, 1000000, &o->steps, why, n);
    if (strcmp(key, "warmup") == 0)
        return set_int(key, value, 0, 10000, &o->warmup, why, n);
    if (strcmp(key, "min-samples") == 0)
        return set_int(key, value, 1, 1000000, &o->min_samples, why, n);
    if (strcmp(key, "max-samples") == 0)
        return set_int(key, value, 1, 1000000, &o->max_samples, why, n);
    if (strcmp(key, "budget-s") == 0)
        return parse_real(key, value, 0.001, 86400, &o->budget_s, why, n);
    if (strcmp(key, "max-step-s") == 0)
        return parse_real(key, value, 0.001, 86400, &o->max_step_s, why, n);
    if (strcmp(key, "max-noise") == 0)
        return parse_real(key, value, 0.001, 100, &o->max_noise_pct, why, n);
    if (strcmp(key, "seed") == 0) {
        long long s;
        if (parse_int(key, value, 0, LLONG_MAX, &s, why, n))
            return -1;
        o->seed = (uint64_t)s;
        return 0;
    }
    if (strcmp(key, "buffers") == 0)
        return set_int(key, value, 1, DATASET_MAX_BUFFERS, &o->buffers, why, n);
    if (strcmp(key, "mem-cap") == 0)
        return parse_bytes(key, value, &o->mem_cap, why, n);
    if (strcmp(key, "out") == 0)
        return set_path(key, value, o->out_dir, sizeof o->out_dir, why, n);
    if (strcmp(key, "csv") == 0)
        return set_path(key, value, o->csv_path, sizeof o->csv_path, why, n);
    if (strcmp(key, "trace") == 0)
        return set_path(key, value, o->trace_path, sizeof o->trace_path, why, n);
    if (strcmp(key, "dump") == 0)
        return set_path(key, value, o->dump_dir, sizeof o->dump_dir, why, n);
    if (strcmp(key, "trace-steps") == 0)
        return set_int(key, value, 0, 1000, &o->trace_steps, why, n);
    if (strcmp(key, "noise-windows") == 0 && strcmp(value, "1") == 0) {
        snprintf(why, n, "noise-windows needs 0 (none) or 2 and more windows, got 1");
        return -1; /* one window has no spread to estimate from */
    }
    if (strcmp(key, "noise-windows") == 0)
        return set_int(key, value, 0, 100000, &o->noise_windows, why, n);
    if (strcmp(key, "train-steps") == 0)
        return set_int(key, value, 0, 1000000, &o->train_steps, why, n);
    snprintf(why, n, "unknown option '%s'", key);
    return -1;
}

static int find_profile(const char *name, const char *argv0, char *path, size_t cap)
{
    if (strchr(name, '/') || strstr(name, ".profile")) {
        snprintf(path, cap, "%s", name);
        return access(path, R_OK) == 0 ? 0 : -1;
    }
    char rel[1100];
    snprintf(rel, sizeof rel, "profiles/%s.profile", name);
    return repo_path_find(rel, argv0, path, cap);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
        *--end = '\0';
    return s;
}

/* A profile is a regular file: a directory, a device (/dev/zero) or a FIFO
 * is refused before a byte is read, and opening never waits for a writer. */
static FILE *open_profile(const char *path, char *why, size_t n)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(why, n, "cannot read profile %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, n, "profile %s is not a regular file (%s)", path,
                 S_ISDIR(st.st_mode)    ? "a directory"
                 : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                              : "not a plain file");
        close(fd);
        return NULL;
    }
    /* reads block as usual from here on */
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
        snprintf(why, n, "cannot read profile %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(why, n, "cannot read profile %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int options_load_profile(run_options *o, const char *name, const char *argv0, char *why,
                         size_t n)
{
    char path[1200];
    /* a longer name is refused, never cut to another file's name */
    if (strlen(name) >= sizeof o->profile) {
        snprintf(why, n, "profile name longer than %zu characters: '%.60s...'",
                 sizeof o->profile - 1, name);
        return -1;
    }
    if (find_profile(name, argv0, path, sizeof path)) {
        snprintf(why, n, "unknown profile '%s' (no file %s)", name, path);
        return -1;
    }
    FILE *f = open_profile(path, why, n);
    if (!f)
        return -1;
    /* whole lines, however long: a line is never split into two settings */
    char *line = NULL, reason[300];
    size_t line_cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    while (!rc && (len = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        if (memchr(line, '\0', (size_t)len)) {
            snprintf(why, n, "%s:%d: a NUL byte in the line (not a text file?)", path, lineno);
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *text = trim(line);
        if (!*text)
            continue;
        char *eq = strchr(text, '=');
        if (!eq) {
            snprintf(why, n, "%s:%d: expected 'key = value'", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *key = trim(text), *value = trim(eq + 1);
        if (!*key || !*value) {
            snprintf(why, n, "%s:%d: expected 'key = value'", path, lineno);
            rc = -1;
        } else if (options_set(o, key, value, reason, sizeof reason)) {
            snprintf(why, n, "%s:%d: %s", path, lineno, reason);
            rc = -1;
        }
    }
    if (!rc && ferror(f)) {
        snprintf(why, n, "%s:%d: read error: %s", path, lineno + 1, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    if (!rc)
        snprintf(o->profile, sizeof o->profile, "%s", name);
    return rc;
}

int options_micro_list(const run_options *o, int e, int *out, int max)
{
    int n = 0;
    if (o->micro_pow2)
        for (int m = 1; m <= e && n < max; m *= 2)
            out[n++] = m;
    for (int i = 0; i < o->n_micro && n < max; i++) {
        int dup = 0;
        for (int j = 0; j < n; j++)
            dup |= out[j] == o->micro[i];
        if (!dup)
            out[n++] = o->micro[i];
    }
    /* ascending, so a sweep reads small to large */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

int options_validate(const run_options *o, char *why, size_t n)
{
    if (o->n_micro == 0 && !o->micro_pow2) {
        snprintf(why, n, "no micro-batch sizes given");
        return -1;
    }
    for (int i = 0; i < o->n_effective; i++)
        for (int j = 0; j < o->n_micro; j++)
            if (o->micro[j] > o->effective[i]) {
                snprintf(why, n, "micro-batch %d is larger than the effective batch %d",
                         o->micro[j], o->effective[i]);
                return -1;
            }
    if (o->min_samples > o->max_samples) {
        snprintf(why, n, "min-samples %d is more than max-samples %d", o->min_samples,
                 o->max_samples);
        return -1;
    }
    return 0;
}
