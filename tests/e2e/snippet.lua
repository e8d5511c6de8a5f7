-- Headless Neovim running a set-up snippet from docs/editors.md as a user's init.lua would, then
-- opening files the way a user does (:edit), and reporting as JSON which gradaudit clients run,
-- which buffers each serves, and the diagnostics of each buffer. Works on Neovim 0.7 to 0.12.
local out_path = vim.env.GRADAUDIT_E2E_OUT
local files = vim.split(vim.env.GRADAUDIT_E2E_FILES, ",")
dofile(vim.env.GRADAUDIT_E2E_SNIPPET)

local function clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local out = {}
  for _, c in ipairs(get()) do
    if c.name == "gradaudit" then table.insert(out, c) end
  end
  return out
end

local function buf_client_ids(bufnr)
  local ids = {}
  for _, c in ipairs(clients()) do
    local attached = c.attached_buffers and c.attached_buffers[bufnr]
    if attached then table.insert(ids, c.id) end
  end
  return ids
end

local function finish(result, ok)
  result.ok = ok
  local f = io.open(out_path, "w")
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd(ok and "qall!" or "cquit! 1")
end

vim.api.nvim_create_autocmd("VimEnter", {
  nested = true,   -- :edit must fire FileType, as when a user opens a file
  callback = function()
    local result = { version = tostring(vim.version().major) .. "." .. tostring(vim.version().minor), buffers = {} }
    local ok, err = pcall(function()
      -- open the files one after the other, as a user does, each shown until its diagnostics come
      local bufs, all = {}, true
      for _, file in ipairs(files) do
        vim.cmd("edit " .. vim.fn.fnameescape(file))
        local b = vim.api.nvim_get_current_buf()
        table.insert(bufs, b)
        all = vim.wait(60000, function() return #vim.diagnostic.get(b) > 0 end, 50) and all
      end
      for i, b in ipairs(bufs) do
        local codes = {}
        for _, d in ipairs(vim.diagnostic.get(b)) do table.insert(codes, d.code) end
        result.buffers[i] = { file = files[i], clients = buf_client_ids(b), codes = codes }
      end
      result.clients = {}
      for _, c in ipairs(clients()) do
        table.insert(result.clients, { id = c.id, root = c.config.root_dir })
      end
      result.all_diagnostics = all
    end)
    if not ok then result.error = tostring(err) end
    finish(result, ok)
  end,
})
