/* Numbers, lists, profiles, the option table and the split arithmetic:
 * what the user types. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "test_files.h"
#include "options.h"
#include "parse.h"
#include "split.h"

static char why[600];

static void test_parse_int(void)
{
    long long v;
    CHECK(parse_int("steps", "42", 1, 100, &v, why, sizeof why) == 0 && v == 42);
    const char *bad[] = {"", "abc", "12x", "4.5", " 3", "0", "-1", "101",
                         "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(parse_int("steps", bad[i], 1, 100, &v, why, sizeof why) == -1);
        CHECK(strstr(why, "steps") != NULL); /* the message names the option */
    }
    double d;
    CHECK(parse_real("budget-s", "0.5", 0.001, 10, &d, why, sizeof why) == 0 && d == 0.5);
    CHECK(parse_real("budget-s", "nan", 0.001, 10, &d, why, sizeof why) == -1);
    CHECK(parse_real("budget-s", "1e999", 0.001, 10, &d, why, sizeof why) == -1);
    uint64_t bytes;
    CHECK(parse_bytes("mem-cap", "16G", &bytes, why, sizeof why) == 0 && bytes == 16ull << 30);
    CHECK(parse_bytes("mem-cap", "512k", &bytes, why, sizeof why) == 0 && bytes == 512ull << 10);
    CHECK(parse_bytes("mem-cap", "1000", &bytes, why, sizeof why) == 0 && bytes == 1000);
    CHECK(parse_bytes("mem-cap", "G", &bytes, why, sizeof why) == -1);
    CHECK(parse_bytes("mem-cap", "99999999999T", &bytes, why, sizeof why) == -1);
    CHECK(parse_bytes("mem-cap", "-4M", &bytes, why, sizeof why) == -1);
}

static void test_lists(void)
{
    char text[] = "1,2,pow2", *items[4];
    CHECK(split_list("micro", text, items, 4, why, sizeof why) == 3);
    CHECK(strcmp(items[2], "pow2") == 0);
    char empty[] = "1,,2";
    CHECK(split_list("micro", empty, items, 4, why, sizeof why) == -1);
    char many[] = "1,2,3,4,5";
    CHECK(split_list("micro", many, items, 4, why, sizeof why) == -1);
}

static void test_options(void)
{
    run_options o;
    options_defaults(&o);
    CHECK(options_set(&o, "micro", "pow2", why, sizeof why) == 0);
    CHECK(options_set(&o, "effective", "48", why, sizeof why) == 0);
    int micros[64];
    int n = options_micro_list(&o, 48, 48, micros, 64);
    /* 1..32 (64 > 48), and 48 itself: the split without accumulation */
    CHECK(n == 7 && micros[0] == 1 && micros[5] == 32 && micros[6] == 48);
    /* E a power of two: once */
    CHECK(options_micro_list(&o, 64, 64, micros, 64) == 7 && micros[6] == 64);
    /* over 3 devices the share, 22 of 64, is the largest: 22x1 has no
     * accumulation, and 32 and 64 fit no rank */
    n = options_micro_list(&o, 64, 22, micros, 64);
    CHECK(n == 6 && micros[4] == 16 && micros[5] == 22);
    /* a size named twice: two arms of one config (an A/A check), in order */
    CHECK(options_set(&o, "micro", "16,3,16", why, sizeof why) == 0);
    n = options_micro_list(&o, 48, 48, micros, 64);
    CHECK(n == 3 && micros[0] == 3 && micros[1] == 16 && micros[2] == 16);
    /* three times: refused, saying why */
    CHECK(options_set(&o, "micro", "16,16,16", why, sizeof why) == -1 &&
          strstr(why, "micro-batch 16 is named 3 times") && strstr(why, "A/A"));
    /* pow2's own 16 and a named 16 are one config */
    CHECK(options_set(&o, "micro", "pow2,16", why, sizeof why) == 0);
    n = options_micro_list(&o, 16, 16, micros, 64);
    CHECK(n == 5 && micros[4] == 16);
    CHECK(options_set(&o, "rounds", "auto", why, sizeof why) == 0 && o.rounds == ROUNDS_AUTO);
    CHECK(options_set(&o, "rounds", "off", why, sizeof why) == 0 && o.rounds == 0);
    CHECK(options_set(&o, "rounds", "12", why, sizeof why) == 0 && o.rounds == 12);
    CHECK(options_set(&o, "rounds", "0", why, sizeof why) == -1 && strstr(why, "--rounds"));
    CHECK(options_set(&o, "rounds", "-3", why, sizeof why) == -1);
    CHECK(options_set(&o, "rounds", "many", why, sizeof why) == -1 && strstr(why, "'many'"));
    CHECK(options_set(&o, "rounds", "41", why, sizeof why) == -1);
    CHECK(options_set(&o, "mode", "async,graph,alloc-async", why, sizeof why) == 0);
    CHECK(o.n_modes == 3 && o.modes[1] == MODE_GRAPH && o.modes[2] == MODE_ALLOC_ASYNC);
    CHECK(options_set(&o, "mode", "turbo", why, sizeof why) == -1 && strstr(why, "turbo"));
    CHECK(options_set(&o, "model", "S,XL", why, sizeof why) == 0 && o.n_models == 2);
    CHECK(options_set(&o, "model", "XXL", why, sizeof why) == -1 && strstr(why, "XXL"));
    CHECK(options_set(&o, "dtype", "fp16", why, sizeof why) == -1);
    /* auto is the default and can be asked for again after a named one */
    run_options fresh;
    options_defaults(&fresh);
    CHECK(fresh.n_dtypes == 1 && fresh.dtypes[0] == DTYPE_AUTO &&
          strcmp(dtype_name(fresh.dtypes[0]), "auto") == 0);
    CHECK(options_set(&o, "dtype", "bf16", why, sizeof why) == 0 && o.n_dtypes == 1 &&
          o.dtypes[0] == DTYPE_BF16);
    CHECK(options_set(&o, "dtype", "auto", why, sizeof why) == 0 && o.n_dtypes == 1 &&
          o.dtypes[0] == DTYPE_AUTO);
    /* a list is an axis: each in the order given, a name twice once */
    CHECK(options_set(&o, "dtype", "fp32,bf16", why, sizeof why) == 0 && o.n_dtypes == 2 &&
          o.dtypes[0] == DTYPE_FP32 && o.dtypes[1] == DTYPE_BF16);
    CHECK(options_set(&o, "dtype", "bf16,fp32,bf16", why, sizeof why) == 0 &&
          o.n_dtypes == 2 && o.dtypes[0] == DTYPE_BF16 && o.dtypes[1] == DTYPE_FP32);
    /* auto is one choice: in a list it is refused, saying so; the list before stays */
    CHECK(options_set(&o, "dtype", "fp32,auto", why, sizeof why) == -1 &&
          strstr(why, "stands alone") && o.n_dtypes == 2 && o.dtypes[0] == DTYPE_BF16);
    CHECK(options_set(&o, "dtype", "auto, bf16", why, sizeof why) == -1 &&
          strstr(why, "stands alone"));
    CHECK(options_set(&o, "dtype", "fp32,fp16", why, sizeof why) == -1 && strstr(why, "fp16"));
    CHECK(options_set(&o, "dtype", "autumn", why, sizeof why) == -1 &&
          !strstr(why, "stands alone"));
    /* any name is kept: the program checks it against its backend table */
    CHECK(options_set(&o, "backend", "tpu", why, sizeof why) == 0 && !strcmp(o.backend, "tpu"));
    CHECK(options_set(&o, "backend", "a-name-longer-than-any-backend-has", why, sizeof why) ==
          -1);
    CHECK(options_set(&o, "reduction", "mean-of-means,no-scale", why, sizeof why) == 0);
    CHECK(o.n_reductions == 2 && o.reductions[0] == REDUCTION_MEAN_OF_MEANS);
    CHECK(options_set(&o, "frobnicate", "1", why, sizeof why) == -1);
    CHECK(options_set(&o, "no-cupti", NULL, why, sizeof why) == 0 && o.no_cupti);
    CHECK(options_set(&o, "mem-cap", "2G", why, sizeof why) == 0 && o.mem_cap == 2ull << 30);
    /* micro > effective is refused when the sweep is checked */
    CHECK(options_set(&o, "micro", "64", why, sizeof why) == 0);
    CHECK(options_validate(&o, why, sizeof why) == -1 && strstr(why, "larger"));
    /* larger than one effective batch only: left out there, said once */
    char left[256];
    CHECK(options_set(&o, "effective", "8,32,16", why, sizeof why) == 0);
    CHECK(options_set(&o, "micro", "4,16,16", why, sizeof why) == 0);
    CHECK(options_validate(&o, why, sizeof why) == 0);
    n = options_micro_list(&o, 8, 8, micros, 64);
    CHECK(n == 1 && micros[0] == 4);
    CHECK(options_micro_list(&o, 16, 16, micros, 64) == 3);
    CHECK(options_micro_left_out(&o, left, sizeof left) == 1 &&
          !strcmp(left, "micro-batch 16 at effective batch 8 left out: larger than the batch, "
                        "no split of it"));
    CHECK(options_set(&o, "micro", "4,33", why, sizeof why) == 0);
    CHECK(options_validate(&o, why, sizeof why) == -1 &&
          strstr(why, "micro-batch 33 is larger than every effective batch (the largest is 32)"));
    CHECK(options_set(&o, "effective", "64", why, sizeof why) == 0);
    CHECK(options_micro_left_out(&o, left, sizeof left) == 0 && !left[0]);
    CHECK(options_set(&o, "mode", "sync", why, sizeof why) == 0 && o.n_modes == 1 &&
          o.modes[0] == MODE_SYNC && strcmp(mode_name(o.modes[0]), "sync") == 0);
}

static int shipped_ok;

static void check_shipped(const char *name, const char *summary, void *ctx)
{
    (void)ctx;
    run_options o;
    options_defaults(&o);
    int ok = options_load_profile(&o, name, why, sizeof why) == 0 &&
             options_validate(&o, why, sizeof why) == 0 && summary[0];
    CHECK(ok);
    shipped_ok += ok;
}

static void test_profiles(void)
{
    char dir[] = "/tmp/accubench-profile-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char good[300], bad[300], badval[300];
    snprintf(good, sizeof good, "%s/good.profile", dir);
    snprintf(bad, sizeof bad, "%s/bad.profile", dir);
    snprintf(badval, sizeof badval, "%s/badval.profile", dir);
    test_write_file(good, "# a comment\n\neffective = 32   # trailing comment\nmicro = 4,8\nmodel=tiny\n");
    test_write_file(bad, "effective = 32\nthis line has no equals sign\n");
    test_write_file(badval, "effective = 32\n\nmicro = 4,x\n");
    run_options o;
    options_defaults(&o);
    CHECK(options_load_profile(&o, good, why, sizeof why) == 0);
    CHECK(o.effective[0] == 32 && o.n_micro == 2 && o.micro[1] == 8 && !o.micro_pow2);
    CHECK(strcmp(o.models[0].name, "tiny") == 0);
    CHECK(options_load_profile(&o, bad, why, sizeof why) == -1);
    CHECK(strstr(why, ":2:") != NULL); /* names the line */
    CHECK(options_load_profile(&o, badval, why, sizeof why) == -1);
    CHECK(strstr(why, ":3:") != NULL && strstr(why, "micro"));
    CHECK(options_load_profile(&o, "no-such-profile", why, sizeof why) == -1);
    /* Every shipped profile parses and has a description (the tests run
     * from the repository root). */
    int listed = options_list_profiles(check_shipped, NULL);
    CHECK(listed >= 3 && listed == shipped_ok);
    options_defaults(&o);
    options_load_profile(&o, "abc", why, sizeof why);
    int micros[8];
    CHECK(options_micro_list(&o, 64, 64, micros, 8) == 3 && micros[2] == 64);
    unlink(good);
    unlink(bad);
    unlink(badval);
    rmdir(dir);
}

static void test_split(void)
{
    split s;
    CHECK(split_make(256, 32, 1, &s, why, sizeof why) == 0 && s.accum == 8 && s.last == 32);
    CHECK(split_make(100, 32, 1, &s, why, sizeof why) == 0 && s.accum == 4 && s.last == 4);
    CHECK(split_micro_size(&s, 0) == 32 && split_micro_size(&s, 3) == 4);
    CHECK(split_make(64, 64, 1, &s, why, sizeof why) == 0 && s.accum == 1);
    CHECK(split_make(7, 1, 1, &s, why, sizeof why) == 0 && s.accum == 7 && s.last == 1);
    CHECK(split_make(64, 65, 1, &s, why, sizeof why) == -1 && strstr(why, "larger"));
    CHECK(split_make(64, 0, 1, &s, why, sizeof why) == -1);
}


/* ------------------------------------------------ the table, row by row */

static void test_table_keys(void)
{
    const option_table *t = &run_option_table;
    CHECK(t->count > 0);
    for (int i = 0; i < t->count; i++) {
        const option_def *d = &t->defs[i];
        char text[1200];
        /* every key has help text, and a flag and only a flag takes no value */
        CHECK(strlen(option_help_text(d, NULL, text, sizeof text)) > 0);
        CHECK((d->arg == NULL) == (d->type == OPTION_FLAG));
        CHECK(option_find(t, d->key) == d);
        for (int j = 0; j < i; j++) /* no two keys share a name */
            CHECK(strcmp(t->defs[j].key, d->key) != 0);
        if (d->type == OPTION_CUSTOM)
            CHECK(d->set != NULL);
        if (d->type == OPTION_PATH)
            CHECK(d->size > 1);
    }
}

/* Every default parses, and options_defaults is the table's defaults. */
static void test_table_defaults(void)
{
    const option_table *t = &run_option_table;
    run_options o, fresh;
    options_defaults(&fresh);
    CHECK(option_defaults(t, &o, why, sizeof why) == 0);
    for (int i = 0; i < t->count; i++) {
        const option_def *d = &t->defs[i];
        options_defaults(&o);
        if (d->def) {
            CHECK(option_set_row(d, &o, d->def, why, sizeof why) == 0);
            if (d->type != OPTION_CUSTOM) /* the value stored is the default's */
                CHECK(memcmp((char *)&o + d->offset, (char *)&fresh + d->offset,
                             d->type == OPTION_PATH ? d->size : 4) == 0);
        }
    }
    CHECK(fresh.n_effective == 1 && fresh.micro_pow2 && fresh.n_models == 1);
}

/* Sets text on a fresh run_options: 0 or -1. */
static int try_set(const option_def *d, const char *text)
{
    run_options o;
    options_defaults(&o);
    return option_set_row(d, &o, text, why, sizeof why);
}

/* The bounds of every numeric row: its ends pass, one past refused, with a
 * reason naming the key. */
static void test_table_bounds(void)
{
    const option_table *t = &run_option_table;
    char text[64];
    int numeric_rows = 0;
    for (int i = 0; i < t->count; i++) {
        const option_def *d = &t->defs[i];
        int ints = d->type == OPTION_INT || d->type == OPTION_U64 ||
                   (d->type == OPTION_CUSTOM && d->max > 0); /* the int lists */
        int reals = d->type == OPTION_REAL || d->type == OPTION_FLOAT;
        numeric_rows += ints || reals;
        if (ints) {
            snprintf(text, sizeof text, "%lld", d->min);
            CHECK(try_set(d, text) == 0);
            snprintf(text, sizeof text, "%lld", d->max);
            CHECK(try_set(d, text) == 0);
            snprintf(text, sizeof text, "%lld", d->min - 1);
            CHECK(try_set(d, text) == -1 && strstr(why, d->key));
            if (d->max < LLONG_MAX) {
                snprintf(text, sizeof text, "%lld", d->max + 1);
                CHECK(try_set(d, text) == -1 && strstr(why, d->key));
            }
        }
        if (reals) {
            snprintf(text, sizeof text, "%.17g", d->lo);
            CHECK(try_set(d, text) == 0);
            snprintf(text, sizeof text, "%.17g", d->hi);
            CHECK(try_set(d, text) == 0);
            snprintf(text, sizeof text, "%.17g", d->lo - 1);
            CHECK(try_set(d, text) == -1 && strstr(why, d->key));
            snprintf(text, sizeof text, "%.17g", d->hi * 2);
            CHECK(try_set(d, text) == -1 && strstr(why, d->key));
        }
        if (d->type == OPTION_FLAG) {
            CHECK(try_set(d, "yes") == 0 && try_set(d, "no") == 0);
            CHECK(try_set(d, "maybe") == -1 && strstr(why, d->key));
        }
        if (d->type != OPTION_FLAG) /* a value is needed */
            CHECK(try_set(d, NULL) == -1 && strstr(why, "needs a value"));
    }
    CHECK(numeric_rows > 10);
}

/* A key with its last letter dropped is refused, naming the key meant. */
static void test_did_you_mean(void)
{
    const option_table *t = &run_option_table;
    run_options o;
    options_defaults(&o);
    for (int i = 0; i < t->count; i++) {
        char typo[64], want[96];
        size_t len = strlen(t->defs[i].key);
        if (len < 4)
            continue;
        snprintf(typo, sizeof typo, "%.*s", (int)len - 1, t->defs[i].key);
        if (option_find(t, typo))
            continue;
        snprintf(want, sizeof want, "did you mean '%s'?", t->defs[i].key);
        CHECK(options_set(&o, typo, "1", why, sizeof why) == -1 && strstr(why, want));
    }
    /* a swap of two letters, a value of an axis, a model preset */
    CHECK(options_set(&o, "mirco", "8", why, sizeof why) == -1 &&
          strstr(why, "did you mean 'micro'?"));
    CHECK(options_set(&o, "mode", "asyn", why, sizeof why) == -1 &&
          strstr(why, "unknown mode 'asyn'") && strstr(why, "did you mean 'async'?"));
    CHECK(options_set(&o, "model", "tiny,s", why, sizeof why) == -1 &&
          strstr(why, "did you mean 'S'?"));
    /* nothing near: no guess */
    CHECK(options_set(&o, "frobnicate", "1", why, sizeof why) == -1 && !strstr(why, "mean"));
}

/* The rows that take a comma list, as the usage names their value: the
 * hint of an option named twice comes from here. */
static void test_takes_list(void)
{
    const char *lists[] = {"model", "micro", "effective", "mode", "lr-grid", "devices", "dtype"};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        CHECK(option_takes_list(&run_option_table, lists[i]));
    const char *single[] = {"steps", "quiet", "out", "rounds", "no-such-key"};
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++)
        CHECK(!option_takes_list(&run_option_table, single[i]));
}

/* Every axis-valued key takes `all` alone: each row of its table, in the
 * table's order; among other names it is refused, and the list before
 * stays. Looped over the option table: a new axis is checked here too. */
static void test_axis_all(void)
{
    int axes = 0;
    for (int i = 0; i < run_option_table.count; i++) {
        const option_def *d = &run_option_table.defs[i];
        const axis_option *ax = d->ctx;
        if (!ax)
            continue;
        axes++;
        run_options o;
        options_defaults(&o);
        CHECK(strstr(d->arg, AXIS_ALL) != NULL); /* the usage says so */
        CHECK(options_set(&o, d->key, AXIS_ALL, why, sizeof why) == 0);
        const int *list = (const int *)(const void *)((const char *)&o + ax->list);
        int count = *(const int *)(const void *)((const char *)&o + ax->count);
        CHECK(count == ax->ax->count);
        for (int r = 0; r < count; r++)
            CHECK(list[r] == r);
        char mixed[128];
        snprintf(mixed, sizeof mixed, "%s,%s", axis_name(ax->ax, 0), AXIS_ALL);
        CHECK(options_set(&o, d->key, mixed, why, sizeof why) == -1 &&
              strstr(why, "stands alone") != NULL);
        CHECK(*(const int *)(const void *)((const char *)&o + ax->count) == count);
    }
    CHECK(axes >= 7); /* dtype, mode, reduction, recompute, grad-dtype, sync, shard */
}

/* --lr-grid's rates as the curves train them, in a float: a rate that is
 * inf or 0 there was taken (fuzz_parse: 1e39, 6.7e51, 1e-46), and one
 * above --lr's bound of 10 too. */
static void test_lr_grid_bounds(void)
{
    lr_grid g;
    CHECK(lr_grid_parse("0.05,0.1,10", &g, why, sizeof why) == 0 && g.n == 3 && g.lr[2] == 10);
    CHECK(lr_grid_parse("1e-30", &g, why, sizeof why) == 0 && g.n == 1);
    const char *bad[] = {"1e39", "6666666666666666666666666666666666666666666666666666",
                         "1e-46", "10.5", "0.1,1e300", "0", "-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        CHECK(lr_grid_parse(bad[i], &g, why, sizeof why) == -1);
        CHECK(strstr(why, "--lr-grid") != NULL);
    }
    run_options o;
    options_defaults(&o);
    CHECK(options_set(&o, "lr-grid", "1e39", why, sizeof why) == -1);
    CHECK(options_set(&o, "lr", "10", why, sizeof why) == 0 && o.optimizer.lr == 10);
    CHECK(options_set(&o, "lr", "10.5", why, sizeof why) == -1);
}

int main(void)
{
    test_lr_grid_bounds();
    test_axis_all();
    test_takes_list();
    test_table_keys();
    test_table_defaults();
    test_table_bounds();
    test_did_you_mean();
    test_parse_int();
    test_lists();
    test_options();
    test_profiles();
    test_split();
    return check_finish("test_options");
}
