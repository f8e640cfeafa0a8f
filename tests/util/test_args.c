/* The one argument reader every command uses: --key value, --key=value,
 * flags, plain arguments, --help, and the one-line errors. */
#include <string.h>

#include "args.h"
#include "check.h"
#include "option_table.h"

static int is_flag(const char *key)
{
    return strcmp(key, "quiet") == 0 || strcmp(key, "append") == 0;
}

static void test_kinds(void)
{
    char *argv[] = {"run",   "--steps", "5",  "--out=dir/x", "--quiet", "file.csv",
                    "--lr",  "-1",      "-",  "--append=no", "--x=",    NULL};
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
    CHECK(!strcmp(a.key, "append") && !strcmp(a.value, "no"));
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

static int takes_list(const char *key)
{
    return strcmp(key, "model") == 0;
}

/* A key named twice is refused (the last would win without a word), in
 * any spelling; a value that looks like the key is no second naming. */
static arg_kind second_naming(int argc, char **argv, char *why, size_t why_len)
{
    args a;
    arg_kind k;
    args_init(&a, argc, argv, is_flag);
    a.takes_list = takes_list;
    while ((k = args_next(&a, why, why_len)) != ARG_END && k != ARG_ERROR)
        ;
    return k;
}

static void test_twice(void)
{
    char why[200];
    char *list[] = {"run", "--model", "S", "--steps", "3", "--model", "M", NULL};
    CHECK(second_naming(7, list, why, sizeof why) == ARG_ERROR);
    CHECK(!strcmp(why, "--model given twice (S, then M); name it once (it takes a list: "
                       "--model S,M)"));
    char *one[] = {"run", "--steps=3", "--steps", "4", NULL};
    CHECK(second_naming(4, one, why, sizeof why) == ARG_ERROR);
    CHECK(!strcmp(why, "--steps given twice (3, then 4); name it once"));
    char *same[] = {"run", "--steps", "3", "--steps=3", NULL};
    CHECK(second_naming(4, same, why, sizeof why) == ARG_ERROR);
    CHECK(!strcmp(why, "--steps given twice (3 both times); name it once"));
    char *flag[] = {"run", "--quiet", "--quiet", NULL};
    CHECK(second_naming(3, flag, why, sizeof why) == ARG_ERROR);
    CHECK(!strcmp(why, "--quiet given twice; name it once"));
    char *empty[] = {"run", "--out", "", "--out=b", NULL};
    CHECK(second_naming(4, empty, why, sizeof why) == ARG_ERROR);
    CHECK(!strcmp(why, "--out given twice ('', then b); name it once"));
    char *as_value[] = {"run", "--out", "--steps", "--steps", "2", "x.csv", NULL};
    CHECK(second_naming(6, as_value, why, sizeof why) == ARG_END);
    char *help[] = {"run", "--help", "-h", "--steps", "2", NULL};
    CHECK(second_naming(5, help, why, sizeof why) == ARG_END);
}

/* A command whose options are one table: its flags, known keys and list
 * keys come from the table, as the callbacks would give them. */
static void test_table(void)
{
    static const option_def defs[] = {
        {.key = "quiet", .type = OPTION_FLAG, .help = "a flag"},
        {.key = "model", .arg = "LIST", .type = OPTION_CUSTOM, .help = "a list"},
        {.key = "steps", .arg = "N", .type = OPTION_INT, .help = "a number"},
    };
    static const option_table table = {defs, 3};
    char why[200];
    args a;
    char *flag[] = {"cmd", "--quiet", "x.csv", NULL};
    args_init_table(&a, 3, flag, &table);
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION && !strcmp(a.key, "quiet") && !a.value);
    CHECK(args_next(&a, why, sizeof why) == ARG_POSITIONAL && !strcmp(a.value, "x.csv"));
    char *typo[] = {"cmd", "--stpes", NULL};
    args_init_table(&a, 2, typo, &table);
    CHECK(args_next(&a, why, sizeof why) == ARG_OPTION && !strcmp(a.key, "stpes") && !a.value);
    char *last[] = {"cmd", "--steps", NULL};
    args_init_table(&a, 2, last, &table);
    CHECK(args_next(&a, why, sizeof why) == ARG_ERROR && !strcmp(why, "--steps needs a value"));
    char *twice[] = {"cmd", "--model", "S", "--model", "M", NULL};
    args_init_table(&a, 5, twice, &table);
    while (args_next(&a, why, sizeof why) == ARG_OPTION)
        ;
    CHECK(strstr(why, "(it takes a list: --model S,M)") != NULL);
}

int main(void)
{
    test_table();
    test_twice();
    test_unknown_last();
    test_kinds();
    test_help();
    test_errors();
    return check_finish("test_args");
}
