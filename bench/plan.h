/* accubench plan: the split arithmetic, the memory probe (--find-max-micro)
 * and the data-parallel projection (--fit). Its options are a table of its
 * own plus run's rows for the keys it shares (model, dtype, ...), so they
 * mean and refuse exactly what they do for run. */
#ifndef ACCUBENCH_PLAN_H
#define ACCUBENCH_PLAN_H

#include <stdio.h>

#include "option_table.h"

/* argv[0] is "plan"; help_edit completes the --help text (usage.h).
 * Returns the exit status. */
int plan_main(int argc, char **argv, option_usage_edit help_edit);

/* plan's usage and options (its --help). */
void plan_usage(FILE *f, option_usage_edit edit);

/* Every key plan takes: its own table's, then the ones it shares with run. */
void plan_print_keys(FILE *f);

#endif
