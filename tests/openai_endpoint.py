"""A small OpenAI-compatible endpoint for the real-tool tests, on 127.0.0.1 (ephemeral port).

Serves POST /v1/completions and /v1/chat/completions (streamed as SSE with `stream: true`, else one
JSON body), GET /v1/models, GET /health, GET /metrics (a few vLLM-named Prometheus series, so a
tool's server-metrics scrape has something real to read) and GET /dcgm/metrics (a DCGM exporter's
series for one pretend GPU, for a tool's GPU telemetry). Every answer carries `usage`
(prompt_tokens, completion_tokens, total_tokens; streamed: in a last chunk, as OpenAI does with
`stream_options.include_usage`, and always, as vLLM does).

Timing is deterministic so each request's truth is known (the engine's `Timing`): the first token
is sent `ttft_ms(prompt_tokens)` after the request was read, then one token every `itl_ms`.
Tokens are whitespace-separated words on both sides: a prompt's token count is its number of
words (the tests' tokenizer is a word-level one, so a tool that tokenizes counts the same), and
the answer is `max_tokens` words (default 16, capped at `max_output`), or `responder(prompt)`'s
text when the test gives one (an eval's answers). Each request is logged in `log` with the
server's own clock (`time.perf_counter_ns` is not comparable across processes, so the log keeps
`time.time_ns()`): arrival (stamped when the handler starts, so never before the client
started sending), first and last token (stamped just before they are written, so never after
the client could read them): a client's TTFT and E2E are at least the server's, prompt / completion tokens and the
`X-Request-ID` header a tool sent.

Bounded: a ThreadingHTTPServer in a daemon thread, stopped by `close()` (the context manager).
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

WORDS = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta")


@dataclass(frozen=True)
class Timing:
    """ttft_ms = base_ms + per_prompt_token_ms * prompt tokens; then itl_ms between tokens."""
    base_ms: float = 20.0
    per_prompt_token_ms: float = 0.02
    itl_ms: float = 4.0

    def ttft_ms(self, prompt_tokens: int) -> float:
        return self.base_ms + self.per_prompt_token_ms * prompt_tokens


@dataclass
class Served:
    """One request as the server saw it (times: time.time_ns())."""
    path: str
    stream: bool
    request_id: str | None
    prompt_tokens: int
    completion_tokens: int
    arrival_ns: int
    first_token_ns: int | None = None
    end_ns: int | None = None
    prompt: str = ""
    text: str = ""


def _prompt_text(body: dict) -> str:
    if "messages" in body:
        parts = []
        for m in body.get("messages") or []:
            c = m.get("content") if isinstance(m, dict) else None
            if isinstance(c, list):  # content parts
                c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
            parts.append(c or "")
        return "\n".join(parts)
    p = body.get("prompt", "")
    if isinstance(p, list):
        p = " ".join(x if isinstance(x, str) else " ".join(map(str, x)) for x in p)
    return str(p)


@dataclass
class Endpoint:
    model: str = "tiny-model"
    timing: Timing = field(default_factory=Timing)
    max_output: int = 64
    responder: Callable[[str], str] | None = None
    usage_chunk: bool = True  # False: no last usage-only chunk (`choices: []`), which GenAI-Perf 0.0.16 cannot parse
    log: list[Served] = field(default_factory=list)

    def __post_init__(self):
        self._lock = threading.Lock()
        ep = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def _json(self, code: int, obj) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path = self.path.split("?")[0]
                if path == "/v1/models":
                    self._json(200, {"object": "list", "data": [
                        {"id": ep.model, "object": "model", "created": 0, "owned_by": "test"}]})
                elif path in ("/health", "/ping"):
                    self._json(200, {"status": "ok"})
                elif path in ("/metrics", "/dcgm/metrics"):
                    data = (ep.dcgm() if path.startswith("/dcgm") else ep.prometheus()).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain; version=0.0.4")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                else:
                    self._json(404, {"error": {"message": f"no route {path}"}})

            def do_POST(self):
                arrival = time.time_ns()
                path = self.path.split("?")[0]
                n = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    return self._json(400, {"error": {"message": "bad json"}})
                if path not in ("/v1/completions", "/v1/chat/completions"):
                    return self._json(404, {"error": {"message": f"no route {path}"}})
                ep._serve(self, path, body, arrival)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # a client that hung up: not ours
                import sys
                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def prometheus(self) -> str:
        with self._lock:
            done = [s for s in self.log if s.end_ns]
            running = len(self.log) - len(done)
            p = sum(s.prompt_tokens for s in done)
            g = sum(s.completion_tokens for s in done)
        lab = f'{{model_name="{self.model}"}}'
        return "".join([
            "# TYPE vllm:num_requests_running gauge\n", f"vllm:num_requests_running{lab} {running}\n",
            "# TYPE vllm:num_requests_waiting gauge\n", f"vllm:num_requests_waiting{lab} 0\n",
            "# TYPE vllm:kv_cache_usage_perc gauge\n", f"vllm:kv_cache_usage_perc{lab} {min(1.0, running / 64):.4f}\n",
            "# TYPE vllm:prompt_tokens_total counter\n", f"vllm:prompt_tokens_total{lab} {p}\n",
            "# TYPE vllm:generation_tokens_total counter\n", f"vllm:generation_tokens_total{lab} {g}\n",
            "# TYPE vllm:request_success_total counter\n", f"vllm:request_success_total{lab} {len(done)}\n",
        ])

    def dcgm(self) -> str:
        """A DCGM exporter's text for one pretend GPU: utilisation = requests in flight x 10 %, the
        framebuffer 1000 MiB + 10 MiB a request in flight, power 100 W, 40 C (the truth the GPU
        telemetry export must carry)."""
        with self._lock:
            running = sum(1 for s in self.log if not s.end_ns)
        lab = ('{gpu="0",UUID="GPU-00000000-1111-2222-3333-444444444444",pci_bus_id="00000000:01:00.0",'
               'device="nvidia0",modelName="Test GPU",Hostname="localhost"}')
        series = {"DCGM_FI_DEV_GPU_UTIL": min(100, 10 * running), "DCGM_FI_DEV_FB_USED": 1000 + 10 * running,
                  "DCGM_FI_DEV_POWER_USAGE": 100.0, "DCGM_FI_DEV_GPU_TEMP": 40}
        return "".join(f"# TYPE {k} gauge\n{k}{lab} {v}\n" for k, v in series.items())

    def _words(self, prompt: str, max_tokens: int) -> list[str]:
        if self.responder is not None:
            return self.responder(prompt).split()[: self.max_output] or ["none"]
        return [WORDS[i % len(WORDS)] for i in range(max(1, min(max_tokens, self.max_output)))]

    def _serve(self, h: BaseHTTPRequestHandler, path: str, body: dict, arrival: int) -> None:
        chat = path.endswith("chat/completions")
        prompt = _prompt_text(body)
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or 16
        words = self._words(prompt, int(max_tokens))
        rec = Served(path, bool(body.get("stream")), h.headers.get("X-Request-ID"),
                     len(prompt.split()), len(words), arrival, prompt=prompt)
        with self._lock:
            self.log.append(rec)
        usage = {"prompt_tokens": rec.prompt_tokens, "completion_tokens": rec.completion_tokens,
                 "total_tokens": rec.prompt_tokens + rec.completion_tokens}
        rid = f"cmpl-{len(self.log)}"
        t0 = time.perf_counter()
        ttft_s = self.timing.ttft_ms(rec.prompt_tokens) / 1000
        itl_s = self.timing.itl_ms / 1000

        def wait_until(k: int) -> None:  # token k (0-based) is due at ttft + k * itl
            d = t0 + ttft_s + k * itl_s - time.perf_counter()
            if d > 0:
                time.sleep(d)

        texts = [w if i == 0 else " " + w for i, w in enumerate(words)]
        rec.text = "".join(texts)
        base = {"id": rid, "created": int(time.time()), "model": self.model}
        if not rec.stream:
            wait_until(len(words) - 1)
            rec.first_token_ns = rec.end_ns = time.time_ns()
            choice = ({"index": 0, "message": {"role": "assistant", "content": rec.text},
                       "finish_reason": "length"} if chat else
                      {"index": 0, "text": rec.text, "finish_reason": "length", "logprobs": None})
            return h._json(200, {**base, "object": "chat.completion" if chat else "text_completion",
                                 "choices": [choice], "usage": usage})
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

        def send(obj) -> None:
            data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
            h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            h.wfile.flush()

        obj = "chat.completion.chunk" if chat else "text_completion"
        for k, t in enumerate(texts):
            wait_until(k)
            last = k == len(texts) - 1
            fin = "length" if last else None
            choice = ({"index": 0, "delta": ({"role": "assistant", "content": t} if k == 0 else {"content": t}),
                       "finish_reason": fin} if chat else
                      {"index": 0, "text": t, "finish_reason": fin, "logprobs": None})
            now = time.time_ns()  # stamped before the write: the client cannot have it earlier
            if k == 0:
                rec.first_token_ns = now
            if last:
                rec.end_ns = now
            send({**base, "object": obj, "choices": [choice], "usage": None})
        if self.usage_chunk:
            send({**base, "object": obj, "choices": [], "usage": usage})
        send("[DONE]")
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()
