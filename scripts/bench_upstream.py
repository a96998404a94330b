"""The benchmark's upstream: a small asyncio HTTP/1.1 server (keep-alive, Content-Length and chunked
bodies) that checks every request it receives against the case it was built from (bench_cases.verify)
and answers with the verdict, so the driver can count integrity mismatches.

    python scripts/bench_upstream.py --port-file FILE     # binds 127.0.0.1:0, writes the port to FILE

Responses are JSON: {"case": "w:i", "verdict": "identical|transformed|bad", "reason": "...", "pad": "..."}
with a deterministic pad so responses have realistic sizes. `GET /__bench/seen?run=RUN` (sent
directly, not through a proxy) returns the indexes of every case that arrived with `x-guardian-bench-run: RUN`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_cases  # noqa: E402

SEEN: dict[str, set[int]] = defaultdict(set)
VERDICTS: Counter = Counter()


async def read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        out = bytearray()
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b""):
                    pass
                return bytes(out)
            out += await reader.readexactly(size)
            await reader.readexactly(2)
    n = int(headers.get("content-length") or 0)
    return await reader.readexactly(n) if n else b""


def respond(status: int, payload: dict) -> bytes:
    body = json.dumps(payload, separators=(",", ":")).encode()
    return (f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n").encode() + body


def handle(method: str, target: str, headers: dict[str, str], body: bytes) -> bytes:
    if target.startswith("/__bench/seen"):
        run = parse_qs(urlsplit(target).query).get("run", [""])[0]
        return respond(200, {"seen": sorted(SEEN.get(run, ())), "verdicts": dict(VERDICTS)})
    key = headers.get("x-guardian-bench-case", "")
    run = headers.get("x-guardian-bench-run", "")
    try:
        w, i = key.split(":")
        c = bench_cases.case(w, int(i))
    except ValueError:
        return respond(400, {"case": key, "verdict": "bad", "reason": "no or unknown x-guardian-bench-case"})
    verdict, reason = bench_cases.verify(c, method, target, headers, body)
    SEEN[run].add(int(i))
    VERDICTS[verdict] += 1
    return respond(200, {"case": key, "verdict": verdict, "reason": reason, "pad": "x" * c.resp_size})


async def serve_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            method, target, _ = line.decode("latin-1").split(" ", 2)
            headers: dict[str, str] = {}
            while True:
                h = await reader.readline()
                if h in (b"\r\n", b"\n", b""):
                    break
                k, _, v = h.decode("latin-1").partition(":")
                headers[k.strip().lower()] = v.strip()
            body = await read_body(reader, headers)
            writer.write(handle(method, target, headers, body))
            await writer.drain()
            if headers.get("connection", "").lower() == "close":
                break
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        writer.close()


async def main(port_file: Path) -> None:
    server = await asyncio.start_server(serve_conn, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    port_file.write_text(str(port))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", type=Path, required=True)
    asyncio.run(main(ap.parse_args().port_file))
