#!/usr/bin/env python3
"""squeeze-perf's and squeeze-nccl-perf's tables read by a parser written for nccl-tests' output.

    nccl_table_test.py sample
        perf/nccl_table.py on output in nccl-tests' own format (both variants, N/A, summary).
    nccl_table_test.py tool NRANKS COMMAND...
        runs COMMAND (a squeeze-perf or squeeze-nccl-perf run with NRANKS ranks), parses its
        stdout and checks every row: Squeeze's columns after nccl-tests', busbw from algbw with
        nccl-tests' factors, count and size as nccl-tests counts them, the summary lines. Exits
        77 (skipped) when the command does (no GPU).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import nccl_table  # noqa: E402

SIZES = {"float": 4, "half": 2, "bfloat16": 2}

# Written the way nccl-tests' printf formats lay it out (all_reduce_perf and alltoall_perf, 2 ranks).
NCCL_TESTS_OUTPUT = """\
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  12345 on    host1 device  0 [0x07] NVIDIA H100
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       
     1048576        262144     float     sum      -1    41.43   25.31   25.31      0    40.92   25.62   25.62      0
     4194304       1048576     float     sum      -1    101.2   41.45   41.45      0    100.9   41.57   41.57      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 33.4875 
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       
     1048576        131072     float    none      -1    30.12   34.81   17.41      0    29.88   35.09   17.55    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 17.48 
#
"""


def fail(why):
    print("FAIL: " + why, file=sys.stderr)
    sys.exit(1)


def check_sample():
    tables = nccl_table.parse(NCCL_TESTS_OUTPUT.splitlines(True))
    if len(tables) != 2:
        fail("%d tables in nccl-tests' sample, expected 2" % len(tables))
    ar, a2a = tables
    if ar["variants"] != ["out-of-place", "in-place"] or ar["extras"] != []:
        fail("variants %s, extras %s" % (ar["variants"], ar["extras"]))
    row = ar["rows"][1]
    if (row["size"], row["count"], row["type"], row["redop"], row["root"]) != (4194304, 1048576, "float", "sum", -1):
        fail("row %s" % row)
    if row["out-of-place"]["busbw"] != 41.45 or row["in-place"]["time"] != 100.9 or row["in-place"]["wrong"] != 0:
        fail("row %s" % row)
    if a2a["rows"][0]["in-place"]["wrong"] is not None or a2a["avg_busbw"] != 17.48 or a2a["out_of_bounds"] != 0:
        fail("all-to-all %s" % a2a)
    for bad, why in [(NCCL_TESTS_OUTPUT.replace("    41.43", "    x1.43"), "not a number"),
                     (NCCL_TESTS_OUTPUT.replace("   25.31      0    40.92", "   25.31      0"), "columns"),
                     (NCCL_TESTS_OUTPUT.replace("# Avg bus bandwidth    : 17.48 \n", ""), "summary")]:
        try:
            nccl_table.parse(bad.splitlines(True))
        except nccl_table.ParseError as e:
            if why not in str(e):
                fail("error '%s' does not say '%s'" % (e, why))
            continue
        fail("a malformed table parsed (%s)" % why)
    print("PASS: nccl-tests' own format parses")


def check_tool(nranks, cmd):
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if run.returncode == 77:
        print(run.stdout + run.stderr)
        sys.exit(77)
    if run.returncode != 0:
        fail("%s exited %d:\n%s%s" % (" ".join(cmd), run.returncode, run.stdout, run.stderr))
    try:
        tables = nccl_table.parse(run.stdout.splitlines(True))
    except nccl_table.ParseError as e:
        fail("%s\n%s" % (e, run.stdout))
    if not tables:
        fail("no table in:\n" + run.stdout)
    n = float(nranks)
    for table in tables:
        if table["variants"] != ["out-of-place"]:
            fail("variants %s" % table["variants"])
        if table["extras"] != ["ratio", "max_err", "bound", "agree"]:
            fail("Squeeze's columns %s, expected ratio max_err bound agree after nccl-tests'" % table["extras"])
        busbw = []
        for row in table["rows"]:
            op = row["out-of-place"]
            es = SIZES.get(row["type"])
            if es is None:
                fail("type '%s' is not nccl-tests' name" % row["type"])
            alltoall = row["redop"] == "none"
            factor = (n - 1) / n if alltoall else 2 * (n - 1) / n
            if abs(op["busbw"] - op["algbw"] * factor) > 0.016:
                fail("busbw %s != algbw %s x %s: %s" % (op["busbw"], op["algbw"], factor, row))
            want_size = row["count"] * es * (nranks if alltoall else 1)
            if row["size"] != want_size or row["root"] != -1:
                fail("size %d for count %d (expected %d), root %d" % (row["size"], row["count"], want_size, row["root"]))
            if op["wrong"] is None or op["time"] <= 0 or row["extra"]["agree"] != ("n/a" if alltoall else "yes"):
                fail("row %s" % row)
            busbw.append(op["busbw"])
        if abs(table["avg_busbw"] - sum(busbw) / len(busbw)) > 0.01:
            fail("Avg bus bandwidth %s, rows' mean %s" % (table["avg_busbw"], sum(busbw) / len(busbw)))
        wrong_rows = sum(1 for r in table["rows"] if r["out-of-place"]["wrong"])
        if table["out_of_bounds"] != wrong_rows:
            fail("Out of bounds values %d, rows with #wrong %d" % (table["out_of_bounds"], wrong_rows))
    print("PASS: %d tables, %d rows parsed as nccl-tests'" % (len(tables), sum(len(t["rows"]) for t in tables)))


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "sample":
        check_sample()
    elif len(sys.argv) >= 4 and sys.argv[1] == "tool":
        check_tool(int(sys.argv[2]), sys.argv[3:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
