#!/bin/bash
# variables.sh DOCGEN SRC_DIR - docs/reference/variables.md is what docgen
# prints from the configuration table today (else: make docs).
set -u
docgen=${1:?usage: variables.sh DOCGEN SRC_DIR}
page=${2:?usage: variables.sh DOCGEN SRC_DIR}/docs/reference/variables.md
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$docgen" "$out" || { echo "variables: docgen failed"; exit 1; }
if ! diff -u "$page" "$out"; then
    echo "variables: docs/reference/variables.md differs from the configuration table: run make docs"
    exit 1
fi
echo "variables: docs/reference/variables.md matches the configuration table"
