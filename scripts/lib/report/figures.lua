-- Line plots as PNG files through gnuplot (Debian's gnuplot-nox): one line per series,
-- as in the paper's Fig. 3, 4, 7 and 8.
--
--   local figures = require "report.figures"
--   figures.lines{file = "reward.png", title = "Mean reward per step", xlabel = "step",
--                 ylabel = "mean reward",
--                 series = {{name = "lr=5e-07", points = {{1, -20.5}, {2, 3.1}}}, ...}}
--
-- A series with band = true has points {x, y, lo, hi} (a mean and its interval over seeds):
-- its data have four columns and the plot shades lo..hi behind the line (filledcurves);
-- a point without lo/hi has no band there.
--
-- A point's y may be nil (nothing to show at that x, e.g. no successful kernel): the line
-- breaks there. A series with no value at all is left out of the plot (a plot with no
-- series says "no data").
--
-- Without gnuplot (figures.available() is false) lines() still writes the data (.dat) and
-- the gnuplot script (.gp) beside the PNG's name, and returns nil and the reason: a
-- machine without gnuplot gets everything but the pictures. The command is
-- figures.gnuplot, "gnuplot" unless the environment's ENGINE_GNUPLOT names another (an
-- empty ENGINE_GNUPLOT draws no figures).

local figures = {}

figures.gnuplot = os.getenv("ENGINE_GNUPLOT") or "gnuplot"
figures.size = {960, 600}
-- What to tell a user who has no gnuplot.
figures.install_hint = "install gnuplot (Debian/Ubuntu: apt-get install gnuplot-nox)"

local function quote(text)
  return '"' .. tostring(text):gsub('[\\"]', "\\%0") .. '"'
end

local function shell_quote(text)
  return "'" .. tostring(text):gsub("'", "'\\''") .. "'"
end

-- Whether figures.gnuplot can be run (a command on the PATH or a path to a program).
function figures.available()
  if figures.gnuplot == nil or figures.gnuplot == "" then return false end
  return os.execute("command -v " .. shell_quote(figures.gnuplot) .. " >/dev/null 2>&1") == true
end

local function number(v)
  if v == nil or v ~= v then return "NaN" end
  return string.format("%.10g", v)
end

-- Writes the PNG and returns its path; without gnuplot returns nil and the reason (the
-- .dat and .gp files are written all the same). Raises an error naming gnuplot's
-- complaint when gnuplot fails.
function figures.lines(spec)
  assert(spec.file, "figures.lines: needs file")
  local series = spec.series or {}
  local data_path = spec.file:gsub("%.png$", "") .. ".dat"
  local data = assert(io.open(data_path, "w"))
  local plotted = {}
  local function has_values(s)
    for _, p in ipairs(s.points) do
      if p[2] ~= nil and p[2] == p[2] then return true end
    end
    return false
  end
  for _, s in ipairs(series) do
    if has_values(s) then  -- gnuplot refuses a block without one valid point
      data:write("# ", s.name, "\n")
      for _, p in ipairs(s.points) do
        if s.band then
          data:write(number(p[1]), " ", number(p[2]), " ", number(p[3] or p[2]), " ",
                     number(p[4] or p[2]), "\n")
        else
          data:write(number(p[1]), " ", number(p[2]), "\n")
        end
      end
      data:write("\n\n")  -- gnuplot's index separator
      plotted[#plotted + 1] = s
    end
  end
  data:close()

  local lines = {
    string.format("set terminal pngcairo size %d,%d noenhanced font 'sans,11'", figures.size[1],
                  figures.size[2]),
    "set output " .. quote(spec.file),
    "set title " .. quote(spec.title or ""),
    "set xlabel " .. quote(spec.xlabel or ""),
    "set ylabel " .. quote(spec.ylabel or ""),
    "set grid",
    "set key outside right top vertical",
    "set datafile missing 'NaN'",
  }
  if spec.integer_x then lines[#lines + 1] = "set xtics 1" end
  if #plotted == 0 then
    lines[#lines + 1] = "set label 1 'no data' at graph 0.5, graph 0.5 center"
    lines[#lines + 1] = "plot [0:1] [0:1] NaN notitle"
  else
    local parts = {}
    -- gnuplot cycles through 8 colours: the dash pattern and the point shape tell
    -- apart lines that share one
    local points = {7, 5, 9, 11, 13}
    for i, s in ipairs(plotted) do
      local round = (i - 1) // 8
      if s.band then  -- the band first, so that the lines are drawn over it
        parts[#parts + 1] = string.format("%s index %d using 1:3:4 with filledcurves lt %d "
                                          .. "fs transparent solid 0.2 noborder notitle",
                                          quote(data_path), i - 1, (i - 1) % 8 + 1)
      end
      parts[#parts + 1] = string.format("%s index %d using 1:2 with linespoints lt %d dt %d pt %d ps 0.7 "
                               .. "lw 1.5 title %s", quote(data_path), i - 1, (i - 1) % 8 + 1,
                               round + 1, points[round % #points + 1], quote(s.name))
    end
    lines[#lines + 1] = "plot " .. table.concat(parts, ", \\\n     ")
  end
  local script_path = spec.file:gsub("%.png$", "") .. ".gp"
  local script = assert(io.open(script_path, "w"))
  script:write(table.concat(lines, "\n"), "\n")
  script:close()

  if not figures.available() then
    return nil, string.format("gnuplot ('%s') was not found", tostring(figures.gnuplot))
  end
  local pipe = io.popen(string.format("%s %s 2>&1", figures.gnuplot, quote(script_path)))
  local output = pipe:read("a")
  local ok = pipe:close()
  if not ok then
    error(string.format("gnuplot failed on %s: %s", script_path, output), 2)
  end
  return spec.file
end

return figures
