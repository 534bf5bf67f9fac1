# The paper's Figure 4 from td_random_walk's figure.csv (one row per memory, best step size):
#   gnuplot -e "csv='figure.csv'; out='td_random_walk.png'; subtitle='...'" td_random_walk.gp
# Columns: 1 memory, 2 param, 3 alpha, 4 seeds, 5 steps, 6 ve_mean, 7 ve_ci_low, 8 ve_ci_high,
# 9 ve_optimal, 10 ve_td_fixed_point.
if (!exists("subtitle")) subtitle = ''
dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
eval terminal(1400, 680, 12, 1.5)
set datafile separator ','
set key autotitle columnhead opaque box lc rgb '#bbbbbb' samplen 3 spacing 1.1
set grid lc rgb c_grid
set style fill transparent solid 0.25 noborder

only(kind, col) = (strcol(1) eq kind) ? column(col) : NaN

# The best trace, drawn in the window panel for comparison.
stats csv using (only('trace', 6)) nooutput name 'BEST_TRACE'
stats csv using ((strcol(1) eq 'trace' && column(6) == BEST_TRACE_min) ? column(2) : NaN) nooutput name 'AT'
BEST_TRACE_lambda = AT_min

# One y range for both panels, from the learned value errors, their bands and the optima. The TD
# fixed point of a slow trace can be far above (0.48 at λ = 0.99): it is clipped, and marked at the
# top edge with its value.
stats csv using 7 nooutput name 'LOW'
stats csv using 8 nooutput name 'HIGH'
stats csv using 9 nooutput name 'OPT'
ymin = (LOW_min < OPT_min ? LOW_min : OPT_min)
ymax = HIGH_max
pad = 0.06 * (ymax - ymin)
ytop = ymax + pad
# The widest 95% band and whose it is. A band below 1% of the y range is thinner than a drawn line
# (about 3 pixels): then the subtitle says so and gives the width, rather than promise a band.
stats csv using (column(8) - column(7)) nooutput name 'WIDTH'
stats csv using ((column(8) - column(7)) == WIDTH_max ? (widest = strcol(1) . (strcol(1) eq 'trace' ? ' λ = ' : ' m = ') . strcol(2), 1) : NaN) nooutput
band_note = WIDTH_max < 0.01 * (ytop - ymin + pad) \
  ? sprintf("95%% confidence bands are drawn but thinner than the lines: at most %.2g wide (%s)", WIDTH_max, widest) \
  : sprintf("shaded: 95%% confidence bands (at most %.2g wide, %s)", WIDTH_max, widest)

set yrange [ymin - pad : ytop]
clipped(col) = column(col) > ytop ? ytop : NaN

set multiplot layout 1,2 title "Paper Figure 4 (§6): TD(0) on Sutton's noisy random walk, value error of the learned weights\n{/*0.8 ".subtitle."; ".band_note."}"

set title "memory traces, step size 0.02"
set lmargin at screen 0.07; set rmargin at screen 0.48; set bmargin at screen 0.30; set tmargin at screen 0.85
set key at screen 0.275, screen 0.13 center center maxrows 3 width -1
set xlabel "λ"
set ylabel "value error"
set xrange [-0.02:1.0]
plot csv using (only('trace', 2)):(only('trace', 7)):(only('trace', 8)) with filledcurves lc rgb c_trace notitle, \
     ''  using (only('trace', 2)):(only('trace', 6)) with linespoints pt 7 ps 0.8 dt dt_learned lc rgb c_trace title "memory trace (TD)", \
     ''  using (only('trace', 2)):(only('trace', 9)) with lines dt dt_optimal lc rgb c_trace title "optimal (exact)", \
     ''  using (only('trace', 2)):(only('trace', 10)) with lines dt dt_fixed_point lw 1.3 lc rgb c_trace title "TD fixed point (exact); ▲ off the top", \
     ''  using (only('trace', 2)):(clipped(10)) with points pt 9 ps 1.4 lc rgb c_trace notitle, \
     ''  using (only('trace', 2)):(clipped(10)):(sprintf('%.3f', column(10))) with labels rotate by 90 right offset -1.3, -0.6 tc rgb c_band_note font ',10' notitle

set title "windows of m observations, each at its best step size α (labels)"
set lmargin at screen 0.56; set rmargin at screen 0.97
set key at screen 0.765, screen 0.13 center center maxrows 3 width -1
set xlabel "m"
set ylabel ""
set xrange [0.8:5.35]
set xtics 1
# The chosen step size of each window length, above the full window's point and below the concat's.
alpha(col) = sprintf('α=%.2g', column(col))
plot csv using (only('window', 2)):(only('window', 7)):(only('window', 8)) with filledcurves lc rgb c_window notitle, \
     ''  using (only('window', 2)):(only('window', 6)) with linespoints pt 5 ps 0.8 dt dt_learned lc rgb c_window title "full window (TD)", \
     ''  using (only('window', 2)):(only('window', 9)) with lines dt dt_optimal lc rgb c_window title "full window, optimal", \
     ''  using (only('concat', 2)):(only('concat', 7)):(only('concat', 8)) with filledcurves lc rgb c_concat notitle, \
     ''  using (only('concat', 2)):(only('concat', 6)) with linespoints pt 9 ps 0.9 dt dt_learned lc rgb c_concat title "concat window (TD)", \
     ''  using (only('concat', 2)):(only('concat', 9)) with lines dt dt_optimal lc rgb c_concat title "concat window, optimal", \
     BEST_TRACE_min with lines dt dt_bound lc rgb c_trace title sprintf("best trace (TD), λ = %g", BEST_TRACE_lambda), \
     csv using (only('window', 2)):(only('window', 6)):(alpha(3)) with labels offset 0, 0.9 tc rgb c_window font ',10' notitle, \
     ''  using (only('concat', 2)):(only('concat', 6)):(alpha(3)) with labels offset 0, -0.9 tc rgb c_concat font ',10' notitle
unset multiplot
