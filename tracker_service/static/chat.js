// The chat page: lists the gateway's models (/v1/models), sends the conversation to
// /v1/chat/completions with stream: true and draws the answer as its server-sent
// events arrive; Stop aborts the request, which ends the route on the tracker too.
// Text goes into the page through text nodes only (answers through
// chat_markdown.js, which builds nodes too): a model's answer and a person's
// message can hold any markup and must show it as text. The API key, when the
// gateway needs one, stays in this tab's sessionStorage.
"use strict";

(function () {
  const MODELS_URL = "/v1/models";
  const CHAT_URL = "/v1/chat/completions";
  const KEY_STORE = "meshnet-chat-api-key";
  const RETRY_MODELS_S = 10;

  const $ = (id) => document.getElementById(id);
  const ui = {
    model: $("model"),
    keyField: $("key-field"),
    key: $("api-key"),
    temperature: $("temperature"),
    newChat: $("new-chat"),
    notice: $("notice"),
    log: $("log"),
    empty: $("empty"),
    composer: $("composer"),
    prompt: $("prompt"),
    send: $("send"),
    stop: $("stop"),
    settings: $("settings"),
  };

  const conversation = []; // what the model is sent: {role, content}, oldest first
  let streaming = null; // the AbortController of the answer arriving now
  let chat = 0; // which conversation: New chat starts another
  let modelsTimer = 0;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    node.append(...children);
    return node;
  }

  function say(text, bad) {
    ui.notice.textContent = text;
    ui.notice.classList.toggle("bad", Boolean(bad));
  }

  function storedKey() {
    try {
      return sessionStorage.getItem(KEY_STORE) || "";
    } catch {
      return ""; // storage turned off: the field still works for this page
    }
  }

  function keepKey(key) {
    try {
      if (key) sessionStorage.setItem(KEY_STORE, key);
      else sessionStorage.removeItem(KEY_STORE);
    } catch {
      // storage turned off: the key lives in the field only
    }
  }

  function headers() {
    const out = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    const key = ui.key.value.trim();
    if (key) out.Authorization = `Bearer ${key}`;
    return out;
  }

  // The gateway's own sentence from an error answer (OpenAI's shape), or the status.
  async function refusal(response) {
    try {
      const body = await response.json();
      if (body && body.error && body.error.message) return String(body.error.message);
    } catch {
      // not JSON: a proxy's page, say
    }
    return `the gateway answered ${response.status} ${response.statusText}`.trim();
  }

  function askForKey(sentence) {
    ui.keyField.hidden = false;
    say(`${sentence} Type the key above.`, true);
    ui.key.focus();
  }

  function updateButtons() {
    const busy = streaming !== null;
    ui.send.hidden = busy;
    ui.stop.hidden = !busy;
    ui.send.disabled = !ui.model.value;
  }

  function fillModels(ids) {
    const chosen = ui.model.value;
    const options = ids.map((id) => el("option", { value: id }, id));
    if (!options.length) options.push(el("option", { value: "" }, "No model serves now"));
    ui.model.replaceChildren(...options);
    if (ids.includes(chosen)) ui.model.value = chosen;
    ui.model.disabled = ids.length === 0;
    updateButtons();
  }

  async function loadModels() {
    clearTimeout(modelsTimer);
    if (document.body.dataset.needsKey === "true" && !ui.key.value.trim()) {
      fillModels([]); // asking without a key would only be refused
      askForKey("This network's gateway needs an API key: ask its operator for one.");
      return;
    }
    let retry = true;
    try {
      const response = await fetch(MODELS_URL, { headers: headers(), cache: "no-store" });
      if (response.status === 401) {
        fillModels([]);
        askForKey(await refusal(response));
        retry = false; // the next try comes with a key
        return;
      }
      if (!response.ok) throw new Error(await refusal(response));
      const ids = ((await response.json()).data || []).map((m) => String(m.id));
      fillModels(ids);
      if (ids.length) {
        retry = false;
        if (ui.notice.dataset.about === "models") say("", false);
        delete ui.notice.dataset.about;
        return;
      }
      say(`No model serves on this network right now; looking again every ${RETRY_MODELS_S} s.`, true);
    } catch (error) {
      fillModels([]);
      say(`Cannot list the models (${error.message}); trying again in ${RETRY_MODELS_S} s.`, true);
    } finally {
      if (retry) {
        ui.notice.dataset.about = "models";
        modelsTimer = setTimeout(loadModels, RETRY_MODELS_S * 1000);
      }
    }
  }

  // Keep the newest line in view, unless the reader scrolled up to read.
  function follow(draw) {
    const log = ui.log;
    const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    draw();
    if (atEnd) log.scrollTop = log.scrollHeight;
  }

  function addMessage(role, label) {
    ui.empty.hidden = true;
    const body = el("div", { class: role === "user" ? "text" : "text md" });
    const meta = el("p", { class: "meta", hidden: "" });
    const article = el("article", { class: `msg ${role}` }, el("p", { class: "who" }, label), body, meta);
    follow(() => ui.log.append(article));
    return { article, body, meta };
  }

  function note(message, text, bad) {
    message.meta.textContent = text;
    message.meta.hidden = false;
    message.meta.classList.toggle("bad", Boolean(bad));
  }

  // Redraw an answer at most once a frame however fast its pieces come.
  function drawAnswer(message, text, now) {
    message.text = text;
    const draw = () => {
      message.frame = 0;
      follow(() => message.body.replaceChildren(window.MeshnetMarkdown.render(message.text)));
    };
    if (now) {
      cancelAnimationFrame(message.frame || 0);
      draw();
    } else if (!message.frame) {
      message.frame = requestAnimationFrame(draw);
    }
  }

  // The data of each server-sent event in a streamed answer.
  async function* events(stream) {
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).replace(/^ /, ""))
            .join("\n");
          if (data) yield data;
        }
      }
    } finally {
      reader.cancel().catch(() => {}); // leaving early (Stop, an error) closes the stream
    }
  }

  // The request body; an empty temperature field leaves the gateway's default.
  function request(model) {
    const body = { model, messages: conversation, stream: true };
    const temperature = ui.temperature.value.trim();
    if (temperature) body.temperature = Number(temperature);
    return body;
  }

  async function ask(text) {
    const model = ui.model.value;
    const thisChat = chat;
    const mine = addMessage("user", "You");
    mine.body.textContent = text;
    conversation.push({ role: "user", content: text });
    const answer = addMessage("assistant", model);
    answer.article.dataset.state = "streaming";
    answer.article.classList.add("streaming");
    const controller = new AbortController();
    streaming = controller;
    updateButtons();
    say("", false);

    let content = "";
    let finish = null;
    let problem = null;
    try {
      const response = await fetch(CHAT_URL, {
        method: "POST",
        headers: headers(),
        body: JSON.stringify(request(model)),
        signal: controller.signal,
      });
      if (response.status === 401) {
        problem = await refusal(response);
        askForKey(problem);
      } else if (!response.ok) {
        problem = await refusal(response);
      } else {
        for await (const data of events(response.body)) {
          if (data === "[DONE]") break;
          const chunk = JSON.parse(data);
          if (chunk.error) throw new Error(chunk.error.message || "the answer failed");
          const choice = (chunk.choices || [])[0];
          if (!choice) continue;
          if (choice.delta && typeof choice.delta.content === "string" && choice.delta.content) {
            content += choice.delta.content;
            drawAnswer(answer, content, false);
          }
          finish = choice.finish_reason || finish;
        }
      }
    } catch (error) {
      if (error.name === "TypeError") problem = `cannot reach the tracker (${error.message})`;
      else if (error.name !== "AbortError") problem = error.message || String(error);
    } finally {
      if (streaming === controller) streaming = null;
      updateButtons();
    }
    const stopped = controller.signal.aborted;
    drawAnswer(answer, content, true);
    answer.article.classList.remove("streaming");
    if (thisChat !== chat) return; // New chat was pressed meanwhile: this one is gone

    if (!content && (stopped || problem)) {
      // Nothing came back: the question is not part of the conversation; it goes
      // back into the box to send again.
      conversation.pop();
      answer.article.remove();
      mine.article.classList.add("unsent");
      note(mine, stopped ? "Stopped before the answer began; not sent." : `Not sent: ${problem}`, !stopped);
      mine.article.dataset.state = stopped ? "stopped" : "failed";
      if (!ui.prompt.value) ui.prompt.value = text;
      return;
    }
    conversation.push({ role: "assistant", content });
    answer.article.dataset.state = stopped ? "stopped" : problem ? "failed" : "done";
    if (stopped) note(answer, "Stopped.", false);
    else if (problem) note(answer, `The answer broke off: ${problem}`, true);
    else if (finish === "length") note(answer, "Cut off at the answer's length limit.", false);
    else if (!content) note(answer, "The model answered nothing.", false);
  }

  function stop() {
    if (streaming) streaming.abort();
  }

  ui.composer.addEventListener("submit", (event) => {
    event.preventDefault(); // the page's CSP allows no form submission, and none is meant
    const text = ui.prompt.value.trim();
    if (!text || streaming || !ui.model.value) return;
    ui.prompt.value = "";
    ask(text);
  });
  ui.settings.addEventListener("submit", (event) => event.preventDefault());
  ui.prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ui.composer.requestSubmit();
    }
  });
  ui.stop.addEventListener("click", stop);
  ui.newChat.addEventListener("click", () => {
    stop();
    chat += 1;
    conversation.length = 0;
    ui.log.replaceChildren(ui.empty);
    ui.empty.hidden = false;
    ui.prompt.focus();
  });
  ui.model.addEventListener("change", updateButtons);
  ui.key.addEventListener("change", () => {
    keepKey(ui.key.value.trim());
    loadModels();
  });

  ui.key.value = storedKey();
  ui.keyField.hidden = document.body.dataset.needsKey !== "true" && !ui.key.value;
  updateButtons();
  loadModels();
})();
