-- Headless Neovim driving qore as copilot.lua does with `server = { type = "binary" }`:
-- the server started as `{path, "--stdio"}`, copilot.lua's initializationOptions, its
-- `checkStatus` and `getCompletions` requests (with `_ = true` and its doc keys), and its
-- accept: the item's `text` applied over its `range` (UTF-16), then `notifyAccepted`; then
-- copilot.vim's `textDocument/inlineCompletion` and its way of drawing the item.
-- nvim --headless --clean -l copilot.lua QORE FILE LINE CHARACTER OUT
--   QORE            the qore binary
--   FILE            the file to open
--   LINE CHARACTER  the cursor (0-based, UTF-16)
--   OUT             where the results go, as JSON
-- Promises: OUT is always written (with `error` when a step failed) and Neovim exits 0.
local qore, file, line, character, out = arg[1], arg[2], tonumber(arg[3]), tonumber(arg[4]), arg[5]
local report = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), "report.lua"))

local function main(result)
  vim.cmd.edit(vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start({
    name = "copilot",
    cmd = { qore, "--stdio" },
    root_dir = vim.fs.dirname(file),
    init_options = {
      editorInfo = { name = "Neovim", version = tostring(vim.version()) },
      editorPluginInfo = { name = "copilot.lua", version = "1.0" },
    },
  }, { bufnr = buf })
  local client = id and vim.lsp.get_client_by_id(id)
  local ready = client and vim.wait(20000, function()
    return client.initialized and vim.lsp.buf_is_attached(buf, id)
  end, 50)
  if not ready then
    error("qore did not start as a copilot server")
  end
  result.server_info = client.server_info

  local status, serr = client:request_sync("checkStatus", {}, 20000, buf)
  result.status = status or { err = serr }

  -- copilot.lua's util.get_doc_params, cursor at LINE:CHARACTER.
  vim.api.nvim_win_set_cursor(0, { line + 1, character })
  local uri = vim.uri_from_bufnr(buf)
  local position = { line = line, character = character }
  local version = vim.lsp.util.buf_versions[buf]
  local params = {
    _ = true,
    doc = {
      uri = uri,
      version = version,
      relativePath = vim.fn.fnamemodify(file, ":t"),
      insertSpaces = vim.bo[buf].expandtab,
      tabSize = vim.bo[buf].shiftwidth,
      indentSize = vim.bo[buf].shiftwidth,
      position = position,
    },
    textDocument = { uri = uri, version = version, relativePath = vim.fn.fnamemodify(file, ":t") },
    position = position,
  }
  result.version = version
  local completions, cerr = client:request_sync("getCompletions", params, 20000, buf)
  result.completions = completions or { err = cerr }
  local items = completions and completions.result and completions.result.completions or {}
  local item = items[1]
  if item == nil then
    error("no completion item: " .. vim.inspect(completions))
  end
  -- copilot.lua's accept: the whole-line text over the item's range.
  vim.lsp.util.apply_text_edits({ { range = item.range, newText = item.text } }, buf, "utf-16")
  local accepted, aerr = client:request_sync("notifyAccepted", { uuid = item.uuid }, 20000, buf)
  result.accepted = accepted or { err = aerr }

  -- Then copilot.vim's request (current versions) on the blank line after it, drawn as
  -- copilot.vim draws it: the line up to range.start, then insertText.
  local blank = { line = line + 1, character = 0 }
  local inline, ierr = client:request_sync("textDocument/inlineCompletion", {
    textDocument = { uri = uri, version = vim.lsp.util.buf_versions[buf] },
    position = blank,
    context = { triggerKind = 2 },
    formattingOptions = { tabSize = 4, insertSpaces = true },
  }, 20000, buf)
  result.inline = inline or { err = ierr }
  local shown = inline and inline.result and inline.result.items and inline.result.items[1]
  if shown == nil then
    error("no inline completion item: " .. vim.inspect(inline))
  end
  local row = shown.range.start.line
  local text = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  local drawn = text:sub(1, vim.str_byteindex(text, "utf-16", shown.range.start.character))
    .. shown.insertText
  vim.api.nvim_buf_set_lines(buf, row, row + 1, false, { drawn })
  result.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

report(out, main)
