/* The program's help: made from the option tables (run's in
 * harness/run/setup/options.c, plan's in plan.c), the backend table, the model
 * registry and the profiles found in profiles/, never a copy of them. */
#ifndef ACCUBENCH_USAGE_H
#define ACCUBENCH_USAGE_H

#include <stdio.h>

#include "option_table.h"

/* What only the program knows, added to a row's usage: the backends'
 * names, what auto picks on each backend (the row's tag). */
void usage_edit(const option_def *d, char *help, size_t help_len, char *shown,
                size_t shown_len);

/* accubench --help: the commands, run's options, plan's. */
void usage_all(FILE *f);

/* accubench run --help: run's options, the backends, the profiles, the
 * model presets. */
void usage_run(FILE *f);

/* accubench help [COMMAND]: that command's help on stdout (0), or one line
 * on stderr for a command there is none of (2). */
int usage_help_command(const char *command);

/* The names of the commands, for "did you mean". */
extern const char USAGE_COMMANDS[];

/* accubench --list-options [COMMAND] / --list-presets: one name a line,
 * what the tests compare the help with; --list-modes [BACKEND]: the
 * execution modes the backend can run (auto: the one run would open), what
 * scripts/check_gpu.sh runs; --list-values KEY: every row of run's axis
 * option KEY (recompute, sync, ...), what the tests loop over;
 * --list-attention BACKEND: "VAR=NAME" for each attention arrangement but
 * the backend's default, what check_gpu.sh runs beside the default;
 * --list-reductions: each reduction
 * row as "NAME exact|inexact RULE" (reduction_rule), what the PyTorch peer
 * reads its reductions from. */
int usage_list(const char *what, const char *command);

#endif
