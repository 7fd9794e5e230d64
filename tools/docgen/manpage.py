#!/usr/bin/env python3
"""manpage.py SOURCE [OUT] - the markdown pandoc renders into a man page.

A man page's source (docs/man/NAME.S.md) holds its own sections and lines

    <!-- include PATH[#ANCHOR] [level=N] -->

that bring in a page of docs/ (PATH relative to the source), or only the
section whose heading has that anchor (as GitHub makes anchors), so the man
pages say what docs/ says.  The included part loses its first heading; its
other headings are shifted so that the shallowest becomes level N (default:
one below the heading the line stands under), and links to other pages of
docs/ become plain text (their targets mean nothing in a terminal).
"""
import os
import re
import sys

INCLUDE = re.compile(r"^<!--\s*include\s+(\S+?)(?:#(\S+))?(?:\s+level=(\d))?\s*-->\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def slug(title):
    return re.sub(r"[^\w\- ]", "", title.lower().replace("`", "")).replace(" ", "-")


def headings(lines):
    """(index, level, title) of each heading outside code blocks."""
    out, fence = [], False
    for i, line in enumerate(lines):
        if line.startswith(("```", "~~~")):
            fence = not fence
        m = None if fence else HEADING.match(line)
        if m:
            out.append((i, len(m.group(1)), m.group(2)))
    return out


def part(path, anchor):
    lines = open(path, encoding="utf-8").read().split("\n")
    hs = headings(lines)
    if not anchor:
        return lines, hs
    seen = {}
    for k, (i, level, title) in enumerate(hs):
        s = slug(title)
        n = seen.get(s, 0)
        seen[s] = n + 1
        if (s if n == 0 else "%s-%d" % (s, n)) == anchor:
            end = next((j for j, lv, _ in hs[k + 1:] if lv <= level), len(lines))
            sub = lines[i:end]
            return sub, [(j - i, lv, t) for j, lv, t in hs[k:] if j < end]
    sys.exit("manpage: %s has no heading with the anchor #%s" % (path, anchor))


def plain_links(line):
    # [text](relative) -> text; links to other sites stay for pandoc.
    return re.sub(r"\[([^\]]+)\]\((?![a-z]+:)[^)\s]*\)", r"\1", line)


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def untable(lines):
    """Tables as definition lists: man's tables do not fit a terminal's width
    (groff warns, and wide cells are cut).  Each row becomes its first cell
    as the term and the others, named by their column, as the text."""
    out, i = [], 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].startswith("|") and re.match(r"^\|[-:| ]+\|\s*$", lines[i + 1]):
            head, i = cells(lines[i]), i + 2
            while i < len(lines) and lines[i].startswith("|"):
                row = cells(lines[i])
                rest = [c if len(row) == 2 or not h else "%s: %s" % (h, c)
                        for h, c in zip(head[1:], row[1:]) if c]
                out += [row[0] or "(none)", ":   " + ("; ".join(rest) or "-"), ""]
                i += 1
            continue
        out.append(lines[i])
        i += 1
    return out


def include(path, anchor, level):
    lines, hs = part(path, anchor)
    if hs and not any(l.strip() for l in lines[:hs[0][0]]):
        first = hs[0][0]
        lines, hs = lines[first + 1:], [(i - first - 1, lv, t) for i, lv, t in hs[1:]]
    shift = level - min((lv for _, lv, _ in hs), default=level)
    at = {i: lv for i, lv, _ in hs}
    out = []
    for i, line in enumerate(lines):
        if i in at:
            line = "#" * min(6, at[i] + shift) + " " + HEADING.match(line).group(2)
        out.append(plain_links(line))
    return untable(out)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: manpage.py SOURCE [OUT]")
    src = sys.argv[1]
    out, depth = [], 0
    for line in open(src, encoding="utf-8").read().split("\n"):
        m = INCLUDE.match(line)
        h = HEADING.match(line)
        if h:
            depth = len(h.group(1))
        if not m:
            out.append(line)
            continue
        path = os.path.join(os.path.dirname(src), m.group(1))
        out += include(path, m.group(2), int(m.group(3)) if m.group(3) else depth + 1)
    text = "\n".join(out)
    if len(sys.argv) == 3:
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


main()
