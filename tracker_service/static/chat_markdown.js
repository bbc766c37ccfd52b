// A small markdown renderer for the chat page's answers. It never parses HTML: it
// builds DOM nodes, and every character of the answer lands in a text node, so an
// answer that contains markup shows that markup as text. It knows fenced code
// blocks, inline code, bold, italic, headings, bullet and numbered lists (nested by
// indentation) and links whose address is absolute http(s); anything else, a
// javascript: link included, stays the plain text it was written as.
// window.MeshnetMarkdown.render(text) returns a DocumentFragment.
"use strict";

(function () {
  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
  const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
  const ITEM = /^(\s*)(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/;
  // Leftmost match wins; at one position the alternatives are tried in this order.
  const INLINE = new RegExp(
    [
      "(`+)([^`]|[^`][\\s\\S]*?[^`])\\1(?!`)", // 1, 2: inline code
      "\\[([^\\[\\]\\n]+)\\]\\(\\s*([^()\\s]+)\\s*\\)", // 3, 4: link
      "\\*\\*(?=\\S)([\\s\\S]*?\\S)\\*\\*", // 5: bold
      "(?<!\\w)__(?=\\S)([\\s\\S]*?\\S)__(?!\\w)", // 6: bold
      "\\*(?=[^\\s*])([\\s\\S]*?[^\\s*])\\*", // 7: italic
      "(?<!\\w)_(?=[^\\s_])([\\s\\S]*?[^\\s_])_(?!\\w)", // 8: italic
    ].join("|"),
    "g",
  );

  function el(tag, attrs) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    return node;
  }

  // The address as the browser reads it, when that is http or https; null otherwise
  // (javascript:, data:, relative paths and anything unparsable).
  function safeHref(raw) {
    try {
      const url = new URL(raw);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch {
      return null;
    }
  }

  function inline(text, parent) {
    let last = 0;
    for (const m of text.matchAll(INLINE)) {
      if (m.index > last) parent.append(text.slice(last, m.index));
      parent.append(inlineNode(m));
      last = m.index + m[0].length;
    }
    if (last < text.length) parent.append(text.slice(last));
    return parent;
  }

  function inlineNode(m) {
    if (m[1] !== undefined) {
      const code = el("code");
      // As CommonMark: one space each side is padding, so `` `x` `` can be written.
      const body = /^ .* $/s.test(m[2]) && m[2].trim() ? m[2].slice(1, -1) : m[2];
      code.textContent = body;
      return code;
    }
    if (m[3] !== undefined) {
      const href = safeHref(m[4]);
      if (href === null) return document.createTextNode(m[0]);
      const link = el("a", { href, rel: "noopener noreferrer nofollow", target: "_blank" });
      return inline(m[3], link);
    }
    const strong = m[5] ?? m[6];
    if (strong !== undefined) return inline(strong, el("strong"));
    return inline(m[7] ?? m[8], el("em"));
  }

  // Lists nest by indentation: `stack` holds the open lists, outermost first.
  function listItem(stack, out, match) {
    const indent = match[1].replace(/\t/g, "    ").length;
    const ordered = match[3] !== undefined;
    while (stack.length && indent < stack[stack.length - 1].indent) stack.pop();
    let top = stack[stack.length - 1];
    if (top && indent > top.indent && top.item) {
      top = null; // deeper than the open list: a new list inside its last item
    } else if (top && top.ordered !== ordered) {
      stack.pop(); // same depth, other kind: a new list beside it
      top = null;
    }
    if (!top) {
      const list = el(ordered ? "ol" : "ul");
      if (ordered && Number(match[3]) !== 1) list.setAttribute("start", String(Number(match[3])));
      const parent = stack.length ? stack[stack.length - 1].item : out;
      parent.append(list);
      top = { indent, ordered, list, item: null, text: "" };
      stack.push(top);
    }
    top.item = el("li");
    top.text = match[4];
    top.list.append(inline(top.text, top.item));
  }

  function render(source) {
    const out = document.createDocumentFragment();
    const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
    let paragraph = [];
    let stack = []; // open lists
    let blank = false; // the line before was empty
    const flush = () => {
      if (paragraph.length) out.append(inline(paragraph.join("\n"), el("p")));
      paragraph = [];
    };
    const endLists = () => {
      stack = [];
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = FENCE.exec(line);
      if (fence) {
        flush();
        endLists();
        const closer = new RegExp(`^ {0,3}${fence[1][0]}{${fence[1].length},}\\s*$`);
        const body = [];
        // An answer still streaming may not have closed its block yet: the rest is code.
        for (i += 1; i < lines.length && !closer.test(lines[i]); i++) body.push(lines[i]);
        const code = el("code", fence[2] ? { class: `language-${fence[2]}` } : {});
        code.textContent = body.join("\n");
        const pre = el("pre");
        pre.append(code);
        out.append(pre);
        blank = false;
        continue;
      }
      if (!line.trim()) {
        flush();
        blank = true;
        continue;
      }
      const heading = HEADING.exec(line);
      const item = ITEM.exec(line);
      if (heading) {
        flush();
        endLists();
        // The page's own title is h1; an answer's headings sit below it.
        out.append(inline(heading[2], el(`h${Math.min(6, heading[1].length + 2)}`)));
      } else if (item) {
        flush();
        listItem(stack, out, item);
      } else if (stack.length && !blank && /^\s/.test(line)) {
        // An indented line under an item continues it.
        const top = stack[stack.length - 1];
        top.text += `\n${line.trim()}`;
        top.item.replaceChildren();
        inline(top.text, top.item);
      } else {
        if (!paragraph.length) endLists();
        paragraph.push(line);
      }
      blank = false;
    }
    flush();
    return out;
  }

  window.MeshnetMarkdown = Object.freeze({ render });
})();
