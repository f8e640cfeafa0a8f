/* One table of a command's options: key, type, bounds, default, help text
 * and where the value is stored. The parser, the usage text, the profile
 * reader and the "did you mean" of an unknown key are all made from it, so
 * an option is one row (docs/architecture.md, "Adding an option"). */
#ifndef ACCUBENCH_OPTION_TABLE_H
#define ACCUBENCH_OPTION_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef enum option_type {
    OPTION_FLAG,   /* int: 1 when named; or yes/no, true/false, 1/0 */
    OPTION_INT,    /* int in [min, max] */
    OPTION_U64,    /* uint64_t in [min, max] */
    OPTION_REAL,   /* double in [lo, hi] */
    OPTION_FLOAT,  /* float in [lo, hi] */
    OPTION_BYTES,  /* uint64_t, K/M/G/T suffixes */
    OPTION_PATH,   /* char[size], 1 to size - 1 characters */
    OPTION_CUSTOM, /* set() parses and stores it */
} option_type;

typedef struct option_def option_def;

/* A CUSTOM option's parser: stores the value into target (the struct the
 * table describes). 0, or -1 with a one-line reason naming the option. */
typedef int (*option_set_fn)(void *target, const option_def *d, const char *value,
                             char *why, size_t why_len);

struct option_def {
    const char *key;   /* as typed, without the dashes: "max-noise" */
    const char *arg;   /* the value's name in the usage ("PCT"); NULL: a flag */
    option_type type;
    size_t offset;     /* where it is stored: offsetof(target struct, field) */
    size_t size;       /* OPTION_PATH: the buffer's size */
    long long min, max; /* OPTION_INT, OPTION_U64 */
    double lo, hi;     /* OPTION_REAL, OPTION_FLOAT */
    const char *def;   /* the default as typed, set by option_defaults; NULL: none */
    const char *shown; /* the default as the usage says it, where def is NULL or
                        * says too little ("adaptive"); NULL: def */
    const char *help;  /* what it does, one sentence (the usage wraps it) */
    /* Help made from a table (the names of an axis: the row's ctx), written
     * before help. */
    const char *(*help_fn)(const option_def *d, char *out, size_t len);
    option_set_fn set; /* OPTION_CUSTOM */
    const void *ctx;   /* what set() needs besides the row (an axis) */
    /* The values it takes, for "did you mean" (a comma or '|' list). */
    const char *(*known)(void);
    int tag;           /* the program's own mark: what it adds to the usage */
};

typedef struct option_table {
    const option_def *defs;
    int count;
} option_table;

/* The row of `key`, or NULL. */
const option_def *option_find(const option_table *t, const char *key);

/* Whether key is a flag (takes no value on the command line). */
int option_is_flag(const option_table *t, const char *key);

/* Whether key's row takes a comma list: its value's name in the usage is
 * LIST, alone or among '|' alternatives ("LIST|pow2"). */
int option_takes_list(const option_table *t, const char *key);

/* Sets key from value (NULL: a flag named alone). An unknown key is
 * "unknown option 'KEY'", with "; did you mean 'NEAR'?" when one is close. */
int option_set(const option_table *t, void *target, const char *key, const char *value,
               char *why, size_t why_len);

/* Sets one row from value, however the key was found. */
int option_set_row(const option_def *d, void *target, const char *value, char *why,
                   size_t why_len);

/* The keys a command shares with another command's table (plan and
 * cpu-passes take run's --model): those rows parse into that table's
 * target, so they mean and refuse exactly the same. */
typedef struct option_shared {
    const option_table *table;
    const char *const *keys;
    int count;
    void *target;
} option_shared;

/* key from own (into own_target), else from shared; an unknown key is
 * "unknown PREFIX option '--KEY'" (prefix may be NULL) with the nearest key
 * of either. */
int option_set_with(const option_table *own, void *own_target, const option_shared *shared,
                    const char *prefix, const char *key, const char *value, char *why,
                    size_t why_len);

/* Sets every row that has a default. 0, or -1 naming the row that refused
 * its own default (a table's mistake). */
int option_defaults(const option_table *t, void *target, char *why, size_t why_len);

/* Appends "; did you mean 'NEAR'?" to why when a key of t is close to key. */
void option_suggest_key(const option_table *t, const char *key, char *why, size_t why_len);

/* The help of a row as the usage prints it, with its default:
 * "auto|fp32|... (default auto)". edit, when given, may rewrite the help
 * and the default text before they are joined (the program adds what only
 * it knows: the backends, what auto picks on each). */
typedef void (*option_usage_edit)(const option_def *d, char *help, size_t help_len,
                                  char *shown, size_t shown_len);
const char *option_help_text(const option_def *d, option_usage_edit edit, char *out,
                             size_t len);

/* "  --key ARG             help (default X)", wrapped under 80 columns. */
void option_usage_row(FILE *f, const option_def *d, option_usage_edit edit);
/* Every row of t so. */
void option_usage(FILE *f, const option_table *t, option_usage_edit edit);
/* The shared keys' rows so. */
void option_usage_shared(FILE *f, const option_shared *s, option_usage_edit edit);

#endif
