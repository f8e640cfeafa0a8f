/* The synthetic data: float features exactly as before the model interface
 * (the numbers every result rests on), token ids for models that read
 * tokens, validity per loss item, and the loss scales of a split from the
 * valid counts. On the CPU backend device memory is host memory. */
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dataset.h"
#include "dispatch.h"

static unsigned long long fnv(unsigned long long h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ull;
    }
    return h;
}

static backend *cpu(void)
{
    backend *b = NULL;
    char why[300];
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    return b;
}

/* The tiny MLP's input (64 features, 16 classes), 20 examples, 3 buffers,
 * seed 7, and the scales of a 6 x 4 mean-of-means split: hashed, the same
 * bytes as the data made before models had an interface. */
static void test_features_unchanged(void)
{
    backend *b = cpu();
    if (!b)
        return;
    input_spec in = {.kind = INPUT_FEATURES, .width = 64, .classes = 16, .loss_items = 1};
    dataset d;
    CHECK(dataset_create(b, &in, 20, 3, 7, &d) == BK_OK);
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < d.count; i++) {
        h = fnv(h, d.buf[i].x, (size_t)64 * 20 * 4);
        h = fnv(h, d.buf[i].labels, 20 * 4);
        h = fnv(h, d.buf[i].valid, 20 * 4);
    }
    CHECK(dataset_set_split(&d, 6, REDUCTION_MEAN_OF_MEANS) == BK_OK);
    h = fnv(h, d.buf[1].scales, 5 * 4);
    CHECK(h == 0xb923ccd18ad58227ull);
    if (h != 0xb923ccd18ad58227ull)
        fprintf(stderr, "  features hash %016llx\n", h);
    CHECK(d.bytes == 3 * input_buffer_bytes(&in, STORAGE_F32, 20));
    CHECK(b->mem_in_use == d.bytes);
    dataset_destroy(&d);
    CHECK(b->mem_in_use == 0);
    b->ops->destroy(b);
}

/* Token ids: ints in [0, vocab) whatever the compute storage (bf16 here:
 * the CPU computes in fp32, but ids never pass through the compute
 * storage, so nothing of it is asked), a label and a validity flag per
 * token, the valid count per example range, and the scales from those
 * counts. Each sequence is a document then padding: its valid tokens are
 * a prefix of at least one, padding is token 0 and masked. */
static void test_tokens(void)
{
    backend *b = cpu();
    if (!b)
        return;
    b->compute_storage = STORAGE_BF16;
    enum { T = 5, V = 11, C = 13, E = 6 };
    input_spec in = {.kind = INPUT_TOKENS, .width = T, .vocab = V, .classes = C,
                     .loss_items = T};
    dataset d;
    CHECK(dataset_create(b, &in, E, 2, 3, &d) == BK_OK);
    CHECK(d.bytes == 2 * input_buffer_bytes(&in, STORAGE_BF16, E));
    CHECK(input_buffer_bytes(&in, STORAGE_BF16, E) ==
          (size_t)T * E * sizeof(int) + 2 * (size_t)T * E * sizeof(int) + (E + 1) * sizeof(float));
    CHECK(b->mem_in_use == d.bytes);

    for (int i = 0; i < d.count; i++) {
        const int *ids = d.buf[i].x, *labels = d.buf[i].labels, *flags = d.buf[i].valid;
        for (int e = 0; e < E; e++) {
            CHECK(flags[e * T] == 1); /* a document has a token at least */
            for (int j = e * T; j < (e + 1) * T; j++) {
                CHECK(ids[j] >= 0 && ids[j] < V);
                CHECK(labels[j] >= 0 && labels[j] < C);
                CHECK(flags[j] == 0 || flags[j] == 1);
                CHECK(flags[j] == d.buf[i].valid_host[j]);
                if (j > e * T)
                    CHECK(flags[j] <= flags[j - 1]); /* padding only after it */
                if (!flags[j])
                    CHECK(ids[j] == 0 && labels[j] == 0);
            }
        }
    }

    /* Counts are of tokens, over whole examples. */
    const int *flags = d.buf[1].valid_host;
    int first_two = 0;
    for (int j = 0; j < 2 * T; j++)
        first_two += flags[j];
    CHECK(dataset_valid_count(&d, 1, 0, 2) == first_two);
    CHECK(dataset_valid_count(&d, 1, 0, E) ==
          dataset_valid_count(&d, 1, 0, 4) + dataset_valid_count(&d, 1, 4, 2));

    /* E = 6 as 4 + 2: the sum reduction gives every token 1 / the window's
     * valid tokens, and the view of the short last micro-batch. */
    CHECK(dataset_set_split(&d, 4, REDUCTION_SUM) == BK_OK);
    int window = dataset_valid_count(&d, 1, 0, E);
    const float *scales = d.buf[1].scales;
    CHECK_NEAR(scales[0], 1.0 / window, 1e-7);
    CHECK_NEAR(scales[1], 1.0 / window, 1e-7);
    CHECK_NEAR(scales[2], 1.0 / window, 1e-7);
    micro_batch_view v = dataset_micro(&d, 1, 4, 1);
    CHECK(v.first == 4 && v.count == 2 && v.scale == scales + 1);
    CHECK(v.x == d.buf[1].x && v.labels == d.buf[1].labels);
    v = dataset_full_batch(&d, 1, 4);
    CHECK(v.first == 0 && v.count == E && v.scale == scales + 2);
    dataset_destroy(&d);
    CHECK(b->mem_in_use == 0);
    b->ops->destroy(b);
}

/* A language model's data: where the classes are the vocabulary, a
 * token's label is the next token of its document; ids are skewed as
 * Zipf's law says (1 / rank); document lengths vary, so micro-batches of
 * the same size hold different numbers of valid tokens. */
static void test_documents(void)
{
    backend *b = cpu();
    if (!b)
        return;
    enum { T = 16, V = 50, E = 400 };
    input_spec in = {.kind = INPUT_TOKENS, .width = T, .vocab = V, .classes = V,
                     .loss_items = T};
    dataset d;
    CHECK(dataset_create(b, &in, E, 1, 9, &d) == BK_OK);
    const int *ids = d.buf[0].x, *labels = d.buf[0].labels, *ok = d.buf[0].valid_host;
    int count[V] = {0}, lengths[T + 1] = {0}, valid = 0;
    for (int e = 0; e < E; e++) {
        int len = 0;
        for (int i = 0; i < T; i++) {
            int j = e * T + i;
            len += ok[j];
            if (ok[j]) {
                count[ids[j]]++;
                valid++;
            }
            if (i + 1 < T && ok[j + 1])
                CHECK(labels[j] == ids[j + 1]);
        }
        lengths[len]++;
    }
    /* 1/rank: token 0 about twice as often as token 1 and 50 times as often
     * as token 49 (about 3400 valid tokens drawn). */
    CHECK(count[0] > 1.5 * count[1] && count[1] > count[10] && count[0] > 20 * count[V - 1]);
    /* Lengths uniform in 1..16: mean 8.5, each about 25 times. */
    CHECK(valid > E * 7 && valid < E * 10);
    for (int len = 1; len <= T; len++)
        CHECK(lengths[len] > 5);
    CHECK(lengths[0] == 0);
    /* Micro-batches of 4 sequences: their valid tokens differ. */
    int lo = T * 4, hi = 0;
    for (int k = 0; k < E / 4; k++) {
        int v = dataset_valid_count(&d, 0, 4 * k, 4);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    CHECK(hi - lo > 20);
    dataset_destroy(&d);
    b->ops->destroy(b);
}

int main(void)
{
    test_features_unchanged();
    test_tokens();
    test_documents();
    return check_finish("test_dataset");
}
