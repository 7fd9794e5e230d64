#!/usr/bin/env python3
"""test_labels.py SRC_DIR BUILD_DIR - every test can be found by label.

Each test must carry a tier label (what it needs to run: tests/CMakeLists.txt
lists them) and the label of the folder that declares it (tests/<folder>,
or "apps" for apps/<app>: cmake/SdsmTests.cmake, sdsm_test_folder).  (A
folder may declare none in some builds: tests/omp_rt under a sanitizer.)
The declaring folder is read from
ctest's own listing of the build tree (ctest --show-only=json-v1: the
CMakeLists.txt at the root of each test's backtrace).
"""
import json
import os
import subprocess
import sys

TIERS = {"unit", "mp", "fault", "fuzz", "cluster", "slurm", "trace", "bench", "omp", "knob"}


def folder_of(path, src):
    rel = os.path.relpath(path, src).split(os.sep)
    if rel[0] == "tests" and len(rel) > 2:
        return rel[1]
    if rel[0] == "apps":
        return "apps"
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test_labels.py SRC_DIR BUILD_DIR")
    src, build = (os.path.realpath(a) for a in sys.argv[1:])
    folders = {d for d in os.listdir(os.path.join(src, "tests"))
               if os.path.isfile(os.path.join(src, "tests", d, "CMakeLists.txt"))} | {"apps"}
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         capture_output=True, text=True, check=True).stdout
    listing = json.loads(out)
    tests, graph = listing["tests"], listing["backtraceGraph"]
    if not tests:
        sys.exit("test_labels: no tests in %s" % build)
    bad, seen = [], set()
    for t in tests:
        labels = next((p["value"] for p in t.get("properties", []) if p["name"] == "LABELS"), [])
        node = graph["nodes"][t["backtrace"]]
        while "parent" in node:
            node = graph["nodes"][node["parent"]]
        folder = folder_of(os.path.realpath(graph["files"][node["file"]]), src)
        if not TIERS & set(labels):
            bad.append("%s: no tier label (labels: %s)" % (t["name"], ", ".join(labels) or "none"))
        if folder is None:
            bad.append("%s: declared outside tests/ and apps/" % t["name"])
        elif folder not in labels:
            bad.append("%s: declared in %s but not labelled %s (labels: %s)" %
                       (t["name"], folder, folder, ", ".join(labels) or "none"))
        seen.add(folder)
    for b in bad[:50]:
        print("test_labels: " + b)
    if bad:
        sys.exit(1)
    print("test_labels: %d tests, each labelled by its tier and its folder (%d of the %d folders)" %
          (len(tests), len(seen & folders), len(folders)))


if __name__ == "__main__":
    main()
