/* The NVTX ranges nest as documented (harness/ranges.h): one domain named
 * "accubench", run > config > step > micro > forward, backward, and one
 * optimizer inside each step after its last micro.
 *
 * The ranges are observed the way a profiler sees them: through the NVTX3
 * injection protocol. NVTX_INJECTION64_PATH names the recorder library
 * (tests/libnvtx_recorder.c, built into $ACCUBENCH_TEST_HELPERS); the first
 * NVTX call loads it; the test then reaches the same loaded instance with
 * dlopen(RTLD_NOLOAD) and reads back the pushes and pops the real step code
 * made on the CPU backend, for splits of 16 into 1, 4 and 6 micro-batches
 * (the last one smaller). The checker itself is checked too: broken copies
 * of the recorded stream must fail it.
 *
 * Skips (returns 0) when NVTX is compiled out or the recorder is missing. */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dataset.h"
#include "model.h"
#include "split.h"
#include "ranges.h"
#include "step.h"
#include "test_spec.h"

#ifdef ACCUBENCH_HAVE_NVTX
#define DOMAIN "accubench"
#define EFFECTIVE 16
#define STEPS 3
#define N_SPLITS 3
static const int micros[N_SPLITS] = {16, 4, 3};
static const int expect_accum[N_SPLITS] = {1, 4, 6};

typedef struct ev {
    int push;
    const char *name;   /* push: the message */
    const char *domain;
} ev;

/* ------------------------------------------------------------ checker */

typedef struct checker {
    int problems;
    int verbose;
} checker;

static void problem(checker *c, int at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem(checker *c, int at, const char *fmt, ...)
{
    c->problems++;
    if (!c->verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  nesting: event %d: ", at);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* The ranges as a tree: node 0 is a virtual root; node k > 0 is the k-th
 * push, at event at[k], with its children linked in order. */
typedef struct tree {
    int n;
    const char **name;
    int *at, *parent, *first, *last, *next;
} tree;

static void tree_free(tree *t)
{
    free(t->name);
    free(t->at);
    free(t->parent);
    free(t->first);
    free(t->last);
    free(t->next);
}

static int is_config(const char *name)
{
    return strncmp(name, "config ", 7) == 0;
}

/* Where a range of this name belongs: the name its parent must have
 * ("" = top level, "config" = any "config ..." range); NULL for a name
 * that is no accubench range. */
static const char *expected_parent(const char *name)
{
    static const char *const rules[][2] = {
        {"run", ""},         {"step", "config"},   {"micro", "step"},
        {"optimizer", "step"}, {"forward", "micro"}, {"backward", "micro"},
    };
    if (is_config(name))
        return "run";
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (strcmp(name, rules[i][0]) == 0)
            return rules[i][1];
    return NULL;
}

static int parent_matches(const char *parent, const char *want)
{
    return strcmp(want, "config") == 0 ? is_config(parent) : strcmp(parent, want) == 0;
}

/* "micro,micro,optimizer": the children of node k, for messages. */
static const char *children_list(const tree *t, int k, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int c = t->first[k]; c >= 0 && used < len; c = t->next[c]) {
        int w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", t->name[c]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf[0] ? buf : "(none)";
}

static int count_children(const tree *t, int k)
{
    int n = 0;
    for (int c = t->first[k]; c >= 0; c = t->next[c])
        n++;
    return n;
}

/* Checks the stream against the documented nesting for n_configs configs,
 * config i stepping `steps` times with accum[i] micro-batches a step.
 * Returns the number of problems found (each printed when verbose). */
static int check_stream(const ev *e, int n, int n_configs, const int *accum, int steps,
                        int verbose)
{
    checker c = {0, verbose};
    tree t = {0};
    int *stack = malloc(((size_t)n + 1) * sizeof *stack);
    t.name = malloc(((size_t)n + 1) * sizeof *t.name);
    t.at = malloc(((size_t)n + 1) * sizeof *t.at);
    t.parent = malloc(((size_t)n + 1) * sizeof *t.parent);
    t.first = malloc(((size_t)n + 1) * sizeof *t.first);
    t.last = malloc(((size_t)n + 1) * sizeof *t.last);
    t.next = malloc(((size_t)n + 1) * sizeof *t.next);
    if (!stack || !t.name || !t.at || !t.parent || !t.first || !t.last || !t.next) {
        problem(&c, 0, "out of memory");
        free(stack);
        tree_free(&t);
        return c.problems;
    }
    t.name[0] = "";
    t.at[0] = -1;
    t.parent[0] = -1;
    t.first[0] = t.last[0] = t.next[0] = -1;
    t.n = 1;

    /* One domain; every pop closes an open range; nothing left open. */
    int depth = 0;
    stack[0] = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(e[i].domain, DOMAIN) != 0)
            problem(&c, i, "%s in domain \"%s\", not \"" DOMAIN "\"",
                    e[i].push ? e[i].name : "pop", e[i].domain);
        if (!e[i].push) {
            if (depth == 0)
                problem(&c, i, "pop with no range open");
            else
                depth--;
            continue;
        }
        int k = t.n++, p = stack[depth];
        t.name[k] = e[i].name;
        t.at[k] = i;
        t.parent[k] = p;
        t.first[k] = t.last[k] = t.next[k] = -1;
        if (t.last[p] >= 0)
            t.next[t.last[p]] = k;
        else
            t.first[p] = k;
        t.last[p] = k;
        stack[++depth] = k;
    }
    if (depth != 0)
        problem(&c, n, "%d range(s) still open at the end, innermost \"%s\"", depth,
                t.name[stack[depth]]);

    /* Every range under the parent its name calls for. */
    for (int k = 1; k < t.n; k++) {
        const char *want = expected_parent(t.name[k]);
        const char *got = t.name[t.parent[k]];
        if (!want)
            problem(&c, t.at[k], "unexpected range \"%s\"", t.name[k]);
        else if (!parent_matches(got, want))
            problem(&c, t.at[k], "\"%s\" inside \"%s\", expected inside \"%s\"", t.name[k],
                    t.parent[k] ? got : "(top level)", *want ? want : "(top level)");
    }

    /* The shape: one run; its configs; their steps; K micros then one
     * optimizer per step; forward then backward per micro. */
    char buf[256];
    if (count_children(&t, 0) != 1 || strcmp(t.name[t.first[0]], "run") != 0) {
        problem(&c, 0, "top level holds %s, expected exactly one run",
                children_list(&t, 0, buf, sizeof buf));
    } else {
        int run = t.first[0], ci = 0;
        if (count_children(&t, run) != n_configs)
            problem(&c, t.at[run], "run holds %d ranges, expected %d configs",
                    count_children(&t, run), n_configs);
        for (int cf = t.first[run]; cf >= 0; cf = t.next[cf], ci++) {
            if (!is_config(t.name[cf]) || ci >= n_configs)
                continue; /* reported above */
            if (count_children(&t, cf) != steps)
                problem(&c, t.at[cf], "\"%s\" holds %d ranges, expected %d steps", t.name[cf],
                        count_children(&t, cf), steps);
            for (int st = t.first[cf]; st >= 0; st = t.next[st]) {
                if (strcmp(t.name[st], "step") != 0)
                    continue;
                int micro_count = 0, ch = t.first[st];
                for (; ch >= 0 && strcmp(t.name[ch], "micro") == 0; ch = t.next[ch]) {
                    micro_count++;
                    int f = t.first[ch], bw = f >= 0 ? t.next[f] : -1;
                    if (f < 0 || bw < 0 || t.next[bw] >= 0 || strcmp(t.name[f], "forward") ||
                        strcmp(t.name[bw], "backward"))
                        problem(&c, t.at[ch], "micro holds %s, expected forward,backward",
                                children_list(&t, ch, buf, sizeof buf));
                }
                int optimizer_last = ch >= 0 && strcmp(t.name[ch], "optimizer") == 0 &&
                                     t.next[ch] < 0;
                if (micro_count != accum[ci] || !optimizer_last)
                    problem(&c, t.at[st], "step in \"%s\" holds %s, expected %d micro then "
                            "optimizer", t.name[cf], children_list(&t, st, buf, sizeof buf),
                            accum[ci]);
            }
        }
    }
    free(stack);
    tree_free(&t);
    return c.problems;
}

/* The pop that closes the push at event i (-1 if none). */
static int matching_pop(const ev *e, int n, int i)
{
    int depth = 0;
    for (int j = i; j < n; j++) {
        depth += e[j].push ? 1 : -1;
        if (depth == 0)
            return j;
    }
    return -1;
}

/* The first push of `name` at or after event `from` (-1 if none). */
static int find_push(const ev *e, int n, int from, const char *name)
{
    for (int i = from; i < n; i++)
        if (e[i].push && strcmp(e[i].name, name) == 0)
            return i;
    return -1;
}

/* Copies the stream without events a and b (b < 0: only a). */
static int without(const ev *e, int n, int a, int b, ev *out)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (i != a && i != b)
            out[m++] = e[i];
    return m;
}

/* Broken versions of a good stream must not pass. */
static void check_the_checker(const ev *e, int n)
{
    ev *bad = malloc((size_t)n * sizeof *bad);
    if (!bad) {
        CHECK(!"out of memory");
        return;
    }
    int m, i, j;

    /* The pop of a micro range lost: the next micro nests inside it. */
    i = find_push(e, n, 0, "micro");
    j = matching_pop(e, n, i);
    CHECK(i >= 0 && j > i);
    m = without(e, n, j, -1, bad);
    CHECK(check_stream(bad, m, N_SPLITS, expect_accum, STEPS, 0) > 0);

    /* A micro range missing altogether: forward/backward land in the step. */
    i = find_push(e, n, find_push(e, n, 0, "step"), "micro");
    j = matching_pop(e, n, i);
    m = without(e, n, i, j, bad);
    CHECK(check_stream(bad, m, N_SPLITS, expect_accum, STEPS, 0) > 0);

    /* The optimizer range missing from the last step. */
    for (i = n - 1; i >= 0 && !(e[i].push && strcmp(e[i].name, "optimizer") == 0); i--)
        ;
    j = i >= 0 ? matching_pop(e, n, i) : -1;
    CHECK(i >= 0 && j > i);
    m = without(e, n, i, j, bad);
    CHECK(check_stream(bad, m, N_SPLITS, expect_accum, STEPS, 0) > 0);

    /* Backward before forward. */
    memcpy(bad, e, (size_t)n * sizeof *bad);
    i = find_push(bad, n, 0, "forward");
    j = find_push(bad, n, i, "backward");
    CHECK(i >= 0 && j > i);
    bad[i].name = "backward";
    bad[j].name = "forward";
    CHECK(check_stream(bad, n, N_SPLITS, expect_accum, STEPS, 0) > 0);

    /* One range in another domain. */
    memcpy(bad, e, (size_t)n * sizeof *bad);
    bad[find_push(bad, n, 0, "step")].domain = "other";
    CHECK(check_stream(bad, n, N_SPLITS, expect_accum, STEPS, 0) > 0);

    /* The stream cut short: ranges left open. */
    CHECK(check_stream(e, n - 1, N_SPLITS, expect_accum, STEPS, 0) > 0);

    /* A different accumulation count than the step really ran. */
    int wrong[N_SPLITS] = {1, 4, 5};
    CHECK(check_stream(e, n, N_SPLITS, wrong, STEPS, 0) > 0);

    free(bad);
}

/* ------------------------------------------------------- the real run */

typedef int (*count_fn)(void);
typedef const char *(*event_fn)(int, int *, const char **);
typedef void (*reset_fn)(void);

static void drive_steps(void)
{
    char why[320];
    backend *b = NULL;
    int rc = cpu_backend_create(DTYPE_FP32, &b, why, sizeof why);
    CHECK(rc == BK_OK);
    if (rc) {
        fprintf(stderr, "cpu backend: %s\n", why);
        return;
    }
    model_spec tiny = test_spec("tiny"), *p = &tiny;
    input_spec in;
    model_input(p, &in);
    optimizer_config opt = {OPT_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, OPT_AT_STEP};
    model m;
    dataset d;
    if ((rc = model_create(b, p, &opt, 7, &m)) != BK_OK) {
        CHECK(!"model_create");
        b->ops->destroy(b);
        return;
    }
    if ((rc = dataset_create(b, &in, EFFECTIVE, 2, 7, &d)) != BK_OK) {
        CHECK(!"dataset_create");
        model_destroy(&m);
        b->ops->destroy(b);
        return;
    }

    for (int i = 0; i < N_SPLITS; i++) {
        split sp;
        CHECK(split_make(EFFECTIVE, micros[i], 1, &sp, why, sizeof why) == 0);
        CHECK(sp.accum == expect_accum[i]);
        if (EFFECTIVE % micros[i])
            CHECK(sp.last < sp.micro); /* 16 = 5 x 3 + 1 */
        char name[160];
        snprintf(name, sizeof name, "config %s %s %dx%d %s %s", p->name,
                 dtype_name(DTYPE_FP32), sp.micro, sp.accum, mode_name(MODE_ASYNC),
                 reduction_name(REDUCTION_SUM));
        range_push(name);
        step_runner run;
        rc = step_runner_init(&run, &m, &d, &sp, MODE_ASYNC, REDUCTION_SUM);
        CHECK(rc == BK_OK);
        if (rc == BK_OK) {
            for (int s = 0; s < STEPS; s++)
                CHECK(step_run(&run) == BK_OK);
            CHECK(b->ops->sync(b) == BK_OK);
            step_runner_free(&run);
        } else {
            fprintf(stderr, "step_runner_init: %s\n", b->error);
        }
        range_pop();
    }
    dataset_destroy(&d);
    model_destroy(&m);
    b->ops->destroy(b);
}

static void summarise(const ev *e, int n)
{
    static const char *const names[] = {"run", "config", "step", "micro",
                                        "forward", "backward", "optimizer"};
    printf("test_nvtx_ranges: %d events:", n);
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        int count = 0;
        for (int i = 0; i < n; i++)
            if (e[i].push && (k == 1 ? is_config(e[i].name) : strcmp(e[i].name, names[k]) == 0))
                count++;
        printf(" %s %d", names[k], count);
    }
    printf("\n");
}
#endif

int main(void)
{
#ifndef ACCUBENCH_HAVE_NVTX
    printf("SKIP test_nvtx_ranges: NVTX compiled out (no ACCUBENCH_HAVE_NVTX)\n");
    return 0;
#else
    const char *dir = getenv("ACCUBENCH_TEST_HELPERS");
    char rel[PATH_MAX], path[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/libnvtx_recorder.so", dir && *dir ? dir : "build/tests");
    if (!realpath(rel, path)) {
        printf("SKIP test_nvtx_ranges: no recorder at %s\n", rel);
        return 0;
    }
    /* Before the first NVTX call: NVTX initialises once per process. */
    if (setenv("NVTX_INJECTION64_PATH", path, 1) != 0) {
        CHECK(!"setenv");
        return check_finish("test_nvtx_ranges");
    }

    range_push("run"); /* the first NVTX call: the loader loads the recorder */

    /* RTLD_NOLOAD: only the instance the NVTX loader already holds. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!lib) {
        fprintf(stderr, "the NVTX loader did not load %s (%s)\n", path, dlerror());
        CHECK(lib != NULL);
        range_pop();
        return check_finish("test_nvtx_ranges");
    }
    count_fn attached = (count_fn)dlsym(lib, "nvtx_recorder_attached");
    count_fn count = (count_fn)dlsym(lib, "nvtx_recorder_count");
    event_fn event = (event_fn)dlsym(lib, "nvtx_recorder_event");
    reset_fn reset = (reset_fn)dlsym(lib, "nvtx_recorder_reset");
    CHECK(attached && count && event && reset);
    if (!(attached && count && event && reset)) {
        range_pop();
        dlclose(lib);
        return check_finish("test_nvtx_ranges");
    }
    CHECK(attached() == 1);

    drive_steps();
    range_pop();

    int n = count();
    ev *e = calloc(n > 0 ? (size_t)n : 1, sizeof *e);
    CHECK(e != NULL);
    if (e) {
        for (int i = 0; i < n; i++) {
            e[i].name = event(i, &e[i].push, &e[i].domain);
            CHECK(e[i].name != NULL);
            if (!e[i].name)
                e[i].name = "";
        }
        summarise(e, n);
        /* 1 run, 3 configs, 9 steps, 33 micro, 33 forward, 33 backward, 9
         * optimizer: 121 ranges, pushed and popped. */
        CHECK(n == 2 * (1 + N_SPLITS + N_SPLITS * STEPS + 3 * STEPS * (1 + 4 + 6) +
                        N_SPLITS * STEPS));
        CHECK(check_stream(e, n, N_SPLITS, expect_accum, STEPS, 1) == 0);
        if (n > 0)
            check_the_checker(e, n);
        CHECK(event(n, NULL, NULL) == NULL);
    }
    free(e);
    reset();
    CHECK(count() == 0);
    dlclose(lib);
    return check_finish("test_nvtx_ranges");
#endif
}
