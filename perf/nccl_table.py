#!/usr/bin/env python3
"""A parser for nccl-tests' result tables (all_reduce_perf, alltoall_perf, ...).

It knows nccl-tests' output as nccl-tests prints it (src/common.cu, 2.x):

    #                                                              out-of-place                       in-place
    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
         1048576        262144     float     sum      -1    41.43   25.31   44.29      0    40.92   25.62   44.84      0
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 44.565
    #

The column header must start with nccl-tests' five columns (size count type redop root),
then one group of (time algbw busbw #wrong) per variant named on the line above it
(out-of-place, in-place); #wrong may read N/A. Columns after the groups are kept by their
header names (squeeze-perf and squeeze-nccl-perf put ratio, max_err, bound and agree there;
nccl-tests may put a timestamp). A stream may hold several tables, each ended by its summary.

As a tool: prints each row and each table's summary as a JSON line; exits 1 with the line
number and the reason on anything it cannot read, or when no table is found.

    python3 perf/nccl_table.py [FILE] [--expect-columns ratio,max_err,bound,agree]
"""
import argparse
import json
import re
import sys

PRE = ["size", "count", "type", "redop", "root"]
GROUP = ["time", "algbw", "busbw", "#wrong"]
SUMMARY = re.compile(r"^#\s*(Out of bounds values|Avg bus bandwidth)\s*:\s*(\S+)")


class ParseError(Exception):
    pass


def _group_names(line):
    """The variants a group-label line names, in order."""
    return re.findall(r"out-of-place|in-place", line)


def _header(tokens):
    """(groups, extras) for a column header's tokens (after '#'), or None."""
    if tokens[:5] != PRE:
        return None
    rest = tokens[5:]
    groups = 0
    while len(rest) >= 4 and rest[0] in ("time", "cputime") and rest[1:4] == GROUP[1:]:
        groups += 1
        rest = rest[4:]
    if groups == 0:
        return None
    return groups, rest


def _number(text, kind, what, lineno):
    try:
        return kind(text)
    except ValueError:
        raise ParseError("line %d: %s '%s' is not a number" % (lineno, what, text))


def parse(lines):
    """Parses an iterable of lines; returns a list of tables:
    {"variants": [...], "extras": [...], "rows": [...], "out_of_bounds": int, "avg_busbw": float}."""
    tables = []
    current = None
    labels = []
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        if line.startswith("#"):
            body = line[1:].split()
            summary = SUMMARY.match(line)
            if summary:
                if current is None:
                    raise ParseError("line %d: a summary line before any table" % lineno)
                key, value = summary.groups()
                if key == "Out of bounds values":
                    current["out_of_bounds"] = _number(value, int, key, lineno)
                else:
                    current["avg_busbw"] = _number(value, float, key, lineno)
                continue
            if "out-of-place" in line or "in-place" in line:
                labels = _group_names(line)
                continue
            header = _header(body)
            if header is not None:
                groups, extras = header
                if labels and len(labels) != groups:
                    raise ParseError("line %d: %d column groups under %d labels %s" %
                                     (lineno, groups, len(labels), labels))
                variants = labels or ["out-of-place", "in-place"][:groups]
                current = {"variants": variants, "extras": extras, "rows": []}
                tables.append(current)
                labels = []
            continue
        tokens = line.split()
        if not tokens or not re.match(r"^\d+$", tokens[0]):
            continue  # nccl-tests' other output (warnings, "Collective test concluded", ...)
        if current is None:
            raise ParseError("line %d: a result row before any column header" % lineno)
        want = 5 + 4 * len(current["variants"]) + len(current["extras"])
        if len(tokens) != want:
            raise ParseError("line %d: %d columns, the header has %d: %s" % (lineno, len(tokens), want, line))
        row = {
            "size": _number(tokens[0], int, "size", lineno),
            "count": _number(tokens[1], int, "count", lineno),
            "type": tokens[2],
            "redop": tokens[3],
            "root": _number(tokens[4], int, "root", lineno),
        }
        at = 5
        for variant in current["variants"]:
            t, alg, bus, wrong = tokens[at:at + 4]
            row[variant] = {
                "time": _number(t, float, "time", lineno),
                "algbw": _number(alg, float, "algbw", lineno),
                "busbw": _number(bus, float, "busbw", lineno),
                "wrong": None if wrong == "N/A" else _number(wrong, float, "#wrong", lineno),
            }
            at += 4
        row["extra"] = dict(zip(current["extras"], tokens[at:]))
        current["rows"].append(row)
    for k, table in enumerate(tables):
        if not table["rows"]:
            raise ParseError("table %d has no rows" % k)
        for key in ("out_of_bounds", "avg_busbw"):
            if key not in table:
                raise ParseError("table %d has no '%s' summary line" % (k, key))
    return tables


def main():
    ap = argparse.ArgumentParser(description="Parse nccl-tests' result tables into JSON lines.")
    ap.add_argument("file", nargs="?", default="-", help="the output to read (default: stdin)")
    ap.add_argument("--expect-columns", default="",
                    help="comma list of columns each table must have after nccl-tests' (exit 1 if not)")
    args = ap.parse_args()
    stream = sys.stdin if args.file == "-" else open(args.file)
    try:
        tables = parse(stream)
        if not tables:
            raise ParseError("no nccl-tests table found")
        expected = [c for c in args.expect_columns.split(",") if c]
        for k, table in enumerate(tables):
            missing = [c for c in expected if c not in table["extras"]]
            if missing:
                raise ParseError("table %d lacks the columns %s (has %s)" % (k, missing, table["extras"]))
    except ParseError as e:
        print("nccl_table.py: %s" % e, file=sys.stderr)
        return 1
    for k, table in enumerate(tables):
        for row in table["rows"]:
            print(json.dumps(dict(row, table=k)))
        print(json.dumps({"table": k, "summary": True, "variants": table["variants"], "rows": len(table["rows"]),
                          "out_of_bounds": table["out_of_bounds"], "avg_busbw": table["avg_busbw"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
