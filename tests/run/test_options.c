/* Numbers, lists, profiles and the split arithmetic: what the user types. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
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
    int n = options_micro_list(&o, 48, micros, 64);
    CHECK(n == 6 && micros[0] == 1 && micros[5] == 32); /* 1..32: 64 > 48 */
    CHECK(options_set(&o, "micro", "16,3,16", why, sizeof why) == 0);
    n = options_micro_list(&o, 48, micros, 64);
    CHECK(n == 2 && micros[0] == 3 && micros[1] == 16);
    CHECK(options_set(&o, "mode", "async,graph,alloc-async", why, sizeof why) == 0);
    CHECK(o.n_modes == 3 && o.modes[1] == MODE_GRAPH && o.modes[2] == MODE_ALLOC_ASYNC);
    CHECK(options_set(&o, "mode", "turbo", why, sizeof why) == -1 && strstr(why, "turbo"));
    CHECK(options_set(&o, "model", "S,XL", why, sizeof why) == 0 && o.n_models == 2);
    CHECK(options_set(&o, "model", "XXL", why, sizeof why) == -1 && strstr(why, "XXL"));
    CHECK(options_set(&o, "dtype", "fp16", why, sizeof why) == -1);
    /* auto is the default and can be asked for again after a named one */
    run_options fresh;
    options_defaults(&fresh);
    CHECK(fresh.dtype == DTYPE_AUTO && strcmp(dtype_name(fresh.dtype), "auto") == 0);
    CHECK(options_set(&o, "dtype", "bf16", why, sizeof why) == 0 && o.dtype == DTYPE_BF16);
    CHECK(options_set(&o, "dtype", "auto", why, sizeof why) == 0 && o.dtype == DTYPE_AUTO);
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
    CHECK(options_set(&o, "mode", "sync", why, sizeof why) == 0 && o.n_modes == 1 &&
          o.modes[0] == MODE_SYNC && strcmp(mode_name(o.modes[0]), "sync") == 0);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_profiles(void)
{
    char dir[] = "/tmp/accubench-profile-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char good[300], bad[300], badval[300];
    snprintf(good, sizeof good, "%s/good.profile", dir);
    snprintf(bad, sizeof bad, "%s/bad.profile", dir);
    snprintf(badval, sizeof badval, "%s/badval.profile", dir);
    write_file(good, "# a comment\n\neffective = 32   # trailing comment\nmicro = 4,8\nmodel=tiny\n");
    write_file(bad, "effective = 32\nthis line has no equals sign\n");
    write_file(badval, "effective = 32\n\nmicro = 4,x\n");
    run_options o;
    options_defaults(&o);
    CHECK(options_load_profile(&o, good, "accubench", why, sizeof why) == 0);
    CHECK(o.effective[0] == 32 && o.n_micro == 2 && o.micro[1] == 8 && !o.micro_pow2);
    CHECK(strcmp(o.models[0].name, "tiny") == 0);
    CHECK(options_load_profile(&o, bad, "accubench", why, sizeof why) == -1);
    CHECK(strstr(why, ":2:") != NULL); /* names the line */
    CHECK(options_load_profile(&o, badval, "accubench", why, sizeof why) == -1);
    CHECK(strstr(why, ":3:") != NULL && strstr(why, "micro"));
    CHECK(options_load_profile(&o, "no-such-profile", "accubench", why, sizeof why) == -1);
    /* The shipped profiles parse (the tests run from the repository root). */
    const char *shipped[] = {"abc", "quick", "default"};
    for (int i = 0; i < 3; i++) {
        options_defaults(&o);
        CHECK(options_load_profile(&o, shipped[i], "accubench", why, sizeof why) == 0);
        CHECK(options_validate(&o, why, sizeof why) == 0);
    }
    options_defaults(&o);
    options_load_profile(&o, "abc", "accubench", why, sizeof why);
    int micros[8];
    CHECK(options_micro_list(&o, 64, micros, 8) == 3 && micros[2] == 64);
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

int main(void)
{
    test_parse_int();
    test_lists();
    test_options();
    test_profiles();
    test_split();
    return check_finish("test_options");
}
