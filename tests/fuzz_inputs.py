"""Pathological inputs for the fuzz suite (Orange3's habit of feeding every widget empty and
all-NaN data, applied to loading): each class of bad input the issue #15 tests tried, built in a
temporary folder next to one good trace and one good eval, so every front end can be asked to
load the lot and shown to keep the good files.

make_inputs(root) -> Inputs: the dropped folder, the good files, the bad ones by class, and
the special files (FIFO, socket, symlinks) that must be listed as ignored and never opened.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
from dataclasses import dataclass, field
from pathlib import Path

GOOD_TRACE_ROWS = 6
GOOD_EVAL_ROWS = 6


@dataclass
class Inputs:
    folder: Path                       # what the user drops
    good: list[Path] = field(default_factory=list)
    bad: dict[str, Path] = field(default_factory=dict)      # class -> file that must fail
    skipping: dict[str, Path] = field(default_factory=dict)  # class -> file whose bad rows skip
    special: dict[str, Path] = field(default_factory=dict)  # class -> ignored, never opened
    outside: Path | None = None        # a file outside the folder a `..` link points to
    sockets: list[socket.socket] = field(default_factory=list)

    def digests(self) -> dict[str, str]:
        """sha256 of every regular file under the folder and outside it (byte-identical check)."""
        out = {}
        for p in [*sorted(self.folder.rglob("*")), *( [self.outside] if self.outside else [])]:
            try:
                if p.is_symlink() or not stat.S_ISREG(p.stat().st_mode):
                    continue
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            except OSError:
                continue
        return out

    def close(self) -> None:
        for s in self.sockets:
            s.close()


def _trace_csv(rows: list[dict]) -> str:
    cols = ["request_id", "arrival_s", "prompt_tokens", "completion_tokens", "ttft_ms",
            "tpot_ms", "e2e_ms"]
    lines = [",".join(cols)] + [",".join(str(r.get(c, "")) for c in cols) for r in rows]
    return "\n".join(lines) + "\n"


def _good_rows(prefix: str, n: int) -> list[dict]:
    return [{"request_id": f"{prefix}{i}", "arrival_s": 1700000000 + i, "prompt_tokens": 100 + i,
             "completion_tokens": 20 + i, "ttft_ms": 50.0 + i, "tpot_ms": 10.0 + i,
             "e2e_ms": 300.0 + i} for i in range(n)]


def make_inputs(root: Path, special: bool = True) -> Inputs:
    folder = root / "dropped"
    folder.mkdir()
    inp = Inputs(folder)
    good_trace = folder / "good_trace.csv"
    good_trace.write_text(_trace_csv(_good_rows("g", GOOD_TRACE_ROWS)))
    good_eval = folder / "good_eval.csv"
    good_eval.write_text("case_id,correct,category,request_id,timestamp_s,prompt\n" + "".join(
        f"c{i},{'false' if i % 2 else 'true'},maths,g{i},{1700000000 + i},question {i}\n"
        for i in range(GOOD_EVAL_ROWS)))
    inp.good = [good_trace, good_eval]

    # whole-file failures, each of another exception class in the loaders
    llm = folder / "llmperf_huge_int.json"
    llm.write_text('[{"ttft_s": 0.1, "end_to_end_latency_s": 1.0, "number_input_tokens": 1'
                   + "0" * 400 + ', "number_output_tokens": 5, "inter_token_latency_s": 0.01,'
                   ' "error_code": null, "error_msg": ""}]')
    inp.bad["overflow"] = llm
    deep = folder / "deep.json"
    deep.write_text('[{"ttft_s": 0.1, "end_to_end_latency_s": 1.0, "number_input_tokens": 1, '
                    '"number_output_tokens": 5, "error_code": null, "x": '
                    + "[" * 100_000 + "]" * 100_000 + "}]")  # an LLMPerf file, nested deep
    inp.bad["recursion"] = deep
    nul = folder / "nul_lines.jsonl"
    nul.write_bytes(b'{"request_id": "n1", "ttft_ms": 5}\n\x00\x00\x00\n')
    inp.skipping["nul"] = nul  # a stray line of NUL bytes (a crash-truncated log): that line skips

    # rows with values the store cannot hold or the analysis cannot use: skipped, file loads
    ext = folder / "extreme_trace.csv"
    rows = _good_rows("x", 3) + [
        {**_good_rows("e", 1)[0], "request_id": "huge_e2e", "e2e_ms": 1e308},
        {**_good_rows("e", 1)[0], "request_id": "huge_arrival", "arrival_s": 1e300},
        {**_good_rows("e", 1)[0], "request_id": "nan_ttft", "ttft_ms": "NaN"},
        {**_good_rows("e", 1)[0], "request_id": "inf_tpot", "tpot_ms": "Infinity"},
    ]
    ext.write_text(_trace_csv(rows))
    inp.skipping["extreme_trace"] = ext
    ev = folder / "extreme_eval.csv"
    ev.write_text("case_id,correct,category,timestamp_s,prompt\n"
                  "e1,true,maths,1700000000,ok question\n"
                  "e2,false,maths,1e30,far future\n"
                  "e3,true,maths,1700000002,another\n")
    inp.skipping["extreme_eval"] = ev

    sub = folder / "unreadable"
    sub.mkdir()
    (sub / "hidden_trace.csv").write_text(_trace_csv(_good_rows("u", 2)))
    inp.bad["unreadable_folder"] = sub

    if special:
        os.symlink(folder, folder / "loop_a")        # two links to the folder itself
        os.symlink(folder, folder / "loop_b")
        outside_dir = root / "outside"
        outside_dir.mkdir()
        inp.outside = outside_dir / "secret_trace.csv"
        inp.outside.write_text(_trace_csv(_good_rows("s", 2)))
        os.symlink(Path("..") / "outside", folder / "dotdot")
        inp.special["link_outside"] = folder / "dotdot"
        fifo = folder / "pipe.csv"
        os.mkfifo(fifo)
        inp.special["fifo"] = fifo
        sock_path = folder / "sock.csv"
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(str(sock_path))
            inp.sockets.append(s)
            inp.special["socket"] = sock_path
        except OSError:  # path too long for AF_UNIX on this machine: no socket case
            s.close()
    return inp


def lock(inp: Inputs) -> bool:
    """Make the unreadable sub-folder unreadable; False when permissions are not enforced
    (running as root)."""
    sub = inp.bad["unreadable_folder"]
    os.chmod(sub, 0)
    try:
        os.listdir(sub)
    except PermissionError:
        return True
    os.chmod(sub, 0o755)
    return False


def unlock(inp: Inputs) -> None:
    sub = inp.bad.get("unreadable_folder")
    if sub is not None and sub.exists():
        os.chmod(sub, 0o755)


def json_dump(obj) -> str:
    return json.dumps(obj)


def dropped_inputs(tmp_path: Path, monkeypatch):
    """Body of the tests' `inputs` fixture: the fuzz folder with its unreadable sub-folder
    (chmod does not stop root, so listing it raises as it would for a user without the
    permission) and the error log under tmp_path; asserts at teardown that no input file changed."""
    monkeypatch.setenv("TRACE_EXPLORER_LOG_FILE", str(tmp_path / "log" / "te.log"))
    inp = make_inputs(tmp_path)
    locked = inp.bad["unreadable_folder"]
    listdir = Path.iterdir

    def iterdir(self):
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return listdir(self)
    monkeypatch.setattr(Path, "iterdir", iterdir)
    before = inp.digests()
    yield inp
    assert inp.digests() == before, "an input file was modified"
    inp.close()
