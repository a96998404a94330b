"""A real local DNS server for tests (UDP on 127.0.0.1, port 0; RFC 1035 wire format, standard library)."""

from __future__ import annotations

import socket
import struct
import threading

from guardian_proxy.extract.cname import _name


def _labels(name: str) -> bytes:
    return b"".join(bytes([len(p)]) + p.encode() for p in name.split(".") if p) + b"\x00"


class DnsServer:
    """Answers A questions from `zone` ({name: [cname, cname, …, "1.2.3.4"]}); counts the questions; `silent` never
    answers; a name not in the zone is NXDOMAIN."""

    def __init__(self, zone: dict[str, list[str]], silent: bool = False):
        self.zone, self.silent, self.questions = zone, silent, []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.addr = self.sock.getsockname()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                msg, peer = self.sock.recvfrom(512)
            except TimeoutError:
                continue
            qname, end = _name(msg, 12)
            self.questions.append(qname)
            if self.silent:
                continue
            question = msg[12:end + 4]
            records = self.zone.get(qname)
            answers, owner = b"", b"\xc0\x0c"  # the first owner name points at the question
            for value in records or []:
                if value[0].isdigit():
                    answers += owner + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(value)
                else:
                    rdata = _labels(value)
                    answers += owner + struct.pack(">HHIH", 5, 1, 60, len(rdata)) + rdata
                    owner = _labels(value)
            flags = 0x8180 if records is not None else 0x8183
            n = sum(1 for _ in records or [])
            self.sock.sendto(struct.pack(">HHHHHH", struct.unpack(">H", msg[:2])[0], flags, 1, n, 0, 0)
                             + question + answers, peer)

    def close(self):
        self.stop.set()
        self.thread.join(2)
        self.sock.close()
