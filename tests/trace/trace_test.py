#!/usr/bin/env python3
"""trace_test.py - trace a 4-rank job and check what sdsm-report makes of it.

  trace_test.py --sdsmrun S --report R --work DIR --name N -- PROG [ARGS...]

Runs `S -n 4 --stats --trace DIR/N.trace PROG ARGS`, then `R DIR/N.trace`, and
checks:
  - trace.json is JSON in the trace-event format: every complete event has a
    rank (pid), a thread (tid), a start and a duration; per thread the
    events come in time order and nest (an event starts after its parent's
    start and ends before its parent's end); every fault has a page and a
    home that is a rank of the job, every barrier its place in the arrival
    order; async lock holds come in begin/end pairs;
    every rank and thread is named;
  - the report's numbers are the SDSM_STATS table's for the same run: each
    rank's faults, bytes fetched, diffs, barriers, lock acquires, condition
    waits, and messages and bytes by type (from the last counter sample), and
    the number of spans of each kind equals its counter;
  - the figures are PNG images of the expected size that are not blank;
  - with --buffer (a small SDSM_TRACE_BUFFER), buffers filled and were
    written while the job ran, and nothing above changed;
  - with --skew, that ranks claiming another host and a skewed realtime
    clock are aligned on their barrier exits (check_skew).
Exit 0 on success, 1 on a failure (each printed), 77 (skip) without
matplotlib.
"""
import argparse
import collections
import json
import os
import shutil
import struct
import subprocess
import sys

NP = 4
EPS = 0.002  # us: timestamps are printed with ns precision
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg)


def parse_stats(text):
    """SDSM_STATS's table: {row name: [rank 0, ..., rank N-1]}."""
    rows, on = {}, False
    for line in text.splitlines():
        if line.startswith("sdsm statistics ("):
            on = True
            continue
        if not on:
            continue
        if line.startswith("messages sent:"):
            break
        f = line.split()
        if len(f) < NP + 2:
            continue
        try:
            vals = [int(v) for v in f[-(NP + 1):-1]]
        except ValueError:
            continue  # the times (ms) and the header
        rows[" ".join(f[:-(NP + 1)])] = vals
    return rows


def check_trace(path):
    with open(path) as f:
        tr = json.load(f)
    ev = tr.get("traceEvents")
    if not isinstance(ev, list) or not ev:
        return fail("trace.json: no traceEvents list")
    named_p, named_t, used_t = set(), set(), set()
    per = collections.defaultdict(list)
    asyncs = collections.Counter()
    nfaults = 0
    for e in ev:
        ph = e.get("ph")
        if ph not in ("X", "M", "b", "e", "C"):
            return fail(f"trace.json: unexpected phase {ph!r} in {e}")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            return fail(f"trace.json: event without integer pid/tid: {e}")
        if ph == "M":
            if e["name"] == "process_name":
                named_p.add(e["pid"])
            elif e["name"] == "thread_name":
                named_t.add((e["pid"], e["tid"]))
            continue
        if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
            return fail(f"trace.json: bad ts in {e}")
        if ph in ("b", "e"):
            asyncs[(e["pid"], e["id"])] += 1 if ph == "b" else -1
            continue
        if ph == "C":
            continue
        if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0 or not e.get("name"):
            return fail(f"trace.json: complete event without name or duration: {e}")
        used_t.add((e["pid"], e["tid"]))
        per[(e["pid"], e["tid"])].append(e)
        if e["cat"] == "barrier" and not 1 <= e.get("args", {}).get("arrival", 0) <= NP:
            return fail(f"trace.json: barrier without its place in the arrival order: {e}")
        if e["cat"] in ("read fault", "write fault"):
            nfaults += 1
            a = e.get("args", {})
            if not isinstance(a.get("page"), int) or not isinstance(a.get("home"), int) \
                    or not 0 <= a["home"] < NP:
                return fail(f"trace.json: fault without a page and a home: {e}")
    if named_p != set(range(NP)):
        fail(f"trace.json: named ranks {sorted(named_p)}, expected 0..{NP - 1}")
    if used_t - named_t:
        fail(f"trace.json: threads without a name: {sorted(used_t - named_t)}")
    if any(asyncs.values()):
        fail("trace.json: lock holds whose begin and end do not pair")
    if not nfaults:
        fail("trace.json: no page faults traced")
    for key, es in per.items():
        stack = []
        last = -1.0
        for e in es:
            if e["ts"] + EPS < last:
                return fail(f"trace.json: thread {key}: time goes back at {e}")
            last = e["ts"]
            end = e["ts"] + e["dur"]
            while stack and stack[-1] <= e["ts"] + EPS:
                stack.pop()
            if stack and end > stack[-1] + EPS:
                return fail(f"trace.json: thread {key}: {e['name']} at {e['ts']} overlaps its "
                            f"parent's end {stack[-1]} without nesting")
            stack.append(end)
    print(f"trace.json: {len(ev)} events, {nfaults} faults, {len(per)} threads: well formed")


# Table rows checked against the last sample, and the span kind counted for each.
ROWS = {"read faults": "read fault", "write faults": "write fault", "pages fetched": None,
        "bytes fetched": None, "diffs made": "diff made", "diffs applied (home)": "diff applied",
        "barriers": "barrier", "lock acquires": "lock wait", "cond waits": "cond wait",
        "pages invalidated": None, "twins made": None}


def check_numbers(summary, table):
    ranks = summary["ranks"]
    checked = 0
    for r in range(NP):
        s = ranks.get(str(r))
        if not s or "stats" not in s:
            fail(f"summary.json: no counters for rank {r}")
            continue
        for row, kind in ROWS.items():
            want = table.get(row, [None] * NP)[r]
            if want is None:
                fail(f"SDSM_STATS: no row {row!r}")
                continue
            if s["stats"].get(row) != want:
                fail(f"rank {r} {row}: report {s['stats'].get(row)}, SDSM_STATS {want}")
            if kind and s["spans"].get(kind, 0) != want:
                fail(f"rank {r} {row}: {s['spans'].get(kind, 0)} '{kind}' spans, SDSM_STATS {want}")
            checked += 1
        for t, n in s.get("msgs_sent", {}).items():
            for what, key in (("msgs", "msgs_sent"), ("bytes", "bytes_sent")):
                want = table.get(f"{what} {t}", [None] * NP)[r]
                if s[key][t] != want:
                    fail(f"rank {r} {what} {t}: report {s[key][t]}, SDSM_STATS {want}")
                checked += 1
        types = {k[5:] for k in table if k.startswith("msgs ")}
        for t in types:
            if table[f"msgs {t}"][r] and t not in s.get("msgs_sent", {}):
                fail(f"rank {r}: SDSM_STATS has {t} messages, the report none")
    print(f"numbers: {checked} values equal SDSM_STATS")


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def check_figures(out):
    import matplotlib.image as mpimg
    expect = {"traffic.png": (1000, 100 + 160 * NP), "pages.png": (1000, 150 + 40 * NP),
              "waits.png": (1000, 150 + 40 * NP)}
    for name, size in expect.items():
        p = os.path.join(out, name)
        if not os.path.exists(p):
            fail(f"{name}: missing")
            continue
        got = png_size(p)
        if got != size:
            fail(f"{name}: {got}, expected a PNG of {size[0]}x{size[1]}")
            continue
        img = mpimg.imread(p)
        colors = {tuple(px) for px in img.reshape(-1, img.shape[-1])[::7].tolist()}
        if len(colors) < 8:
            fail(f"{name}: blank ({len(colors)} colours)")
        print(f"{name}: {got[0]}x{got[1]}, {os.path.getsize(p)} bytes, {len(colors)} colours")


def check_skew(report, d):
    """The same files, but ranks 1.. claim another kernel (boot id) and a
    realtime clock R x 5 s + 0.123 s ahead: the report must align them on
    their barrier exits.  Their true clocks are rank 0's (one machine), so
    the offset it finds should be the barrier release delay: under 5 ms."""
    sk = d + ".skew"
    shutil.rmtree(sk, ignore_errors=True)
    os.makedirs(sk)
    for f in os.listdir(d):
        if not f.endswith(".sdsmtrace"):
            continue
        data = open(os.path.join(d, f), "rb").read()
        nl = data.index(b"\n")
        h = json.loads(data[:nl])
        if h["rank"]:
            h["boot_id"] = f"another-host-{h['rank']}"
            h["realtime_ns"] += h["rank"] * 5_000_000_000 + 123_000_000
        with open(os.path.join(sk, f), "wb") as out:
            out.write(json.dumps(h).encode() + data[nl:])
    rep = subprocess.run([sys.executable, report, "--no-figures", sk], capture_output=True, text=True)
    if rep.returncode:
        return fail(f"sdsm-report on skewed clocks exited {rep.returncode}: {rep.stderr}")
    with open(os.path.join(sk, "summary.json")) as f:
        offs = json.load(f)["clock_offsets"]
    for r in range(1, NP):
        o = offs.get(str(r), {})
        if o.get("method") != "barrier-aligned" or abs(o.get("offset_ns", 1e18)) > 5_000_000:
            fail(f"skewed clocks: rank {r} aligned as {o}, expected barrier-aligned within 5 ms")
    print("skewed clocks: offsets found " +
          ", ".join(f"rank {r} {offs[str(r)]['offset_ns'] / 1000:+.0f} us" for r in range(1, NP)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sdsmrun", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--skew", action="store_true",
                    help="also check the alignment of ranks whose clocks differ (see check_skew)")
    ap.add_argument("--buffer", help="SDSM_TRACE_BUFFER for the run (small: buffers fill and flush)")
    ap.add_argument("prog", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    prog = a.prog[1:] if a.prog[:1] == ["--"] else a.prog
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("SKIP: no matplotlib (Debian: apt-get install python3-matplotlib)")
        return 77
    d = os.path.join(a.work, a.name + ".trace")
    shutil.rmtree(d, ignore_errors=True)
    env = dict(os.environ, **({"SDSM_TRACE_BUFFER": a.buffer} if a.buffer else {}))
    run = subprocess.run([a.sdsmrun, "-n", str(NP), "--stats", "--timeout", "60", "--trace", d] + prog,
                         capture_output=True, text=True, env=env)
    if run.returncode:
        print(run.stdout, run.stderr)
        fail(f"the traced job exited {run.returncode}")
        return 1
    table = parse_stats(run.stderr)
    if not table:
        print(run.stderr)
        fail("no SDSM_STATS table in the job's output")
        return 1
    rep = subprocess.run([sys.executable, a.report, d], capture_output=True, text=True)
    print(rep.stdout, rep.stderr, end="")
    if rep.returncode:
        fail(f"sdsm-report exited {rep.returncode}")
        return 1
    if "sdsm profile (top 10)" not in rep.stdout or " 1. " not in rep.stdout:
        fail("sdsm-report printed no profile")
    check_trace(os.path.join(d, "trace.json"))
    with open(os.path.join(d, "summary.json")) as f:
        summary = json.load(f)
    check_numbers(summary, table)
    if a.buffer:
        flushes = sum(r["spans"].get("trace flush", 0) for r in summary["ranks"].values())
        if not flushes:
            fail(f"SDSM_TRACE_BUFFER={a.buffer}: no buffer filled up (no 'trace flush' span)")
        print(f"buffers written while running: {flushes}")
    check_figures(d)
    if a.skew:
        check_skew(a.report, d)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print(f"OK trace {a.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
