# Learning curves from td_random_walk --curve's curve.csv: the value error of TD's weights after
# 10^3 ... 10^6 steps, mean and 95% confidence band over seeds, with the exact optimal (dashed) and
# TD-fixed-point (dotted) value errors of each memory.
#   gnuplot -e "csv='curve.csv'; out='curve.png'; settings='trace:0.9 window:3 concat:5'; alphas='0.02 0.1 0.002'" td_random_walk_curve.gp
# Columns: 1 memory, 2 param, 3 alpha, 4 seeds, 5 steps, 6 ve_mean, 7 ve_ci_low, 8 ve_ci_high,
# 9 ve_optimal, 10 ve_td_fixed_point. settings lists the curves as memory:param, alphas their
# step sizes (optional).
set terminal pngcairo size 1000,620 font "DejaVu Sans,12" linewidth 1.5
set output out
set datafile separator ','
set grid lc rgb '#dddddd'
set style fill transparent solid 0.2 noborder
set logscale x
set xrange [800:*]
set format x "10^{%T}"
set xlabel "TD steps"
set ylabel "value error"
set key outside right top samplen 3
set title "TD(0) on the noisy random walk: value error of the weights during learning"

is(i) = (strcol(1).':'.strcol(2)) eq word(settings, i)
at(i, col) = is(i) ? column(col) : NaN
# "trace:0.9" -> "trace, λ = 0.9", "window:3" -> "window, m = 3"; with the step size when given.
kind(i) = word(settings, i)[1:strstrt(word(settings, i), ':') - 1]
param(i) = word(settings, i)[strstrt(word(settings, i), ':') + 1:]
step(i) = exists("alphas") ? sprintf(", α = %.3g", real(word(alphas, i))) : ''
label(i) = (kind(i) eq 'trace' ? 'trace, λ = ' : kind(i).', m = ').param(i).step(i)
colour(i) = word("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b #e377c2 #17becf", (i - 1) % 8 + 1)

n = words(settings)
plot for [i=1:n] csv using (at(i, 5)):(at(i, 7)):(at(i, 8)) with filledcurves lc rgb colour(i) notitle, \
     for [i=1:n] csv using (at(i, 5)):(at(i, 6)) with linespoints pt 7 ps 0.6 lc rgb colour(i) title label(i), \
     for [i=1:n] csv using (at(i, 5)):(at(i, 9)) with lines dt 2 lc rgb colour(i) title (i == 1 ? "optimal (dashed)" : ""), \
     for [i=1:n] csv using (at(i, 5)):(at(i, 10)) with lines dt 3 lc rgb colour(i) title (i == 1 ? "TD fixed point (dotted)" : "")
