/* The split arithmetic's refusals read right whatever the counts. */
#include <string.h>

#include "check.h"
#include "split.h"

int main(void)
{
    split s;
    char why[200];
    /* 9 examples over 4 devices at micro 2: the last global micro-batch
     * holds 1 example for 4 devices. */
    CHECK(split_make_sharded(9, 2, 4, &s, why, sizeof why) == -1);
    CHECK(strstr(why, "holds 1 example for 4 devices") != NULL);
    CHECK(split_make_sharded(10, 2, 4, &s, why, sizeof why) == -1);
    CHECK(strstr(why, "holds 2 examples for 4 devices") != NULL);
    return check_finish("test_split");
}
