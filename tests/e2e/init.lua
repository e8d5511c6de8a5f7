-- Headless Neovim 0.7 driving the gradaudit server the way a user does:
-- open a buggy file, wait for diagnostics, apply the quick fix through
-- vim.lsp.buf.code_action(), and report what happened as JSON.
local out_path = vim.env.GRADAUDIT_E2E_OUT
local server = vim.env.GRADAUDIT_E2E_SERVER
local want = vim.env.GRADAUDIT_E2E_CODE or "GA110"
local result = { steps = {} }

local function finish(ok)
  result.ok = ok
  local f = io.open(out_path, "w")
  f:write(vim.fn.json_encode(result))
  f:close()
  if ok then vim.cmd("qall!") else vim.cmd("cquit! 1") end
end

local function diags(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out, { code = d.code, lnum = d.lnum, col = d.col, message = d.message, source = d.source,
                        severity = d.severity })
  end
  return out
end

vim.api.nvim_create_autocmd("VimEnter", {
  callback = function()
    local ok, err = pcall(function()
      local bufnr = vim.api.nvim_get_current_buf()
      local id = vim.lsp.start_client({
        name = "gradaudit",
        cmd = vim.split(server, " "),
        root_dir = vim.fn.getcwd(),
        init_options = { gradaudit = { debounce = 0 } },
      })
      vim.lsp.buf_attach_client(bufnr, id)
      local got = vim.wait(30000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
      result.initial = diags(bufnr)
      if not got then return finish(false) end
      local target
      for _, d in ipairs(vim.diagnostic.get(bufnr)) do
        if d.code == want then target = d end
      end
      if target == nil then return finish(false) end
      vim.api.nvim_win_set_cursor(0, { target.lnum + 1, target.col })
      local before = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
      vim.ui.select = function(items, _, on_choice)
        local titles = {}
        for i, item in ipairs(items) do
          local action = item[2] or item.action or item
          table.insert(titles, action.title)
          if string.find(action.title, "(" .. want .. ")", 1, true) then
            result.chosen = action.title
            return on_choice(item, i)
          end
        end
        result.titles = titles
        on_choice(nil, nil)
      end
      vim.lsp.buf.code_action()
      vim.wait(20000, function()
        return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") ~= before
      end, 50)
      result.lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
      local cleared = vim.wait(30000, function()
        for _, d in ipairs(vim.diagnostic.get(bufnr)) do
          if d.code == want then return false end
        end
        return true
      end, 50)
      result.final = diags(bufnr)
      finish(cleared)
    end)
    if not ok then
      result.error = tostring(err)
      finish(false)
    end
  end,
})
