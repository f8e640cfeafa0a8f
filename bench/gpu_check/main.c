/* gpu-check: the CUDA backend against the CPU reference.
 *
 *   gpu-check [--dtype LIST] [--csv FILE [--replace]] [--device NAME] [--seed N] [--real-shapes]
 *             [--no-timer-check] | --help
 *
 * For each dtype, op by op on fresh random inputs (the GEMM in every
 * transpose, bias+GELU, GELU backward, the bias gradient, softmax
 * cross-entropy, AdamW, SGD, the bf16 conversion), then the model: one
 * forward and backward, and one accumulated window at several splits,
 * against the CPU's full-batch gradient, for the MLP and a small GPT; then the execution modes (sync,
 * graph, alloc, alloc-async) against async on the device itself, and the
 * memory probe through a real out-of-memory failure.
 *
 * Inputs are rounded to the device's storage first, so both sides compute
 * on the same numbers; the CPU computes in fp32. The error is the relative
 * L2 error ||device - cpu|| / ||cpu||; NaN never passes. Tolerances by
 * dtype: fp32 1e-5, tf32 1e-3, bf16 1e-2 for single ops; the model's
 * gradients pass through every layer twice, so tf32 and bf16 get five times
 * as much there. GEMM inputs are rounded to TF32 too in a tf32 run: the op
 * check then measures the GEMM, not the rounding, which the model check
 * shows.
 *
 * `--device cpu` checks a second CPU backend (fp32 or bf16) against the first:
 * the checking code itself, on a machine without a GPU.
 *
 * The device is a row of the program's backend table (backend_registry.c),
 * by default its first GPU backend.
 *
 * With --csv, the file is reserved first (an existing one only with
 * --replace, and only a gpu-check CSV) and rewritten whole after each
 * result: a run cut short (a stage timeout) keeps every row checked so
 * far, and a full disk never leaves half a line.
 *
 * Exit status: 0 all passed, 1 a check failed, 2 no usable device or bad
 * usage. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "attention_kind.h"
#include "backend_registry.h"
#include "cpu_backend.h"
#include "dedupe.h"
#include "gpu_check.h"
#include "io_setup.h"
#include "nearest.h"
#include "option_table.h"
#include "parse.h"
#include "plural.h"

/* Every check of one dtype on an open device (with `real`, only those at
 * GPT-2 small's sizes; without `timer`, no timer against the host clock). */
static void check_dtype(backend *cpu, backend *dev, dtype dt, unsigned long long seed,
                        const float *ref_grads, float ref_loss, size_t n_params, int real,
                        int timer)
{
    sides x = {.b = {cpu, dev}, .st = {STORAGE_F32, dev->compute_storage}, .dt = dt,
               .r = {seed * 0x9e3779b97f4a7c15ull + (uint64_t)dt}};
    if (real) {
        check_ops_real(&x);
        check_gpt_real(cpu, dev, dt);
        return;
    }
    check_ops(&x);
    check_model(dev, dt, ref_grads, ref_loss, n_params);
    check_gpt_model(cpu, dev, dt);
    check_llama_model(cpu, dev, dt);
    check_modes(dev, dt);
    if (timer)
        check_timing(dev, dt);
    /* The probe runs the device out of memory on purpose: never where that
     * memory is the host's. */
    if (!(dev->caps & BK_CAP_SHARES_HOST_MEMORY) && dt == DTYPE_BF16)
        check_probe(dev, dt);
    if (dev->mem_in_use) {
        char note[96];
        snprintf(note, sizeof note, "%zu bytes still allocated after the checks",
                 dev->mem_in_use);
        record("leak", dt, "", (double)dev->mem_in_use, 0, note);
    }
}

static int same_dtype(const void *a, const void *b)
{
    return *(const dtype *)a == *(const dtype *)b;
}

/* What the command line sets; each key is a row of CHECK_OPTIONS. */
typedef struct check_args {
    dtype dts[8];
    int n_dts;                   /* 0: every dtype */
    char csv[1024];
    const backend_entry *device; /* the program's first GPU backend by default */
    uint64_t seed;
    int real;                    /* --real-shapes */
    int replace;                 /* --replace */
    int no_timer;                /* --no-timer-check */
} check_args;

static int set_dtypes(void *target, const option_def *d, const char *value, char *why,
                      size_t n)
{
    check_args *c = target;
    char copy[256], *items[8];
    if (strlen(value) >= sizeof copy) { /* refused, never cut to fit */
        snprintf(why, n, "--%s list longer than %zu characters", d->key, sizeof copy - 1);
        return -1;
    }
    snprintf(copy, sizeof copy, "%s", value);
    int count = split_list(d->key, copy, items, 8, why, n);
    for (int i = 0; i < count; i++) {
        int found = axis_find(&dtype_axis, items[i]);
        if (found < 0) {
            char names[160];
            axis_names(&dtype_axis, names, sizeof names, ", ");
            snprintf(why, n, "unknown dtype '%s' (known: %s)", items[i], names);
            nearest_suggest(why, n, items[i], names);
            return -1;
        }
        c->dts[i] = (dtype)found;
    }
    c->n_dts = count < 0 ? 0 : count;
    return count < 0 ? -1 : 0;
}

static int set_device(void *target, const option_def *d, const char *value, char *why,
                      size_t n)
{
    check_args *c = target;
    c->device = backend_find(value);
    if (c->device)
        return 0;
    char names[128];
    backend_names(names, sizeof names, ", ", 0);
    snprintf(why, n, "unknown %s '%s' (known: %s)", d->key, value, names);
    nearest_suggest(why, n, value, names);
    return -1;
}

enum { TAG_DEVICE = 1 };

static const option_def CHECK_OPTIONS[] = {
    {.key = "dtype", .arg = "LIST", .type = OPTION_CUSTOM, .set = set_dtypes,
     .shown = "every dtype", .help = "dtypes to check, e.g. fp32,bf16"},
    {.key = "csv", .arg = "FILE", .type = OPTION_PATH, .offset = offsetof(check_args, csv),
     .size = sizeof(((check_args *)0)->csv), .help = "one row per check, written as each is checked"},
    {.key = "replace", .type = OPTION_FLAG, .offset = offsetof(check_args, replace),
     .def = "no", .shown = "", .help = "replace an existing gpu-check --csv, once the first "
     "check is done"},
    {.key = "device", .arg = "NAME", .type = OPTION_CUSTOM, .set = set_device, .tag = TAG_DEVICE,
     .help = "the backend checked against the CPU"},
    {.key = "seed", .arg = "N", .type = OPTION_U64, .offset = offsetof(check_args, seed),
     .min = 0, .max = LLONG_MAX, .def = "1", .help = "the random inputs' seed"},
    {.key = "real-shapes", .type = OPTION_FLAG, .offset = offsetof(check_args, real),
     .def = "no", .shown = "", .help = "only the checks at GPT-2 small's sizes (the ops, "
     "gpt-small at one sequence, a 12-layer GPT) against the CPU"},
    {.key = "no-timer-check", .type = OPTION_FLAG, .offset = offsetof(check_args, no_timer),
     .def = "no", .shown = "", .help = "leave out the device timer against the host clock "
     "(under a sanitizer or a profiler the host pays for every launch, and its clock runs "
     "long)"},
};
static const option_table check_table = {
    CHECK_OPTIONS, (int)(sizeof CHECK_OPTIONS / sizeof CHECK_OPTIONS[0])};

/* --device's default: the program's first GPU backend, from its table. */
static void device_default(const option_def *d, char *help, size_t help_len, char *shown,
                           size_t shown_len)
{
    (void)help;
    (void)help_len;
    const backend_entry *gpu = backend_first(1);
    if (d->tag == TAG_DEVICE)
        snprintf(shown, shown_len, "%s", gpu ? gpu->name : "none");
}

static void usage(FILE *f)
{
    char names[128];
    backend_names(names, sizeof names, "|", 0);
    fprintf(f, "usage: gpu-check [--dtype LIST] [--csv FILE [--replace]] [--device %s] [--seed N] "
               "[--real-shapes] [--no-timer-check]\n",
            names);
}

static void help(void)
{
    usage(stdout);
    printf("\n");
    option_usage(stdout, &check_table, device_default);
    printf("\nexit status: 0 all passed, 1 a check failed, 2 no usable device or bad usage\n");
}

/* 0: check; 1: --help answered; 2: bad usage, said on stderr. */
static int parse_check_args(int argc, char **argv, check_args *c)
{
    char why[320];
    args a;
    arg_kind kind;
    memset(c, 0, sizeof *c);
    c->device = backend_first(1);
    option_defaults(&check_table, c, why, sizeof why);
    args_init_table(&a, argc, argv, &check_table);
    while ((kind = args_next(&a, why, sizeof why)) != ARG_END) {
        if (kind == ARG_HELP) {
            help();
            return 1;
        }
        if (kind == ARG_POSITIONAL)
            snprintf(why, sizeof why, "unexpected argument '%s'", a.value);
        if (kind != ARG_OPTION ||
            option_set(&check_table, c, a.key, a.value, why, sizeof why)) {
            fprintf(stderr, "gpu-check: %s\n", why);
            return 2;
        }
    }
    if (!c->device) {
        fprintf(stderr, "gpu-check: this program has no GPU backend; --device names one\n");
        return 2;
    }
    if (c->n_dts == 0)
        for (int i = 0; i < DTYPE_COUNT; i++)
            c->dts[c->n_dts++] = (dtype)i;
    int kept = dedupe_keep_first(c->dts, c->n_dts, sizeof c->dts[0], same_dtype);
    if (kept < c->n_dts)
        fprintf(stderr, "gpu-check: note: --dtype names an entry more than once: each runs "
                        "once\n");
    c->n_dts = kept;
    return 0;
}

/* The device in dts, with its fused attention. Where the fused kernels
 * cannot be set up (their shared memory refused: the backend's start
 * fails), that is one failed check, and the device opens again on its
 * unfused path, so that every other check still runs; the attention
 * checks then run the unfused arrangement alone. Returns
 * backend_create's code. */
static int open_device(const backend_entry *device, dtype dt, backend **dev, char *why, size_t why_len)
{
    const char *var = device->attention_env;
    attention_kind asked;
    int rc = backend_create(device, dt, dev, why, why_len);
    if (rc == BK_OK || !var ||
        attention_from_env(var, device->attention_default, &asked, NULL, 0) ||
        asked != ATTENTION_FUSED)
        return rc;
    char fused_why[1024];
    snprintf(fused_why, sizeof fused_why, "%s", why);
    setenv(var, attention_name(ATTENTION_UNFUSED), 1);
    rc = backend_create(device, dt, dev, why, why_len);
    if (rc == BK_OK) /* the device is there: the fused start alone failed */
        record("open fused attention", dt, "", NAN, 0, fused_why);
    else
        setenv(var, attention_name(ATTENTION_FUSED), 1);
    return rc;
}

int main(int argc, char **argv)
{
    io_setup(); /* before the CSV's lock is opened */
    check_args c;
    char why[320];
    int parsed = parse_check_args(argc, argv, &c);
    if (parsed)
        return parsed == 1 ? 0 : 2;
    const char *csv = c.csv[0] ? c.csv : NULL;
    const backend_entry *device = c.device;
    const dtype *dts = c.dts;
    int n_dts = c.n_dts;
    unsigned long long seed = c.seed;
    int real = c.real;

    if (csv && check_results_open_csv(csv, c.replace, why, sizeof why)) {
        fprintf(stderr, "gpu-check: %s\n", why);
        return 2;
    }
    /* The device's fused attention in its table, whatever the default: the
     * checks run both arrangements themselves (the unfused one is that
     * table without the fused entries). */
    if (device->attention_env)
        setenv(device->attention_env, attention_name(ATTENTION_FUSED), 1);
    backend *cpu = NULL;
    if (cpu_backend_create(DTYPE_FP32, &cpu, why, sizeof why) != BK_OK) {
        fprintf(stderr, "gpu-check: %s\n", why);
        return 2;
    }
    float *ref_grads = NULL, ref_loss = 0;
    size_t n_params = 0;
    for (int i = 0; i < n_dts; i++) {
        backend *dev = NULL;
        int rc = open_device(device, dts[i], &dev, why, sizeof why);
        if (rc != BK_OK && i == 0) {
            /* No device at all: say so, nothing else to check. */
            fprintf(stderr, "gpu-check: %s\n", why);
            cpu->ops->destroy(cpu);
            return 2;
        }
        if (rc != BK_OK) {
            record("open", dts[i], "", NAN, 0, why);
            continue;
        }
        if (i == 0) {
            printf("gpu-check: %s (%s) against %s\n", dev->device, dev->library, cpu->device);
            if (!real && cpu_reference(cpu, &ref_grads, &ref_loss, &n_params) != BK_OK) {
                record("cpu reference", DTYPE_FP32, "", NAN, 0, cpu->error);
                dev->ops->destroy(dev);
                break;
            }
        }
        check_dtype(cpu, dev, dts[i], seed, ref_grads, ref_loss, n_params, real, !c.no_timer);
        dev->ops->destroy(dev);
    }
    cpu->ops->destroy(cpu);
    free(ref_grads);

    int failed = check_results_failed();
    printf("gpu-check: %d %s, %d failed\n", check_results_count(),
           plural(check_results_count(), "check", "checks"), failed);
    if (check_results_close_csv(why, sizeof why) != 0) {
        fprintf(stderr, "gpu-check: %s\n", why);
        return 1;
    }
    return failed ? 1 : 0;
}
