// The status page redraws itself: every few seconds it fetches /api/v1/state and
// rebuilds the four sections with the markup templates/status.html renders (change
// both together). It is a static file because the page's Content-Security-Policy
// allows no inline script, and text goes in through text nodes only: endpoints,
// reasons and ids come from strangers' nodes and must never become markup.
"use strict";

(function () {
  const STATE_URL = "/api/v1/state";
  const refreshS = Math.max(1, Number(document.body.dataset.refreshS) || 5);
  let busy = false;
  let lastGood = null;

  // el("td", {"data-label": "Node"}, "text", otherNode, ...): attributes, then children.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  const badge = (status) => el("span", { class: `badge ${status}` }, status);
  const ago = (now, then) => `${Math.max(0, Math.round(now - then))} s ago`;

  function model(m) {
    return el(
      "article",
      { class: `card ${m.status}` },
      el("h3", {}, `${m.artifact_id} `, badge(m.status)),
      el(
        "p",
        {},
        `${m.recipe_id} v${m.recipe_version} · ${m.layer_count} layers · recipe `,
        badge(m.recipe_status),
      ),
      el("p", { class: "detail" }, m.detail),
    );
  }

  function unserved(r) {
    // Only weights the operator allowed under a name serve (meshnet-tracker models allow).
    // A dark recipe serves nothing anyway: the mark is for certified ones.
    if (r.source === "allowed" || r.status !== "certified") return [];
    return [
      " ",
      badge("unserved"),
      el(
        "div",
        { class: "detail" },
        `not served: the operator has not allowed these weights (${r.source})`,
      ),
    ];
  }

  function recipe(r) {
    const why = r.last_certification_failure
      ? [el("br"), el("strong", {}, "Why dark:"), ` ${r.last_certification_failure}`]
      : [];
    const digests = `${r.model_artifact_digest.slice(0, 12)}/${r.runtime_recipe_digest.slice(0, 12)}`;
    return el(
      "tr",
      {},
      el("td", { "data-label": "Status" }, badge(r.status), ...unserved(r)),
      el(
        "td",
        { "data-label": "Recipe" },
        `${r.recipe_id} v${r.recipe_version}`,
        el("div", { class: "detail" }, r.artifact_id),
      ),
      el("td", { "data-label": "Digests" }, el("code", {}, digests)),
      el("td", { "data-label": "Detail", class: "wrap" }, r.detail, ...why),
    );
  }

  function nodeState(n) {
    // A live node says whether the tracker could dial it; a gone one why it left.
    const cell = el("td", { "data-label": "State", class: "wrap" });
    if (n.live) {
      cell.append(`live · ${n.reachability}`);
      if (n.reachability !== "reachable" && n.reachability_reason) {
        cell.append(el("div", { class: "detail" }, n.reachability_reason));
      }
      if (n.relay) {
        const why = n.relay.reason.replace(/^serving through a relay: /, "");
        cell.append(el("div", { class: "detail" }, el("strong", {}, "Serving through a relay:"), ` ${why}`));
      }
    } else {
      cell.append(n.state === "active" ? "no heartbeat" : n.state);
      if (n.state !== "quarantined" && n.state_reason) {
        cell.append(el("div", { class: "detail" }, n.state_reason));
      }
    }
    if (n.state === "quarantined") {
      const evidence = n.quarantine_evidence;
      const where = evidence
        ? ` (route ${evidence.route_session_id}, majority ${(evidence.majority || []).join(", ")})`
        : "";
      cell.append(el("div", { class: "detail" }, el("strong", {}, "Quarantined:"), ` ${n.state_reason}${where}`));
    }
    return cell;
  }

  function node(n, now) {
    return el(
      "tr",
      { class: n.live ? "live" : "gone" },
      el("td", { "data-label": "Node" }, el("code", {}, n.node_id.slice(0, 12))),
      el("td", { "data-label": "Layers" }, `${n.shard_start}–${n.shard_end}`),
      el("td", { "data-label": "Recipe" }, `${n.recipe_id} v${n.recipe_version}`),
      el(
        "td",
        { "data-label": "tok/s" },
        n.measured_throughput == null ? "not measured" : `${n.measured_throughput.toFixed(1)} measured`,
        el("div", { class: "detail" }, `claims ${n.throughput.toFixed(1)}`),
      ),
      el("td", { "data-label": "Last seen" }, ago(now, n.last_seen)),
      nodeState(n),
    );
  }

  function job(j, now) {
    const counts = Object.keys(j.counts)
      .sort()
      .map((state) => ` ${j.counts[state]} ${state}`)
      .join("");
    return el(
      "tr",
      { class: j.state === "failed" ? "gone" : "live" },
      el("td", { "data-label": "Job" }, el("code", {}, j.job_id.slice(0, 12))),
      el("td", { "data-label": "Workload" }, j.workload),
      el("td", { "data-label": "State" }, j.state),
      el("td", { "data-label": "Tasks" }, `${j.task_count}:${counts}`),
      el("td", { "data-label": "Submitted" }, ago(now, j.created_at)),
    );
  }

  // One section: its rows (or cards), its "nothing yet" line, and the table around them.
  function fill(id, items, draw) {
    const holder = document.getElementById(id);
    holder.replaceChildren(...items.map(draw));
    document.getElementById(`${id}-empty`).hidden = items.length > 0;
    const table = holder.closest(".scroll");
    if (table) table.hidden = items.length === 0;
  }

  function render(state) {
    const now = state.generated_at;
    document.getElementById("live-count").textContent = String(state.nodes_total_live);
    fill("models", state.models, model);
    fill("recipes", state.recipes, recipe);
    fill("nodes", state.nodes, (n) => node(n, now));
    fill("jobs", state.jobs || [], (j) => job(j, now));
  }

  function say(text, stale) {
    const line = document.getElementById("freshness");
    line.textContent = text;
    line.classList.toggle("stale", stale);
  }

  const clock = (date) => date.toLocaleTimeString([], { hour12: false });

  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const response = await fetch(STATE_URL, { headers: { Accept: "application/json" }, cache: "no-store" });
      if (!response.ok) throw new Error(`the tracker answered ${response.status}`);
      render(await response.json());
      lastGood = new Date();
      document.body.dataset.updatedAt = String(lastGood.getTime());
      say(`Updated ${clock(lastGood)} · refreshes every ${refreshS} s.`, false);
    } catch (error) {
      const since = lastGood ? `the state from ${clock(lastGood)}` : "the state the page loaded with";
      say(`Cannot reach the tracker (${error.message}); showing ${since}, retrying every ${refreshS} s.`, true);
    } finally {
      busy = false;
    }
  }

  setInterval(refresh, refreshS * 1000);
  // A hidden tab does not poll; coming back shows the present at once.
  document.addEventListener("visibilitychange", refresh);
})();
