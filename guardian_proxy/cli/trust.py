"""Where the proxy's CA is trusted: the system store and the browsers' NSS stores, compared by the
certificate's SHA-256 fingerprint (never by file name or nickname). Read only: nothing here changes a store.

- system: the bundles update-ca-certificates (Debian/Ubuntu), update-ca-trust (Fedora) and others write;
  a CA copied to /usr/local/share/ca-certificates but not yet in the bundle is reported as such;
- Chromium / Chrome: `~/.pki/nssdb`; Firefox: each profile's `cert9.db` under `~/.mozilla/firefox/*/`
  (and the snap and flatpak places). They are read with `certutil -L -d sql:<dir>` (libnss3-tools); without
  certutil they cannot be checked, and the doctor says so.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

TRUST_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem")
LOCAL_ANCHORS = ("/usr/local/share/ca-certificates",)
FIREFOX_ROOTS = (".mozilla/firefox", "snap/firefox/common/.mozilla/firefox", ".var/app/org.mozilla.firefox/.mozilla/firefox")
_PEM = re.compile(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", re.S)
_TRUST = re.compile(r"^(?P<nick>.*?\S)\s+(?P<trust>[A-Za-z]*,[A-Za-z]*,[A-Za-z]*)\s*$")


class NssError(Exception):
    """certutil could not read a store."""


def fingerprints(pem_text: str) -> set[str]:
    """SHA-256 (hex) of each PEM certificate in `pem_text` (junk between blocks is ignored)."""
    out = set()
    for body in _PEM.findall(pem_text):
        try:
            der = base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            continue
        out.add(hashlib.sha256(der).hexdigest())
    return out


def file_fingerprints(path: Path) -> set[str]:
    try:
        return fingerprints(Path(path).read_text(errors="replace"))
    except OSError:
        return set()


def pretty(fp: str) -> str:
    return ":".join(fp[i:i + 2] for i in range(0, len(fp), 2)).upper()


def system_trust(fp: str, bundles=TRUST_BUNDLES, anchors=LOCAL_ANCHORS) -> tuple[str | None, Path | None]:
    """(the bundle that holds the CA, or None; a local anchor file that holds it but is not in a bundle yet)."""
    for b in bundles:
        if Path(b).is_file() and fp in file_fingerprints(Path(b)):
            return str(b), None
    for d in anchors:
        for f in sorted(Path(d).glob("**/*.crt")) if Path(d).is_dir() else []:
            if fp in file_fingerprints(f):
                return None, f
    return None, None


@dataclass(frozen=True)
class NssStore:
    browser: str  # "Chromium" | "Firefox"
    directory: Path
    profile: str = ""

    @property
    def label(self) -> str:
        return f"{self.browser} ({self.profile})" if self.profile else self.browser


def nss_stores(home: Path) -> list[NssStore]:
    """The NSS databases under `home` that hold a cert9.db: Chromium's, then each Firefox profile's."""
    out = []
    chromium = home / ".pki" / "nssdb"
    if (chromium / "cert9.db").is_file():
        out.append(NssStore("Chromium", chromium))
    for root in FIREFOX_ROOTS:
        for db in sorted((home / root).glob("*/cert9.db")):
            out.append(NssStore("Firefox", db.parent, db.parent.name))
    return out


def certutil() -> str | None:
    return shutil.which("certutil")


def _certutil(args: list[str], binary: str) -> str:
    try:
        r = subprocess.run([binary, *args], capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NssError(str(e)) from e
    if r.returncode != 0:
        lines = (r.stderr or r.stdout).strip().splitlines()
        raise NssError(lines[-1] if lines else f"certutil exited {r.returncode}")
    return r.stdout


def nss_trust(store: NssStore, fp: str, binary: str) -> tuple[str, str] | None:
    """(nickname, trust attributes "SSL,S/MIME,JAR") of the certificate with fingerprint `fp` in `store`, or
    None when it is not there."""
    listing = _certutil(["-L", "-d", f"sql:{store.directory}"], binary)
    for line in listing.splitlines():
        m = _TRUST.match(line)
        if not m or m["nick"].startswith("Certificate Nickname"):
            continue
        pem = _certutil(["-L", "-d", f"sql:{store.directory}", "-n", m["nick"], "-a"], binary)
        if fp in fingerprints(pem):
            return m["nick"], m["trust"]
    return None


def trusts_websites(trust: str) -> bool:
    """NSS trust attributes: the first field is SSL; `C` there makes it a CA trusted to issue website
    certificates (`c` alone is only a valid CA, `T` a client-certificate issuer)."""
    return "C" in trust.split(",")[0]
