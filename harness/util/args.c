#include "args.h"

#include <stdio.h>
#include <string.h>

void args_init(args *a, int argc, char **argv, int (*is_flag)(const char *key))
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->next = 1;
    a->is_flag = is_flag;
}

arg_kind args_next(args *a, char *why, size_t why_len)
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
    if (a->is_flag && a->is_flag(a->key))
        return ARG_OPTION;
    if (a->next >= a->argc && a->is_known && !a->is_known(a->key))
        return ARG_OPTION;
    if (a->next >= a->argc) {
        snprintf(why, why_len, "--%s needs a value", a->key);
        return ARG_ERROR;
    }
    a->value = a->argv[a->next++];
    return ARG_OPTION;
}
