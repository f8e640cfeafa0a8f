# Sourced by the end-to-end tests that check dumps in NumPy: np_py is the
# first python that imports NumPy of $PYTHON (a virtualenv's, where the
# PyTorch checks run too), python3 on the PATH, and Debian's /usr/bin/python3
# (python3-numpy, which make installs as root: a python3 of another
# installation on the PATH does not see it); empty where none does.
np_py=""
for p in "${PYTHON:-}" python3 /usr/bin/python3; do
    if [ -n "$p" ] && "$p" -c 'import numpy' >/dev/null 2>&1; then
        np_py=$p
        break
    fi
done
