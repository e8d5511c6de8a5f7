-- Headless Neovim running a set-up snippet from docs/editors.md as a user's init.lua would, with
-- the files opened by Neovim itself (`nvim -O a.py b.py c.py`, `-p`, or a session restored with
-- `-S`): nothing is edited, no window is entered. Waits until every buffer has diagnostics (or
-- the time is up) and reports, per buffer, its diagnostics, whether it is in view, and whether
-- it was changed, as JSON. Works on Neovim 0.7 to 0.12.
local out_path = vim.env.GRADAUDIT_E2E_OUT
dofile(vim.env.GRADAUDIT_E2E_SNIPPET)

local function finish(result, ok)
  result.ok = ok
  local f = io.open(out_path, "w")
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd(ok and "qall!" or "cquit! 1")
end

vim.api.nvim_create_autocmd("VimEnter", {
  callback = function()
    local result = { version = tostring(vim.version().major) .. "." .. tostring(vim.version().minor), buffers = {} }
    local ok, err = pcall(function()
      local bufs, ticks = {}, {}
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b):match("%.py$") then
          table.insert(bufs, b)
          ticks[b] = vim.api.nvim_buf_get_changedtick(b)
        end
      end
      local current = vim.api.nvim_get_current_buf()
      result.all_diagnostics = vim.wait(90000, function()
        for _, b in ipairs(bufs) do
          if #vim.diagnostic.get(b) == 0 then return false end
        end
        return true
      end, 50)
      local shown = {}
      for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do shown[vim.api.nvim_win_get_buf(w)] = true end
      local get = vim.lsp.get_clients or vim.lsp.get_active_clients
      result.roots = {}
      for _, c in ipairs(get()) do
        if c.name == "gradaudit" then table.insert(result.roots, c.config.root_dir) end
      end
      for _, b in ipairs(bufs) do
        local codes = {}
        for _, d in ipairs(vim.diagnostic.get(b)) do table.insert(codes, d.code) end
        table.insert(result.buffers, {
          file = vim.api.nvim_buf_get_name(b),
          codes = codes,
          current = b == current,
          shown = shown[b] == true,
          changed = vim.api.nvim_buf_get_changedtick(b) ~= ticks[b],
        })
      end
      result.current_buffer = vim.api.nvim_get_current_buf() == current
    end)
    if not ok then result.error = tostring(err) end
    finish(result, ok)
  end,
})
