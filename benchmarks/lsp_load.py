"""Language-server load: many documents, a 20 MB one among them, edits faster than analyses.

    python benchmarks/lsp_load.py [--edits 10000] [--docs 50] [--big-mb 20] [--cycles 1000] [--json OUT]

Through the server's stdio, as an editor drives it (default settings: debounce 150 ms, time and
memory budgets as shipped):

1. opens DOCS documents: DOCS - 1 training scripts of about 300 lines and one generated script of
   BIG_MB megabytes;
2. types EDITS `didChange`s into them in bursts (20 keystrokes 15 ms apart in one document, then
   the next; every 50th burst goes to the big document), while a hover on a small document's
   `backward()` is sent every 50 ms, all the time;
3. measures: every hover's latency; for each burst in a small document, the time from its last
   keystroke to the diagnostics of that version; whether any diagnostics arrived for a version
   older than one already published (out of order: none expected) and how many were for a version
   the editor had already replaced when they arrived (in flight: the edit crossed them);
4. closes everything and measures the RSS of the server and its worker processes against the
   baseline taken before opening anything (after the workers settled);
5. opens and closes a small document CYCLES times (waiting for its diagnostics each time), and
   compares the RSS before and after.

Targets printed beside the numbers: hover <= 100 ms at any time; a small document's final
diagnostics <= 500 ms after its last edit; nothing out of order; RSS back within 10 % of the
baseline; no growth over the cycles. Not an assertion: the figures depend on the machine and its
load (printed in the header).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import engine_stamp
from lsp_latency import BLOCK, FOOTER, HEADER, descendants, rss_kb, training_script


class Client:
    """A minimal LSP client over the server's stdio (asyncio), fast enough to flood it."""

    def __init__(self, proc):
        self.proc = proc
        self.pending: dict = {}
        self.next_id = 0
        self.published: dict = {}  # uri -> [(version, n diagnostics, time)]
        self.last_messages: dict = {}
        self.on_publish = None
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = await out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length"):
                    length = int(line.split(b":")[1])
            msg = json.loads(await out.readexactly(length))
            now = time.perf_counter()
            if "id" in msg and "method" not in msg:
                fut = self.pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result((msg, now))
            elif msg.get("method") == "textDocument/publishDiagnostics":
                p = msg["params"]
                self.published.setdefault(p["uri"], []).append((p.get("version"), len(p["diagnostics"]), now))
                self.last_messages[p["uri"]] = [d["message"][:160] for d in p["diagnostics"]]
            elif "id" in msg:  # a request from the server (refresh, ...): answer it
                self._write({"jsonrpc": "2.0", "id": msg["id"], "result": None})

    def _write(self, obj):
        body = json.dumps(obj).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method, params):
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method, params):
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        sent = time.perf_counter()
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        await self.proc.stdin.drain()
        msg, got = await fut
        return msg, got - sent

    async def drain(self):
        await self.proc.stdin.drain()


def big_script(megabytes: float) -> str:
    """A generated training script of about `megabytes` MB: many blocks, the training loop last."""
    parts, size, i = [HEADER], len(HEADER), 0
    while size < megabytes * 1e6:
        block = BLOCK.format(i=i, dim=16, hidden=32)
        parts.append(block)
        size += len(block)
        i += 1
    parts.append(FOOTER.format(stages=", ".join(f"make_stage{k}()" for k in range(6))))
    return "".join(parts)


def tree_rss_mb(pid: int) -> float:
    return (rss_kb(pid) + sum(rss_kb(c) for c in descendants(pid))) / 1024


def breakdown(pid: int) -> dict:
    return {
        "server": round(rss_kb(pid) / 1024, 1),
        "workers": sorted(round(rss_kb(c) / 1024, 1) for c in descendants(pid)),
    }


async def settle(pid: int, seconds: float = 3.0) -> float:
    """RSS once it stopped moving (workers started, recycled, or gone)."""
    last, stable_since = None, time.monotonic()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = tree_rss_mb(pid)
        if last is not None and abs(now - last) > 2:
            stable_since = time.monotonic()
        last = now
        if time.monotonic() - stable_since >= seconds:
            break
        await asyncio.sleep(0.25)
    return last


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1)))]


async def run(args) -> dict:
    root = tempfile.mkdtemp(prefix="gradaudit-lsp-load-")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gradaudit.server",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=root,
        limit=1 << 20,
    )
    client = Client(proc)
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": f"file://{root}",
            "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
        },
    )
    client.notify("initialized", {})
    await asyncio.sleep(1.0)
    baseline = await settle(proc.pid)
    baseline_parts = breakdown(proc.pid)

    small_text = training_script(300)
    lines = small_text.split("\n")
    target = next(i for i, ln in enumerate(lines) if "lr=1e-3" in ln)
    back = next(i for i, ln in enumerate(lines) if "loss.backward()" in ln)
    t0 = time.perf_counter()
    big_text = big_script(args.big_mb)
    big_lines = big_text.split("\n")
    big_target = next(i for i, ln in enumerate(big_lines) if "lr=1e-3" in ln)
    docs = []
    for i in range(args.docs):
        name = "big.py" if i == 0 else f"train_{i:02d}.py"
        text = big_text if i == 0 else small_text.replace("lr=1e-3", f"lr={i}e-4")
        uri = f"file://{root}/{name}"
        docs.append(
            {
                "uri": uri,
                "version": 1,
                "line": big_target if i == 0 else target,
                "base": (big_lines if i == 0 else text.split("\n"))[big_target if i == 0 else target],
                "big": i == 0,
            }
        )
        docs[-1]["len"] = len(docs[-1]["base"])
        client.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
        )
        await client.drain()
    opened = time.perf_counter() - t0

    hovers, stop = [], asyncio.Event()

    async def hovering():
        rnd = random.Random(1)
        while not stop.is_set():
            d = docs[rnd.randrange(1, len(docs))]
            _, dt = await client.request(
                "textDocument/hover", {"textDocument": {"uri": d["uri"]}, "position": {"line": back, "character": 10}}
            )
            hovers.append(dt * 1000)
            await asyncio.sleep(0.05)

    hover_task = asyncio.ensure_future(hovering())
    rnd = random.Random(2)
    bursts, edits, k = [], 0, 0
    started = time.perf_counter()
    while edits < args.edits:
        k += 1
        d = docs[0] if k % 50 == 0 else docs[rnd.randrange(1, len(docs))]
        n = min(20, args.edits - edits)
        for j in range(n):
            d["version"] += 1
            new = d["base"] + "  # " + "x" * (j + 1)
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": d["uri"], "version": d["version"]},
                    "contentChanges": [
                        {
                            "range": {
                                "start": {"line": d["line"], "character": 0},
                                "end": {"line": d["line"], "character": d["len"]},
                            },
                            "text": new,
                        }
                    ],
                },
            )
            d["len"] = len(new)
            await client.drain()
            edits += 1
            await asyncio.sleep(0.015)
        bursts.append((d["uri"], d["version"], time.perf_counter(), d["big"]))
    typing = time.perf_counter() - started

    # the final diagnostics of every burst in a small document (wait for the last ones to come)
    deadline = time.perf_counter() + 60
    finals = []
    pending = [(u, v, t) for u, v, t, big in bursts if not big]
    while pending and time.perf_counter() < deadline:
        left = []
        for u, v, t in pending:
            got = [at for ver, _, at in client.published.get(u, []) if ver == v]
            if got:
                finals.append((got[0] - t) * 1000)
            elif any(ver is not None and ver > v for ver, _, _ in client.published.get(u, [])):
                pass  # a later burst in the same document replaced it before it was analysed
            else:
                left.append((u, v, t))
        pending = left
        if pending:
            await asyncio.sleep(0.05)
    missing = len(pending)
    big_final = None
    big_bursts = [(u, v, t) for u, v, t, big in bursts if big]
    if big_bursts:
        u, v, t = big_bursts[-1]
        wait_until = time.perf_counter() + 120
        while time.perf_counter() < wait_until:
            got = [(at, n) for ver, n, at in client.published.get(u, []) if ver == v]
            if got:
                big_final = ((got[0][0] - t) * 1000, got[0][1], client.last_messages.get(u, []))
                break
            await asyncio.sleep(0.1)
    stop.set()
    await hover_task

    out_of_order = 0
    for items in client.published.values():
        seen = -1
        for ver, _, _ in items:
            if ver is not None and ver < seen:
                out_of_order += 1
            seen = max(seen, ver or -1)
    peak = tree_rss_mb(proc.pid)
    for d in docs:
        client.notify("textDocument/didClose", {"textDocument": {"uri": d["uri"]}})
    await client.drain()
    closed_at = time.monotonic()
    timeline = []
    for at in (1, 3, 6, 10):
        await asyncio.sleep(max(0.0, closed_at + at - time.monotonic()))
        timeline.append((at, round(tree_rss_mb(proc.pid), 1)))
    after_close = await settle(proc.pid)
    after_close_parts = breakdown(proc.pid)

    # open/close cycles
    before_cycles = after_close
    for i in range(args.cycles):
        uri = f"file://{root}/cycle.py"
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "python",
                    "version": i + 1,
                    "text": small_text.replace("lr=1e-3", f"lr={i}e-6"),
                }
            },
        )
        await client.drain()
        wait_until = time.perf_counter() + 30
        while time.perf_counter() < wait_until and not any(v == i + 1 for v, _, _ in client.published.get(uri, [])):
            await asyncio.sleep(0.002)
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        await client.drain()
    after_cycles = await settle(proc.pid)

    await client.request("shutdown", None)
    client.notify("exit", None)
    await client.drain()
    await proc.wait()
    return {
        "machine": {"cpus": os.cpu_count(), "load": os.getloadavg(), "engine": engine_stamp()},
        "docs": args.docs,
        "big_mb": round(len(big_text) / 1e6, 1),
        "edits": edits,
        "bursts": len(bursts),
        "open_s": round(opened, 2),
        "typing_s": round(typing, 1),
        "hover": {
            "n": len(hovers),
            "p50_ms": round(statistics.median(hovers), 1),
            "p99_ms": round(pct(hovers, 0.99), 1),
            "max_ms": round(max(hovers), 1),
            "over_100ms": sum(h > 100 for h in hovers),
        },
        "final_diagnostics": {
            "n": len(finals),
            "p50_ms": round(statistics.median(finals), 1),
            "p95_ms": round(pct(finals, 0.95), 1),
            "max_ms": round(max(finals), 1),
            "over_500ms": sum(f > 500 for f in finals),
            "never": missing,
        },
        "big_final": None
        if big_final is None
        else {"ms": round(big_final[0]), "diagnostics": big_final[1], "messages": big_final[2]},
        "out_of_order": out_of_order,
        "rss_mb": {
            "baseline": round(baseline, 1),
            "peak": round(peak, 1),
            "after_close": round(after_close, 1),
            "after_close_pct": round(100 * (after_close - baseline) / baseline, 1),
            "before_cycles": round(before_cycles, 1),
            "after_cycles": round(after_cycles, 1),
            "cycles": args.cycles,
            "baseline_parts": baseline_parts,
            "after_close_parts": after_close_parts,
            "after_close_timeline": timeline,
        },
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edits", type=int, default=10000)
    ap.add_argument("--docs", type=int, default=50)
    ap.add_argument("--big-mb", type=float, default=20.0)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args()
    r = asyncio.run(run(args))
    m, h, f, rss = r["machine"], r["hover"], r["final_diagnostics"], r["rss_mb"]
    print(f"engine {m['engine']}, {m['cpus']} CPUs, load {' '.join(f'{x:.1f}' for x in m['load'])}")
    print(
        f"{r['docs']} documents (one of {r['big_mb']} MB) opened in {r['open_s']} s; {r['edits']} didChange in "
        f"{r['bursts']} bursts over {r['typing_s']} s"
    )
    print(
        f"hover: {h['n']} requests, p50 {h['p50_ms']} ms, p99 {h['p99_ms']} ms, max {h['max_ms']} ms, "
        f"{h['over_100ms']} over 100 ms   (target: <= 100 ms at any time)"
    )
    print(
        f"small document's final diagnostics after its last edit: {f['n']} bursts, p50 {f['p50_ms']} ms, "
        f"p95 {f['p95_ms']} ms, max {f['max_ms']} ms, {f['over_500ms']} over 500 ms, {f['never']} never   "
        f"(target: <= 500 ms)"
    )
    if r["big_final"] is not None:
        print(
            f"big document's final diagnostics: {r['big_final']['ms']} ms after its last edit "
            f"({r['big_final']['diagnostics']} diagnostics: {'; '.join(r['big_final']['messages'])})"
        )
    print(f"diagnostics out of order (older than one already published): {r['out_of_order']}   (target: 0)")
    print(
        f"RSS (server + workers): baseline {rss['baseline']} MB, peak {rss['peak']} MB, after closing "
        f"{rss['after_close']} MB ({rss['after_close_pct']:+} %)   (target: within 10 %)"
    )
    print(
        f"    baseline {rss['baseline_parts']}, after closing {rss['after_close_parts']}; seconds after "
        f"closing -> MB: {rss['after_close_timeline']}"
    )
    print(
        f"{rss['cycles']} open/close cycles: {rss['before_cycles']} MB -> {rss['after_cycles']} MB   "
        f"(target: no growth)"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(r, fh, indent=2)


if __name__ == "__main__":
    main()
