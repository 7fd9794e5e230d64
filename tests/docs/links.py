#!/usr/bin/env python3
"""links.py SRC_DIR - every relative link in README.md and docs/**/*.md
points at a file that exists and, with #anchor, at a heading of that file
(anchors as GitHub makes them from headings).  Links to other sites are not
followed."""
import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")


def strip_code(text):
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def slugs(path):
    found, seen = set(), {}
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.startswith(("```", "~~~")):
            in_code = not in_code
        m = None if in_code else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = re.sub(r"[^\w\- ]", "", m.group(1).lower().replace("`", "")).replace(" ", "-")
        n = seen.get(s, 0)
        seen[s] = n + 1
        found.add(s if n == 0 else "%s-%d" % (s, n))
    return found


def pages(src):
    yield os.path.join(src, "README.md")
    for root, _, files in os.walk(os.path.join(src, "docs")):
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(root, f)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: links.py SRC_DIR")
    src = os.path.realpath(sys.argv[1])
    bad, count = [], 0
    for page in pages(src):
        text = strip_code(open(page, encoding="utf-8").read())
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            count += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            where = os.path.relpath(page, src)
            if not os.path.exists(dest):
                bad.append("%s: %s: no such file" % (where, target))
            elif anchor and dest.endswith(".md") and anchor not in slugs(dest):
                bad.append("%s: %s: no heading with that anchor" % (where, target))
    for b in bad:
        print("links: " + b)
    if bad:
        sys.exit(1)
    if count == 0:
        sys.exit("links: no relative link found: the page list is wrong")
    print("links: %d relative links resolve" % count)


main()
