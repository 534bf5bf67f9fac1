# Learning curves from td_random_walk --curve's curve.csv: the value error of TD's weights after
# 10^3 ... 10^6 steps, mean and 95% confidence band over seeds, with the exact optimal (dashed) and
# TD-fixed-point (dotted) value errors of each memory.
#   gnuplot -e "csv='curve.csv'; out='curve.png'; settings='trace:0.9 window:3 concat:5'; alphas='0.02 0.1 0.002'" td_random_walk_curve.gp
# Columns: 1 memory, 2 param, 3 alpha, 4 seeds, 5 steps, 6 ve_mean, 7 ve_ci_low, 8 ve_ci_high,
# 9 ve_optimal, 10 ve_td_fixed_point. settings lists the curves as memory:param, alphas their
# step sizes (optional).
dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
eval terminal(1000, 620, 12, 1.5)
set datafile separator ','

# The widest 95% band: named in the title, and said to be hidden by the lines if below 1% of the y range.
stats csv using 7 nooutput name 'LOW'
stats csv using 8 nooutput name 'HIGH'
stats csv using 9 nooutput name 'OPT'
ylow = LOW_min < OPT_min ? LOW_min : OPT_min
stats csv using (column(8) - column(7)) nooutput name 'WIDTH'
stats csv using ((column(8) - column(7)) == WIDTH_max ? (widest = sprintf('%s %s = %s after 10^{%.3g} steps', strcol(1), strcol(1) eq 'trace' ? 'λ' : 'm', strcol(2), log10(column(5))), 1) : NaN) nooutput
band_note = WIDTH_max < 0.01 * (HIGH_max - ylow) \
  ? sprintf("95%% confidence bands are drawn but thinner than the lines: at most %.2g wide (%s)", WIDTH_max, widest) \
  : sprintf("shaded: 95%% confidence bands, at most %.2g wide (%s)", WIDTH_max, widest)
set title "TD(0) on the noisy random walk: value error of the weights during learning\n{/*0.8 ".band_note."}"

set grid lc rgb c_grid
set style fill transparent solid 0.2 noborder
set logscale x
set xrange [800:*]
set format x "10^{%T}"
set xlabel "TD steps"
set ylabel "value error"
set key outside right top samplen 3

is(i) = (strcol(1).':'.strcol(2)) eq word(settings, i)
at(i, col) = is(i) ? column(col) : NaN
# "trace:0.9" -> "trace, λ = 0.9", "window:3" -> "window, m = 3"; with the step size when given.
kind(i) = word(settings, i)[1:strstrt(word(settings, i), ':') - 1]
param(i) = word(settings, i)[strstrt(word(settings, i), ':') + 1:]
step(i) = exists("alphas") ? sprintf(", α = %.3g", real(word(alphas, i))) : ''
label(i) = (kind(i) eq 'trace' ? 'trace, λ = ' : kind(i).', m = ').param(i).step(i)
# The colours of Figure 4 (style.gp): one per memory; a second trace in the trace's second colour.
traces_to(i) = i < 1 ? 0 : (kind(i) eq 'trace') + traces_to(i - 1)
colour(i) = kind(i) eq 'trace' ? (traces_to(i) == 1 ? c_trace : c_trace2) : kind(i) eq 'window' ? c_window : c_concat


n = words(settings)
plot for [i=1:n] csv using (at(i, 5)):(at(i, 7)):(at(i, 8)) with filledcurves lc rgb colour(i) notitle, \
     for [i=1:n] csv using (at(i, 5)):(at(i, 6)) with linespoints pt 7 ps 0.6 lc rgb colour(i) title label(i), \
     for [i=1:n] csv using (at(i, 5)):(at(i, 9)) with lines dt dt_optimal lc rgb colour(i) title (i == 1 ? "optimal (dashed)" : ""), \
     for [i=1:n] csv using (at(i, 5)):(at(i, 10)) with lines dt dt_fixed_point lc rgb colour(i) title (i == 1 ? "TD fixed point (dotted)" : "")
