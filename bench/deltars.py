"""The delta-rs side of `npm run bench`: one case per process, run by bench/deltars.ts as
`python bench/deltars.py <case>` (its arguments as JSON on stdin) in the venv of
bench/deltars-requirements.txt.

Same method as the Node cases (bench/common.ts): a warm-up, then 3 measured runs with a full GC
before each, the median taken by bench/run.ts; peak RSS is this process's ru_maxrss. The case
prints one line, `BENCH_RESULT {json}`: the runs, memory, and what the run produced (aggregates,
rows, statement metrics), which bench/deltars.ts checks against the same oracle as the other
engines. Nothing here decides whether a result is right.
"""

import datetime
import gc
import json
import os
import resource
import shutil
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, QueryBuilder, WriterProperties, write_deltalake

# The Parquet settings of every other writer in the bench (zstd, 131,072-row groups).
WRITER = WriterProperties(compression="ZSTD", max_row_group_size=131_072)
WARMUP = 1
RUNS = 3
COLUMNS = ["id", "customer", "amount", "day", "flag"]


def peak_rss_mb():
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def rss_now_mb():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def bytes_read_so_far():
    """Bytes this process has read through read()-like calls (page-cache hits included)."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def measure(run, setup=None, after=None, warmup=WARMUP, runs=RUNS):
    times = []
    for i in range(warmup + runs):
        if setup:
            setup(i)
        gc.collect()
        t0 = time.perf_counter()
        run(i)
        times.append((time.perf_counter() - t0) * 1000)
        if after:
            after(i)
    return {"warmupMs": times[0] if warmup else None, "runs": times[warmup:]}


def query(table, sql):
    """`sql` (naming the table `t`) through delta-rs's own DataFusion, as a pyarrow table."""
    reader = QueryBuilder().register("t", DeltaTable(table)).execute(sql)
    return pa.table(reader.read_all())


def json_value(v):
    if isinstance(v, datetime.date):
        return v.isoformat()
    return v


def rows_of(t):
    return [[json_value(v) for v in row.values()] for row in t.to_pylist()]


def checks_of(t):
    """The bench's `Checks` (bench/data.ts computeChecks) of a table of the five columns."""
    import pyarrow.compute as pc

    def count(name):
        return t.num_rows - t.column(name).null_count

    return {
        "count": t.num_rows,
        "sumId": str(pc.sum(t.column("id")).as_py() or 0),
        "countCustomer": count("customer"),
        "sumAmount": round(pc.sum(t.column("amount")).as_py() or 0.0, 2),
        "countDay": count("day"),
        "sumFlag": pc.sum(pc.cast(t.column("flag"), pa.int64())).as_py() or 0,
        "countFlag": count("flag"),
    }


def files_under(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            out[p] = os.path.getsize(p)
    return out


def written_since(before, root):
    """Bytes of the files that are new under `root`: (data and deletion vectors, `_delta_log/`)."""
    data = log = 0
    for p, size in files_under(root).items():
        if p in before:
            continue
        if f"{os.sep}_delta_log{os.sep}" in p:
            log += size
        else:
            data += size
    return data, log


def logical_table(path, physical, day=None):
    """
    One of Silt's data files with its physical columns under the logical names; `day` (ISO) is
    the partition value of a file of the day-partitioned table, which holds no `day` column.
    """
    names = [n for n in COLUMNS if day is None or n != "day"]
    t = pq.read_table(path, columns=[physical[n] for n in names]).rename_columns(names)
    if day is not None:
        value = pa.scalar(datetime.date.fromisoformat(day), pa.date32())
        t = t.append_column("day", pa.repeat(value, t.num_rows)).select(COLUMNS)
    return t


# ---------------------------------------------------------------------------------------------
# Cases. Each takes the JSON arguments bench/deltars.ts passes and returns the result fields.


def prepare_flat(a):
    """The 1M rows of `source.parquet` as a delta-rs table, one write: what the scan reads."""
    shutil.rmtree(a["table"], ignore_errors=True)
    t0 = time.perf_counter()
    write_deltalake(a["table"], pq.read_table(a["source"]), writer_properties=WRITER)
    return {"extra": {"buildMs": (time.perf_counter() - t0) * 1000}}


def append(a):
    """write_deltalake(mode="append") of the same 1M rows; every run appends to the same table."""
    data = pq.read_table(a["source"])
    shutil.rmtree(a["table"], ignore_errors=True)
    DeltaTable.create(a["table"], data.schema)
    base = rss_now_mb()
    sizes = []

    def run(_):
        before = files_under(a["table"])
        write_deltalake(a["table"], data, mode="append", writer_properties=WRITER)
        sizes.append(written_since(before, a["table"])[0])

    m = measure(run)
    first = DeltaTable(a["table"], version=1).to_pyarrow_table()
    return {**m, "baseRssMb": base, "extra": {"checks": checks_of(first), "fileBytes": sizes[-1]}}


def scan(a):
    """DeltaTable(path).to_pyarrow_table(): open the table and read every row into Arrow."""
    base = rss_now_mb()
    last = {}

    def run(i):
        t = DeltaTable(a["table"]).to_pyarrow_table()
        if i == WARMUP + RUNS - 1:
            last["checks"] = checks_of(t)

    m = measure(run)
    return {**m, "baseRssMb": base, "extra": last}


def prepare_keyed(a):
    """
    Silt's prepared files, one delta-rs append each, in Silt's order: the same rows in the same
    files (and so the same per-file statistics) under delta-rs's own log. `day` comes from the
    partition value when the table is partitioned by it.
    """
    shutil.rmtree(a["table"], ignore_errors=True)
    appends = []
    t0 = time.perf_counter()
    partition_by = ["day"] if a.get("partitioned") else None
    for f in a["files"]:
        t = logical_table(f["path"], a["physical"], f.get("day"))
        a0 = time.perf_counter()
        write_deltalake(
            a["table"],
            t,
            mode="append",
            partition_by=partition_by,
            writer_properties=WRITER,
        )
        appends.append((time.perf_counter() - a0) * 1000)
    build_ms = (time.perf_counter() - t0) * 1000
    dt = DeltaTable(a["table"])
    # Whether delta-rs can read Silt's own table (catalog-managed, column mapping, deletion
    # vectors, ...): recorded for the notes, whatever the answer.
    silt = {"ok": True, "error": None}
    if a.get("siltTable"):
        try:
            DeltaTable(a["siltTable"]).to_pyarrow_dataset()
        except Exception as e:  # noqa: BLE001 - the message is the finding
            silt = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    return {
        "extra": {
            "buildMs": build_ms,
            "appendMs": appends,
            "version": dt.version(),
            "files": len(dt.file_uris()),
            "bytes": sum(f["size_bytes"] for f in pa.table(dt.get_add_actions()).to_pylist()),
            "readsSiltTable": silt,
            "checks": rows_of(query(a["table"], a["checksSql"]))[0],
        }
    }


def sql_case(a):
    """A query through DeltaTable + QueryBuilder, the table reopened in every run."""
    base = rss_now_mb()
    answers = []

    def run(_):
        answers.append(rows_of(query(a["table"], a["sql"])))

    m = measure(run)
    return {**m, "baseRssMb": base, "extra": {"answers": answers}}


def change(a):
    """
    A row-level change on a fresh copy of the prepared table each run (copied untimed), timed
    from opening the table to its commit; the statement's source rows are read inside the timing,
    as Silt's statement reads its source table.
    """
    work = a["work"]
    kind = a["kind"]
    metrics = []
    written = []
    read = []
    state = {}

    def setup(_):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(a["table"], work)
        state["before"] = files_under(work)
        state["read"] = bytes_read_so_far()

    def run(_):
        dt = DeltaTable(work)
        if kind == "delete":
            metrics.append(dt.delete(a["predicate"], writer_properties=WRITER))
        elif kind == "update":
            metrics.append(
                dt.update(updates=a["updates"], predicate=a["predicate"], writer_properties=WRITER)
            )
        elif kind == "merge":
            source = pq.read_table(a["source"])
            merger = dt.merge(
                source,
                a["predicate"],
                source_alias="s",
                target_alias="t",
                writer_properties=WRITER,
            )
            metrics.append(merger.when_matched_update_all().when_not_matched_insert_all().execute())
        elif kind == "replace":
            source = pq.read_table(a["source"])
            write_deltalake(
                dt, source, mode="overwrite", predicate=a["predicate"], writer_properties=WRITER
            )
            metrics.append({})
        else:
            raise ValueError(f"no change {kind}")

    def after(i):
        read.append(bytes_read_so_far() - state["read"])
        written.append(written_since(state["before"], work))
        if i == WARMUP + RUNS - 1:
            state["peak"] = peak_rss_mb()
            state["checks"] = rows_of(query(work, a["checksSql"]))[0]
            state["files"] = len(DeltaTable(work).file_uris())

    try:
        base = rss_now_mb()
        m = measure(run, setup, after)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        **m,
        "baseRssMb": base,
        "peakRssMb": state["peak"],
        "extra": {
            "metrics": metrics,
            "checks": state["checks"],
            "bytesRead": read[-1],
            "bytesWritten": written[-1][0] + written[-1][1],
            "logBytesWritten": written[-1][1],
            "filesAfter": state["files"],
        },
    }


def optimize(a):
    """OPTIMIZE (compact, or Z-order by the given columns) once, unwarmed, on a fresh copy."""
    work = a["work"]
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(a["table"], work)
    answer = {}
    try:
        base = rss_now_mb()

        def run(_):
            dt = DeltaTable(work)
            if a["zorder"]:
                answer["metrics"] = dt.optimize.z_order(
                    a["zorder"], target_size=a["targetSize"], writer_properties=WRITER
                )
            else:
                answer["metrics"] = dt.optimize.compact(
                    target_size=a["targetSize"], writer_properties=WRITER
                )

        m = measure(run, warmup=0, runs=1)
        peak = peak_rss_mb()
        dt = DeltaTable(work)
        adds = pa.table(dt.get_add_actions()).to_pylist()
        point = {k: rows_of(query(work, sql)) for k, sql in a["pointSql"].items()}
        return {
            **m,
            "baseRssMb": base,
            "peakRssMb": peak,
            "extra": {
                "metrics": answer["metrics"],
                "filesAfter": len(adds),
                "bytesAfter": sum(f["size_bytes"] for f in adds),
                "checks": rows_of(query(work, a["checksSql"]))[0],
                "pointRows": {k: len(v) for k, v in point.items()},
                "pointId": point.get("id"),
            },
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def snapshot(a):
    """
    Loading the latest snapshot, `DeltaTable(path)` (with its file list), of a log of the same
    shape as Silt's: version 0 creates the table, version 1 appends one row, versions 2..n-1 are
    written directly as copies of version 1 with their own data file (as bench/case.ts's buildLog
    does: n appends through the writer would take minutes), and `checkpointAt`, when given, gets a
    checkpoint written by delta-rs itself.
    """
    root = a["table"]
    n = a["commits"]
    shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    one = pq.read_table(a["source"]).slice(0, 1)
    DeltaTable.create(root, one.schema)
    write_deltalake(root, one, mode="append", writer_properties=WRITER)
    log = os.path.join(root, "_delta_log")
    with open(os.path.join(log, f"{1:020d}.json")) as f:
        template = [json.loads(line) for line in f if line.strip()]
    add = next(x["add"] for x in template if "add" in x)
    info = next(x["commitInfo"] for x in template if "commitInfo" in x)
    for v in range(2, n):
        path = f"part-{v:05d}-bench-c000.zstd.parquet"
        shutil.copyfile(os.path.join(root, add["path"]), os.path.join(root, path))
        ts = info["timestamp"] + v
        actions = [
            {"commitInfo": {**info, "timestamp": ts, "readVersion": v - 1}},
            {"add": {**add, "path": path, "modificationTime": ts}},
        ]
        with open(os.path.join(log, f"{v:020d}.json"), "x") as f:
            f.write("".join(json.dumps(x) + "\n" for x in actions))
    if a.get("checkpointAt") is not None:
        DeltaTable(root, version=a["checkpointAt"]).create_checkpoint()
    build_ms = (time.perf_counter() - t0) * 1000
    base = rss_now_mb()
    seen = {}

    def run(_):
        dt = DeltaTable(root)
        seen["version"] = dt.version()
        seen["files"] = len(dt.file_uris())

    m = measure(run)
    checkpoints = sorted(x for x in os.listdir(log) if ".checkpoint" in x)
    return {**m, "baseRssMb": base, "extra": {**seen, "buildMs": build_ms, "checkpoints": checkpoints}}


CASES = {
    "prepare-flat": prepare_flat,
    "append": append,
    "scan": scan,
    "prepare-keyed": prepare_keyed,
    "sql": sql_case,
    "change": change,
    "optimize": optimize,
    "snapshot": snapshot,
}


def main():
    name, args = sys.argv[1], json.load(sys.stdin)
    gc.collect()
    out = {"runs": [], "warmupMs": None, "baseRssMb": rss_now_mb(), **CASES[name](args)}
    out.setdefault("peakRssMb", peak_rss_mb())
    import deltalake

    out["versions"] = {"deltalake": deltalake.__version__, "pyarrow": pa.__version__}
    sys.stdout.write("BENCH_RESULT " + json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
