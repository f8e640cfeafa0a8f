/* Synthetic training data: several input buffers of one effective batch
 * each, rotated step by step so that no step reads what the previous one
 * left in cache. The data is what the model's input_spec asks for: float
 * features uniform in [-1, 1) from the seed (never zeros) with labels
 * uniform in [0, classes) and about a quarter of the examples padding
 * (valid = 0); or token data like packed documents: ids from Zipf's law,
 * each sequence a document of 1 to seq tokens (the label of a token the
 * next one) and padding after it. Either way micro-batches hold uneven
 * numbers of valid items. */
#ifndef ACCUBENCH_DATASET_H
#define ACCUBENCH_DATASET_H

#include <stdint.h>

#include "model_kind.h"
#include "reduction.h"

#define DATASET_MAX_BUFFERS 8

typedef struct input_buffer {
    void *x;       /* [width x E]: features in compute storage, or token ids */
    int *labels;   /* E x loss_items */
    int *valid;    /* E x loss_items, 0 or 1 */
    float *scales; /* one per micro-batch of the current split (+ full batch) */
    int *valid_host;
} input_buffer;

typedef struct dataset {
    backend *b;
    /* What x is stored in: the backend's compute storage when it was made
     * (a run of several dtypes holds a dataset of each). */
    storage x_storage;
    input_spec input;
    int effective_batch, count;
    input_buffer buf[DATASET_MAX_BUFFERS];
    int scale_capacity;
    size_t bytes;
    /* Data parallel: this process is rank `rank` of `ranks` and takes its
     * part of every window (split_shard); 0 of 1 unless dataset_set_shard. */
    int rank, ranks;
} dataset;

int dataset_create(backend *b, const input_spec *in, int effective_batch,
                   int buffers, uint64_t seed, dataset *d);
void dataset_destroy(dataset *d);

/* Makes this dataset rank `rank`'s of `ranks`: every rank holds the same
 * E examples and takes its part of each micro-batch. Set before
 * dataset_set_split. */
void dataset_set_shard(dataset *d, int rank, int ranks);

/* Writes each buffer's per-micro-batch loss scales for a split of the
 * effective batch into micro-batches of `micro` (the last one smaller when
 * it does not divide), normalised as `r` says (reduction.h); after them the
 * full-batch scale for the reference pass. With ranks, the scales are the
 * whole window's (every rank's micro-batches): the loss is normalised by
 * the valid items of the global window on every rank. */
int dataset_set_split(dataset *d, int micro, reduction r);

/* Valid loss items among examples [first, first + count) of buffer `buf`. */
int dataset_valid_count(const dataset *d, int buf, int first, int count);

/* The view of micro-batch k of buffer `buf` under the current split. */
micro_batch_view dataset_micro(const dataset *d, int buf, int micro, int k);
/* The whole buffer as one micro-batch, scaled as the full-batch reference. */
micro_batch_view dataset_full_batch(const dataset *d, int buf, int micro);

#endif
