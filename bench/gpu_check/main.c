/* gpu-check: the CUDA backend against the CPU reference.
 *
 *   gpu-check [--dtype LIST] [--csv FILE] [--device NAME] [--seed N] | --help
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
 * `--device cpu` checks a second CPU backend against the first (fp32 only):
 * the checking code itself, on a machine without a GPU.
 *
 * The device is a row of the program's backend table (backend_registry.c),
 * by default its first GPU backend.
 *
 * With --csv, the file is written from the start and each result appended
 * as it is recorded: a run cut short (a stage timeout) keeps every row
 * checked so far.
 *
 * Exit status: 0 all passed, 1 a check failed, 2 no usable device or bad
 * usage. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "backend_registry.h"
#include "cpu_backend.h"
#include "dedupe.h"
#include "gpu_check.h"
#include "name_list.h"
#include "parse.h"

static void usage(FILE *f)
{
    char names[128];
    backend_names(names, sizeof names, "|", 0);
    fprintf(f, "usage: gpu-check [--dtype LIST] [--csv FILE] [--device %s] [--seed N]\n",
            names);
}

static int help(void)
{
    const backend_entry *gpu = backend_first(1);
    usage(stdout);
    printf("\n"
           "  --dtype LIST    dtypes to check, e.g. fp32,bf16 (default: every dtype)\n"
           "  --csv FILE      one row per check, written as each is checked\n"
           "  --device NAME   the backend checked against the CPU (default %s)\n"
           "  --seed N        the random inputs' seed (default 1)\n"
           "\n"
           "exit status: 0 all passed, 1 a check failed, 2 no usable device or bad usage\n",
           gpu ? gpu->name : "none");
    return 0;
}

/* Every check of one dtype on an open device. */
static void check_dtype(backend *cpu, backend *dev, dtype dt, unsigned long long seed,
                        const float *ref_grads, float ref_loss, size_t n_params)
{
    sides x = {.b = {cpu, dev}, .st = {STORAGE_F32, dev->compute_storage}, .dt = dt,
               .r = {seed * 0x9e3779b97f4a7c15ull + (uint64_t)dt}};
    check_ops(&x);
    check_model(dev, dt, ref_grads, ref_loss, n_params);
    check_gpt_model(cpu, dev, dt);
    check_modes(dev, dt);
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

static const char *dtype_at(int i) { return dtype_name((dtype)i); }

static int same_dtype(const void *a, const void *b)
{
    return *(const dtype *)a == *(const dtype *)b;
}

int main(int argc, char **argv)
{
    const char *csv = NULL;
    const backend_entry *device = backend_first(1);
    char list[64], why[320];
    unsigned long long seed = 1;
    args a;
    arg_kind kind;
    name_list(list, sizeof list, DTYPE_COUNT, dtype_at, ","); /* the default: every dtype */
    args_init(&a, argc, argv, NULL);
    while ((kind = args_next(&a, why, sizeof why)) != ARG_END) {
        if (kind == ARG_HELP)
            return help();
        const char *key = kind == ARG_OPTION ? a.key : "", *v = a.value;
        if (strcmp(key, "dtype") == 0) {
            if (strlen(v) >= sizeof list) { /* refused, never cut to fit */
                fprintf(stderr, "gpu-check: --dtype list longer than %zu characters\n",
                        sizeof list - 1);
                return 2;
            }
            snprintf(list, sizeof list, "%s", v);
        } else if (strcmp(key, "csv") == 0) {
            csv = v;
        } else if (strcmp(key, "device") == 0) {
            device = backend_find(v);
            if (!device) {
                char names[128];
                backend_names(names, sizeof names, ", ", 0);
                fprintf(stderr, "gpu-check: unknown device '%s' (known: %s)\n", v, names);
                return 2;
            }
        } else if (strcmp(key, "seed") == 0) {
            long long x;
            if (parse_int("seed", v, 0, LLONG_MAX, &x, why, sizeof why)) {
                fprintf(stderr, "gpu-check: %s\n", why);
                return 2;
            }
            seed = (unsigned long long)x;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!device) {
        fprintf(stderr, "gpu-check: this program has no GPU backend; --device names one\n");
        return 2;
    }
    dtype dts[8];
    int n_dts = 0;
    char given[sizeof list];
    snprintf(given, sizeof given, "%s", list);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        if (n_dts == (int)(sizeof dts / sizeof dts[0])) {
            fprintf(stderr, "gpu-check: --dtype names more than %zu dtypes\n",
                    sizeof dts / sizeof dts[0]);
            return 2;
        }
        int d;
        if (axis_parse(&dtype_axis, "dtype", name, &d, why, sizeof why)) {
            fprintf(stderr, "gpu-check: %s\n", why);
            return 2;
        }
        dts[n_dts] = (dtype)d;
        n_dts++;
    }
    int kept = dedupe_keep_first(dts, n_dts, sizeof dts[0], same_dtype);
    if (kept < n_dts)
        fprintf(stderr, "gpu-check: note: --dtype '%s' names an entry more than once: each "
                        "runs once\n", given);
    n_dts = kept;

    if (csv && check_results_open_csv(csv, why, sizeof why)) {
        fprintf(stderr, "gpu-check: %s\n", why);
        return 2;
    }
    backend *cpu = NULL;
    if (cpu_backend_create(DTYPE_FP32, &cpu, why, sizeof why) != BK_OK) {
        fprintf(stderr, "gpu-check: %s\n", why);
        return 2;
    }
    float *ref_grads = NULL, ref_loss = 0;
    size_t n_params = 0;
    for (int i = 0; i < n_dts; i++) {
        backend *dev = NULL;
        int rc = backend_create(device, dts[i], &dev, why, sizeof why);
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
            if (cpu_reference(cpu, &ref_grads, &ref_loss, &n_params) != BK_OK) {
                record("cpu reference", DTYPE_FP32, "", NAN, 0, cpu->error);
                dev->ops->destroy(dev);
                break;
            }
        }
        check_dtype(cpu, dev, dts[i], seed, ref_grads, ref_loss, n_params);
        dev->ops->destroy(dev);
    }
    cpu->ops->destroy(cpu);
    free(ref_grads);

    int failed = check_results_failed();
    printf("gpu-check: %d checks, %d failed\n", check_results_count(), failed);
    if (check_results_close_csv() != 0) {
        fprintf(stderr, "gpu-check: cannot write %s\n", csv);
        return 1;
    }
    return failed ? 1 : 0;
}
