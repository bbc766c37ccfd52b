// Runs the chat page's markdown renderer (tracker_service/static/chat_markdown.js) in
// node with a small DOM stand-in, for tests/adversary/test_limits_markdown.py.
//   node markdown_node.js <chat_markdown.js> compare <seed>  -> differences from the patterns
//   node markdown_node.js <chat_markdown.js> unclosed <n>    -> renders hostile unclosed markup
"use strict";
const fs = require("fs");
const vm = require("vm");

class Element {
  constructor(tag) {
    this.tag = tag;
    this.children = [];
    this.attrs = {};
  }
  append(...xs) {
    for (const x of xs) this.children.push(typeof x === "string" ? new Text(x) : x);
  }
  setAttribute(name, value) {
    this.attrs[name] = value;
  }
  replaceChildren() {
    this.children = [];
  }
  set textContent(value) {
    this.children = [new Text(value)];
  }
  get html() {
    const inner = this.children.map((c) => c.html).join("");
    if (!this.tag) return inner;
    const attrs = Object.entries(this.attrs).map(([k, v]) => ` ${k}="${v}"`).join("");
    return `<${this.tag}${attrs}>${inner}</${this.tag}>`;
  }
}
class Text {
  constructor(text) {
    this.text = text;
  }
  get html() {
    return this.text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  }
}

function load(source) {
  const document = {
    createElement: (tag) => new Element(tag),
    createDocumentFragment: () => new Element(null),
    createTextNode: (text) => new Text(text),
  };
  const context = { window: {}, document, URL };
  vm.createContext(context);
  vm.runInContext(source, context);
  return (text) => context.window.MeshnetMarkdown.render(text).html;
}

// The inline patterns the renderer is specified by (its comment lists them); the
// reference renderer matches them with the regex engine, as the page once did.
const REFERENCE = String.raw`
const REFERENCE_INLINE = new RegExp([
  "(\`+)([^\`]|[^\`][\\s\\S]*?[^\`])\\1(?!\`)",
  "\\[([^\\[\\]\\n]+)\\]\\(\\s*([^()\\s]+)\\s*\\)",
  "\\*\\*(?=\\S)([\\s\\S]*?\\S)\\*\\*",
  "(?<!\\w)__(?=\\S)([\\s\\S]*?\\S)__(?!\\w)",
  "\\*(?=[^\\s*])([\\s\\S]*?[^\\s*])\\*",
  "(?<!\\w)_(?=[^\\s_])([\\s\\S]*?[^\\s_])_(?!\\w)",
].join("|"), "g");
const REFERENCE_HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
`;

const [, , path, mode, arg] = process.argv;
const source = fs.readFileSync(path, "utf8");
const render = load(source);

if (mode === "unclosed") {
  const n = Number(arg);
  const text = ["**a ", "*b ", "__c ", "_d ", "`e ``f ", "[g"]
    .map((s) => s.repeat(n))
    .concat([`# a${" ".repeat(4 * n)}b`])
    .join("\n");
  console.log(`rendered ${text.length} characters into ${render(text).length}`);
} else if (mode === "compare") {
  const swaps = {
    "of inlineMatches(text)": "of text.matchAll(REFERENCE_INLINE)",
    "= headingOf(line)": "= REFERENCE_HEADING.exec(line)",
  };
  let referenceSource = source.replace('"use strict";', `"use strict";\n${REFERENCE}`);
  for (const [call, swap] of Object.entries(swaps)) {
    if (!source.includes(call)) throw new Error(`${call} not found in ${path}`);
    referenceSource = referenceSource.replace(call, swap);
  }
  const reference = load(referenceSource);
  const alphabet = "**__``[]()ab \n\thttps://x.y/_*`#-1.###  \u00a0\u2028";
  let seed = Number(arg);
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  let differences = 0;
  // Half the texts from characters, half from pieces markdown is made of.
  const pieces = ["# ", "## ", "#", "###", " ", "  ", "\t", "a", "bc", "**", "*", "_", "__"];
  pieces.push("`", "``", "[x](https://a.b/)", "[y]", "(z)", "\n", "- ", "1. ", "\u2028");
  for (let t = 0; t < 20000; t++) {
    let text = "";
    const length = 1 + Math.floor(random() * 40);
    const from = t % 2 ? alphabet : pieces;
    for (let k = 0; k < length; k++) text += from[Math.floor(random() * from.length)];
    const want = reference(text);
    const got = render(text);
    if (want !== got) {
      differences++;
      if (differences <= 3) console.log(JSON.stringify({ text, want, got }));
    }
  }
  console.log(`differences: ${differences}`);
}
