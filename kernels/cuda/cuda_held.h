/* The most the device held in a window (backend_ops.held_reset and
 * held_peak on CUDA), as the CPU backend's resident high-water mark gives
 * it for the process: the peak, not what is held when asked. The device
 * has no high-water mark of its own for cudaMalloc, and what it holds
 * (cudaMemGetInfo) is read where it can be at its most: memory in use
 * only grows at an allocation, so its peak is reached at the last
 * allocation before a free. Reading it after every allocation would put
 * a driver call (several microseconds) into the `alloc` modes' timed
 * steps, which time the allocations themselves; so it is read before a
 * free only when the bytes the harness holds through the backend passed
 * their window's top since the last read (the first micro-batch of a
 * window, where each one allocates the same as the last), and once more
 * when the peak is asked for. The allocator's rounding follows the bytes
 * it is asked for, so a new top of those is where the device's may be.
 *
 * The stream-ordered pool (the alloc-async mode) keeps a high-water mark
 * of what it reserved, reset as the window opens: what the device held
 * outside the pool then, plus that mark, bounds the pool's part of the
 * peak whatever the order of its allocations and frees. The pool's
 * reserve at the opening counts as held (the mode keeps it on purpose,
 * as the device does): trimming it there, as the CPU backend gives the C
 * library's free memory back, would make the timed steps that follow pay
 * for growing it again.
 *
 * Plain C with no CUDA header: the unit tests check it on a machine
 * without a GPU. */
#ifndef ACCUBENCH_CUDA_HELD_H
#define ACCUBENCH_CUDA_HELD_H

#include <stddef.h>

typedef struct cuda_held {
    int open;            /* a window is open (held_reset was called) */
    int unread;          /* live passed live_top since the device was last read */
    size_t high;         /* the most the device held, of what was read in the window */
    size_t live_top;     /* the most bytes held through the backend in the window */
    size_t outside_pool; /* what the device held at the opening, less the pool's reserve */
} cuda_held;

/* Opens a window: the device holds `used` now, `pool_reserved` of it in
 * the stream-ordered pool (0 without one), and the harness `live` bytes
 * through the backend. */
static inline void cuda_held_open(cuda_held *h, size_t used, size_t live, size_t pool_reserved)
{
    h->open = 1;
    h->unread = 0;
    h->high = used;
    h->live_top = live;
    h->outside_pool = used > pool_reserved ? used - pool_reserved : 0;
}

/* After an allocation: `live`, the bytes held through the backend with it. */
static inline void cuda_held_allocated(cuda_held *h, size_t live)
{
    if (h->open && live > h->live_top) {
        h->live_top = live;
        h->unread = 1;
    }
}

/* Whether the device must be read before a free: held at a new top since
 * the last read, it may be at the window's peak now and less after. */
static inline int cuda_held_read_before_free(const cuda_held *h)
{
    return h->open && h->unread;
}

/* The device holds `used` now. */
static inline void cuda_held_read(cuda_held *h, size_t used)
{
    if (used > h->high)
        h->high = used;
    h->unread = 0;
}

/* The most held in the window, the device holding `used` now and the
 * pool's high-water mark since the opening `pool_high` (0 without one).
 * Without a window, what is held now. The window stays open. */
static inline size_t cuda_held_peak(cuda_held *h, size_t used, size_t pool_high)
{
    if (!h->open)
        return used;
    cuda_held_read(h, used);
    size_t by_pool = h->outside_pool + pool_high;
    return by_pool > h->high ? by_pool : h->high;
}

#endif
