// Running the built extension (dist/extension.js, the file the .vsix ships) under Node:
// `require("vscode")` resolves to the stand-in in ./vscode, the `qore` binary is QORE_BIN
// (else the workspace's debug build), and a workspace is a temporary qore config dir whose
// agents talk to a loopback provider, plus a project directory.
"use strict";

const fs = require("node:fs");
const Module = require("node:module");
const os = require("node:os");
const path = require("node:path");

const STAND_IN = path.join(__dirname, "vscode", "index.js");
const EXTENSION = path.join(__dirname, "..", "dist", "extension.js");
const REPO = path.join(__dirname, "..", "..", "..");

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? STAND_IN : resolve.call(this, request, ...rest);
};

function qoreBin() {
  const bin = process.env.QORE_BIN ||
    path.join(process.env.CARGO_TARGET_DIR || path.join(REPO, "target"), "debug", "qore");
  if (!fs.existsSync(bin)) {
    throw new Error(`qore binary not found at ${bin} (set QORE_BIN or build qore-cli)`);
  }
  return bin;
}

/** The built extension; throws when it was not built. */
function extension() {
  if (!fs.existsSync(EXTENSION)) {
    throw new Error(`${EXTENSION} is missing: run scripts/vscode-env.sh build first`);
  }
  return require(EXTENSION);
}

/** A config dir (agents `fim` on /infill, `fix` for refactors, both on `providerUrl`), a
 * data dir and a project dir, under a new temporary directory. */
function workspace(providerUrl) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qore-vscode-"));
  const config = path.join(root, "config");
  const write = (rel, text) => {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  };
  write("config/providers/loop.toml",
    `name = "loop"\nprotocol = "llamacpp"\nurl = "${providerUrl}/v1"\n`);
  write("config/agents/fim.toml",
    'name = "fim"\nextends = "llamacpp-completion"\nprovider = "loop"\nmodel = "qwen"\n');
  write("config/agents/fix.toml",
    'name = "fix"\nextends = "llamacpp-refactor"\nprovider = "loop"\nmodel = "tiny"\n');
  write("config/pipelines.toml", 'code_completion = ["fim"]\nrefactor = ["fix"]\n');
  fs.mkdirSync(path.join(root, "project"));
  return {
    root, config, data: path.join(root, "data"), project: path.join(root, "project"),
    remove: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/** Wait until `condition()` holds; an error naming `what` after `ms`. */
async function until(condition, what, ms = 30000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`never happened: ${what}`);
    }
    await new Promise((done) => setTimeout(done, 25));
  }
}

/** `texts` with runs of one text collapsed. */
function distinct(texts) {
  return texts.filter((text, i) => i === 0 || texts[i - 1] !== text);
}

module.exports = { distinct, extension, qoreBin, until, workspace };
