/* How a split is written: what divides as micro x K, a ragged split as a
 * sum that adds up to the examples (never "3x4+1" for 10), no commas (the
 * text goes into a CSV cell). */
#include <string.h>

#include "check.h"
#include "split_text.h"

static void check_text(long long micro, long long accum, long long last, const char *want)
{
    char out[64];
    split_text(out, sizeof out, micro, accum, last);
    CHECK(strcmp(out, want) == 0);
    if (strcmp(out, want))
        fprintf(stderr, "  split %lld/%lld/%lld: \"%s\", expected \"%s\"\n", micro, accum, last,
                out, want);
    CHECK(strchr(out, ',') == NULL);
}

int main(void)
{
    check_text(16, 4, 16, "16x4");
    check_text(64, 1, 64, "64x1");
    check_text(3, 4, 1, "K=4: 3+3+3+1"); /* E = 10 */
    check_text(24, 3, 16, "K=3: 24+24+16");
    check_text(6, 2, 4, "K=2: 6+4");
    check_text(24, 11, 16, "K=11: 24x10+16"); /* E = 256 */
    check_text(3, 5, 2, "K=5: 3x4+2");
    check_text(512, 3, 256, "K=3: 512x2+256"); /* the list would be 16 characters */
    /* a short buffer is cut, never overrun */
    char small[8];
    split_text(small, sizeof small, 3, 4, 1);
    CHECK(strlen(small) < sizeof small && strncmp(small, "K=4: 3+", strlen(small)) == 0);
    /* the second arm of an A/A check reads apart from the first */
    char arm[64];
    split_arm_text(arm, sizeof arm, 16, 4, 16, 2);
    CHECK(strcmp(arm, "16x4 (arm 2)") == 0);
    split_arm_text(arm, sizeof arm, 16, 4, 16, 1);
    CHECK(strcmp(arm, "16x4") == 0);
    split_arm_text(small, sizeof small, 16, 4, 16, 2);
    CHECK(strlen(small) < sizeof small);
    return check_finish("test_split_text");
}
