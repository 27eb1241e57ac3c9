#!/bin/sh
# Usage: run_pytest.sh PYTHON MODULE_DIR FTPLAN
# Runs tests/python with PYTHON, the module from MODULE_DIR and the CLI FTPLAN to compare with.
# Exit 77 (skipped) when PYTHON has no pytest (Debian's python3-pytest).
python=$1
export PYTHONPATH="$2${PYTHONPATH:+:$PYTHONPATH}"
export FTPLAN_BINARY="$3"
if ! "$python" -c 'import pytest' >/dev/null 2>&1; then
  echo "pytest is not installed for $python (Debian: python3-pytest):" \
       "the Python module's tests are skipped"
  exit 77
fi
exec "$python" -m pytest -q -p no:cacheprovider "$(dirname "$0")"
