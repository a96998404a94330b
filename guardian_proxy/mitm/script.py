"""The guardian as a mitmproxy script: `mitmdump -s` / `mitmweb -s` this file (its path: `guardian-proxy
addon-path`), with `--set guardian_state_dir=… guardian_config=… guardian_dashboard_port=…` (see
mitm/options.py). mitmproxy's own options (listen port, mode, ignore_hosts …) are mitmproxy's as usual, with three
rules that make it fail closed as `guardian-proxy run` does (mitm/options.py `configure`, mitm/startup.py `running`):

- a `guardian_*` value that is not valid stops mitmproxy at start-up with one line naming the option;
- upstream connections are lazy (`connection_strategy=lazy` is set): a request is decided before its upstream
  connection opens, so a blocked one never opens one;
- mitmproxy's default listen address (every interface) becomes 127.0.0.1; another address needs
  `--set guardian_allow_remote=true` and `--proxyauth USER:PASS`, else mitmproxy refuses to start in one line.

The models load in a thread once mitmproxy runs; a request that arrives meanwhile waits for them and is decided.
The addons are those of `guardian-proxy run` (mitm/app.py `build`): the connection guard (header and idle
timeouts, connection caps) runs with the default limits here, and the CNAME chain of the proxy's own DNS answer
is read once the gateway is built (guardian_proxy/dns_answer.py `ScriptDnsAnswer`)."""

from guardian_proxy.mitm.app import build

addons = build()
