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
