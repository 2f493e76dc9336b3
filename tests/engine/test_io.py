"""Files are read and written safely (issue #24, section 3): real FIFOs, symlinks and devices in a temp dir."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import threading

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.cli import main
from optnoise.engine.io import MAX_INPUT_BYTES, atomic_write_text, read_bytes, read_json

SOLVE = ["solve", "--n", "8", "--eps", "1", "--neighborhood", "bd:1", "--format", "json"]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_out_never_replaces_a_fifo_or_a_device(capsys, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/null"):
        code, _, err = run(capsys, SOLVE + ["--out", target])
        assert code == 2 and "not a regular file" in err and len(err.strip().splitlines()) == 1
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(ValueError, match="not a regular file"):
        atomic_write_text("/dev/full", "x")  # the device node survives (as root it used to be replaced)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_out_through_a_symlink_replaces_the_target_and_keeps_the_link(capsys, tmp_path):
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    code, _, _ = run(capsys, SOLVE + ["--out", str(link)])
    assert code == 0 and link.is_symlink() and json.loads(target.read_text())["status"] == "optimal"


def test_outputs_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        p = atomic_write_text(tmp_path / "new.json", "{}")
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o644  # not mkstemp's 0600
        os.chmod(p, 0o640)
        atomic_write_text(p, "[]")
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o640  # a replaced file keeps its mode
    finally:
        os.umask(old)


def test_reads_refuse_devices_fifos_and_huge_files(capsys, tmp_path):
    # the issue: `verify --pmf /dev/zero` grew without end; a FIFO blocked certify/release
    code, _, err = run(capsys, ["verify", "--pmf", "/dev/zero", "--eps", "1", "--neighborhood", "bd:1"])
    assert code == 2 and "not a regular file" in err and len(err.strip().splitlines()) == 1
    fifo = tmp_path / "design.json"
    os.mkfifo(fifo)
    done = threading.Event()

    def certify() -> None:
        run(capsys, ["release", "--design", str(fifo), "--value", "1"])
        done.set()

    threading.Thread(target=certify, daemon=True).start()
    assert done.wait(10), "release waited on a FIFO"
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk used
    with pytest.raises(ValueError, match="more than"):
        read_bytes(big, "input")
    with pytest.raises(ValueError, match="not a regular file"):
        read_json(tmp_path, "input")


def test_corrupt_or_odd_cache_entries_are_ignored_and_solved_again(tmp_path):
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(1), privacy="dp")
    first = d.solve(solver="highs", cache=tmp_path)
    (entry,) = tmp_path.glob("*.json")
    # a deeply nested entry (RecursionError in the parser), a directory, a FIFO, a link to /dev/zero
    entry.write_text("[" * 100_000 + "]" * 100_000)
    assert d.solve(solver="highs", cache=tmp_path).distortion == pytest.approx(first.distortion)
    for make in (os.mkdir, os.mkfifo, lambda p: os.symlink("/dev/zero", p)):
        if entry.is_dir():
            entry.rmdir()
        else:
            entry.unlink()
        make(entry)
        if entry.is_dir():  # a folder in the way cannot be removed: the entry is skipped, with a warning
            with pytest.warns(RuntimeWarning, match="cache entry not stored"):
                again = d.solve(solver="highs", cache=tmp_path)
        else:  # a FIFO or a link in the cache folder is removed and the entry written again
            again = d.solve(solver="highs", cache=tmp_path)
            assert entry.is_file() and not entry.is_symlink()
        assert again.status == "optimal" and np.allclose(again.pmf, first.pmf)


def test_sweep_survives_corrupt_entries(capsys, tmp_path):
    cache = tmp_path / "cache"
    argv = ["sweep", "--n", "8", "--eps", "0.5,1", "--delta", "0.1", "--neighborhood", "bd:1", "--privacy", "dp"]
    argv += ["--cache", str(cache), "--quiet", "--jobs", "1"]
    code, out, _ = run(capsys, argv)
    assert code == 0
    for entry in cache.glob("*.json"):
        entry.unlink()
        os.mkfifo(entry)
    code, again, err = run(capsys, argv)
    key = ("n", "eps", "delta", "status", "distortion")
    rows = [{k: r[k] for k in key} for r in csv.DictReader(io.StringIO(out))]
    assert code == 0 and err == "" and rows == [{k: r[k] for k in key} for r in csv.DictReader(io.StringIO(again))]


def test_figures_out_is_checked_before_starting(capsys, tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    code, _, err = run(capsys, ["figures", "beyond", "--fast", "--out", str(blocker / "sub")])
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
