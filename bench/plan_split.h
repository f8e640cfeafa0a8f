/* plan --effective E --max-micro N [--devices D]: the split arithmetic,
 * written as run would take it (split_make_sharded's dealing, ragged
 * shares included). */
#ifndef ACCUBENCH_PLAN_SPLIT_H
#define ACCUBENCH_PLAN_SPLIT_H

#include <stddef.h>
#include <stdio.h>

/* Writes the split of `effective` examples over `devices` at the largest
 * micro-batch up to max_micro that gives every device a part of every
 * micro-batch. 0, or -1 with the reason (nothing written) when no
 * micro-batch does. */
int plan_split_write(FILE *f, int effective, int max_micro, int devices, char *why, size_t n);

#endif
