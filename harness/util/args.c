#include "args.h"

#include <stdio.h>
#include <string.h>

#include "option_table.h"

void args_init(args *a, int argc, char **argv, int (*is_flag)(const char *key))
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->next = 1;
    a->is_flag = is_flag;
}

void args_init_table(args *a, int argc, char **argv, const option_table *t)
{
    args_init(a, argc, argv, NULL);
    a->table = t;
}

static int is_flag(const args *a, const char *key)
{
    return a->table ? option_is_flag(a->table, key) : a->is_flag && a->is_flag(key);
}

/* Whether the command knows key; 1 where it cannot say. */
static int is_known(const args *a, const char *key)
{
    return a->table ? option_find(a->table, key) != NULL : !a->is_known || a->is_known(key);
}

static int takes_list(const args *a, const char *key)
{
    return a->table ? option_takes_list(a->table, key) : a->takes_list && a->takes_list(key);
}

/* One argument, whatever came before it. */
static arg_kind next_argument(args *a, char *why, size_t why_len)
{
    a->key[0] = '\0';
    a->value = NULL;
    if (a->next >= a->argc)
        return ARG_END;
    const char *arg = a->argv[a->next++];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
        return ARG_HELP;
    if (arg[0] != '-' || arg[1] == '\0') {
        a->value = arg; /* "-" alone is a plain argument too */
        return ARG_POSITIONAL;
    }
    if (arg[1] != '-' || arg[2] == '\0') {
        snprintf(why, why_len, "unknown option '%s'", arg);
        return ARG_ERROR;
    }
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    if (len >= sizeof a->key) {
        snprintf(why, why_len, "unknown option '%s'", arg);
        return ARG_ERROR;
    }
    memcpy(a->key, arg + 2, len);
    a->key[len] = '\0';
    if (eq) {
        a->value = eq + 1;
        return ARG_OPTION;
    }
    if (is_flag(a, a->key))
        return ARG_OPTION;
    if (a->next >= a->argc && !is_known(a, a->key))
        return ARG_OPTION;
    if (a->next >= a->argc) {
        snprintf(why, why_len, "--%s needs a value", a->key);
        return ARG_ERROR;
    }
    a->value = a->argv[a->next++];
    return ARG_OPTION;
}

/* Whether an argument before the one at index upto named key; its value
 * (NULL for a flag) into *value. The arguments are read again from the
 * start, so a value that looks like an option is still a value. */
static int named_before(const args *a, int upto, const char *key, const char **value)
{
    args earlier = *a;
    char why[200];
    earlier.next = 1;
    while (earlier.next < upto)
        if (next_argument(&earlier, why, sizeof why) == ARG_OPTION &&
            strcmp(earlier.key, key) == 0) {
            *value = earlier.value;
            return 1;
        }
    return 0;
}

/* "--model given twice (S, then M); name it once (it takes a list: --model S,M)" */
static void say_twice(const args *a, const char *first, char *why, size_t why_len)
{
    const char *second = a->value;
    int same = first && second && strcmp(first, second) == 0;
    if (first && !*first) /* an empty value, seen */
        first = "''";
    if (second && !*second)
        second = "''";
    if (!first || !second)
        snprintf(why, why_len, "--%s given twice; name it once", a->key);
    else if (same)
        snprintf(why, why_len, "--%s given twice (%s both times); name it once", a->key, first);
    else if (takes_list(a, a->key))
        snprintf(why, why_len,
                 "--%s given twice (%s, then %s); name it once (it takes a list: --%s %s,%s)",
                 a->key, first, second, a->key, first, second);
    else
        snprintf(why, why_len, "--%s given twice (%s, then %s); name it once", a->key, first,
                 second);
}

arg_kind args_next(args *a, char *why, size_t why_len)
{
    int at = a->next;
    arg_kind kind = next_argument(a, why, why_len);
    const char *first;
    if (kind == ARG_OPTION && named_before(a, at, a->key, &first)) {
        say_twice(a, first, why, why_len);
        return ARG_ERROR;
    }
    return kind;
}
