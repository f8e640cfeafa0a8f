/* The CPU backend's ops table as CPU_ATTENTION_ENV picks it
 * (cpu_attention_choice.c): unset, the default the backend's header
 * states; fused, the table with the fused op; unfused, the same table
 * without it; bf16, without it whatever the variable says (the op reads
 * fp32 alone), and a switch of dtype follows; a bad value refuses to open
 * the backend, in one line naming the variable, whatever the dtype. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"

static int has_fused(const backend *b)
{
    return b->ops->attention_forward != NULL && b->ops->attention_backward != NULL;
}

/* The backend opened in dt under `value` of the variable (NULL: unset),
 * or NULL with the reason in why. */
static backend *open_under(const char *value, dtype dt, char *why, size_t len)
{
    if (value)
        setenv(CPU_ATTENTION_ENV, value, 1);
    else
        unsetenv(CPU_ATTENTION_ENV);
    backend *b = NULL;
    return cpu_backend_create(dt, &b, why, len) == BK_OK ? b : NULL;
}

static void test_fp32(void)
{
    char why[256];
    struct {
        const char *value;
        int fused;
    } cases[] = {
        {NULL, CPU_ATTENTION_DEFAULT == ATTENTION_FUSED},
        {attention_name(ATTENTION_FUSED), 1},
        {attention_name(ATTENTION_UNFUSED), 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        backend *b = open_under(cases[i].value, DTYPE_FP32, why, sizeof why);
        CHECK(b != NULL);
        if (!b)
            continue;
        CHECK(has_fused(b) == cases[i].fused);
        /* the unfused table is the fused one less the op, nothing else */
        CHECK(b->ops->gemm != NULL && b->ops->causal_softmax_forward != NULL &&
              b->ops->permute_heads != NULL);
        b->ops->destroy(b);
    }
}

static void test_bf16_is_unfused(void)
{
    char why[256];
    backend *b = open_under(attention_name(ATTENTION_FUSED), DTYPE_BF16, why, sizeof why);
    CHECK(b != NULL);
    if (!b)
        return;
    CHECK(!has_fused(b));
    /* a switch of dtype picks the table again */
    CHECK(bk_use_dtype(b, DTYPE_FP32) == BK_OK && has_fused(b));
    CHECK(bk_use_dtype(b, DTYPE_BF16) == BK_OK && !has_fused(b));
    b->ops->destroy(b);
}

static void test_bad_value(void)
{
    static const char want[] = CPU_ATTENTION_ENV "='flash': needs fused or unfused";
    dtype dts[] = {DTYPE_FP32, DTYPE_BF16};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        char why[256] = "";
        CHECK(open_under("flash", dts[i], why, sizeof why) == NULL);
        CHECK(strncmp(why, want, sizeof want - 1) == 0);
        CHECK(strchr(why, '\n') == NULL);
    }
    unsetenv(CPU_ATTENTION_ENV);
}

int main(void)
{
    setenv("ACCUBENCH_CPU_THREADS", "2", 1);
    test_fp32();
    test_bf16_is_unfused();
    test_bad_value();
    unsetenv(CPU_ATTENTION_ENV);
    return check_finish("test_attention_choice");
}
