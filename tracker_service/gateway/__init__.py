"""The OpenAI-compatible gateway: users reach certified recipes with any OpenAI client.

    model_catalogue   which models serve users (certified recipes with a live route)
    model_assets      tokenizer, chat template and context length, verified bytes only
    chat_template     the model's Jinja template, rendered in a sandbox
    generation        one generation over a route, with failover mid-stream
    text_stream       token ids -> text deltas, with stop strings held back
    sampler           sampling at the gateway over the last hop's top 20 (logprobs,
                      penalties, logit_bias, a grammar mask, a seeded draw)
    constraint        llguidance grammars: JSON, a JSON schema, a forced tool call
    tools             tools in the prompt (template or preamble), tool calls parsed out
    responses         the OpenAI shapes of choices, log-probs, tool calls and chunks
    api_keys          hashed keys, the bearer check, per-key rate limits
    observability     the per-request log line and the Prometheus metrics
    errors            OpenAI's error shape (every refusal of the gateway)
    service           the entry point the routes call: request in, answer out
    answer            one request under way: its choices, their text deltas, its close

``tracker_service.api.routes.openai`` wires these into ``/v1/*``.
"""
