/* What the user types, at its edges: profile lines longer than any buffer,
 * lists longer than any buffer, NUL bytes, profiles that are not files,
 * sizes echoed as typed, a cap of 0, and entries named twice. Each is read
 * whole or refused with one line that names it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dedupe.h"
#include "options.h"
#include "parse.h"

static char why[600];

static void write_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(bytes, 1, n, f);
    fclose(f);
}

/* A refusal: one line, naming `want`. */
static void check_reason(const char *want)
{
    CHECK(strstr(why, want) != NULL);
    CHECK(strchr(why, '\n') == NULL);
    if (!strstr(why, want))
        fprintf(stderr, "  reason was: %s (wanted %s)\n", why, want);
}

/* A comment longer than any line buffer whose tail reads like a setting
 * is still a comment; a long value is read whole. */
static void test_long_lines(void)
{
    const char *path = "/tmp/accubench-long.profile";
    char *text = malloc(8000);
    if (!text)
        return;
    run_options o;
    /* 1022: the tail starts exactly where a 1024-byte line buffer ends */
    size_t pads[] = {1022, 1021, 5000};
    for (size_t i = 0; i < sizeof pads / sizeof *pads; i++) {
        strcpy(text, "effective = 16\n#");
        memset(text + strlen(text), 'x', pads[i]);
        strcpy(text + 16 + pads[i], "micro = 2\n");
        write_bytes(path, text, strlen(text));
        options_defaults(&o);
        CHECK(options_load_profile(&o, path, why, sizeof why) == 0);
        CHECK(o.n_effective == 1 && o.effective[0] == 16);
        CHECK(o.micro_pow2 == 1 && o.n_micro == 0); /* untouched by the comment's tail */
    }

    /* a value of 3000 characters, read whole: 20 items with leading zeros */
    char *p = text;
    p += sprintf(p, "micro = ");
    for (int i = 0; i < 20; i++)
        p += sprintf(p, "%s%0149d", i ? "," : "", i + 1);
    strcpy(p, "\n");
    write_bytes(path, text, strlen(text));
    options_defaults(&o);
    CHECK(options_load_profile(&o, path, why, sizeof why) == 0);
    CHECK(o.n_micro == 20 && o.micro[0] == 1 && o.micro[19] == 20); /* all twenty, whole */
    unlink(path);
    free(text);
}

/* A list longer than the parser's buffer is read whole; one with more
 * entries than the options hold is refused with the limit named, never cut
 * to fit. */
static void test_long_lists(void)
{
    char list[4096], *p = list;
    run_options o;
    options_defaults(&o);
    for (int i = 0; i < 20; i++) /* 20 items of 60 characters: 1219 in all */
        p += sprintf(p, "%s%060d", i ? "," : "", 16 + i);
    CHECK(options_set(&o, "effective", list, why, sizeof why) == 0);
    CHECK(o.n_effective == 20 && o.effective[19] == 35);

    /* 33 items: one more than OPT_MAX_LIST; the first 32 fill 1023 bytes */
    p = list;
    for (int i = 0; i < OPT_MAX_LIST; i++)
        p += sprintf(p, "%s%031d", i ? "," : "", 64);
    CHECK(strlen(list) == 1023);
    strcpy(p, ",8");
    options_defaults(&o);
    CHECK(options_set(&o, "micro", list, why, sizeof why) == -1);
    check_reason("more than 32 items");
    for (const char *key = "effective"; key; key = strcmp(key, "effective") ? NULL : "mode") {
        options_defaults(&o);
        CHECK(options_set(&o, key, list, why, sizeof why) == -1);
        check_reason("more than 32 items");
    }
}

static void test_nul_byte(void)
{
    const char *path = "/tmp/accubench-nul.profile";
    static const char text[] = "effective = 16\nmicro = 4\0micro = 2\n";
    write_bytes(path, text, sizeof text - 1);
    run_options o;
    options_defaults(&o);
    CHECK(options_load_profile(&o, path, why, sizeof why) == -1);
    check_reason("accubench-nul.profile:2: a NUL byte");
    unlink(path);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_input_limits: opening a profile hung\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(2);
}

/* Not a regular file: refused at once, named; a FIFO without a writer must
 * not hang (the alarm fails the test if it does). */
static void test_not_a_file(void)
{
    const char *fifo = "/tmp/accubench-test.fifo";
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    signal(SIGALRM, on_alarm);
    alarm(20);
    const char *paths[] = {"/tmp", "/dev/zero", "/dev/null", fifo};
    const char *kind[] = {"a directory", "a device", "a device", "a FIFO"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        run_options o;
        options_defaults(&o);
        CHECK(options_load_profile(&o, paths[i], why, sizeof why) == -1);
        check_reason("not a regular file");
        check_reason(kind[i]);
        check_reason(paths[i]);
    }
    alarm(0);
    unlink(fifo);
}

/* Sizes: the reason echoes what was typed, suffix and all; 0 is no cap. */
static void test_sizes(void)
{
    uint64_t v = 1;
    const char *bad[] = {"99999999999T", "12Q", "-4M", "1.5", "-1.5G", "1.5GB", "", " 8G",
                         "9223372036854775808", "1e30T",
                         /* strtod's hex was taken as a fraction (fuzz_parse: 1536 bytes) */
                         "0x1.8K", "0X1.8p1M", "0x2G"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(parse_bytes("mem-cap", bad[i], &v, why, sizeof why) == -1);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        check_reason(quoted);
    }
    run_options o;
    options_defaults(&o);
    o.mem_cap = 5;
    CHECK(options_set(&o, "mem-cap", "0", why, sizeof why) == 0 && o.mem_cap == 0);
    CHECK(parse_bytes("mem-cap", "0G", &v, why, sizeof why) == 0 && v == 0);
    /* fractions of a unit, and the binary units spelt out */
    CHECK(parse_bytes("mem-cap", "1.5GiB", &v, why, sizeof why) == 0 && v == 3ull << 29);
    CHECK(parse_bytes("mem-cap", "1.5G", &v, why, sizeof why) == 0 && v == 3ull << 29);
    CHECK(parse_bytes("mem-cap", "512MiB", &v, why, sizeof why) == 0 && v == 512ull << 20);
    CHECK(parse_bytes("mem-cap", "0.1K", &v, why, sizeof why) == 0 && v == 102);
    /* a size that is not zero but rounds to 0 bytes is no size, not "no cap" */
    CHECK(parse_bytes("mem-cap", "0.0001K", &v, why, sizeof why) == -1);
    check_reason("'0.0001K'");
    check_reason("rounds to 0 bytes");
    CHECK(parse_bytes("mem-cap", "0.0K", &v, why, sizeof why) == 0 && v == 0);
    CHECK(options_set(&o, "mem-cap", "0.0001K", why, sizeof why) == -1);
}

/* Every list option: an entry named twice runs once, in the order first
 * given, and the note says so; but --micro, where twice is an A/A check
 * (two arms: test_options). */
static void test_duplicates(void)
{
    struct {
        const char *key, *value;
        int want;
    } cases[] = {
        {"effective", "64,16,64", 2}, {"devices", "2,1,2", 2},      {"model", "S,M,S", 2},
        {"mode", "async,async", 1},   {"reduction", "sum,sum", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run_options o;
        options_defaults(&o);
        CHECK(options_set(&o, cases[i].key, cases[i].value, why, sizeof why) == 0);
        int n = !strcmp(cases[i].key, "effective") ? o.n_effective
                : !strcmp(cases[i].key, "devices") ? o.n_devices
                : !strcmp(cases[i].key, "model")   ? o.n_models
                : !strcmp(cases[i].key, "mode")    ? o.n_modes
                                                   : o.n_reductions;
        CHECK(n == cases[i].want);
        CHECK(strstr(o.note, cases[i].value) != NULL && strstr(o.note, "runs once") != NULL);
        if (n != cases[i].want)
            fprintf(stderr, "  --%s %s: %d entries\n", cases[i].key, cases[i].value, n);
    }
    run_options o;
    options_defaults(&o);
    CHECK(options_set(&o, "effective", "64,16,64,8", why, sizeof why) == 0);
    CHECK(o.n_effective == 3 && o.effective[0] == 64 && o.effective[1] == 16 &&
          o.effective[2] == 8);
    options_defaults(&o);
    CHECK(options_set(&o, "effective", "64,16", why, sizeof why) == 0 && o.note[0] == '\0');
    int v[] = {3, 1, 3, 2, 1};
    CHECK(dedupe_keep_first(v, 5, sizeof v[0], dedupe_same_int) == 3);
    CHECK(v[0] == 3 && v[1] == 1 && v[2] == 2);
}

int main(void)
{
    test_long_lines();
    test_long_lists();
    test_nul_byte();
    test_not_a_file();
    test_sizes();
    test_duplicates();
    return check_finish("test_input_limits");
}
