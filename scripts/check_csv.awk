# check_csv.awk: whether the CSV on stdin reads as `accubench report`
# reads it (harness/results/csv_read.c), for scripts/plots.sh where the
# program is not built: prints the one-line reason it does not, in the
# program's words, or nothing. The program checks more (a cell that is not
# a number, binary data); this checks the shape: a header row of named
# columns, every row as many fields as it, and the columns the charts need.
#
#   CSV_PATH=FILE NEED='col ...' LC_ALL=C awk -f check_csv.awk < FILE
#
# (The file on stdin, its name in the environment: awk would read an
# operand holding "=" as an assignment, and -v would read its backslashes.)
# POSIX awk only; LC_ALL=C, since the byte-order mark is bytes.
function trim(s) {
    sub(/^[ \t]+/, "", s)
    sub(/[ \t\r\n]+$/, "", s)
    return s
}
function refuse(msg) {
    print ENVIRON["CSV_PATH"] ":" NR ": " msg
    refused = 1
    exit
}
{
    line = $0
    if (NR == 1 && substr(line, 1, 3) == "\357\273\277")
        line = substr(line, 4)
    line = trim(line)
    if (line == "" || substr(line, 1, 1) == "#")
        next
    n = split(line, field, ",")
    if (!cols) {
        if (n < 2)
            refuse("not a CSV (the header row has no commas)")
        for (i = 1; i <= n; i++) {
            name = trim(field[i])
            if (name == "")
                refuse("header column " i " is empty")
            if (name in has)
                refuse("header column " i " is a duplicate")
            has[name] = 1
        }
        cols = n
    } else if (n != cols)
        refuse(n " " (n == 1 ? "field" : "fields") ", but the header has " cols)
}
END {
    if (refused)
        exit
    if (!cols) {
        print ENVIRON["CSV_PATH"] ": not an accubench CSV (no header row)"
        exit
    }
    n = split(ENVIRON["NEED"], need, " ")
    for (i = 1; i <= n; i++)
        if (!(need[i] in has)) {
            print ENVIRON["CSV_PATH"] ": missing column " need[i]
            exit
        }
}
