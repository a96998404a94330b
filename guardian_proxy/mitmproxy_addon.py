"""The guardian as a mitmproxy script: `mitmdump -s` / `mitmweb -s` this file (its path: `guardian-proxy
addon-path`), with `--set guardian_state_dir=… guardian_config=… guardian_dashboard_port=…` (see
GuardianAddon.load). mitmproxy's own options (listen port, mode, ignore_hosts …) are mitmproxy's as usual. The
connection guard (header and idle timeouts, connection caps) runs with the default limits here."""

from guardian_proxy.addon import GuardianAddon, close_client
from guardian_proxy.config import LimitSettings
from guardian_proxy.connections import ConnectionGuard
from guardian_proxy.procinfo import AppLookup

addons = [AppLookup(), GuardianAddon(), ConnectionGuard.from_limits(close_client, LimitSettings())]
