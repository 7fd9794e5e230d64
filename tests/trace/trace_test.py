#!/usr/bin/env python3
"""trace_test.py - trace a 4-rank job and check what sdsm-report makes of it.

  trace_test.py --sdsmrun S --report R --work DIR --name N -- PROG [ARGS...]

Runs `S -n 4 --stats --trace DIR/N.trace PROG ARGS` with SDSM_STATS=json,
then `R DIR/N.trace`, and checks:
  - the statistics: every counter the trace names is in the JSON line, with
    a unit; bytes fetched are the fetched pages' contents (pages x page size),
    not 0 where pages were fetched;
  - with --stats-forms, two more runs: SDSM_STATS=1 prints a summary line per
    rank (time in faults, barriers, locks; bytes sent and received) and no
    row of zeros, SDSM_STATS=all every row, zeros included (check_forms);
  - trace.json is JSON in the trace-event format: every complete event has a
    rank (pid), a thread (tid), a start and a duration; per thread the
    events come in time order and nest (an event starts after its parent's
    start and ends before its parent's end); every fault has a page, its
    address in hex (the page's, from the region's base) and a home that is a
    rank of the job; every barrier is named "barrier", with its number and
    its place in the arrival order as arguments; async lock holds come in
    begin/end pairs; every rank and thread is named;
  - the report's numbers are the statistics' for the same run: each rank's
    faults, bytes fetched, diffs, barriers, lock acquires, condition waits,
    and messages and bytes by type (from the last counter sample), and the
    number of spans of each kind equals its counter;
  - the report says what it does on stderr, its --help ends with its last
    option, and report.html holds the findings and every figure;
  - the figures are PNG images of the expected size that are not blank;
  - without matplotlib the report still writes its text, JSON and HTML, and
    says why there are no figures;
  - with --buffer (a small SDSM_TRACE_BUFFER), buffers filled and were
    written while the job ran, and nothing above changed;
  - with --skew, that ranks claiming another host and a skewed realtime
    clock are aligned on their barrier exits (check_skew).
Exit 0 on success, 1 on a failure (each printed), 77 (skip) without
matplotlib.
"""
import argparse
import collections
import html
import json
import os
import re
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


STATS_LINE = '{"format":"sdsm-stats"'


def parse_stats(text):
    """SDSM_STATS=json's line: (its JSON, {counter key, "msgs TYPE" or
    "bytes TYPE": [rank 0, ..., rank N-1]}), or (None, {})."""
    for line in text.splitlines():
        if line.startswith(STATS_LINE):
            d = json.loads(line)
            rows = dict(d["counters"])
            for t, v in d["msgs_sent"].items():
                rows[f"msgs {t}"], rows[f"bytes {t}"] = v, d["bytes_sent"][t]
            return d, rows
    return None, {}


def check_stats(d, header):
    """Every counter the runtime has (the trace names them all) is in the
    JSON form, with its unit; bytes fetched are the fetched pages' bytes."""
    keys = header["stats"]
    missing = [k for k in keys if k not in d["counters"] or k not in d["units"]]
    if missing or len(d["counters"]) != len(keys):
        fail(f"SDSM_STATS=json: counters {missing} missing, {len(d['counters'])} for {len(keys)}")
    for r in range(NP):
        pages, nbytes = d["counters"]["pages_fetched"][r], d["counters"]["bytes_fetched"][r]
        if nbytes != pages * header["page_size"]:
            fail(f"rank {r}: bytes fetched {nbytes} for {pages} pages of {header['page_size']} bytes")
    if not sum(d["counters"]["bytes_fetched"]):
        fail("no bytes fetched by any rank")
    print(f"statistics: {len(keys)} counters in the JSON form; bytes fetched "
          f"{sum(d['counters']['bytes_fetched']):,} for {sum(d['counters']['pages_fetched']):,} pages")


def check_trace(path, header):
    with open(path) as f:
        tr = json.load(f)
    ev = tr.get("traceEvents")
    if not isinstance(ev, list) or not ev:
        return fail("trace.json: no traceEvents list")
    named_p, named_t, used_t = set(), set(), set()
    per = collections.defaultdict(list)
    asyncs = collections.Counter()
    nfaults = 0
    barriers = set()
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
        if e["cat"] == "barrier":
            if not 1 <= e.get("args", {}).get("arrival", 0) <= NP:
                return fail(f"trace.json: barrier without its place in the arrival order: {e}")
            if e["name"] != "barrier" or not isinstance(e["args"].get("barrier"), int):
                return fail(f"trace.json: a barrier not named 'barrier' with its number: {e}")
            barriers.add(e["args"]["barrier"])
        if e["cat"] in ("read fault", "write fault"):
            nfaults += 1
            a = e.get("args", {})
            if not isinstance(a.get("page"), int) or not isinstance(a.get("home"), int) \
                    or not 0 <= a["home"] < NP:
                return fail(f"trace.json: fault without a page and a home: {e}")
            want = header["heap_base"] + a["page"] * header["page_size"]
            if not isinstance(a.get("address"), str) or not a["address"].startswith("0x") \
                    or int(a["address"], 16) != want:
                return fail(f"trace.json: fault address {a.get('address')!r}, expected {want:#x}: {e}")
    if named_p != set(range(NP)):
        fail(f"trace.json: named ranks {sorted(named_p)}, expected 0..{NP - 1}")
    if used_t - named_t:
        fail(f"trace.json: threads without a name: {sorted(used_t - named_t)}")
    if any(asyncs.values()):
        fail("trace.json: lock holds whose begin and end do not pair")
    if not nfaults:
        fail("trace.json: no page faults traced")
    if len(barriers) < 2:
        fail(f"trace.json: barriers numbered {sorted(barriers)}: expected several under one name")
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
    print(f"trace.json: {len(ev)} events, {nfaults} faults at their addresses, {len(barriers)} barriers "
          f"under one name, {len(per)} threads: well formed")


# Counters checked against the last sample, and the span kind counted for each.
ROWS = {"read_faults": "read fault", "write_faults": "write fault", "pages_fetched": None,
        "bytes_fetched": None, "diffs_made": "diff made", "diffs_applied": "diff applied",
        "barriers": "barrier", "lock_acquires": "lock wait", "cond_waits": "cond wait",
        "pages_invalidated": None, "twins": None}


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
                fail(f"SDSM_STATS=json: no counter {row!r}")
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


FIGS = ("waits", "waitfor", "bounces", "pages", "traffic")


def check_figures(out):
    import matplotlib.image as mpimg
    expect = {"waits.png": (1000, 160 + 40 * NP), "waitfor.png": (300 + 70 * NP, 200 + 60 * NP),
              "bounces.png": (1000, None), "pages.png": (1000, 180 + 40 * NP),
              "traffic.png": (1000, 120 + 150 * NP)}
    for name, size in expect.items():
        p = os.path.join(out, name)
        if not os.path.exists(p):
            fail(f"{name}: missing")
            continue
        got = png_size(p)
        if not got or got[0] != size[0] or size[1] not in (None, got[1]):
            fail(f"{name}: {got}, expected a PNG of {size[0]}x{size[1]}")
            continue
        img = mpimg.imread(p)
        colors = {tuple(px) for px in img.reshape(-1, img.shape[-1])[::7].tolist()}
        if len(colors) < 8:
            fail(f"{name}: blank ({len(colors)} colours)")
        print(f"{name}: {got[0]}x{got[1]}, {os.path.getsize(p)} bytes, {len(colors)} colours")


def check_html(d, profile_line, figures=True):
    """report.html: the findings, and each figure inline (or why none)."""
    p = os.path.join(d, "report.html")
    if not os.path.exists(p):
        return fail("report.html: missing")
    text = open(p).read()
    if "Top findings" not in text or html.escape(profile_line) not in text:
        fail(f"report.html: no findings (or not {profile_line!r})")
    imgs = text.count("data:image/png;base64,")
    named = [f for f in FIGS if f'title="{f}.png"' in text]
    if figures and (imgs != len(FIGS) or len(named) != len(FIGS)):
        fail(f"report.html: {imgs} images, figures {named}; expected {list(FIGS)}")
    if not figures and (imgs or "No figures" not in text):
        fail(f"report.html without matplotlib: {imgs} images, no word of why")
    print(f"report.html: {len(text):,} bytes, findings and {imgs} figures inline")


def check_help(report):
    """--help whole: its outputs, its last option and its example."""
    h = subprocess.run([sys.executable, report, "--help"], capture_output=True, text=True).stdout
    for want in ("report.html", "traffic.png", "-q, --quiet", "Example: "):
        if want not in h:
            fail(f"sdsm-report --help: no {want!r} in\n{h}")


def check_progress(err):
    for want in ("reading 4 traces", "writing trace.json", "drawing traffic.png", "writing report.html"):
        if want not in err:
            fail(f"sdsm-report did not say {want!r} on stderr:\n{err}")


def check_no_matplotlib(report, d):
    """A matplotlib that cannot be imported: text, JSON and HTML all the same."""
    fake, out = d + ".nompl", d + ".nompl.out"
    shutil.rmtree(fake, ignore_errors=True)
    os.makedirs(os.path.join(fake, "matplotlib"))
    with open(os.path.join(fake, "matplotlib", "__init__.py"), "w") as f:
        f.write("raise ImportError('hidden by trace_test.py')\n")
    env = dict(os.environ, PYTHONPATH=fake)
    rep = subprocess.run([sys.executable, report, "--out", out, d], capture_output=True, text=True,
                         env=env)
    if rep.returncode or "no figures" not in rep.stderr:
        return fail(f"sdsm-report without matplotlib exited {rep.returncode}: {rep.stderr}")
    for f in ("trace.json", "summary.json", "profile.txt"):
        if not os.path.exists(os.path.join(out, f)):
            fail(f"sdsm-report without matplotlib: no {f}")
    check_html(out, rep.stdout.splitlines()[1][4:], figures=False)


def check_forms(sdsmrun, prog):
    """SDSM_STATS=1: a summary line per rank and no row of zeros;
    SDSM_STATS=all: rows of zeros too."""
    out = {}
    for form in ("1", "all"):
        run = subprocess.run([sdsmrun, "-n", str(NP), "--stats", "--timeout", "60"] + prog,
                             capture_output=True, text=True, env=dict(os.environ, SDSM_STATS=form))
        out[form] = run.stderr.splitlines()
    summ = re.compile(r"^rank (\d+): [\d.]+ m?s in faults \([\d,]+ read, [\d,]+ write\), "
                      r"(no barriers|[\d.]+ m?s in [\d,]+ barriers), (no locks|[\d.]+ m?s in [\d,]+ locks); "
                      r"sent [\d.]+ \w+ in [\d,]+ messages, received [\d.]+ \w+ in [\d,]+$")
    ranks = {int(m.group(1)) for m in map(summ.match, out["1"]) if m}
    if ranks != set(range(NP)):
        fail(f"SDSM_STATS=1: summary lines for ranks {sorted(ranks)}:\n" + "\n".join(out["1"]))
    row = re.compile(r"^(\S.*?)((?: +[\d.]+){%d})$" % (NP + 1))
    rows = {form: {m.group(1): [float(v) for v in m.group(2).split()]
                   for m in map(row.match, out[form]) if m} for form in out}
    zeros = [k for k, v in rows["1"].items() if not any(v)]
    if zeros or not rows["1"]:
        fail(f"SDSM_STATS=1: rows of zeros {zeros} (or no rows)")
    if not any(not any(v) for v in rows["all"].values()) or len(rows["all"]) <= len(rows["1"]):
        fail(f"SDSM_STATS=all: {len(rows['all'])} rows, none of zeros ({len(rows['1'])} without)")
    if "-- page faults and fetches" not in out["1"]:
        fail("SDSM_STATS=1: no group headings")
    print(f"SDSM_STATS=1: summary lines, {len(rows['1'])} rows without zeros; all: {len(rows['all'])}")


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
    ap.add_argument("--stats-forms", action="store_true",
                    help="also check SDSM_STATS=1 and all (see check_forms)")
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
    env = dict(os.environ, SDSM_STATS="json", **({"SDSM_TRACE_BUFFER": a.buffer} if a.buffer else {}))
    run = subprocess.run([a.sdsmrun, "-n", str(NP), "--stats", "--timeout", "60", "--trace", d] + prog,
                         capture_output=True, text=True, env=env)
    if run.returncode:
        print(run.stdout, run.stderr)
        fail(f"the traced job exited {run.returncode}")
        return 1
    stats, table = parse_stats(run.stderr)
    if not stats:
        print(run.stderr)
        fail("no SDSM_STATS=json line in the job's output")
        return 1
    with open(os.path.join(d, "rank-0.sdsmtrace"), "rb") as f:
        header = json.loads(f.readline())
    check_stats(stats, header)
    if a.stats_forms:
        check_forms(a.sdsmrun, prog)
    rep = subprocess.run([sys.executable, a.report, d], capture_output=True, text=True)
    print(rep.stdout, rep.stderr, end="")
    if rep.returncode:
        fail(f"sdsm-report exited {rep.returncode}")
        return 1
    if "sdsm profile (top 10)" not in rep.stdout or " 1. " not in rep.stdout:
        fail("sdsm-report printed no profile")
    check_progress(rep.stderr)
    check_help(a.report)
    check_trace(os.path.join(d, "trace.json"), header)
    with open(os.path.join(d, "summary.json")) as f:
        summary = json.load(f)
    check_numbers(summary, table)
    if a.buffer:
        flushes = sum(r["spans"].get("trace flush", 0) for r in summary["ranks"].values())
        if not flushes:
            fail(f"SDSM_TRACE_BUFFER={a.buffer}: no buffer filled up (no 'trace flush' span)")
        print(f"buffers written while running: {flushes}")
    check_figures(d)
    check_html(d, rep.stdout.splitlines()[1][4:])
    if a.skew:
        check_skew(a.report, d)
        check_no_matplotlib(a.report, d)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print(f"OK trace {a.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
