/* One reader of command-line arguments for every command (run, plan,
 * report, compare, gpu-check): `--key value`, `--key=value`, flags that
 * take no value, plain (positional) arguments, and --help / -h. What a key
 * means, and whether it is known at all, is the command's business; numbers
 * go through parse.h. */
#ifndef ACCUBENCH_ARGS_H
#define ACCUBENCH_ARGS_H

#include <stddef.h>

typedef enum arg_kind {
    ARG_END = 0,    /* no arguments left */
    ARG_OPTION,     /* --key or --key value: key, and value (NULL for a flag) */
    ARG_POSITIONAL, /* a plain argument: value */
    ARG_HELP,       /* --help or -h */
    ARG_ERROR,      /* the reason is in why */
} arg_kind;

typedef struct args {
    int argc;
    char **argv;
    int next;                        /* the index of the next argument */
    int (*is_flag)(const char *key); /* keys that take no value; NULL: none */
    /* Optional: the keys the command knows. A key it does not know, last
     * on the line, is returned with no value (the command says "unknown
     * option", not "needs a value"). */
    int (*is_known)(const char *key);
    /* Optional: the keys that take a comma list. A key named twice is an
     * error; for these its reason adds how to say both at once. */
    int (*takes_list)(const char *key);
    /* Or, for all three, the command's option table (args_init_table). */
    const struct option_table *table;
    char key[64];                    /* the option's key, without the dashes */
    const char *value;               /* its value, or the positional argument */
} args;

/* argv[0] is the command's own name: reading starts after it. */
void args_init(args *a, int argc, char **argv, int (*is_flag)(const char *key));
/* args_init for a command whose options are one table (option_table.h):
 * its flags, its known keys and its list keys are the table's. */
void args_init_table(args *a, int argc, char **argv, const struct option_table *t);

/* Reads the next argument into a->key and a->value. A value is the rest of
 * `--key=value`, else the next argument (whatever it looks like) unless the
 * key is a flag. ARG_ERROR with a one-line reason in why: "--steps needs a
 * value", "unknown option '-x'", and a key named a second time on the line
 * (the last would win silently): "--model given twice (S, then M); name it
 * once (it takes a list: --model S,M)". */
arg_kind args_next(args *a, char *why, size_t why_len);

#endif
