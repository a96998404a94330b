"""Cost of one procinfo lookup (which program sent it: guardian_proxy/procinfo.py, docs/usage.md):
`.venv/bin/python scripts/bench_procinfo.py`.

A client process holds 20 connections to a local listener (as a proxy's accepted sockets); each is looked up
cold (a new finder: no remembered owner, so the walk of /proc) and warm (the owner remembered, as for a
browser's next connection), by sock_diag with both ends (regular mode), by sock_diag by port (transparent mode)
and by /proc/net/tcp (where netlink is refused). Prints process CPU (process_time: this process's user + system
time, the kernel's work for it included) and wall time per lookup."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from guardian_proxy.procinfo import ProcessFinder

N = 20


def main() -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    code = (f"import socket, sys\nheld = [socket.create_connection(('127.0.0.1', {srv.getsockname()[1]})) "
            f"for _ in range({N})]\nsys.stdin.read()\n")
    client = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    conns = [srv.accept() for _ in range(N)]
    procs = len([x for x in os.listdir("/proc") if x.isdigit()])
    with open("/proc/net/tcp") as f:
        sockets = len(f.readlines()) - 1
    print(f"{procs} processes, {sockets} IPv4 TCP sockets, load average {os.getloadavg()[0]:.1f}")

    def run(label: str, cold: bool, by_both_ends: bool, netlink: bool) -> None:
        cpu = wall = 0.0
        finder = None
        for conn, peer in conns:
            if finder is None or cold:
                finder = ProcessFinder()
                finder.netlink = netlink
            t, w = time.process_time(), time.perf_counter()
            app = finder.lookup(peer[0], peer[1], conn.getsockname() if by_both_ends else None)
            cpu += time.process_time() - t
            wall += time.perf_counter() - w
            assert app.pid == client.pid, app
        print(f"{label:<36} {cpu / N * 1000:6.2f} ms CPU  {wall / N * 1000:6.2f} ms wall  per lookup")

    run("cold, sock_diag by both ends", True, True, True)
    run("warm, sock_diag by both ends", False, True, True)
    run("cold, sock_diag by port", True, False, True)
    run("cold, /proc/net/tcp", True, False, False)
    run("warm, /proc/net/tcp", False, False, False)
    client.stdin.close()
    client.wait()


if __name__ == "__main__":
    main()
