"""guardian-proxy."""
