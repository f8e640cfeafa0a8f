/* The CUDA backend's host-side logic, testable without a GPU: the datasheet
 * peak looked up by the device's name, and the cache of
 * GEMM plans keyed by shape (a strided batch's count and strides too). Both headers are plain C. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda_device_index.h"
#include "cuda_gemm_cache.h"
#include "cuda_peak.h"

static void test_datasheet(void)
{
    /* The names cudaGetDeviceProperties reports, against the datasheets'
     * dense figures. H100/H200 SXM: fp32 67, tf32 494.5, bf16 989.5. */
    CHECK(cuda_datasheet_tflops("NVIDIA H200", DTYPE_BF16) == 989.5);
    CHECK(cuda_datasheet_tflops("NVIDIA H200", DTYPE_TF32) == 494.5);
    CHECK(cuda_datasheet_tflops("NVIDIA H200", DTYPE_FP32) == 67.0);
    CHECK(cuda_datasheet_tflops("NVIDIA H100 80GB HBM3", DTYPE_BF16) == 989.5);
    /* A variant is not taken for its family: the PCIe and NVL parts. */
    CHECK(cuda_datasheet_tflops("NVIDIA H100 PCIe", DTYPE_BF16) == 756.5);
    CHECK(cuda_datasheet_tflops("NVIDIA H100 PCIe", DTYPE_FP32) == 51.0);
    CHECK(cuda_datasheet_tflops("NVIDIA H200 NVL", DTYPE_BF16) == 835.5);
    CHECK(cuda_datasheet_tflops("NVIDIA A100-SXM4-80GB", DTYPE_TF32) == 156.0);
    CHECK(cuda_datasheet_tflops("NVIDIA A100 80GB PCIe", DTYPE_BF16) == 312.0);
    CHECK(cuda_datasheet_tflops("NVIDIA B200", DTYPE_BF16) == 2250.0);
    CHECK(cuda_datasheet_tflops("NVIDIA L40S", DTYPE_FP32) == 91.6);
    /* A device the table does not name: 0 (unknown), never a guess. */
    CHECK(cuda_datasheet_tflops("NVIDIA GeForce RTX 4090", DTYPE_BF16) == 0.0);
    CHECK(cuda_datasheet_tflops("Tesla V100-SXM2-16GB", DTYPE_BF16) == 0.0);
    CHECK(cuda_datasheet_tflops(NULL, DTYPE_BF16) == 0.0);

    CHECK(cuda_peak_gemm_n((size_t)141 << 30) == 8192);
    CHECK(cuda_peak_gemm_n((size_t)8 << 30) == 4096);
}

static gemm_key key_of(int m, int n, int k, int tb, int align)
{
    gemm_key key;
    memset(&key, 0, sizeof key);
    key.m = m;
    key.n = n;
    key.k = k;
    key.trans_b = tb;
    key.lda = m;
    key.ldb = tb ? n : k;
    key.ldc = m;
    key.align_a = key.align_b = key.align_c = align;
    return key;
}

static void test_alignment(void)
{
    CHECK(gemm_alignment((void *)(uintptr_t)0x1000) == 16);
    CHECK(gemm_alignment((void *)(uintptr_t)0x1008) == 8);
    CHECK(gemm_alignment((void *)(uintptr_t)0x1004) == 4);
    CHECK(gemm_alignment((void *)(uintptr_t)0x1002) == 2);
    CHECK(gemm_alignment((void *)(uintptr_t)0x1001) == 1);
}

static void release_count(void *value, void *ctx)
{
    (void)value;
    (*(int *)ctx)++;
}

/* Many shapes (a sweep's worth and more, through several growths), each
 * found again under its own key with its own value; keys that differ in one
 * field only are different shapes. */
static void test_table(void)
{
    gemm_table t = {0};
    enum { N = 1000 };
    static int values[N];
    CHECK(gemm_table_find(&t, &(gemm_key){0}) == NULL);
    for (int i = 0; i < N; i++) {
        gemm_key k = key_of(1024, 1 + i, 4096, i & 1, 16);
        CHECK(gemm_table_find(&t, &k) == NULL);
        CHECK(gemm_table_insert(&t, &k, &values[i]) == 0);
    }
    CHECK(t.count == N);
    CHECK(t.cap >= 2 * N);
    int all_found = 1;
    for (int i = 0; i < N; i++) {
        gemm_key k = key_of(1024, 1 + i, 4096, i & 1, 16);
        all_found &= gemm_table_find(&t, &k) == &values[i];
    }
    CHECK(all_found);
    gemm_key k = key_of(1024, 1, 4096, 1, 16); /* transpose differs from entry 0 */
    CHECK(gemm_table_find(&t, &k) == NULL);
    k = key_of(1024, 1, 4096, 0, 8); /* alignment differs */
    CHECK(gemm_table_find(&t, &k) == NULL);
    k = key_of(1024, 1, 4096, 0, 16);
    k.compute = 2; /* dtype differs */
    CHECK(gemm_table_find(&t, &k) == NULL);

    int released = 0;
    gemm_table_clear(&t, release_count, &released);
    CHECK(released == N);
    CHECK(t.cap == 0 && t.count == 0 && t.values == NULL);
}

/* A strided batch's key: its count and strides are part of the shape,
 * batch 0 and 1 are the same single product whatever the strides say, and
 * the alignment is what every product's start has. */
static void test_batch_key(void)
{
    gemm_desc g = {.m = 64, .n = 64, .k = 64, .lda = 192, .ldb = 192, .ldc = 64,
                   .a = (void *)(uintptr_t)0x1000, .b = (void *)(uintptr_t)0x2000,
                   .c = (void *)(uintptr_t)0x3000, .ab_storage = STORAGE_BF16,
                   .c_storage = STORAGE_BF16};
    gemm_key one = gemm_key_of(&g, 2);
    g.batch = 1;
    g.stride_a = 7;
    gemm_key also_one = gemm_key_of(&g, 2);
    CHECK(gemm_key_equal(&one, &also_one));
    CHECK(one.batch == 1 && one.stride_a == 0 && one.align_a == 16);

    g.batch = 12;
    g.stride_a = 64, g.stride_b = 64, g.stride_c = 4096;
    gemm_key heads = gemm_key_of(&g, 2);
    CHECK(!gemm_key_equal(&one, &heads));
    CHECK(heads.batch == 12 && heads.stride_a == 64 && heads.stride_c == 4096);
    CHECK(heads.align_a == 16 && heads.align_c == 16); /* 128 and 8192 bytes apart */
    g.stride_b = 65;
    gemm_key other = gemm_key_of(&g, 2);
    CHECK(!gemm_key_equal(&heads, &other));
    CHECK(other.align_b == 2); /* 130 bytes apart: bf16-aligned only */
    g.stride_b = -64;
    CHECK(gemm_key_of(&g, 2).align_b == 16);
    g.batch = 13;
    g.stride_b = 64;
    gemm_key more = gemm_key_of(&g, 2);
    CHECK(!gemm_key_equal(&heads, &more));
}

/* A key is its fields, not the struct's bytes: a copy made field by field
 * into memory holding other bytes (as a copy of the struct may leave its
 * padding) is the same key, with the same hash, and is found. */
static void test_key_padding(void)
{
    gemm_desc g = {.trans_b = 1, .m = 768, .n = 8192, .k = 3072, .lda = 768, .ldb = 8192,
                   .ldc = 768, .a = (void *)(uintptr_t)0x1000, .b = (void *)(uintptr_t)0x2008,
                   .c = (void *)(uintptr_t)0x3000, .ab_storage = STORAGE_BF16,
                   .c_storage = STORAGE_F32, .batch = 4, .stride_a = 64, .stride_b = 128,
                   .stride_c = 4096};
    gemm_key k = gemm_key_of(&g, 2), copy;
    memset(&copy, 0xa5, sizeof copy);
    copy.trans_a = k.trans_a, copy.trans_b = k.trans_b;
    copy.m = k.m, copy.n = k.n, copy.k = k.k;
    copy.lda = k.lda, copy.ldb = k.ldb, copy.ldc = k.ldc;
    copy.ab_storage = k.ab_storage, copy.c_storage = k.c_storage, copy.compute = k.compute;
    copy.align_a = k.align_a, copy.align_b = k.align_b, copy.align_c = k.align_c;
    copy.batch = k.batch;
    copy.stride_a = k.stride_a, copy.stride_b = k.stride_b, copy.stride_c = k.stride_c;
    CHECK(gemm_key_equal(&k, &copy));
    CHECK(gemm_key_hash(&k) == gemm_key_hash(&copy));
    gemm_table t = {0};
    static int value;
    CHECK(gemm_table_insert(&t, &k, &value) == 0);
    CHECK(gemm_table_find(&t, &copy) == &value);
    copy.ldc = 1024; /* one field differs: another shape */
    CHECK(!gemm_key_equal(&k, &copy));
    CHECK(gemm_table_find(&t, &copy) == NULL);
    gemm_table_clear(&t, NULL, NULL);
}

/* A rank's GPU is its index on the node; an index past the node's GPUs is
 * refused with one line (two ranks would share a GPU), never wrapped. */
static void test_device_index(void)
{
    char why[200] = "";
    int d = -1;
    CHECK(cuda_device_for_index(NULL, 1, &d, why, sizeof why) == 0 && d == 0);
    CHECK(cuda_device_for_index("3", 8, &d, why, sizeof why) == 0 && d == 3);
    CHECK(cuda_device_for_index("1", 1, &d, why, sizeof why) == -1);
    CHECK(strstr(why, "number 1 on its node, which has 1 GPU: two ranks would share") != NULL);
    CHECK(cuda_device_for_index("8", 8, &d, why, sizeof why) == -1);
}

int main(void)
{
    test_device_index();
    test_datasheet();
    test_alignment();
    test_table();
    test_batch_key();
    test_key_padding();
    return check_finish("test_cuda_host");
}
