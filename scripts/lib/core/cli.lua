-- A script's edge: its entry point and its errors. A mistake of the user's (a missing
-- model, an existing run, a run in use, a bad checkpoint) is raised by cli.fail or
-- cli.try and printed by cli.main alone, on one line, with status 1; any other error is a
-- bug in a script being edited and keeps its traceback (with --debug every error does).
-- Needs no other module of scripts/lib, so that every one of them can raise the user's
-- mistakes.
--
--   if cli.is_main() then cli.main(arg[0], M.main, arg) end

local args = require "engine.args"

local cli = {}

-- The --debug option of every script that runs under cli.main.
cli.debug_option = {"debug", false, "show the Lua traceback of every error, the "
                    .. "user's mistakes included"}

local UserError = {__tostring = function(e) return e.message end}

function cli.fail(message)
  error(setmetatable({message = message}, UserError), 0)
end

function cli.is_user_error(e)
  return getmetatable(e) == UserError
end

-- Calls fn(...), a function of what a primitive raised that the user can act on (a bad
-- checkpoint, a run in use): its error becomes a user's mistake, `what` followed by the
-- primitive's message, without the traceback a script's own bug keeps.
function cli.try(what, fn, ...)
  local result = table.pack(pcall(fn, ...))
  if result[1] then return table.unpack(result, 2, result.n) end
  local err = result[2]
  if cli.is_user_error(err) then error(err, 0) end
  local message = cli.clean_message(err)
  cli.fail(what and (what .. ": " .. message) or message)
end

-- A primitive's message as one printable line: its first (never a C++ backtrace), without
-- the input a JSON parser quotes from a damaged file ("last read: '...'", binary bytes of
-- any length), other quoted text cut at 60 characters, and no byte that is not text.
function cli.clean_message(message)
  local line = tostring(message):gsub("\n.*", "")
  line = line:gsub("; last read: '.*$", ""):gsub("%[json%.exception%.[%w_.]+%] ", "")
  line = line:gsub("'([^']*)'", function(quoted)
    if #quoted > 60 then return "'" .. quoted:sub(1, 57) .. "...'" end
  end)
  line = line:gsub("[%c\127]", "?")
  if not utf8.len(line) then line = line:gsub("[\128-\255]", "?") end  -- not UTF-8: bytes
  return line
end

-- Whether the command line asks for --debug (read before the options are parsed, so a
-- mistake in them shows its traceback too).
function cli.wants_debug(argv)
  if type(argv) ~= "table" then return false end
  for _, a in ipairs(argv) do
    if a == "--debug" or a == "--debug=true" or a == "--debug=1" or a == "--debug=yes" then
      return true
    end
  end
  return false
end

-- Calls fn(argv, ...); a user's mistake ends the script with its one-line message and
-- status 1; any other error (a bug in a script being edited) keeps its traceback, and
-- with --debug every error does.
function cli.main(program, fn, argv, ...)
  local debugging = cli.wants_debug(argv)
  local ok, err = xpcall(fn, function(e)
    if cli.is_user_error(e) and not debugging then return e end
    return debug.traceback(tostring(e), 2)
  end, argv, ...)
  if ok then return end
  io.stderr:write(program, ": ", tostring(err), "\n")
  os.exit(1)
end

-- True when the calling file is the script the engine was asked to run (not loaded by a
-- test or another script).
function cli.is_main()
  local source = debug.getinfo(2, "S").source
  return arg ~= nil and arg[0] ~= nil and source:match("[^/]+$") == arg[0]:match("[^/]+$")
end

-- Parses the command line of a script that reads run directories (spec.positional):
-- returns the options and the directories, without trailing slashes. None, or more than
-- `most`, is a wrong command line: the usage line, and status 2.
function cli.parse_dirs(argv, spec, usage, most)
  local opts = args.parse(argv, spec)
  local dirs = {}
  for i, d in ipairs(opts._) do dirs[i] = (d:gsub("/+$", "")) end
  if #dirs == 0 or (most and #dirs > most) then
    io.stderr:write("usage: ", usage, " (see --help)\n")
    os.exit(2)
  end
  return opts, dirs
end

return cli
