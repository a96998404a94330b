"""Exceptions raised by guardian-proxy.

    GuardianError
    ├── ConfigError          bad settings file, factor table or option (raised at load time)
    ├── ModelLoadError       missing/corrupt weights or an unloadable back end (names the file)
    ├── BodyError            a body that cannot be decoded within the stated limits
    │   └── BodyTooLarge     decoded size over the configured limit (decompression bomb guard)
    ├── PolicyError          policy ingestion or store failure
    └── BackendError         an LLM back end failed, timed out or answered malformed JSON
"""


class GuardianError(Exception):
    """Base of every error guardian-proxy raises on purpose."""


class ConfigError(GuardianError):
    pass


class ModelLoadError(GuardianError):
    pass


class BodyError(GuardianError):
    pass


class BodyTooLarge(BodyError):
    pass


class PolicyError(GuardianError):
    pass


class BackendError(GuardianError):
    pass
