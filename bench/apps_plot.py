#!/usr/bin/env python3
"""apps_plot.py - draw bench/apps results (its --json file) as PNG.

  bench/apps_plot.py bench-apps.json speedup.png   (bench/apps --plot does this)

speedup.png: one panel per application, speedup over the sequential
program against P for sdsm (each protocol, and threaded runs as "sdsmt T=n"),
MPI and OpenMP (medians of the runs).  When the JSON holds seed 002's table 4
comparison (bench/apps --compare-paper), <name>-bytes.png as well: bytes on
the wire per application, sdsm against TreadMarks, JIAJIA and SMS (log scale).
Headless (Agg); needs matplotlib.  Returns the files written.
"""
import collections
import json
import math
import os
import sys


def _label(r):
    v = r["version"]
    if r.get("threads"):
        v += f" T={r['threads']}"
    if r.get("protocol") and r["protocol"] != "default":
        v += f" ({r['protocol']})"
    if r.get("net"):
        v += f" [{r['net']}]"
    return v


def plot(json_path, png_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with open(json_path) as f:
        data = json.load(f)
    rows = [r for r in data.get("summary", []) if r.get("procs")]
    apps = sorted({r["app"] for r in rows})
    if not apps:
        raise ValueError(f"{json_path}: no summary rows to plot")
    cols = min(3, len(apps))
    nrow = math.ceil(len(apps) / cols)
    fig, axes = plt.subplots(nrow, cols, figsize=(4 * cols, 3 * nrow), dpi=100, squeeze=False)
    for ax, app in zip(axes.flat, apps):
        lines = collections.defaultdict(dict)
        for r in rows:
            if r["app"] != app:
                continue
            seq = r.get("seq_median_s")
            if r.get("speedup"):
                lines[_label(r)][r["procs"]] = r["speedup"]
            for v in ("mpi", "omp"):
                t = r.get(f"{v}_median_s")
                if seq and t:
                    lines[v + (f" [{r['net']}]" if r.get("net") else "")][r["procs"]] = seq / t
        for name, pts in sorted(lines.items()):
            ps = sorted(pts)
            ax.plot(ps, [pts[p] for p in ps], marker="o", label=name)
        allp = sorted({p for pts in lines.values() for p in pts})
        if allp:
            ax.plot(allp, allp, color="gray", linestyle=":", linewidth=0.8, label="ideal")
            ax.set_xticks(allp)
        ax.set_title(app, fontsize=9)
        ax.set_xlabel("P", fontsize=8)
        ax.set_ylabel("speedup over seq", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(apps):]:
        ax.axis("off")
    meta = data.get("meta", {})
    fig.suptitle(f"bench/apps: speedup (size {rows[0].get('size')}, medians) "
                 f"{meta.get('finished', '')}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
    written = [png_path]
    paper = [p for p in data.get("paper", []) if p.get("bytes_max")]
    if paper:
        base, ext = os.path.splitext(png_path)
        out = f"{base}-bytes{ext or '.png'}"
        systems = sorted({s for p in paper for s in p["paper_bytes"]})
        fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(paper)), 4), dpi=100)
        w = 0.8 / (1 + len(systems))
        for i, p in enumerate(paper):
            ax.bar(i, p["bytes_max"], w, color="tab:blue", label="sdsm" if i == 0 else None)
            for j, s in enumerate(systems):
                ax.bar(i + (j + 1) * w, p["paper_bytes"].get(s, 0), w, color=f"C{j + 1}",
                       label=s if i == 0 else None)
        ax.set_xticks([i + 0.4 - w / 2 for i in range(len(paper))],
                      [f"{p['app']} P={p['procs']}" for p in paper], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("bytes on the wire")
        ax.set_title("sdsm against seed 002 table 4 (comparable at P=8, size paper)", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out)
        plt.close(fig)
        written.append(out)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    print("Written: " + ", ".join(plot(sys.argv[1], sys.argv[2])))
