/* The arithmetic of accumulation: how an effective batch splits. */
#ifndef ACCUBENCH_SPLIT_H
#define ACCUBENCH_SPLIT_H

typedef struct split {
    int effective;  /* examples per optimizer step, per device */
    int micro;      /* examples per forward/backward pass */
    int accum;      /* passes per optimizer step: ceil(effective / micro) */
    int last;       /* examples in the last pass (== micro when it divides) */
    int devices;
} split;

/* Fills *s; returns 0, or -1 with a reason when micro is not in
 * 1..effective. */
int split_make(int effective, int micro, int devices, split *s, char *why, int why_len);

/* Micro-batch of pass k (0-based). */
static inline int split_micro_size(const split *s, int k)
{
    return k == s->accum - 1 ? s->last : s->micro;
}

#endif
