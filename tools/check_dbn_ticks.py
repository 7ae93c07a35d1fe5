#!/usr/bin/env python3
"""Cross-check tickgrad's DBN tick reader against Databento's own decoder, record by record.

Run by hand (not in CI), from anywhere:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install databento-dbn
    /tmp/venv/bin/python tools/check_dbn_ticks.py [--bin build/tickgrad] [--shared ../shared/data]

Every DBN file under SHARED/dbn-ticks/databento-dbn/ is decoded with databento_dbn.DBNDecoder. The
files of the schemas tickgrad reads ticks from (trades; tbbo and mbp-1, as trades and as quotes) are
also read by `tickgrad inspect --ticks KIND --dump OUT.csv FILE`, which writes every record tickgrad's
tick source hands out (what `tickgrad bars` reads) with exact numbers. The decoder's records become
the records tickgrad should give by the rules of docs/TICKS.md (trades: every trade message and the
mbp-1/tbbo messages whose action is 'T'; quotes: every mbp-1/tbbo message with both sides of the book;
records out of time order and crossed quotes dropped), and every field is compared exactly: ts_event,
price (or bid and ask) as the fixed-point integer / 1e9 and as Databento's pretty_* float, size (or
bid_sz_00 and ask_sz_00), the aggressor side. A file of another schema must be refused by tickgrad.
Definition and statistics files are also read by `tickgrad inspect --dump OUT.csv FILE` (every such
record) and compared with the decoder's: definitions by ts_event, instrument_id, raw_symbol,
instrument_class, expiration, the multiplier (unit_of_measure_qty / 1e9, else contract_multiplier)
and the tick size (min_price_increment / 1e9); statistics by ts_event, instrument_id, stat_type,
update_action, ts_ref, price / 1e9 and quantity (DBN's undefined values as tickgrad writes them).
A zstd file is decompressed first (the zstd command) when there is one. Prints a line per file and
kind and a final PASS or FAIL (exit status 0 or 1).
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

UNDEF_PRICE = 2**63 - 1
UNDEF_TS = 2**64 - 1
INT64_MIN = -(2**63)
UNDEF_QTY = {2**31 - 1, 2**63 - 1}
REF_SCHEMAS = {"definition", "statistics"}
TRADE_SCHEMAS = {"trades", "tbbo", "mbp-1"}
QUOTE_SCHEMAS = {"tbbo", "mbp-1"}


def decode(path):
    """The metadata's schema name and the data records of a DBN file, by databento_dbn."""
    import databento_dbn

    dec = databento_dbn.DBNDecoder()
    with open(path, "rb") as f:
        dec.write(f.read())
    recs = dec.decode()
    meta, data = recs[0], recs[1:]
    schema = str(meta.schema).split(".")[-1].lower().replace("_", "-") if meta.schema is not None else "mixed"
    return schema, data


def side_of(rec):
    s = str(rec.side)
    s = s[-1] if s else "N"
    return {"B": 1, "A": -1}.get(s, 0)


def action_of(rec):
    a = str(rec.action)
    return a[-1] if a else ""


def expected(records, kind):
    """The records tickgrad's source should hand out, as tuples of its dump's columns (record number last)."""
    out, last = [], None
    for i, r in enumerate(records):
        rtype = int(r.rtype)
        if kind == "trades":
            if rtype == 1 and action_of(r) != "T":
                continue
            if rtype not in (0, 1):
                continue
            row = (r.ts_event, r.price / 1e9, float(r.size), side_of(r), 0, i)
            pretty = (r.pretty_price,)
            raw_ok = r.price != UNDEF_PRICE
        else:
            if rtype != 1 or r.levels[0].bid_px == UNDEF_PRICE or r.levels[0].ask_px == UNDEF_PRICE:
                continue
            lv = r.levels[0]
            row = (r.ts_event, lv.bid_px / 1e9, lv.ask_px / 1e9, float(lv.bid_sz), float(lv.ask_sz), i)
            pretty = (lv.pretty_bid_px, lv.pretty_ask_px)
            raw_ok = row[1] <= row[2]  # a crossed quote is dropped
        if not raw_ok or (last is not None and r.ts_event < last):
            continue
        last = r.ts_event
        out.append((row, pretty))
    return out


def dump(binary, path, kind, tmp):
    """tickgrad's records of path as kind (a list of tuples), or the error text when it refuses the file."""
    out = os.path.join(tmp, "dump.csv")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([binary, "inspect", "--ticks", kind, "--dump", out, path], capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip() or p.stdout.strip())
    rows = []
    with open(out, newline="") as f:
        rd = csv.reader(f)
        next(rd)
        for r in rd:
            if kind == "trades":
                rows.append((int(r[0]), float(r[1]), float(r[2]), int(r[3]), int(r[4]), int(r[5])))
            else:
                rows.append((int(r[0]), float(r[1]), float(r[2]), float(r[3]), float(r[4]), int(r[5])))
    return rows, None


def fixed(raw):
    return float("nan") if raw == UNDEF_PRICE else raw / 1e9


def stamp(raw):
    return INT64_MIN if raw == UNDEF_TS else raw


def char_of(v):
    s = str(v)
    return s[-1] if s else ""


def expected_refdata(records):
    """The rows tickgrad's definition or statistics dump should hold (as strings and numbers), one per record."""
    out = []
    for i, r in enumerate(records):
        rtype = int(r.rtype)
        if rtype == 0x13:
            uom, cm = r.unit_of_measure_qty, r.contract_multiplier
            mult = uom / 1e9 if uom != UNDEF_PRICE and uom > 0 else (
                float(cm) if cm != 2**31 - 1 and cm > 0 else float("nan"))
            out.append((i, r.ts_event, r.instrument_id, r.raw_symbol, char_of(r.instrument_class),
                        stamp(r.expiration), mult, fixed(r.min_price_increment)))
        elif rtype == 0x18:
            q = r.quantity
            out.append((i, r.ts_event, r.instrument_id, int(r.stat_type), int(r.update_action), stamp(r.ts_ref),
                        fixed(r.price), float("nan") if q in UNDEF_QTY else float(q)))
    return out


def dump_refdata(binary, path, tmp):
    """tickgrad's definition or statistics rows of path, or the error text."""
    out = os.path.join(tmp, "refdata.csv")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([binary, "inspect", "--dump", out, path], capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip() or p.stdout.strip())
    rows = []
    with open(out, newline="") as f:
        rd = csv.reader(f)
        header = next(rd)
        for r in rd:
            if header[3] == "raw_symbol":
                rows.append((int(r[0]), int(r[1]), int(r[2]), r[3], r[4], int(r[5]), float(r[6]), float(r[7])))
            else:
                rows.append((int(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]), float(r[6]),
                             float(r[7])))
    return rows, None


def same(a, b):
    """Rows equal field by field, NaN equal to NaN."""
    return len(a) == len(b) and all(x == y or (isinstance(x, float) and isinstance(y, float) and x != x and y != y)
                                    for x, y in zip(a, b))


def compare(name, kind, want, got):
    """Problems between the expected records and tickgrad's (empty when they agree exactly)."""
    bad = []
    if len(want) != len(got):
        bad.append(f"{len(got)} records from tickgrad, {len(want)} expected")
    for (w, pretty), g in zip(want, got):
        if w != g:
            bad.append(f"record {w[-1]}: tickgrad {g}, databento {w}")
        prices = g[1:2] if kind == "trades" else g[1:3]
        if tuple(prices) != tuple(pretty):
            bad.append(f"record {w[-1]}: tickgrad prices {prices}, databento pretty {pretty}")
    return bad


def plain_copy(path, tmp):
    """path itself, or for a .zst file its decompressed copy in tmp (None without the zstd command)."""
    if not path.endswith(".zst"):
        return path
    if not shutil.which("zstd"):
        return None
    out = os.path.join(tmp, os.path.basename(path)[:-4])
    subprocess.run(["zstd", "-q", "-f", "-d", path, "-o", out], check=True)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(here, "..", "build", "tickgrad"))
    ap.add_argument("--shared", default=os.path.join(here, "..", "..", "shared", "data"))
    ap.add_argument("--extra", nargs="*", default=[],
                    help="further DBN files to check (for example definition files of versions 1 and 3)")
    a = ap.parse_args()
    folder = os.path.join(a.shared, "dbn-ticks", "databento-dbn")
    if not os.path.isdir(folder):
        print(f"no {folder}: nothing to check")
        return 1
    failed, checked, records = 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        files = [(n, os.path.join(folder, n)) for n in sorted(os.listdir(folder))]
        files += [(os.path.basename(p), p) for p in a.extra]
        for name, full in files:
            if not (name.endswith(".dbn") or name.endswith(".dbn.zst")):
                continue
            path = plain_copy(full, tmp)
            if path is None:
                print(f"{name}: skipped (zstd file and no zstd command)")
                continue
            schema, recs = decode(path)
            if schema in REF_SCHEMAS:
                want = expected_refdata(recs)
                got, err = dump_refdata(a.bin, path, tmp)
                bad = [f"tickgrad failed: {err}"] if got is None else []
                if got is not None and len(got) != len(want):
                    bad.append(f"{len(got)} records from tickgrad, {len(want)} expected")
                bad += [f"record {w[0]}: tickgrad {g}, databento {w}" for w, g in zip(want, got or []) if not same(w, g)]
                checked += 1
                records += len(want)
                failed += bool(bad)
                print(f"{name} {schema}: " + (f"FAIL" if bad else f"{len(recs)} records decoded, {len(want)} "
                                              f"{schema} records equal in every field"))
                for b in bad[:10]:
                    print(f"  {b}")
            for kind in ("trades", "quotes"):
                reads = schema in (TRADE_SCHEMAS if kind == "trades" else QUOTE_SCHEMAS)
                got, err = dump(a.bin, path, kind, tmp)
                if not reads:
                    ok = got is None
                    print(f"{name} {kind}: schema {schema}, {len(recs)} records: "
                          f"{'refused as expected' if ok else 'read, but tickgrad should refuse it'}"
                          + (f" ({err.splitlines()[-1]})" if ok and err else ""))
                    failed += not ok
                    continue
                want = expected(recs, kind)
                bad = [f"tickgrad failed: {err}"] if got is None else compare(name, kind, want, got)
                checked += 1
                records += len(want)
                if bad:
                    failed += 1
                    print(f"{name} {kind}: FAIL")
                    for b in bad[:10]:
                        print(f"  {b}")
                else:
                    print(f"{name} {kind}: schema {schema}, {len(recs)} records decoded, {len(want)} {kind} equal "
                          "in every field")
    print(f"{'PASS' if failed == 0 else 'FAIL'}: {checked} file/kind pairs, {records} records compared, "
          f"{failed} problems")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
