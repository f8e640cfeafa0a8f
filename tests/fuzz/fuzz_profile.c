/* libFuzzer target: any bytes as a profile file, read and validated the way
 * `accubench run --profile FILE` does. Every outcome is a 0 or a -1 with a
 * reason; a crash, a hang or a sanitizer report is the bug. */
#include <string.h>

#include "fuzz_input.h"
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size, ".profile");
    if (!path)
        return 0;
    run_options o;
    options_defaults(&o);
    char why[600];
    why[0] = '\0';
    if (options_load_profile(&o, path, why, sizeof why) == 0) {
        options_validate(&o, why, sizeof why);
        int micros[64];
        for (int e = 0; e < o.n_effective; e++)
            options_micro_list(&o, o.effective[e], o.effective[e], micros, 64);
    } else if (!why[0] || !memchr(why, '\0', sizeof why)) {
        abort(); /* a refusal always says why */
    }
    return 0;
}
