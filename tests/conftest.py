import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def gateway(tmp_path_factory):
    """One real Gateway (Presidio + spaCy loaded once) logging to a temp state dir."""
    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway

    state = tmp_path_factory.mktemp("state")
    return Gateway.from_settings(load_settings(state_dir=state))
