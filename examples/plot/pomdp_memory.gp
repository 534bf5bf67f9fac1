# pomdp_memory's figure of one problem from DIR/PROBLEM.csv, drawn as the paper's Figure 4 draws
# the exact value errors:
#   gnuplot -e "csv='tiger.csv'; out='tiger.png'; problem='tiger'; subtitle='...'" pomdp_memory.gp
# Columns: 1 problem, 2 memory (trace, window, concat), 3 parameter (λ or m), 4 ve_optimal,
# 5 ve_td_fixed_point.
if (!exists("subtitle")) subtitle = ''
dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
eval terminal(1400, 640, 12, 1.5)
set datafile separator ','
set key autotitle columnhead opaque box lc rgb '#bbbbbb' samplen 3 spacing 1.1
set grid lc rgb c_grid

only(kind, col) = (strcol(2) eq kind) ? column(col) : NaN

# The best trace (optimal estimator), drawn in the window panel for comparison.
stats csv using (only('trace', 4)) nooutput name 'BEST_TRACE'
stats csv using ((strcol(2) eq 'trace' && column(4) == BEST_TRACE_min) ? column(3) : NaN) nooutput name 'AT'
BEST_TRACE_lambda = AT_min

# Each panel its own y range (the TD fixed point of a long trace can dwarf the windows' differences);
# the best trace is drawn in the window panel for comparison.
set autoscale y
set offsets 0, 0, graph 0.05, graph 0.05

set multiplot layout 1,2 title "Exact value error of each memory on ".problem."\n{/*0.8 ".subtitle."}"

set title "memory traces"
set lmargin at screen 0.07; set rmargin at screen 0.48; set bmargin at screen 0.30; set tmargin at screen 0.85
set key at screen 0.275, screen 0.13 center center maxrows 2 width -1
set xlabel "λ"
set ylabel "value error"
set xrange [-0.02:1.0]
plot csv using (only('trace', 3)):(only('trace', 4)) with linespoints pt 7 ps 0.8 dt dt_optimal lc rgb c_trace title "memory trace, optimal", \
     ''  using (only('trace', 3)):(only('trace', 5)) with linespoints pt 6 ps 0.8 dt dt_fixed_point lc rgb c_trace title "memory trace, TD fixed point"

set title "windows of m observations"
set lmargin at screen 0.56; set rmargin at screen 0.97
set key at screen 0.765, screen 0.13 center center maxrows 3 width -1
set xlabel "m"
set ylabel ""
set xrange [0.8:*]
set xtics 1
plot csv using (only('window', 3)):(only('window', 4)) with linespoints pt 5 ps 0.8 dt dt_optimal lc rgb c_window title "full window, optimal", \
     ''  using (only('window', 3)):(only('window', 5)) with linespoints pt 4 ps 0.8 dt dt_fixed_point lc rgb c_window title "full window, TD fixed point", \
     ''  using (only('concat', 3)):(only('concat', 4)) with linespoints pt 9 ps 0.9 dt dt_optimal lc rgb c_frame_stack title "frame stack, optimal", \
     ''  using (only('concat', 3)):(only('concat', 5)) with linespoints pt 8 ps 0.9 dt dt_fixed_point lc rgb c_frame_stack title "frame stack, TD fixed point", \
     BEST_TRACE_min with lines dt dt_bound lc rgb c_trace title sprintf("best trace (optimal), λ = %g", BEST_TRACE_lambda)
unset multiplot
