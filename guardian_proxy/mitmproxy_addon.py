"""The guardian as a mitmproxy script: `mitmdump -s` / `mitmweb -s` this file (its path: `guardian-proxy
addon-path`), with `--set guardian_state_dir=… guardian_config=… guardian_dashboard_port=…` (see
GuardianAddon.load). mitmproxy's own options (listen port, mode, ignore_hosts …) are mitmproxy's as usual."""

from guardian_proxy.addon import GuardianAddon

addons = [GuardianAddon()]
