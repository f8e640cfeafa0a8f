/* The one argument reader every command uses: --key value, --key=value,
 * flags, plain arguments, --help, and the one-line errors. */
#include <string.h>

#include "args.h"
#include "check.h"

static int is_flag(const char *key)
{
    return strcmp(key, "quiet") == 0;
}

static void test_kinds(void)
{
    char *argv[] = {"run",   "--steps", "5",  "--out=dir/x", "--quiet", "file.csv",
                    "--lr",  "-1",      "-",  "--quiet=no",  "--x=",    NULL};
    args a;
    char why[200];
    args_init(&a, 11, argv, is_flag);
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION);
    CHECK(!strcmp(a.key, "steps") && !strcmp(a.value, "5"));
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION);
    CHECK(!strcmp(a.key, "out") && !strcmp(a.value, "dir/x"));
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION); /* a flag takes no value */
    CHECK(!strcmp(a.key, "quiet") && a.value == NULL);
    CHECK(args_next(&a, why, sizeof why) == ARG_POSITIONAL);
    CHECK(!strcmp(a.value, "file.csv") && a.key[0] == '\0');
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION); /* a value may start with '-' */
    CHECK(!strcmp(a.key, "lr") && !strcmp(a.value, "-1"));
    CHECK(args_next(&a, why, sizeof why) == ARG_POSITIONAL && !strcmp(a.value, "-"));
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION); /* a flag given a value */
    CHECK(!strcmp(a.key, "quiet") && !strcmp(a.value, "no"));
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION);
    CHECK(!strcmp(a.key, "x") && !strcmp(a.value, ""));
    CHECK(args_next(&a, why, sizeof why) == ARG_END);
    CHECK(args_next(&a, why, sizeof why) == ARG_END);
}

static void test_help(void)
{
    char *argv[] = {"plan", "--effective", "64", "--help", "-h", "--out", "--help", NULL};
    args a;
    char why[200];
    args_init(&a, 7, argv, NULL);
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION);
    CHECK(args_next(&a, why, sizeof why) == ARG_HELP);
    CHECK(args_next(&a, why, sizeof why) == ARG_HELP);
    /* as a value, --help is just a value */
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION && !strcmp(a.value, "--help"));
}

static void test_errors(void)
{
    char why[200];
    args a;
    char *missing[] = {"run", "--steps", NULL};
    args_init(&a, 2, missing, is_flag);
    CHECK(args_next(&a, why, sizeof why) == ARG_ERROR);
    CHECK(!strcmp(why, "--steps needs a value"));
    char *dash[] = {"run", "-x", NULL};
    args_init(&a, 2, dash, is_flag);
    CHECK(args_next(&a, why, sizeof why) == ARG_ERROR && strstr(why, "'-x'"));
    char *bare[] = {"run", "--", NULL};
    args_init(&a, 2, bare, is_flag);
    CHECK(args_next(&a, why, sizeof why) == ARG_ERROR && strstr(why, "'--'"));
    char longkey[100] = "--";
    memset(longkey + 2, 'k', 80);
    longkey[82] = '\0';
    char *too_long[] = {"run", longkey, "1", NULL};
    args_init(&a, 3, too_long, is_flag);
    CHECK(args_next(&a, why, sizeof why) == ARG_ERROR && strstr(why, "unknown option"));
}

static int knows_steps(const char *key)
{
    return strcmp(key, "steps") == 0;
}

/* A key the command does not know, last on the line, comes back with no
 * value: the command says "unknown option", not "needs a value". */
static void test_unknown_last(void)
{
    char why[200];
    args a;
    char *typo[] = {"run", "--stpes", NULL};
    args_init(&a, 2, typo, is_flag);
    a.is_known = knows_steps;
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION && !strcmp(a.key, "stpes") && !a.value);
    char *known[] = {"run", "--steps", NULL};
    args_init(&a, 2, known, is_flag);
    a.is_known = knows_steps;
    CHECK(args_next(&a, why, sizeof why) == ARG_ERROR && !strcmp(why, "--steps needs a value"));
}

int main(void)
{
    test_unknown_last();
    test_kinds();
    test_help();
    test_errors();
    return check_finish("test_args");
}
