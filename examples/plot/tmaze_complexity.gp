# The paper's Theorem 5.8 (T-maze): two panels over the corridor length k from the CSV of
# tmaze_complexity.cpp. Left: log10 of the metric entropies, the length-k window class (Lemma 5.3)
# against the two bounds of Lemma 5.4 for traces with lambda = (k-1)/k, L = sqrt(2) e k. Right: the
# minimal Lipschitz constant on the T-maze's histories (paper Table 2) against the proof's sqrt(2) e k.
# Variables (gnuplot -e): csv (k,m,lambda,lipschitz_proof,d_lambda,log10_window_entropy,
# log10_trace_bound_dimension,log10_trace_bound_subspace,log10_trace_bound,minimal_lipschitz,ratio),
# out (the PNG), epsilon (the cover radius, for the title).
if (!exists("csv")) csv = 'tmaze_complexity_out/tmaze_complexity.csv'
if (!exists("out")) out = 'tmaze_complexity_out/tmaze_complexity.png'
if (!exists("epsilon")) epsilon = '0.1'

dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
eval terminal(1500, 800, 14, 1)
set datafile separator ','

# The y range of the left panel follows the window entropy and the subspace bound: the d_lambda
# bound grows faster still (d_lambda ~ k log 5) and leaves the plot; where, and its last value, are
# marked at the top edge.
stats csv using 6 skip 1 nooutput
ymax = STATS_max
stats csv using 8 skip 1 nooutput
ymax = ceil((STATS_max > ymax ? STATS_max : ymax) * 1.1 + 1)
stats csv using 1 skip 1 nooutput
kmax = STATS_max
stats csv using ($7 > ymax ? $1 : NaN) skip 1 nooutput name 'EXIT'
stats csv using ($1 == kmax ? $7 : NaN) skip 1 nooutput name 'LAST'

set tics out nomirror
set grid ytics lc rgb c_grid
set xlabel 'corridor length k (window length m = k)' offset 0,0.3
set xrange [0:kmax + 1]

set multiplot layout 1,2 title sprintf("Paper Theorem 5.8 (T-maze): a window needs metric entropy Ω(|Y|^k), a memory trace only O(k^{|Y|-1})\n{/*0.85 |Y| = 5, Δ = 2, ε = %s}", epsilon)

set title 'Metric entropy H_ε: window F_k (Lemma 5.3) against trace F_{λ,L} (Lemma 5.4)'
set ylabel 'H_ε (log scale)'
set yrange [0:ymax]
set format y '10^{%.0f}'
set key outside below left Left reverse box spacing 1.15 height 1.2
if (EXIT_records > 0) {
  set label 1 sprintf('▲ d_λ bound off the top from k = %d (10^{%.0f} at k = %d)', EXIT_min, LAST_max, kmax) \
    at EXIT_min, ymax left offset 1, -0.8 tc rgb c_band_note font ',12'
}
plot csv using 1:6 skip 1 with linespoints lw 2 pt 7 ps 0.6 lc rgb c_window \
       title 'window, m = k: |Y|^k log⌈Δ/2ε⌉ (exponential)', \
     '' using 1:8 skip 1 with lines lw 2.5 dt dt_bound lc rgb c_trace \
       title 'trace, subspace bound: O(k^{|Y|-1}) (polynomial)', \
     '' using 1:7 skip 1 with lines lw 2 dt dt_bound lc rgb c_trace2 \
       title 'trace, d_λ bound (d_λ = log|Y| / log(1/λ))', \
     '' using ($7 > ymax && $1 == EXIT_min ? $1 : NaN):(ymax) skip 1 with points pt 9 ps 1.5 lc rgb c_trace2 notitle
unset label 1

set title 'Lipschitz constant of the trace at λ = (k-1)/k'
set ylabel 'L'
set format y '%g'
set yrange [0:*]
set y2label 'minimal L / (√2 e k)'
set y2range [0:1.05]
set y2tics 0.2 out nomirror
set key outside below left Left reverse box spacing 1.15 height 1.2
plot csv using 1:4 skip 1 with lines lw 2 dt dt_bound lc rgb c_reference title 'the proof of Theorem 5.8: L = √2 e k', \
     '' using 1:10 skip 1 with linespoints lw 2 pt 7 ps 0.6 lc rgb c_trace \
       title 'minimal L on the T-maze histories (paper Table 2)', \
     '' using 1:11 skip 1 axes x1y2 with lines lw 1.5 lc rgb c_reference title 'ratio (right axis)'
unset multiplot
