"""What `trace-explorer replay` and its --what-if share: the trace file checked and loaded
into a store (errors naming the file and line), and the engine settings the command line sets
explicitly (a flag not given is None: the default, or with --what-if the observed, applies)."""
from __future__ import annotations

import re
from pathlib import Path

from ..core.errors import InputError
from ..core.i18n import _, ngettext
from ..core.replay.model import EngineConfig, blocks_for_gb


#: the EngineConfig fields a flag of the same name sets (None when not given: the default,
#: EngineConfig's = vLLM's, applies, or with --what-if the observed one stays)
SETTING_FLAGS = ("block_size", "max_num_seqs", "max_num_batched_tokens", "eviction")


def given_settings(args) -> dict:
    """The EngineConfig fields the command line sets explicitly: the flags given, and
    num_gpu_blocks from --blocks (None for "inf") or --kv-gb."""
    out = {k: getattr(args, k) for k in SETTING_FLAGS if getattr(args, k) is not None}
    if args.kv_gb is not None:
        out["num_gpu_blocks"] = blocks_for_gb(args.kv_gb, args.bytes_per_token,
                                              out.get("block_size", EngineConfig.block_size))
    elif args.blocks is not None:
        out["num_gpu_blocks"] = None if args.blocks == "inf" else args.blocks
    return out


def check_trace_path(path: Path) -> None:
    """InputError unless FILE is one existing file (a folder is refused with its trace files)."""
    if not path.exists():
        raise InputError(path, _("no such file or folder"))
    if path.is_dir():
        names = sorted(p.name for p in path.iterdir()
                       if p.is_file() and p.suffix.lower() in (".jsonl", ".json", ".csv"))
        hint = (_("; its trace files: {names}").format(
            names=", ".join(names[:6]) + (", ..." if len(names) > 6 else "")) if names else "")
        raise InputError(path, _("is a folder: replay takes one trace file; name one of the "
                                 "folder's files (each replay is one run)") + hint)


def is_mooncake(path: Path) -> bool:
    """A Mooncake trace (timestamp, input_length, output_length: no latencies, no settings)."""
    from ..core.formats.base import Sniff
    head = Sniff.of(path).first_json_line() or {}
    return {"timestamp", "input_length", "output_length"} <= set(head)


def open_trace_store(path: Path, warnings: list[str]):
    """(Store, run id) of the first trace run FILE loads into a new store (the caller closes
    it); the rows the loader skipped appended to `warnings` as "FILE:LINE: reason". Raises
    InputError naming the file (and the line where the loader gave one)."""
    from ..core.store import Store
    store = Store()
    try:
        rep = store.load_file(path)
        if rep.error:  # "FILE[:LINE]: message" as the loader wrote it: keep the line
            where = re.match(re.escape(str(path)) + r"(?::(\d+))?: (.*)\Z", rep.error, re.S)
            if where:
                raise InputError(path, where.group(2),
                                 line=int(where.group(1)) if where.group(1) else None)
            raise InputError(path, rep.error)
        if not rep.run_ids:
            raise InputError(path, _("holds no trace run to replay"))
        if rep.rows_skipped:
            for r in rep.skipped_reasons:   # "line 12: field ..." -> "FILE:12: field ..."
                m = re.match(r"line (\d+): ", r)
                warnings.append(r if r.startswith(str(path)) else
                                f"{path}:{m.group(1)}: {r[m.end():]}" if m else f"{path}: {r}")
            if rep.rows_skipped > len(rep.skipped_reasons):
                more = rep.rows_skipped - len(rep.skipped_reasons)
                warnings.append(f"{path}: " + ngettext("{n} more row skipped",
                                                       "{n} more rows skipped", more).format(n=more))
    except BaseException:
        store.close()
        raise
    return store, rep.run_ids[0]
