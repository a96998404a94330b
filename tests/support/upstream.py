"""A real local HTTP(S) upstream for end-to-end tests: records every request it receives."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Received:
    method: str
    path: str
    headers: dict
    body: bytes


@dataclass
class Served:
    """A test server running in a daemon thread (see `serve`)."""

    server: ThreadingHTTPServer

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(handler: type[BaseHTTPRequestHandler], tls_dir: Path | None = None,
          names: list[str] | None = None) -> ThreadingHTTPServer:
    """A ThreadingHTTPServer on a free 127.0.0.1 port, with a self-signed certificate for `names` when
    `tls_dir` is given, serving in a daemon thread."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    if tls_dir is not None:
        cp, kp = self_signed(tls_dir, names or ["localhost"])
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cp, kp)
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


class ClosingHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, quiet, and every answer closes its connection (the test chat servers: through
    `--redirect-upstream` each request gets a fresh upstream connection); `chunk` writes one chunk of a
    chunked body and flushes it, `chunk(b"")` the terminator."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def end_headers(self):
        self.send_header("connection", "close")
        self.close_connection = True
        super().end_headers()

    def chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if data else b"0\r\n\r\n")
        self.wfile.flush()


def send_body(h: BaseHTTPRequestHandler, payload: bytes | list[bytes], content_type: str = "application/json") -> None:
    """A 200 answer with a content-length; a list of chunks is written (and flushed) one by one."""
    chunks = [payload] if isinstance(payload, bytes) else payload
    h.send_response(200)
    h.send_header("content-type", content_type)
    h.send_header("content-length", str(sum(len(c) for c in chunks)))
    h.end_headers()
    for c in chunks:
        h.wfile.write(c)
        h.wfile.flush()


@dataclass
class Upstream(Served):
    received: list[Received] = field(default_factory=list)
    tls: bool = False


def _handler(store: list[Received], lock: threading.Lock):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):  # quiet
            pass

        def _serve(self):
            n = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(n) if n else b""
            with lock:
                store.append(Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            send_body(self, json.dumps({"ok": True, "path": self.path, "bytes": len(body)}).encode())

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    return H


def self_signed(tmp: Path, names: list[str]) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.UTC)
    alt = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False).sign(key, hashes.SHA256()))
    cp, kp = tmp / "up-cert.pem", tmp / "up-key.pem"
    cp.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    kp.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    return cp, kp


def start_upstream(tls_dir: Path | None = None, names: list[str] | None = None) -> Upstream:
    store: list[Received] = []
    return Upstream(serve(_handler(store, threading.Lock()), tls_dir, names), store, tls=tls_dir is not None)
