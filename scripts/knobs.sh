# The checks of make's knobs that name a number, for the scripts make runs
# (sourced: `. "$here/knobs.sh"`). A knob reaches a script as its text, one
# quoted argument, never code (the Makefile's `knob`); one that must be a
# number is checked here before it is used, and a bad one is one line on
# stderr and exit 2, its text shown as typed.
#
#   knob_count NAME VALUE     a whole number of 1 or more
#   knob_counts NAME VALUE    a comma list of them
#   knob_bit NAME VALUE       0 or 1

knob_bad() {
    printf 'make: %s=%s: %s\n' "$1" "$(printf '%s' "$2" | tr '\n' ' ')" "$3" >&2
    exit 2
}

# A whole number of 1 to 999999999, written without a sign or leading zero.
knob_is_count() {
    case $1 in '' | *[!0-9]* | 0*) return 1 ;; esac
    [ ${#1} -le 9 ]
}

knob_count() {
    knob_is_count "$2" || knob_bad "$1" "$2" "not a whole number of 1 or more"
}

knob_counts() {
    rest=$2
    while :; do
        knob_is_count "${rest%%,*}" || knob_bad "$1" "$2" "not a comma list of whole numbers of 1 or more"
        case $rest in *,*) rest=${rest#*,} ;; *) break ;; esac
    done
}

knob_bit() {
    case $2 in 0 | 1) ;; *) knob_bad "$1" "$2" "not 0 or 1" ;; esac
}
