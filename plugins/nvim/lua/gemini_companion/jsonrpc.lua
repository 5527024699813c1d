-- A JSON-RPC 2.0 peer over a child process's stdin and stdout, in
-- Content-Length framing (the editor link's `--framing=lsp`). Neovim's own
-- vim.lsp.rpc sends a request's answer when its handler returns (before
-- Neovim 0.10 it cannot run the handler in a coroutine), so a handler that
-- waits for a language server would have to block Neovim; here each request
-- handler gets a reply function it may call later, once.
local M = {}
local uv = vim.uv or vim.loop

-- Error kinds passed to on_error.
M.READ_ERROR = "READ_ERROR"
M.INVALID_MESSAGE = "INVALID_SERVER_MESSAGE"
M.INVALID_JSON = "INVALID_SERVER_JSON"

--- Starts cmd with args and talks JSON-RPC with it. handlers:
---   request(method, params, reply)  reply(err, result) answers it, at once or later
---   notification(method, params)
---   on_exit(code, signal)
---   on_error(kind, detail)
--- All run on the main loop. Returns the peer (pid, handle, request,
--- notify) or nil and an error message.
function M.start(cmd, args, handlers)
  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local handle, pid
  handle, pid = uv.spawn(cmd, { args = args, stdio = { stdin, stdout, stderr } }, function(code, signal)
    for _, p in ipairs({ stdin, stdout, stderr }) do
      if not p:is_closing() then p:close() end
    end
    handle:close()
    vim.schedule(function() handlers.on_exit(code, signal) end)
  end)
  if not handle then
    for _, p in ipairs({ stdin, stdout, stderr }) do p:close() end
    return nil, tostring(pid)
  end

  local next_id, callbacks = 0, {}

  local function send(msg)
    if handle:is_closing() or stdin:is_closing() then return false end
    local body = vim.json.encode(msg)
    stdin:write("Content-Length: " .. #body .. "\r\n\r\n" .. body)
    return true
  end

  local function dispatch(msg)
    if type(msg) ~= "table" then
      return handlers.on_error(M.INVALID_MESSAGE, msg)
    end
    local params = type(msg.params) == "table" and msg.params or {}
    if type(msg.method) == "string" and msg.id ~= nil then
      local id, answered = msg.id, false
      handlers.request(msg.method, params, function(err, result)
        if answered then return end
        answered = true
        send({ jsonrpc = "2.0", id = id, error = err, result = (err == nil) and result or nil })
      end)
    elseif type(msg.method) == "string" then
      handlers.notification(msg.method, params)
    elseif msg.id ~= nil then
      local cb = callbacks[msg.id]
      callbacks[msg.id] = nil
      if cb then cb(msg.error, msg.result) end
    else
      handlers.on_error(M.INVALID_MESSAGE, msg)
    end
  end

  -- Frames arrive in pieces on the loop's thread; whole bodies are decoded
  -- and handled on the main loop. A body is kept as its pieces and joined
  -- once, so a message of many MiB costs one copy, not one per piece.
  local head = "" -- the bytes of a header not yet complete
  local need -- the body length of the frame being read, once its header is in
  local parts, have = {}, 0
  local function deliver(body)
    vim.schedule(function()
      local ok, msg = pcall(vim.json.decode, body, { luanil = { object = true } })
      if not ok then return handlers.on_error(M.INVALID_JSON, msg) end
      dispatch(msg)
    end)
  end
  local function feed(chunk)
    while true do
      if need == nil then
        if chunk == "" then return end
        head = head .. chunk
        local head_end = head:find("\r\n\r\n", 1, true)
        if not head_end then return end
        local header = head:sub(1, head_end - 1)
        chunk, head = head:sub(head_end + 4), ""
        local length = tonumber(header:lower():match("content%-length:%s*(%d+)"))
        if length then
          need, parts, have = length, {}, 0
        else
          vim.schedule(function() handlers.on_error(M.INVALID_MESSAGE, header) end)
        end
      else
        local take = math.min(need - have, #chunk)
        if take > 0 then
          parts[#parts + 1] = take == #chunk and chunk or chunk:sub(1, take)
          have = have + take
          chunk = chunk:sub(take + 1)
        end
        if have < need then return end
        deliver(table.concat(parts))
        need, parts, have = nil, {}, 0
      end
    end
  end
  stdout:read_start(function(err, chunk)
    if err then
      return vim.schedule(function() handlers.on_error(M.READ_ERROR, err) end)
    end
    if chunk then feed(chunk) end
  end)
  -- The sidecar logs to its --log-file; drain stderr so it never blocks.
  stderr:read_start(function() end)

  return {
    pid = pid,
    handle = handle,
    --- Sends a request; cb(err, result) runs on the main loop. False when
    --- the process is gone.
    request = function(method, params, cb)
      next_id = next_id + 1
      if not send({ jsonrpc = "2.0", id = next_id, method = method, params = params }) then return false end
      callbacks[next_id] = cb
      return true, next_id
    end,
    --- Sends a notification; false when the process is gone.
    notify = function(method, params)
      return send({ jsonrpc = "2.0", method = method, params = params })
    end,
  }
end

return M
