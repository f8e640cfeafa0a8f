/* Where the program's own files are (profiles/, scripts/plots.sh, plots/):
 * beside the program as it is installed, never in the working directory.
 * A folder the program runs in is data (a results folder, a checkout of
 * someone else's): a scripts/plots.sh or a profiles/quick.profile there
 * must not run or configure anything. */
#ifndef ACCUBENCH_REPO_PATH_H
#define ACCUBENCH_REPO_PATH_H

#include <stddef.h>

/* Finds `rel`, a path inside the program's tree ("profiles/abc.profile"),
 * readable, in this order: under $ACCUBENCH_ROOT when it is set; beside
 * the program (/proc/self/exe), looking up to three folders above its own
 * (build/accubench, build/asan/tests/test_x); under the tree the program
 * was built from (ACCUBENCH_BUILD_ROOT, where the build names one). A
 * relative $ACCUBENCH_ROOT is refused: it would name the working
 * directory again. Returns 0 with the path in out, or -1 with out holding
 * `rel` itself (for a message). */
int repo_path_find(const char *rel, char *out, size_t cap);

#endif
