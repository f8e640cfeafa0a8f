/* The CUDA backend's most held in a window (kernels/cuda/cuda_held.h),
 * driven as cuda_memory.cu drives it, against a device simulated here:
 * what it holds grows by each allocation's footprint (the allocator's
 * rounding: more than the bytes asked for) and falls at each free. The
 * peak of the `alloc` mode's steps, whose activations are freed after
 * every micro-batch, is their micro-batch's top, not what the device
 * holds once the steps are done (what held_peak read before); the device
 * is read once a window where every micro-batch allocates alike, not at
 * every allocation; the pool's high-water mark bounds the alloc-async
 * mode's part; a window starts again from what is held at its reset, as
 * the CPU's resident high-water mark does. */
#include <stddef.h>

#include "check.h"
#include "cuda_held.h"

#define MIB ((size_t)1 << 20)

typedef struct fake_device {
    size_t used; /* what cudaMemGetInfo would say is in use */
    size_t live; /* the harness's bytes through the backend (b->mem_in_use) */
    int reads;   /* cudaMemGetInfo calls inside the steps */
    cuda_held h;
} fake_device;

/* cuda_alloc: the allocation made, then held_allocated with the harness's
 * count before dispatch.h adds it. */
static void dev_alloc(fake_device *d, size_t bytes, size_t footprint)
{
    d->used += footprint;
    cuda_held_allocated(&d->h, d->live + bytes);
    d->live += bytes;
}

/* cuda_free: held_before_free, then the free. */
static void dev_free(fake_device *d, size_t bytes, size_t footprint)
{
    if (cuda_held_read_before_free(&d->h)) {
        d->reads++;
        cuda_held_read(&d->h, d->used);
    }
    d->used -= footprint;
    d->live -= bytes;
}

static void dev_open(fake_device *d, size_t pool_reserved)
{
    d->reads = 0;
    cuda_held_open(&d->h, d->used, d->live, pool_reserved);
}

/* One micro-batch of the `alloc` mode: three activations made (each
 * rounded up to 2 MiB pages), the passes, all three freed. */
static void alloc_micro_batch(fake_device *d, size_t scale)
{
    const size_t asked[3] = {3 * MIB * scale, 1 * MIB * scale + 5, 7 * MIB * scale};
    for (int i = 0; i < 3; i++)
        dev_alloc(d, asked[i], (asked[i] + 2 * MIB - 1) / (2 * MIB) * 2 * MIB);
    for (int i = 0; i < 3; i++)
        dev_free(d, asked[i], (asked[i] + 2 * MIB - 1) / (2 * MIB) * 2 * MIB);
}

static void test_alloc_mode(void)
{
    fake_device d = {.used = 900 * MIB, .live = 500 * MIB};
    const size_t held_before = d.used;
    const size_t top = held_before + (4 + 2 + 8) * MIB; /* the micro-batch's footprints */
    dev_open(&d, 0);
    for (int k = 0; k < 8; k++)
        alloc_micro_batch(&d, 1);
    /* After the steps the activations are gone: the device holds what it
     * held before them, which is all that reading it when asked gave. */
    CHECK(d.used == held_before);
    CHECK(cuda_held_peak(&d.h, d.used, 0) == top);
    /* Read once, in the first micro-batch: the others reach the same top. */
    CHECK(d.reads == 1);

    /* A later, larger micro-batch is a new top: read again. */
    alloc_micro_batch(&d, 2);
    CHECK(d.reads == 2);
    CHECK(cuda_held_peak(&d.h, d.used, 0) == held_before + (6 + 4 + 14) * MIB);

    /* A new window starts from what is held at its reset, not from the
     * last one's peak. */
    dev_open(&d, 0);
    CHECK(cuda_held_peak(&d.h, d.used, 0) == held_before);
    alloc_micro_batch(&d, 1);
    CHECK(cuda_held_peak(&d.h, d.used, 0) == top);
}

/* The default mode keeps its activations: nothing is allocated in the
 * steps, nothing read in them, and the peak is what is held. */
static void test_held_activations(void)
{
    fake_device d = {.used = 2000 * MIB, .live = 1500 * MIB};
    dev_open(&d, 0);
    CHECK(cuda_held_peak(&d.h, d.used, 0) == 2000 * MIB);
    CHECK(d.reads == 0);
    /* Held memory that grows in the window without a free after it (the
     * kernels' code loaded, another process) is read at the end. */
    d.used += 3 * MIB;
    CHECK(cuda_held_peak(&d.h, d.used, 0) == 2003 * MIB);
}

/* The alloc-async mode: the pool's reserve counts from the opening, and
 * its high-water mark since then bounds its part of the peak even where
 * no read saw it (the pool trimmed before the end: an OOM's retry). */
static void test_pool(void)
{
    fake_device d = {.used = 1000 * MIB, .live = 600 * MIB};
    const size_t reserved = 100 * MIB; /* kept from before, part of `used` */
    dev_open(&d, reserved);
    CHECK(cuda_held_peak(&d.h, d.used, reserved) == 1000 * MIB);
    /* The pool grows by 60 MiB and is trimmed back to nothing. */
    d.used += 60 * MIB;
    d.used -= 160 * MIB;
    CHECK(cuda_held_peak(&d.h, d.used, 160 * MIB) == 900 * MIB + 160 * MIB);
    /* A read above the pool's bound wins. */
    cuda_held_read(&d.h, 1200 * MIB);
    CHECK(cuda_held_peak(&d.h, d.used, 160 * MIB) == 1200 * MIB);
}

/* Outside a window (held_reset never called): what is held now, and no
 * read in the allocations' way. */
static void test_no_window(void)
{
    cuda_held h = {0};
    cuda_held_allocated(&h, 100 * MIB);
    CHECK(!cuda_held_read_before_free(&h));
    CHECK(cuda_held_peak(&h, 700 * MIB, 900 * MIB) == 700 * MIB);
}

int main(void)
{
    test_alloc_mode();
    test_held_activations();
    test_pool();
    test_no_window();
    return check_finish("test_cuda_held");
}
