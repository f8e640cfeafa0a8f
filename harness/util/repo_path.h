/* Where the repository's own files are (profiles/, scripts/plots.sh): the
 * program may run from the repository, from a build folder inside it
 * (BUILD=anything), or from anywhere else with ACCUBENCH_ROOT set. */
#ifndef ACCUBENCH_REPO_PATH_H
#define ACCUBENCH_REPO_PATH_H

#include <stddef.h>

/* Finds `rel`, a path inside the repository ("profiles/abc.profile"),
 * readable, in this order: under $ACCUBENCH_ROOT when it is set; beside the
 * working directory; beside the program, looking up to three folders above
 * its own (build/accubench, build/asan/tests/test_x). The program is
 * /proc/self/exe, else argv0 (may be NULL). Returns 0 with the path in out,
 * or -1 with out holding `rel` itself (for a message). */
int repo_path_find(const char *rel, const char *argv0, char *out, size_t cap);

#endif
