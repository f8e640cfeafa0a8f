#include "result_row.h"

#include <math.h>
#include <string.h>

void result_row_clear(result_row *r)
{
    memset(r, 0, sizeof *r);
#define CLEAR_TEXT(name)
#define CLEAR_INT(name) r->name = -1;
#define CLEAR_REAL(name) r->name = NAN;
#define CLEAR(name, type, pass) CLEAR_##type(name)
    RESULT_COLUMNS(CLEAR)
#undef CLEAR
#undef CLEAR_TEXT
#undef CLEAR_INT
#undef CLEAR_REAL
}
