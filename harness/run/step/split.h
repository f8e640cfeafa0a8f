/* The arithmetic of accumulation: how an effective batch splits. */
#ifndef ACCUBENCH_SPLIT_H
#define ACCUBENCH_SPLIT_H

typedef struct split {
    int effective;  /* examples per optimizer step, per device (the most any
                     * rank takes when they do not divide evenly) */
    int global;     /* examples per optimizer step over all devices */
    int micro;      /* examples per forward/backward pass */
    int accum;      /* passes per optimizer step: ceil(effective / micro) */
    int last;       /* examples in the last pass (== micro when it divides) */
    int devices;
} split;

/* Fills *s; returns 0, or -1 with a reason when micro is not in
 * 1..effective. */
int split_make(int effective, int micro, int devices, split *s, char *why, int why_len);

/* Data parallel: one window of `global` examples dealt to `devices`
 * ranks, the same effective batch a single process would take. Global
 * micro-batch k is examples [k micro N, min((k + 1) micro N, E)); its G_k
 * examples are cut into N contiguous near-equal parts, rank r taking
 * [k micro N + r G_k / N, k micro N + (r + 1) G_k / N). Every rank makes the
 * same K = ceil(E / (micro N)) passes; a rank's part is at most micro (the
 * last global micro-batch, and any that N does not divide, are ragged).
 * Fills *s (effective = ceil(E / N), last = the largest part of the last
 * micro-batch); -1 with a reason when micro is not in 1..ceil(E / N) or
 * the last global micro-batch has fewer examples than ranks (a rank would
 * have none). With devices = 1 it is split_make. */
int split_make_sharded(int global, int micro, int devices, split *s, char *why, int why_len);

/* split_make_sharded at the largest micro-batch up to max_micro that gives
 * every device a part of the last micro-batch: a smaller one can reach E
 * where the largest cannot (E = 10 on 3 devices: 4 x 1 and 2 x 2 do, 3 x 2
 * does not). -1 with the largest's reason where none does. */
int split_make_sharded_largest(int global, int max_micro, int devices, split *s, char *why,
                               int why_len);

/* Rank r's part of micro-batch k (0-based) of a sharded split. */
void split_shard(const split *s, int rank, int k, int *first, int *count);

/* Micro-batch of pass k (0-based). */
static inline int split_micro_size(const split *s, int k)
{
    return k == s->accum - 1 ? s->last : s->micro;
}

#endif
