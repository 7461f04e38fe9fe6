-- What every headless check shares: `dofile(report.lua)(out, main)` runs `main(result)`,
-- writes `result` to `out` as JSON (with `error` set when main failed), and quits Neovim.
-- Promises: `out` is always written and Neovim exits 0, so the test reads what went wrong.
return function(out, main)
  local result = {}
  local ok, failure = pcall(main, result)
  if not ok then
    result.error = tostring(failure)
  end
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qa!")
end
