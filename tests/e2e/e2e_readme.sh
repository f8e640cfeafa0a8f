#!/bin/sh
# README.md stays a front door that tells the truth: at most 150 lines; the
# test command CI runs (.ci/run reads the marker); every link into the tree
# (docs/, the chart) names a file that exists, in README.md and in docs/;
# every `make TARGET` it shows is a target of the Makefile or of one of its
# fragments (mk/*.mk); and the console
# table it shows is the one `make readme-figures` saved from a real run.
set -u
root=$ACCUBENCH_ROOT
readme=$root/README.md
fail=0
bad() { echo "FAILED: $*"; fail=1; }

n=$(wc -l <"$readme")
[ "$n" -le 150 ] || bad "README.md has $n lines, at most 150 (the manual goes into docs/)"

# The same pattern as .ci/run.
cmd=$(sed -n 's/^<!-- test-command: \(.*\) -->$/\1/p' "$readme")
[ "$cmd" = "make test" ] || bad "README.md's test-command marker names '$cmd', not 'make test'"

# Relative links, [text](path) and ![alt](path): each file exists, read
# from the folder of the page that links it (anchors and URLs aside).
for page in "$readme" "$root"/docs/*.md; do
    dir=$(dirname "$page")
    grep -o '](\([^)#]*\)' "$page" | sed 's/^](//' | grep -v '^[a-z]*:' | sort -u |
        while IFS= read -r target; do
            [ -z "$target" ] || [ -e "$dir/$target" ] ||
                echo "FAILED: ${page#"$root"/} links $target, which does not exist"
        done
done >links.txt
[ -s links.txt ] && { cat links.txt; fail=1; }
grep -q '](docs/img/[^)]*\.png)' "$readme" || bad "README.md shows no chart from docs/img/"

# A script a page runs by its path (a code line or `code` starting with
# it, an argument after) is executable: run as written, not "Permission
# denied".
for script in $(grep -ohE '(^ {4}|`)(bench|tests|scripts)/[A-Za-z0-9_/]+\.(py|sh) ' \
    "$readme" "$root"/docs/*.md | sed 's/^ *`\{0,1\}//' | sort -u); do
    [ -x "$root/$script" ] || bad "a page runs $script by its path, which is not executable"
done

# Every make target the README names (the word after `make`, in code).
for t in $(grep -o '\bmake [a-z][a-z-]*' "$readme" | sed 's/^make //' | sort -u); do
    grep -Eq "^([^:=#]* )?$t( [^:=]*)?:" "$root/Makefile" "$root"/mk/*.mk ||
        bad "README.md names 'make $t', which neither the Makefile nor mk/*.mk has"
done

# The table under <!-- readme-table: FILE --> is FILE, whole.
marker=$(sed -n 's/^<!-- readme-table: \(.*\) -->$/\1/p' "$readme")
if [ -z "$marker" ]; then
    bad "README.md has no <!-- readme-table: FILE --> line above its console table"
elif [ ! -s "$root/$marker" ]; then
    bad "README.md's table comes from $marker, which is missing or empty"
else
    awk -v m="<!-- readme-table: $marker -->" '
        $0 == m { on = 1; next }
        on == 1 && /^```/ { on = 2; next }
        on == 2 && /^```/ { exit }
        on == 2 { print }' "$readme" >shown.txt
    cmp -s shown.txt "$root/$marker" ||
        bad "the table in README.md is not $marker (paste it again after make readme-figures)"
fi
exit $fail
