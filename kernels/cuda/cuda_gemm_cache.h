/* The key of a GEMM's cached plan, and the hash table that holds the plans.
 *
 * The CUDA backend chooses a cuBLASLt algorithm once per GEMM shape and
 * reuses it: the choice costs host time that would otherwise land in every
 * step's enqueue time. A shape is everything the choice depends on: sizes,
 * transposes, leading dimensions, storage types, the compute type, a
 * batch's count and strides, and how well the pointers are aligned (an algorithm chosen for 16-byte aligned
 * operands may not run on 4-byte aligned ones).
 *
 * Plain C with no CUDA header (backend.h is plain C too), so that the unit
 * tests exercise it on a machine without a GPU. Values are opaque pointers
 * owned by the caller. */
#ifndef ACCUBENCH_CUDA_GEMM_CACHE_H
#define ACCUBENCH_CUDA_GEMM_CACHE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

typedef struct gemm_key {
    int trans_a, trans_b;
    int m, n, k;
    int lda, ldb, ldc;
    int ab_storage, c_storage;
    int compute;                  /* the backend's dtype */
    int align_a, align_b, align_c; /* bytes, a power of two up to 16 */
    int batch;                    /* 1 for one product */
    int64_t stride_a, stride_b, stride_c; /* elements; 0 for one product */
} gemm_key;

/* The largest power of two (up to 16) that divides the address. */
static inline int gemm_alignment(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    int align = 1;
    while (align < 16 && (a & (uintptr_t)(2 * align - 1)) == 0)
        align *= 2;
    return align;
}

/* The alignment every product of a batch has: the base pointer's and the
 * stride's in bytes together (product i starts at p + i * stride). */
static inline int gemm_batch_alignment(const void *p, int64_t stride, size_t elem_bytes,
                                       int batch)
{
    uintptr_t a = (uintptr_t)p;
    if (batch > 1)
        a |= (uintptr_t)((uint64_t)(stride < 0 ? -stride : stride) * elem_bytes);
    return gemm_alignment((const void *)a);
}

/* The key of g's plan in a run whose dtype is `compute`. batch 0 and 1 are
 * the same single product, whatever the strides say. */
static inline gemm_key gemm_key_of(const gemm_desc *g, int compute)
{
    gemm_key k;
    memset(&k, 0, sizeof k);
    k.trans_a = g->trans_a != 0;
    k.trans_b = g->trans_b != 0;
    k.m = g->m;
    k.n = g->n;
    k.k = g->k;
    k.lda = g->lda;
    k.ldb = g->ldb;
    k.ldc = g->ldc;
    k.ab_storage = (int)g->ab_storage;
    k.c_storage = (int)g->c_storage;
    k.compute = compute;
    k.batch = g->batch > 1 ? g->batch : 1;
    if (k.batch > 1) {
        k.stride_a = g->stride_a;
        k.stride_b = g->stride_b;
        k.stride_c = g->stride_c;
    }
    size_t ab = storage_bytes(g->ab_storage), cb = storage_bytes(g->c_storage);
    k.align_a = gemm_batch_alignment(g->a, k.stride_a, ab, k.batch);
    k.align_b = gemm_batch_alignment(g->b, k.stride_b, ab, k.batch);
    k.align_c = gemm_batch_alignment(g->c, k.stride_c, cb, k.batch);
    return k;
}

/* The key's fields as one list, for the hash and the comparison. They read
 * the fields, never the struct's bytes: the struct has padding (fifteen
 * ints, then 4 bytes before the int64 strides' 8-byte boundary), and a
 * padding byte's value is not a field's, nor kept by a copy of the struct
 * (the table's own copies, a key returned by value), so bytes could make
 * one shape two keys: a plan chosen and kept again at every call. A field
 * added to gemm_key is added here too. */
#define GEMM_KEY_FIELDS(X)                                                    \
    X(trans_a) X(trans_b) X(m) X(n) X(k) X(lda) X(ldb) X(ldc) X(ab_storage)   \
    X(c_storage) X(compute) X(align_a) X(align_b) X(align_c) X(batch)         \
    X(stride_a) X(stride_b) X(stride_c)

/* FNV-1a over the fields' values, each widened to 64 bits. */
static inline uint64_t gemm_key_hash(const gemm_key *k)
{
    uint64_t h = 1469598103934665603ull;
#define GEMM_KEY_HASH_(f)                                                     \
    {                                                                         \
        uint64_t v_ = (uint64_t)k->f;                                         \
        for (int i_ = 0; i_ < 8; i_++, v_ >>= 8) {                            \
            h ^= v_ & 0xffu;                                                  \
            h *= 1099511628211ull;                                            \
        }                                                                     \
    }
    GEMM_KEY_FIELDS(GEMM_KEY_HASH_)
#undef GEMM_KEY_HASH_
    return h;
}

static inline int gemm_key_equal(const gemm_key *a, const gemm_key *b)
{
#define GEMM_KEY_SAME_(f) &&a->f == b->f
    return 1 GEMM_KEY_FIELDS(GEMM_KEY_SAME_);
#undef GEMM_KEY_SAME_
}

/* Open addressing, linear probing, capacity a power of two, at most half
 * full. A NULL value marks an empty slot. */
typedef struct gemm_table {
    size_t cap, count;
    gemm_key *keys;
    void **values;
} gemm_table;

/* The value stored under key, or NULL. */
static inline void *gemm_table_find(const gemm_table *t, const gemm_key *key)
{
    if (!t->cap)
        return NULL;
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)gemm_key_hash(key) & mask;; i = (i + 1) & mask) {
        if (!t->values[i])
            return NULL;
        if (gemm_key_equal(&t->keys[i], key))
            return t->values[i];
    }
}

static inline void gemm_table_place(gemm_key *keys, void **values, size_t cap,
                                    const gemm_key *key, void *value)
{
    size_t mask = cap - 1;
    size_t i = (size_t)gemm_key_hash(key) & mask;
    while (values[i])
        i = (i + 1) & mask;
    keys[i] = *key;
    values[i] = value;
}

/* Stores value (non-NULL) under a key not yet present. 0, or -1 when the
 * table could not grow (it is unchanged then). */
static inline int gemm_table_insert(gemm_table *t, const gemm_key *key, void *value)
{
    if (2 * (t->count + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        gemm_key *keys = (gemm_key *)calloc(cap, sizeof *keys);
        void **values = (void **)calloc(cap, sizeof *values);
        if (!keys || !values) {
            free(keys);
            free(values);
            return -1;
        }
        for (size_t i = 0; i < t->cap; i++)
            if (t->values[i])
                gemm_table_place(keys, values, cap, &t->keys[i], t->values[i]);
        free(t->keys);
        free(t->values);
        t->keys = keys;
        t->values = values;
        t->cap = cap;
    }
    gemm_table_place(t->keys, t->values, t->cap, key, value);
    t->count++;
    return 0;
}

/* Hands every value to release (when given) and empties the table. */
static inline void gemm_table_clear(gemm_table *t, void (*release)(void *value, void *ctx),
                                    void *ctx)
{
    for (size_t i = 0; i < t->cap; i++)
        if (t->values[i] && release)
            release(t->values[i], ctx);
    free(t->keys);
    free(t->values);
    memset(t, 0, sizeof *t);
}

#endif
