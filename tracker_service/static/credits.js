// The status page's Credit section redraws itself from /api/v1/credits (the first
// rows, by account) with the markup templates/status.html renders (change both
// together). Text goes in through text nodes only: names and teams are strangers'.
"use strict";

(function () {
  const CREDITS_URL = "/api/v1/credits?kind=account&limit=20";
  const refreshS = Math.max(5, Number(document.body.dataset.refreshS) || 5);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function row(c) {
    const who = el("td", { "data-label": "Contributor" });
    if (c.display_name) who.append(`${c.display_name} `);
    who.append(el("code", {}, c.kind === "identity" ? c.id.slice(0, 12) : c.id));
    if (c.forfeited) who.append(el("div", { class: "detail" }, el("strong", {}, "Forfeited:"), ` ${c.forfeited}`));
    return el(
      "tr",
      { class: c.forfeited ? "gone" : "live" },
      el("td", { "data-label": "Rank" }, String(c.rank)),
      who,
      el("td", { "data-label": "Team" }, c.team || "-"),
      el("td", { "data-label": "Total" }, c.total.toFixed(3)),
      el("td", { "data-label": "24 h" }, c.last_24h.toFixed(3)),
      el("td", { "data-label": "7 days" }, c.last_7d.toFixed(3)),
    );
  }

  async function refresh() {
    if (document.hidden) return;
    try {
      const response = await fetch(CREDITS_URL, { headers: { Accept: "application/json" }, cache: "no-store" });
      if (!response.ok) return; // the state section already says when the tracker is away
      const page = await response.json();
      const holder = document.getElementById("credits");
      holder.replaceChildren(...page.rows.map(row));
      document.getElementById("credits-empty").hidden = page.rows.length > 0;
      holder.closest(".scroll").hidden = page.rows.length === 0;
    } catch (error) {
      // Kept as drawn; the next tick tries again.
    }
  }

  setInterval(refresh, refreshS * 1000);
  document.addEventListener("visibilitychange", refresh);
})();
