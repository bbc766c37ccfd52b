// The chat page's browser tests' stand-in gateway (see chat_browser.py): replaces the
// page's fetch for /v1/models and /v1/chat/completions before the page's scripts run.
// window.meshnetFakeConfig, set just before this, says what it answers.
(() => {
  const fake = window.meshnetFakeConfig;
  const realFetch = window.fetch.bind(window);
  const encoder = new TextEncoder();
  const event = (payload) => `data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;
  const chunk = (content, finish) => event({
    object: "chat.completion.chunk", model: fake.models[0],
    choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }],
  });
  window.meshnetSent = [];
  window.fetch = async (url, init) => {
    const path = new URL(String(url), location.href).pathname;
    if (path === "/v1/models") {
      const data = fake.models.map((id) => ({ id, object: "model", owned_by: "meshnet" }));
      return new Response(JSON.stringify({ object: "list", data }), { headers: { "Content-Type": "application/json" } });
    }
    if (path !== "/v1/chat/completions") return realFetch(url, init);
    window.meshnetSent.push(JSON.parse(init.body));
    if (fake.status !== 200) {
      return new Response(JSON.stringify({ error: fake.error }), { status: fake.status, headers: { "Content-Type": "application/json" } });
    }
    const signal = init.signal;
    let timer = 0;
    const body = new ReadableStream({
      start(controller) {
        // The whole answer as bytes, cut in 7-byte slices: events and UTF-8 split anywhere.
        const text = fake.pieces.map((p) => chunk(p, null)).join("")
          + (fake.forever ? "" : chunk(null, fake.finish) + event("[DONE]"));
        const bytes = encoder.encode(text);
        for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
        if (!fake.forever) return controller.close();
        // A model that never stops: a word every 50 ms (silent: none) until the page aborts.
        const word = () => controller.enqueue(encoder.encode(chunk(" more", null)));
        if (!fake.silent) timer = setInterval(word, 50);
        signal.addEventListener("abort", () => {
          clearInterval(timer);
          window.meshnetAborted = (window.meshnetAborted || 0) + 1;
          controller.error(new DOMException("The user aborted a request.", "AbortError"));
        });
      },
      cancel() { clearInterval(timer); },
    });
    return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
  };
})();
