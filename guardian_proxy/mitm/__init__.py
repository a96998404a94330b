"""The mitmproxy edge: the only package that imports mitmproxy (the lint ban in pyproject.toml).

    flows       a flow as the pipeline sees it (destination, real_url, to_raw, wants_html …)
    blocking    how a blocked request is answered; a decision applied to its flow
    hooks       the guardian addon: request and WebSocket hooks, evaluation, its mixins below
    options     the `guardian_*` options and the fail-closed rules on mitmproxy's own
    startup     loaded by mitmproxy: the gateway built from the options while requests wait
    replies     a chat session's replies de-masked (streamed, whole, WebSocket)
    learning    privacy-policy pages learned while browsing
    rawstreams  raw TCP and UDP
    redirect    the upstream redirect, an addon of its own
    serve       running mitmproxy for `guardian-proxy run`
    app         the addon chain for every launcher (`build`) and the one start-up path (`open_gateway`)
    script      the `mitmdump -s` / `mitmweb -s` script (`guardian-proxy addon-path`)
"""
