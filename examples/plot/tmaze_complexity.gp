# thm:tmaze: two panels over the corridor length k from the CSV of tmaze_complexity.cpp.
# Left: log10 of the metric entropies, the length-k window class (lem:H-window) against the two
# bounds of lem:H-trace for traces with lambda = (k-1)/k, L = sqrt(2) e k. Right: the minimal
# Lipschitz constant on the T-maze's histories against the proof's sqrt(2) e k.
# Variables (gnuplot -e): csv (k,m,lambda,lipschitz_proof,d_lambda,log10_window_entropy,
# log10_trace_bound_dimension,log10_trace_bound_subspace,log10_trace_bound,minimal_lipschitz,ratio),
# out (the PNG), epsilon (the cover radius, for the title).
if (!exists("csv")) csv = 'tmaze_complexity_out/tmaze_complexity.csv'
if (!exists("out")) out = 'tmaze_complexity_out/tmaze_complexity.png'
if (!exists("epsilon")) epsilon = '0.1'

set terminal pngcairo size 1500,760 font 'Sans,14' enhanced
set output out
set datafile separator ','

# The y range of the left panel follows the window entropy and the subspace bound: the d_lambda
# bound grows faster still (d_lambda ~ k log 5, 10^378 at k = 64) and leaves the plot.
stats csv using 6 skip 1 nooutput
ymax = STATS_max
stats csv using 8 skip 1 nooutput
ymax = ceil((STATS_max > ymax ? STATS_max : ymax) * 1.1 + 1)
stats csv using 1 skip 1 nooutput
kmax = STATS_max

set tics out nomirror
set grid ytics lc rgb '#dddddd'
set xlabel 'corridor length k (window length m = k)' offset 0,0.3
set xrange [0:kmax + 1]

set multiplot layout 1,2 title sprintf('T-maze (thm:tmaze), |Y| = 5, {/Symbol D} = 2, {/Symbol e} = %s', epsilon)

set title 'Metric entropy H_{/Symbol e}: window F_k against trace F_{{/Symbol l},L}'
set ylabel 'H_{/Symbol e} (log scale)'
set yrange [0:ymax]
set format y '10^{%.0f}'
set key outside below left Left reverse box spacing 1.15 height 1.2
plot csv using 1:6 skip 1 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#b2182b' \
       title 'window, m = k: |Y|^k log{/Symbol \351}{/Symbol D}/2{/Symbol e}{/Symbol \371} (exponential)', \
     '' using 1:8 skip 1 with linespoints lw 2 pt 5 ps 0.6 lc rgb '#2166ac' \
       title 'trace, subspace bound: O(k^{|Y|-1}) (polynomial)', \
     '' using 1:7 skip 1 with lines lw 2 dt 2 lc rgb '#4d9221' \
       title 'trace, d_{/Symbol l} bound (d_{/Symbol l} = log|Y| / log(1/{/Symbol l}))'

set title 'Lipschitz constant at {/Symbol l} = (k-1)/k'
set ylabel 'L'
set format y '%g'
set yrange [0:*]
set y2label 'minimal L / ({/Symbol \326}2 e k)'
set y2range [0:1.05]
set y2tics 0.2 out nomirror
set key outside below left Left reverse box spacing 1.15 height 1.2
plot csv using 1:4 skip 1 with lines lw 2 lc rgb '#2166ac' title 'proof: {/Symbol \326}2 e k', \
     '' using 1:10 skip 1 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#b2182b' \
       title 'minimal L on the histories of tab:tmaze-v', \
     '' using 1:11 skip 1 axes x1y2 with lines lw 2 dt 4 lc rgb '#444444' title 'ratio (right axis)'
unset multiplot
