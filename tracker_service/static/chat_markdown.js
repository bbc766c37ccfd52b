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
  const HEADING_START = /^ {0,3}(#{1,6})\s/;
  const ITEM = /^(\s*)(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/;
  const SPACE = /\s/;
  const WORD = /\w/;

  // For each position x, the first position >= x where `closes(j)` holds (or -1): one
  // backward pass, so finding a delimiter's closer never rescans the text. Every
  // search by pattern (`[\s\S]*?` up to a closer) restarted at each opener, and an
  // unclosed `**` repeated n times cost n^2 steps.
  function nextWhere(length, closes) {
    const next = new Int32Array(length + 2).fill(-1);
    for (let j = length; j >= 0; j--) next[j] = closes(j) ? j : next[j + 1];
    return (from) => (from <= length ? next[from] : -1);
  }

  // Inline markup, matched as these patterns would be (leftmost match wins; at one
  // position the kinds are tried in this order), in time linear in the text:
  //   code    (`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)
  //   link    \[([^\[\]\n]+)\]\(\s*([^()\s]+)\s*\)
  //   bold    \*\*(?=\S)([\s\S]*?\S)\*\*   and   (?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)
  //   italic  \*(?=[^\s*])([\s\S]*?[^\s*])\*   and   (?<!\w)_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)
  // Each match is an array shaped as the combined pattern's (groups 1-8) with `index`.
  function* inlineMatches(text) {
    const n = text.length;
    const at = (j) => (j >= 0 && j < n ? text[j] : "");
    const space = (j) => j < 0 || j >= n || SPACE.test(text[j]);
    const word = (j) => j >= 0 && j < n && WORD.test(text[j]);
    const boldStar = nextWhere(n, (j) => text.startsWith("**", j) && j > 0 && !space(j - 1));
    const boldLine = nextWhere(
      n,
      (j) => text.startsWith("__", j) && j > 0 && !space(j - 1) && !word(j + 2),
    );
    const emStar = nextWhere(
      n,
      (j) => at(j) === "*" && j > 0 && !space(j - 1) && at(j - 1) !== "*",
    );
    const emLine = nextWhere(
      n,
      (j) => at(j) === "_" && j > 0 && !space(j - 1) && at(j - 1) !== "_" && !word(j + 1),
    );
    const runs = backtickRuns(text);
    const match = (index, end, group, values) => {
      const m = new Array(9);
      m[0] = text.slice(index, end);
      values.forEach((value, k) => {
        m[group + k] = value;
      });
      m.index = index;
      return m;
    };
    let i = 0;
    while (i < n) {
      const ch = text[i];
      let m = null;
      if (ch === "`") {
        const ticks = runs.endOf[i] - i; // a shorter opener would leave a ` first
        const close = runs.next(ticks, i + ticks + 1);
        if (close >= 0) m = match(i, close + ticks, 1, [text.slice(i, i + ticks), text.slice(i + ticks, close)]);
      } else if (ch === "[") {
        m = link(text, i, match);
      }
      if (!m && ch === "*") {
        if (at(i + 1) === "*" && !space(i + 2)) {
          const close = boldStar(i + 3);
          if (close >= 0) m = match(i, close + 2, 5, [text.slice(i + 2, close)]);
        }
        if (!m && !space(i + 1) && at(i + 1) !== "*") {
          const close = emStar(i + 2);
          if (close >= 0) m = match(i, close + 1, 7, [text.slice(i + 1, close)]);
        }
      } else if (!m && ch === "_" && !word(i - 1)) {
        if (at(i + 1) === "_" && !space(i + 2)) {
          const close = boldLine(i + 3);
          if (close >= 0) m = match(i, close + 2, 6, [text.slice(i + 2, close)]);
        }
        if (!m && !space(i + 1) && at(i + 1) !== "_") {
          const close = emLine(i + 2);
          if (close >= 0) m = match(i, close + 1, 8, [text.slice(i + 1, close)]);
        }
      }
      if (m) {
        yield m;
        i = m.index + m[0].length;
      } else {
        i += 1;
      }
    }
  }

  // Maximal runs of backticks: where the run through each position ends, and the
  // next run of exactly `ticks` backticks starting at or after a position (a code
  // span closes only on a run as long as its opener).
  function backtickRuns(text) {
    const endOf = new Int32Array(text.length + 1);
    const starts = new Map(); // run length -> starts, ascending
    for (let j = text.length - 1; j >= 0; j--) {
      endOf[j] = text[j] === "`" ? (text[j + 1] === "`" ? endOf[j + 1] : j + 1) : j;
    }
    for (let j = 0; j < text.length; j++) {
      if (text[j] === "`" && (j === 0 || text[j - 1] !== "`")) {
        const length = endOf[j] - j;
        if (!starts.has(length)) starts.set(length, []);
        starts.get(length).push(j);
      }
    }
    const cursor = new Map(); // searches for one length only move forward
    const next = (ticks, from) => {
      const list = starts.get(ticks);
      if (!list) return -1;
      let k = cursor.get(ticks) || 0;
      while (k < list.length && list[k] < from) k++;
      cursor.set(ticks, k);
      return k < list.length ? list[k] : -1;
    };
    return { endOf, next };
  }

  // A heading line as /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/ reads it ([line, hashes,
  // text] or null), in one pass: that pattern retried its closing \s+ at every space
  // of the line, n^2 steps on a heading full of spaces.
  function headingOf(line) {
    const start = HEADING_START.exec(line);
    if (!start) return null;
    let from = start[0].length;
    while (from < line.length && SPACE.test(line[from])) from++;
    let end = line.length;
    while (end > from && SPACE.test(line[end - 1])) end--;
    let hashes = end;
    while (hashes > from && line[hashes - 1] === "#") hashes--;
    if (hashes < end && hashes > from && SPACE.test(line[hashes - 1])) {
      end = hashes; // a closing run of #, after a space, is not the heading's text
      while (end > from && SPACE.test(line[end - 1])) end--;
    }
    const text = line.slice(from, end);
    return /[\u2028\u2029]/.test(text) ? null : [line, start[1], text];
  }

  // [text](address): the text holds no bracket or line break, so each `[` scans only
  // up to the next bracket.
  function link(text, i, match) {
    let j = i + 1;
    while (j < text.length && !"[]\n".includes(text[j])) j++;
    if (j === i + 1 || text[j] !== "]" || text[j + 1] !== "(") return null;
    let k = j + 2;
    while (k < text.length && SPACE.test(text[k])) k++;
    const from = k;
    while (k < text.length && !"()".includes(text[k]) && !SPACE.test(text[k])) k++;
    if (k === from) return null;
    const address = text.slice(from, k);
    while (k < text.length && SPACE.test(text[k])) k++;
    if (text[k] !== ")") return null;
    return match(i, k + 1, 3, [text.slice(i + 1, j), address]);
  }

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
    for (const m of inlineMatches(text)) {
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
      const heading = headingOf(line);
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
