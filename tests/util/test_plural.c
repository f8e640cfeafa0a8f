/* plural(): the singular for exactly one, the plural for every other count. */
#include <string.h>

#include "check.h"
#include "plural.h"

int main(void)
{
    CHECK(!strcmp(plural(1, "row", "rows"), "row"));
    CHECK(!strcmp(plural(0, "row", "rows"), "rows"));
    CHECK(!strcmp(plural(2, "row", "rows"), "rows"));
    CHECK(!strcmp(plural(-1, "row", "rows"), "rows"));
    CHECK(!strcmp(plural(1, "was", "were"), "was"));
    return check_finish("test_plural");
}
