/* The CUDA that the backend's kernels (the .cuh files of kernels/cuda/)
 * use, on the host, so that their very source runs where no GPU is: each CUDA thread a pthread,
 * a block's threads all at once (so a missing barrier shows as a race),
 * the blocks of a launch one after the other: in their index order, or
 * shuffled after emu_block_order(seed), as a GPU may run them, so that a
 * result that hangs on the blocks' order (an atomic sum's) differs between
 * two orders. __syncthreads is a barrier
 * of the block; a warp's shuffle or ballot an exchange through memory
 * between two barriers of its 32 (full-warp masks only: the kernels use
 * no other);
 * atomicAdd a mutex. Shared memory, the dynamic (emu_smem) and the static
 * (cuda_device.cuh's BLOCK_SHARED), is fresh for every block and filled
 * with 0xff bytes first: NaN read as fp32, as either bf16 half and as
 * fp64, so a read of what no thread wrote shows in the results. The
 * static arrays are carved in declaration order, each thread counting its
 * own, so the threads agree as long as they declare alike (they do:
 * declarations sit at a kernel's top); past the device's 48 KiB aborts.
 *
 * int4, float4 and ushort4 carry the device's alignment, so a build with
 * -fsanitize=alignment catches a 16-byte load from a misaligned row.
 *
 * Included first by the emulation programs of tests/kernels/, then
 * elementwise.h and the kernels' headers. A hang (a barrier some thread
 * never reaches) ends the program after emu_start's limit. */
#ifndef ACCUBENCH_CUDA_EMULATION_H
#define ACCUBENCH_CUDA_EMULATION_H

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(x)

struct emu_uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
static thread_local emu_uint3 threadIdx;
static thread_local unsigned emu_tid; /* the thread's rank in its block */
static emu_uint3 blockIdx;            /* set by thread 0 between two barriers */
static dim3 blockDim, gridDim;

/* the vector types, aligned as on the device */
struct alignas(16) int4 {
    int x, y, z, w;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
struct alignas(8) ushort4 {
    unsigned short x, y, z, w;
};

static inline int min(int a, int b) { return a < b ? a : b; }
static inline unsigned __float_as_uint(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float __uint_as_float(unsigned u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#define EMU_MAX_THREADS 1024
#define EMU_STATIC_SHARED (48 << 10) /* a block's static shared memory on the device */

static pthread_barrier_t emu_block_bar, emu_warp_bar[EMU_MAX_THREADS / 32];
static uint64_t emu_slots[EMU_MAX_THREADS];
static pthread_mutex_t emu_atomic_lock = PTHREAD_MUTEX_INITIALIZER;

static inline void __syncthreads() { pthread_barrier_wait(&emu_block_bar); }
/* A barrier that also tells every thread whether any thread's predicate
 * held: each thread's slot written before it, all read after, and a second
 * barrier before any slot is reused. */
static inline int __syncthreads_or(int predicate)
{
    emu_slots[emu_tid] = predicate != 0;
    __syncthreads();
    int any = 0;
    for (unsigned t = 0; t < blockDim.x * blockDim.y * blockDim.z; t++)
        any |= emu_slots[t] != 0;
    __syncthreads();
    return any;
}

template <typename T> static inline T emu_shfl_xor(unsigned mask, T v, int off)
{
    static_assert(sizeof(T) <= sizeof(uint64_t), "a shuffle moves at most 8 bytes");
    if (mask != 0xffffffffu) {
        fprintf(stderr, "cuda emulation: a shuffle of part of a warp (mask %#x)\n", mask);
        abort();
    }
    const unsigned w = emu_tid / 32, other = w * 32 + ((emu_tid % 32) ^ (unsigned)off);
    memcpy(&emu_slots[emu_tid], &v, sizeof v);
    pthread_barrier_wait(&emu_warp_bar[w]);
    T r;
    memcpy(&r, &emu_slots[other], sizeof r);
    pthread_barrier_wait(&emu_warp_bar[w]);
    return r;
}
#define __shfl_xor_sync(mask, v, off) emu_shfl_xor(mask, v, off)

/* Each lane's predicate, a bit a lane, through the same exchange. */
static inline unsigned __ballot_sync(unsigned mask, int predicate)
{
    if (mask != 0xffffffffu) {
        fprintf(stderr, "cuda emulation: a ballot of part of a warp (mask %#x)\n", mask);
        abort();
    }
    const unsigned w = emu_tid / 32;
    emu_slots[emu_tid] = predicate != 0;
    pthread_barrier_wait(&emu_warp_bar[w]);
    unsigned bits = 0;
    for (unsigned lane = 0; lane < 32; lane++)
        bits |= (emu_slots[w * 32 + lane] != 0 ? 1u : 0u) << lane;
    pthread_barrier_wait(&emu_warp_bar[w]);
    return bits;
}
static inline int __popc(unsigned x) { return __builtin_popcount(x); }

static inline float atomicAdd(float *p, float v)
{
    pthread_mutex_lock(&emu_atomic_lock);
    float old = *p;
    *p = old + v;
    pthread_mutex_unlock(&emu_atomic_lock);
    return old;
}

/* ---- shared memory */
static float *emu_smem; /* the launch's dynamic shared memory */
static size_t emu_smem_floats;
alignas(64) static unsigned char emu_static_smem[EMU_STATIC_SHARED];
static thread_local size_t emu_static_used;

static inline void *emu_shared_take(size_t bytes, size_t align)
{
    size_t at = (emu_static_used + align - 1) / align * align;
    if (at + bytes > sizeof emu_static_smem) {
        fprintf(stderr, "cuda emulation: a block's static shared memory passes %d bytes\n",
                EMU_STATIC_SHARED);
        abort();
    }
    emu_static_used = at + bytes;
    return emu_static_smem + at;
}
#define BLOCK_SHARED(type, name, dims)                                                       \
    type(&name) dims = *(type(*) dims)emu_shared_take(sizeof(type dims), alignof(type))

/* ---- launches: blockDim's threads, which take the blocks in turn */

/* The order the launches that follow run their blocks in: 0, the index
 * order; any other seed, the shuffle drawn from it. */
static unsigned emu_block_seed;
static inline void emu_block_order(unsigned seed) { emu_block_seed = seed; }

template <class F> struct emu_launch_ctx {
    F *body;
    std::vector<unsigned> *order; /* the blocks' linear indices, in the order they run */
    std::vector<float> *smem;
};
template <class F> struct emu_thread_arg {
    emu_launch_ctx<F> *ctx;
    unsigned tid;
};
template <class F> static void *emu_thread_main(void *p)
{
    emu_thread_arg<F> *a = (emu_thread_arg<F> *)p;
    emu_tid = a->tid;
    threadIdx.x = a->tid % blockDim.x;
    threadIdx.y = a->tid / blockDim.x % blockDim.y;
    threadIdx.z = a->tid / (blockDim.x * blockDim.y);
    for (unsigned b : *a->ctx->order) {
        if (a->tid == 0) {
            blockIdx.x = b % gridDim.x;
            blockIdx.y = b / gridDim.x % gridDim.y;
            blockIdx.z = b / (gridDim.x * gridDim.y);
            std::fill(a->ctx->smem->begin(), a->ctx->smem->end(), __uint_as_float(~0u));
            memset(emu_static_smem, 0xff, sizeof emu_static_smem);
            emu_smem = a->ctx->smem->data();
            emu_smem_floats = a->ctx->smem->size();
        }
        emu_static_used = 0;
        __syncthreads();
        (*a->ctx->body)();
        __syncthreads(); /* the block is done before the next one starts */
    }
    return nullptr;
}

/* body() runs as the kernel call `<<<grid, block, bytes>>>` would, in
 * every thread of every block. */
template <class F> static void emu_launch(dim3 grid, dim3 block, size_t bytes, F body)
{
    const unsigned threads = block.x * block.y * block.z;
    if (threads == 0 || threads > EMU_MAX_THREADS || threads % 32) {
        fprintf(stderr, "cuda emulation: a block of %u threads (whole warps, at most %d)\n",
                threads, EMU_MAX_THREADS);
        abort();
    }
    blockDim = block;
    gridDim = grid;
    pthread_barrier_init(&emu_block_bar, nullptr, threads);
    std::vector<float> smem((bytes + sizeof(float) - 1) / sizeof(float));
    std::vector<unsigned> order(grid.x * grid.y * grid.z);
    std::iota(order.begin(), order.end(), 0u);
    if (emu_block_seed)
        std::shuffle(order.begin(), order.end(), std::mt19937(emu_block_seed));
    emu_launch_ctx<F> ctx = {&body, &order, &smem};
    std::vector<pthread_t> th(threads);
    std::vector<emu_thread_arg<F>> args(threads);
    for (unsigned t = 0; t < threads; t++) {
        args[t] = {&ctx, t};
        if (pthread_create(&th[t], nullptr, emu_thread_main<F>, &args[t])) {
            fprintf(stderr, "cuda emulation: pthread_create failed\n");
            exit(2);
        }
    }
    for (unsigned t = 0; t < threads; t++)
        pthread_join(th[t], nullptr);
    pthread_barrier_destroy(&emu_block_bar);
}

/* Before the first launch: the warps' barriers, and a limit on the whole
 * run (SIGALRM ends it), so that a kernel that hangs fails. */
static inline void emu_start(unsigned seconds)
{
    for (int w = 0; w < EMU_MAX_THREADS / 32; w++)
        pthread_barrier_init(&emu_warp_bar[w], nullptr, 32);
    alarm(seconds);
}

#endif
