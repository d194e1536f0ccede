// Markdown tokens for `bench/peer_bench.py`: the client side of VS Code's Markdown server.
//
// That server does not parse Markdown itself: it asks its client (`markdown/parse`) for the
// markdown-it tokens of a document, and VS Code answers from the editor's own markdown-it. This
// process plays that part. Each line on stdin is a JSON object {id, uri, text}; `text` is the
// editor's copy of an open document, or null for a file to be read from the disk. Each line on
// stdout is the id, a tab and the tokens as JSON, so that the bench client can pass the tokens
// on without decoding them. The one argument is the node_modules folder holding markdown-it.
"use strict";

const fs = require("fs");
const path = require("path");
const readline = require("readline");
const { fileURLToPath } = require("url");

const modules = process.argv[2];
const MarkdownIt = require(path.join(modules, "markdown-it"));
const frontMatter = require(path.join(modules, "markdown-it-front-matter"));

// VS Code's Markdown engine also reads front matter as one token rather than as a rule and a
// setext heading.
const markdown = MarkdownIt({ html: true, linkify: true }).use(frontMatter, () => {});

function tokensOf(request) {
  try {
    const text =
      typeof request.text === "string"
        ? request.text
        : fs.readFileSync(fileURLToPath(request.uri), "utf8");
    return markdown.parse(text, {});
  } catch {
    return [];
  }
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const request = JSON.parse(line);
  process.stdout.write(`${request.id}\t${JSON.stringify(tokensOf(request))}\n`);
});
