#include "optimizer.h"

#include <string.h>

#include "name_list.h"

static const char *const NAMES[OPT_COUNT] = {[OPT_ADAMW] = "adamw", [OPT_SGD] = "sgd"};

const char *optimizer_name(optimizer_kind k)
{
    return k >= 0 && k < OPT_COUNT ? NAMES[k] : "?";
}

int optimizer_parse(const char *s, optimizer_kind *out)
{
    for (int k = 0; k < OPT_COUNT; k++)
        if (strcmp(NAMES[k], s) == 0) {
            *out = (optimizer_kind)k;
            return 0;
        }
    return -1;
}

static const char *name_at(int k) { return NAMES[k]; }

const char *optimizer_names(void)
{
    static char list[64];
    return name_list(list, sizeof list, OPT_COUNT, name_at, ", ");
}
