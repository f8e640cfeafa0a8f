/* Which ops table a CPU backend runs: the attention arrangement
 * CPU_ATTENTION_ENV names (cpu_backend.h), and the one a bf16 run must
 * take. The unfused arrangement is no code of its own here: it is the
 * full table without the fused op, so that the model runs the path a
 * backend without the op runs (the permutes, strided-batched products and
 * causal softmax that CUDA runs by default). */
#include <pthread.h>

#include "cpu_backend.h"
#include "cpu_internal.h"

static backend_ops cpu_ops_unfused;
static pthread_once_t unfused_once = PTHREAD_ONCE_INIT;

static void make_unfused(void)
{
    cpu_ops_unfused = cpu_ops_all;
    cpu_ops_unfused.attention_forward = NULL;
    cpu_ops_unfused.attention_backward = NULL;
}

static const backend_ops *ops_of(attention_kind k)
{
    if (k == ATTENTION_FUSED)
        return &cpu_ops_all;
    pthread_once(&unfused_once, make_unfused);
    return &cpu_ops_unfused;
}

/* The variable is read on every switch of dtype, not once: a bad value is
 * refused whatever the dtype, so that a typo never passes unsaid because a
 * bf16 run would not have used it. The fused attention
 * (cpu_attention.c) reads and writes fp32 alone, so bf16 takes the
 * unfused path CUDA takes (bf16 products), whatever the variable says. */
const backend_ops *cpu_ops_for(dtype dt, char *why, size_t why_len)
{
    attention_kind k;
    if (attention_from_env(CPU_ATTENTION_ENV, CPU_ATTENTION_DEFAULT, &k, why, why_len))
        return NULL;
    return ops_of(dt == DTYPE_BF16 ? ATTENTION_UNFUSED : k);
}
