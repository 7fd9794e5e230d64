#!/usr/bin/env python3
"""pmi2_fake.py - a one-rank PMI-2 launcher that can answer wrongly.

    pmi2_fake.py DEFECT PROG [ARGS...]

Starts PROG as rank 0 of 1 with PMI_FD, PMI_RANK and PMI_SIZE, serves the
PMI-2 wire protocol on the socket, and exits with PROG's status.  DEFECT
spoils one answer, so the tests see that sdsm checks what a launcher says:
  none       answer correctly (the program must run)
  pmi1       answer init with PMI version 1 only
  badlen     a length field that is not a number
  size       fullinit says the job has 2 ranks (PMI_SIZE says 1)
  badhex     the address read back is not hex
  missing    the address read back is not found
  silent     never answer the fence (the program's SDSM_TIMEOUT must end it)
  nomap      give no PMI_process_mapping (the program must run)
  badmap     give a malformed one (a warning; the program must run)
"""
import os
import socket
import subprocess
import sys


def main():
    defect, prog = sys.argv[1], sys.argv[2:]
    ours, theirs = socket.socketpair()
    env = dict(os.environ, PMI_FD=str(theirs.fileno()), PMI_RANK="0", PMI_SIZE="1")
    child = subprocess.Popen(prog, env=env, pass_fds=[theirs.fileno()])
    theirs.close()
    f = ours.makefile("rb")
    kvs = {}

    def reply(text):
        data = text.encode()
        if defect == "badlen" and text.startswith("cmd=fullinit"):
            ours.sendall(b"12x456" + data)
        else:
            ours.sendall(b"%-6d" % len(data) + data)

    line = f.readline()
    if line.startswith(b"cmd=init"):
        version = 1 if defect == "pmi1" else 2
        ours.sendall(b"cmd=response_to_init pmi_version=%d pmi_subversion=0 rc=0\n" % version)
    while True:
        head = f.read(6)
        if len(head) < 6:
            break
        body = f.read(int(head)).decode()
        req = dict(p.split("=", 1) for p in body.split(";") if "=" in p)
        cmd = req.get("cmd")
        if cmd == "fullinit":
            size = 2 if defect == "size" else 1
            reply("cmd=fullinit-response;rc=0;rank=0;size=%d;appnum=0;" % size)
        elif cmd == "info-getjobattr":
            if defect == "nomap":
                reply("cmd=info-getjobattr-response;rc=0;found=FALSE;")
            elif defect == "badmap":
                reply("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,x,1));")
            else:
                reply("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,1));")
        elif cmd == "kvs-put":
            kvs[req["key"]] = req["value"]
            reply("cmd=kvs-put-response;rc=0;")
        elif cmd == "kvs-fence":
            if defect != "silent":
                reply("cmd=kvs-fence-response;rc=0;")
        elif cmd == "kvs-get":
            key = req["key"]
            value = kvs.get(key)
            if defect == "badhex" and key.startswith("sdsm-addr"):
                value = "zz" + value[2:]
            if defect == "missing" and key.startswith("sdsm-addr"):
                value = None
            if value is None:
                reply("cmd=kvs-get-response;rc=0;found=FALSE;")
            else:
                reply("cmd=kvs-get-response;rc=0;found=TRUE;value=%s;" % value)
        elif cmd == "finalize":
            print("pmi2_fake: finalize after %d puts" % len(kvs), flush=True)
            reply("cmd=finalize-response;rc=0;")
        elif cmd == "abort":
            print("pmi2_fake: abort: " + req.get("msg", ""), flush=True)
            break
    sys.exit(child.wait())


main()
