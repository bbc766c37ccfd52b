"""The OpenAI-compatible gateway: users reach certified recipes with any OpenAI client.

    model_catalogue   which models serve users (certified recipes with a live route)
    model_assets      tokenizer, chat template and context length, verified bytes only
    chat_template     the model's Jinja template, rendered in a sandbox
    generation        one generation over a route, with failover mid-stream
    text_stream       token ids -> text deltas, with stop strings held back
    api_keys          hashed keys, the bearer check, per-key rate limits
    observability     the per-request log line and the Prometheus metrics
    errors            OpenAI's error shape (every refusal of the gateway)
    service           the entry point the routes call: request in, answer out

``tracker_service.api.routes.openai`` wires these into ``/v1/*``.
"""
