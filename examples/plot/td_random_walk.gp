# The paper's Figure 3 from td_random_walk's figure.csv (one row per memory, best step size):
#   gnuplot -e "csv='figure.csv'; out='td_random_walk.png'; subtitle='...'" td_random_walk.gp
# Columns: 1 memory, 2 param, 3 alpha, 4 seeds, 5 steps, 6 ve_mean, 7 ve_ci_low, 8 ve_ci_high,
# 9 ve_optimal, 10 ve_td_fixed_point.
if (!exists("subtitle")) subtitle = ''
set terminal pngcairo size 1400,640 font "DejaVu Sans,12" linewidth 1.5
set output out
set datafile separator ','
set key autotitle columnhead opaque box lc rgb '#bbbbbb' samplen 3 spacing 1.1
set grid lc rgb '#dddddd'
set style fill transparent solid 0.25 noborder

is(kind) = sprintf("strcol(1) eq '%s'", kind)
only(kind, col) = (strcol(1) eq kind) ? column(col) : NaN

# The best trace, drawn in the window panel for comparison.
stats csv using (only('trace', 6)) nooutput name 'BEST_TRACE'
stats csv using ((strcol(1) eq 'trace' && column(6) == BEST_TRACE_min) ? column(2) : NaN) nooutput name 'AT'
BEST_TRACE_lambda = AT_min

# One y range for both panels, from every number that is drawn.
stats csv using 7 nooutput name 'LOW'
stats csv using 8 nooutput name 'HIGH'
stats csv using 9 nooutput name 'OPT'
ymin = (LOW_min < OPT_min ? LOW_min : OPT_min)
ymax = HIGH_max
pad = 0.06 * (ymax - ymin)
set yrange [ymin - pad : ymax + pad]

set multiplot layout 1,2 title "TD(0) on Sutton's noisy random walk: value error of the learned weights\n{/*0.8 ".subtitle."}"

set title "memory traces, step size 0.02"
set lmargin at screen 0.07; set rmargin at screen 0.48; set bmargin at screen 0.30; set tmargin at screen 0.85
set key at screen 0.275, screen 0.13 center center maxrows 3 width -1
set xlabel "λ"
set ylabel "value error"
set xrange [-0.02:1.0]
plot csv using (only('trace', 2)):(only('trace', 7)):(only('trace', 8)) with filledcurves lc rgb '#1f77b4' notitle, \
     ''  using (only('trace', 2)):(only('trace', 6)) with linespoints pt 7 ps 0.8 lc rgb '#1f77b4' title "memory trace (TD)", \
     ''  using (only('trace', 2)):(only('trace', 9)) with lines dt 2 lc rgb '#1f77b4' title "optimal (exact)", \
     ''  using (only('trace', 2)):(only('trace', 10)) with lines dt 3 lc rgb '#7f7f7f' title "TD fixed point (exact)"

set title "windows of m observations, best of the step-size grid"
set lmargin at screen 0.56; set rmargin at screen 0.97
set key at screen 0.765, screen 0.13 center center maxrows 3 width -1
set xlabel "m"
set ylabel ""
set xrange [0.8:*]
set xtics 1
plot csv using (only('window', 2)):(only('window', 7)):(only('window', 8)) with filledcurves lc rgb '#d62728' notitle, \
     ''  using (only('window', 2)):(only('window', 6)) with linespoints pt 5 ps 0.8 lc rgb '#d62728' title "full window (TD)", \
     ''  using (only('window', 2)):(only('window', 9)) with lines dt 2 lc rgb '#d62728' title "full window, optimal", \
     ''  using (only('concat', 2)):(only('concat', 7)):(only('concat', 8)) with filledcurves lc rgb '#2ca02c' notitle, \
     ''  using (only('concat', 2)):(only('concat', 6)) with linespoints pt 9 ps 0.9 lc rgb '#2ca02c' title "concat window (TD)", \
     ''  using (only('concat', 2)):(only('concat', 9)) with lines dt 2 lc rgb '#2ca02c' title "concat window, optimal", \
     BEST_TRACE_min with lines dt 4 lc rgb '#1f77b4' title sprintf("best trace (TD), λ = %g", BEST_TRACE_lambda)
unset multiplot
