-- Headless Neovim check of qore's LSP server, as a user's setup drives it.
-- nvim --headless --clean -l check.lua SETUP FILE OUT
--   SETUP  the Lua setup from docs/editors.md (vim.lsp.config + vim.lsp.enable)
--   FILE   the file to open (python)
--   OUT    where the results go, as JSON
-- Promises: OUT is always written (with `error` when a step failed) and Neovim exits 0.
local setup, file, out = arg[1], arg[2], arg[3]
local report = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), "report.lua"))

local function main(result)
  dofile(setup)
  vim.cmd("filetype on")
  vim.cmd.edit(vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype
  local attached = vim.wait(20000, function()
    return #vim.lsp.get_clients({ bufnr = buf, name = "qore" }) > 0
  end, 50)
  result.attached = attached
  if not attached then
    error("no qore client attached to " .. file)
  end
  local client = vim.lsp.get_clients({ bufnr = buf, name = "qore" })[1]
  local doc = vim.lsp.util.make_text_document_params(buf)

  -- An edit first (sent as an incremental change): line 4 becomes print(add(3, 4)).
  vim.api.nvim_buf_set_text(buf, 3, 10, 3, 14, { "3, 4" })

  -- Completion at line 2, after "    return " (0-based line 1, character 11).
  local completion, err = client:request_sync("textDocument/completion", {
    textDocument = doc,
    position = { line = 1, character = 11 },
  }, 20000, buf)
  result.completion = completion or { err = err }

  -- The code actions on the function's first two lines.
  local range = { start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 11 } }
  local actions, aerr = client:request_sync("textDocument/codeAction", {
    textDocument = doc,
    range = range,
    context = { diagnostics = {} },
  }, 20000, buf)
  result.actions = actions or { err = aerr }
  -- Then as a user does it (`gra` on the selection): the "Refactor" action, applied.
  local before = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  vim.lsp.buf.code_action({
    range = { start = { 1, 0 }, ["end"] = { 2, 11 } },
    filter = function(action)
      return action.title == "Refactor"
    end,
    apply = true,
  })
  vim.wait(20000, function()
    return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") ~= before
  end, 50)
  result.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

report(out, main)
