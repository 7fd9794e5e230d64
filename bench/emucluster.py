"""emucluster - the emulated cluster of tests/cluster/ as the benchmarks use it
(bench/apps --hosts, bench/barrier --hosts): bring one up or load one, place
P ranks on its hosts, set a network profile, and remove what was made.

A cluster is a dict: dir, rsh (DIR/rsh, sdsmrun's --rsh), subnet, hosts
(h1..hK), owned (brought up here, so removed by down()), env (DIR/env),
came (a cluster given as DIR: the network profile and the hosts' CPUs it
came with, which net_off() and cpus_restore() put back).
Standard library only; errors are ClusterError with a message for the user.
"""
import os
import shlex
import shutil
import subprocess
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILES = ("none", "lan", "fe")


class ClusterError(Exception):
    pass


def script(name):
    """tests/cluster/NAME of this checkout."""
    return os.path.join(TOP, "tests", "cluster", name)


def host_slots(hosts, P):
    """h1:s,h2:s,...: P ranks spread evenly, the first hosts one more."""
    k = len(hosts)
    return ",".join(f"{h}:{P // k + (i < P % k)}" for i, h in enumerate(hosts)
                    if P // k + (i < P % k) > 0)


def sdsmrun_args(c, P):
    """sdsmrun's options that place P ranks on the cluster's hosts."""
    return ["--hosts", host_slots(c["hosts"], P), "--rsh", c["rsh"]]


def read_env(d):
    """The variables of DIR/env (written by cluster.sh up)."""
    env = {}
    try:
        with open(os.path.join(d, "env")) as f:
            for line in f:
                for word in shlex.split(line, comments=True):
                    k, sep, v = word.partition("=")
                    if sep:
                        env[k] = v
    except OSError as e:
        raise ClusterError(f"--hosts {d}: no cluster there ({e}); make one with "
                           f"tests/cluster/cluster.sh up {d} K, or give a number of hosts")
    return env


def up(spec, prefix="bench-cluster."):
    """Bring up K hosts (spec a number: removed again by down()) or load the
    cluster made by "cluster.sh up DIR K" (spec DIR: left as it is)."""
    owned = False
    if spec.isdigit():
        d = tempfile.mkdtemp(prefix=prefix)
        p = subprocess.run([script("cluster.sh"), "up", d, spec],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            shutil.rmtree(d, ignore_errors=True)
            raise ClusterError(f"--hosts {spec}: cluster.sh up failed (exit {p.returncode}):\n"
                               + p.stdout.strip())
        spec, owned = d, True
    env = read_env(spec)
    hosts = env.get("CLUSTER_HOSTS", "").split()
    if not hosts or "CLUSTER_SUBNET" not in env:
        raise ClusterError(f"--hosts {spec}: {spec}/env lacks CLUSTER_HOSTS or CLUSTER_SUBNET")
    d = os.path.abspath(spec)
    return dict(dir=d, rsh=os.path.join(d, "rsh"), subnet=env["CLUSTER_SUBNET"],
                hosts=hosts, owned=owned, env=env, came=None if owned else came_with(d, hosts))


def came_with(d, hosts):
    """What a cluster given as DIR is set to now: its network profile as
    netprofile.sh's arguments (None: none) and its hosts' CPUs each (None:
    all, as after "cluster.sh cpus DIR off")."""
    p = subprocess.run([script("netprofile.sh"), d, "show"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    words = p.stdout.split() if p.returncode == 0 else []
    profile = None
    if words and words[0] in PROFILES[1:]:
        kv = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        loss = kv.get("loss_pct", "0")
        profile = [words[0]] + (["--loss", loss] if loss not in ("", "0") else [])
    cpus = None
    try:
        with open(os.path.join(d, "cpus." + hosts[0])) as f:
            cpus = len([x for x in f.read().strip().split(",") if x]) or None
    except OSError:
        pass
    return dict(profile=profile, cpus=cpus)


def down(c):
    """Remove a cluster up() made (namespaces, links, what runs there)."""
    if c and c["owned"]:
        subprocess.run([script("cluster.sh"), "down", c["dir"]],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(c["dir"], ignore_errors=True)


def net_set(c, build, net):
    """Set a network profile (none: remove any) and measure its page round
    trip; returns (the ping-pong line, None) or (None, error)."""
    np = [script("netprofile.sh"), c["dir"], "--build", build]
    p = subprocess.run(np + (["off"] if net == "none" else [net]), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        return None, p.stdout.strip()
    h = c["hosts"]
    p = subprocess.run(np + ["rtt", h[0], h[1 % len(h)]], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        return None, p.stdout.strip()
    return p.stdout.strip(), None


def cpus_set(c, n):
    """Give every host n CPUs of its own (cluster.sh cpus; None: every host
    every CPU again); raises ClusterError."""
    p = subprocess.run([script("cluster.sh"), "cpus", c["dir"], "off" if n is None else str(n)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise ClusterError(f"cluster.sh cpus {c['dir']} {n or 'off'} failed:\n{p.stdout.strip()}")


def net_off(c, build):
    """Remove the profile this run set: a cluster given as DIR gets back the
    one it came with (came), any other has none.  Returns an error message
    or None."""
    args = ((c.get("came") or {}).get("profile")) or ["off"]
    p = subprocess.run([script("netprofile.sh"), c["dir"], "--build", build] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        return (f"could not set {c['dir']}'s network profile back to {' '.join(args)}:\n"
                + p.stdout.strip())
    return None


def cpus_restore(c):
    """Give the hosts the CPUs they came with (came; every CPU if none were
    set, or for a cluster brought up here); raises ClusterError."""
    cpus_set(c, (c.get("came") or {}).get("cpus"))
