"""Helpers of the real-tool tests: the tools' venvs (scripts/setup-tools.sh), a tiny local tokenizer,
and running a tool's command line with a bound on its time.

The tools run in their own virtualenvs under .venv-tools/<tool> (or $TRACE_EXPLORER_TOOLS); a test
whose venv is absent skips, saying how to install it. No network: the tokenizer is a word-level
one built here with the `tokenizers` library of the tool's own venv (one token per whitespace-
separated word, unknown words -> [UNK]), saved as a Hugging Face tokenizer folder, so the tools'
token counts and the endpoint's (words) agree exactly.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = Path(os.environ.get("TRACE_EXPLORER_TOOLS", ROOT / ".venv-tools"))


def tool_bin(tool: str, exe: str | None = None) -> Path:
    """The tool's executable in its venv, or skip the test with the reason."""
    venv = TOOLS / tool
    path = venv / "bin" / (exe or tool)
    if not path.exists():
        pytest.skip(f"{tool} is not installed in {venv} (run: bash scripts/setup-tools.sh)")
    return path


def tool_python(tool: str) -> Path:
    return tool_bin(tool, "python")


_TOKENIZER = r"""
import json, sys
from pathlib import Path
from tokenizers import Tokenizer, models, pre_tokenizers, decoders
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
words = sys.argv[2].split()
vocab = {"[UNK]": 0, "[BOS]": 1, "[EOS]": 2, "[PAD]": 3}
for w in words:
    vocab.setdefault(w, len(vocab))
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
# joins tokens with single spaces; the continuation prefix is one no word here starts with
# (the default "##" glued the gsm8k marker "####" to the word before it: one word short)
tok.decoder = decoders.WordPiece(prefix="\x00", cleanup=False)
tok.save(str(out / "tokenizer.json"))
(out / "tokenizer_config.json").write_text(json.dumps({
    "tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]", "bos_token": "[BOS]",
    "eos_token": "[EOS]", "pad_token": "[PAD]", "model_max_length": 1000000}))
(out / "special_tokens_map.json").write_text(json.dumps({
    "unk_token": "[UNK]", "bos_token": "[BOS]", "eos_token": "[EOS]", "pad_token": "[PAD]"}))
(out / "config.json").write_text(json.dumps({"model_type": "gpt2", "vocab_size": len(vocab)}))
"""

# the endpoint's answer words and a few common words of the tools' synthetic corpora
VOCAB = ("alpha beta gamma delta omega sigma kappa theta the and of to a in that is it "
         "what question answer sum plus equals #### The The")


def build_tokenizer(tool: str, out: Path) -> Path:
    """A word-level HF tokenizer folder at `out`, built with the tool venv's `tokenizers`."""
    subprocess.run([str(tool_python(tool)), "-c", _TOKENIZER, str(out), VOCAB], check=True,
                   timeout=120, capture_output=True)
    return out


def run_tool(cmd: list, cwd: Path, timeout: float = 300, env: dict | None = None,
             offline: bool = True) -> subprocess.CompletedProcess:
    """Run a tool's command line (Hugging Face offline mode unless `offline` is False: the hub
    is unreachable either way); fail the test with its output when it fails."""
    hf = ({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
          if offline else {})
    full_env = {**os.environ, **hf, "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1",
                "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    full_env.pop("PYTHONPATH", None)  # the tool's venv, not the app's tree
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=full_env, capture_output=True,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        sys.stderr.write(p.stdout[-4000:] + "\n" + p.stderr[-8000:])
        pytest.fail(f"{Path(str(cmd[0])).name} exited {p.returncode}: {p.stderr[-1500:]}")
    return p
