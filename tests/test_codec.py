import gzip
import zlib

import brotli
import pytest
import zstandard

from guardian_proxy import codec
from guardian_proxy.errors import BodyError, BodyTooLarge

DATA = b'{"email": "a@b.com"}' * 10


@pytest.mark.parametrize("enc", ["gzip", "deflate", "br", "zstd", "identity", None, "gzip, br"])
def test_roundtrip(enc):
    assert codec.decode(codec.encode(DATA, enc), enc, 10_000) == DATA


def test_foreign_encoders_decode():
    assert codec.decode(gzip.compress(DATA), "gzip", 10_000) == DATA
    assert codec.decode(zlib.compress(DATA), "deflate", 10_000) == DATA
    assert codec.decode(zlib.compress(DATA)[2:-4], "deflate", 10_000) == DATA  # raw deflate
    assert codec.decode(brotli.compress(DATA), "br", 10_000) == DATA
    assert codec.decode(zstandard.ZstdCompressor().compress(DATA), "zstd", 10_000) == DATA


@pytest.mark.parametrize("enc", ["gzip", "br", "zstd", "deflate"])
def test_bomb_is_stopped(enc):
    bomb = codec.encode(b"\0" * 5_000_000, enc)
    assert len(bomb) < 100_000
    with pytest.raises(BodyTooLarge):
        codec.decode(bomb, enc, 1_000_000)


def test_unknown_and_corrupt():
    with pytest.raises(BodyError):
        codec.decode(b"abc", "snappy", 100)
    with pytest.raises(BodyError):
        codec.decode(b"not gzip", "gzip", 100)


def test_a_brotli_bomb_stops_at_the_limit_without_inflating_first(tmp_path):
    """512 MB of zeros in ~100 KB of brotli: decoding stops at the 8 MB limit and the process stays small
    (brotli 1.1's Decompressor inflated the whole input in one call, ~1 GB, before the size check)."""
    import subprocess
    import sys

    c = brotli.Compressor(quality=1)
    bomb = tmp_path / "bomb.br"
    bomb.write_bytes(b"".join(c.process(b"\0" * (8 << 20)) for _ in range(64)) + c.finish())
    # the peak is VmHWM (this process's own high-water mark): ru_maxrss would carry over the forking
    # pytest process's size across exec
    probe = ("import re, sys\n"
             "from guardian_proxy import codec\n"
             "from guardian_proxy.errors import BodyTooLarge\n"
             "data = open(sys.argv[1], 'rb').read()\n"
             "try:\n    codec.decode(data, 'br', 8 << 20)\n    print('decoded')\n"
             "except BodyTooLarge:\n"
             "    hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
             "    print('too large', int(hwm) // 1024)\n")
    out = subprocess.run([sys.executable, "-c", probe, str(bomb)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    verdict, peak_mb = out.stdout.split()[0:2], int(out.stdout.split()[-1])
    assert verdict == ["too", "large"] and peak_mb < 300
