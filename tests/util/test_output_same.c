/* Two output paths at one place are found whatever their spelling: ./x
 * and x, a folder reached through a link, a link to the file; a path
 * inside a folder is found at any depth, and a sibling with a common
 * prefix is not inside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "output_path.h"

static char dir[] = "/tmp/accubench-same-XXXXXX";

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    char a[300], b[300], sub[300], link[300], f[300];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    CHECK(mkdir(sub, 0700) == 0);
    CHECK(symlink(sub, link) == 0);

    snprintf(a, sizeof a, "%s/sub/run.csv", dir);
    snprintf(b, sizeof b, "%s/link/./run.csv", dir);
    CHECK(output_path_same(a, b));
    snprintf(b, sizeof b, "%s/sub/../sub/run.csv", dir);
    CHECK(output_path_same(a, b));
    snprintf(b, sizeof b, "%s/sub/run.csv.lock", dir);
    CHECK(!output_path_same(a, b));

    /* A link to an existing file is that file. */
    snprintf(f, sizeof f, "%s/real.csv", dir);
    FILE *fh = fopen(f, "w");
    CHECK(fh != NULL);
    if (fh)
        fclose(fh);
    snprintf(b, sizeof b, "%s/alias.csv", dir);
    CHECK(symlink(f, b) == 0);
    CHECK(output_path_same(f, b));

    CHECK(output_path_within(a, sub));
    CHECK(output_path_within(a, link));
    CHECK(output_path_within(a, dir));
    snprintf(b, sizeof b, "%s/subway/run.csv", dir);
    CHECK(!output_path_within(b, sub));
    CHECK(!output_path_within(sub, sub));

    unlink(b);
    snprintf(b, sizeof b, "%s/alias.csv", dir);
    unlink(b);
    unlink(f);
    unlink(link);
    rmdir(sub);
    rmdir(dir);
    return check_finish("test_output_same");
}
