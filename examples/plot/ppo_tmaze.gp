# Figure 5 from ppo_tmaze --figure's figure.csv: the success rate of PPO in the Minigrid T-maze
# against the corridor length k, for each memory (the best γ of each memory and k), averaged over
# the training episodes of a run (left) and in the final 100-episode evaluation (right); mean over
# seeds with 95% confidence intervals.
#   gnuplot -e "csv='figure.csv'; out='ppo_tmaze.png'; subtitle='5 seeds'" ppo_tmaze.gp
# Columns: 1 memory, 2 corridor, 3 gamma, 4 seeds, 5 steps, 6 train_mean, 7 train_ci_low,
# 8 train_ci_high, 9 eval_mean, 10 eval_ci_low, 11 eval_ci_high.
set terminal pngcairo size 1200,520 font "DejaVu Sans,12" linewidth 1.5
set output out
set datafile separator ','
set grid lc rgb '#dddddd'
set logscale x 2
set xrange [*:*]
set offsets graph 0.05, graph 0.05, 0, 0
set yrange [0:1.02]
set xlabel "corridor length k"
set key bottom left samplen 2
set multiplot layout 1,2 title "PPO in the Minigrid T-maze (paper Fig. 5)\n{/*0.8 ".subtitle."}"

memories = "trace trace-slow memoryless frame-stack"
colour(i) = word("#1f77b4 #ff7f0e #7f7f7f #d62728", i)
at(i, col) = strcol(1) eq word(memories, i) ? column(col) : NaN
label(i) = i == 1 ? "traces λ = 0 and (k-1)/k" : i == 2 ? "trace λ = (k-1)/k" : i == 3 ? "memoryless (λ = 0)" : "frame stack of k+1 views"

set ylabel "success rate per training episode"
set title "during training"
plot 0.5 with lines dt 2 lc rgb '#999999' title "0.5: the memoryless ceiling", \
     for [i=1:4] csv using (at(i, 2)):(at(i, 6)):(at(i, 7)):(at(i, 8)) with yerrorlines pt 7 ps 0.7 lc rgb colour(i) title label(i)
set ylabel "success rate, 100 evaluation episodes"
set title "final evaluation"
unset key
plot 0.5 with lines dt 2 lc rgb '#999999' notitle, \
     for [i=1:4] csv using (at(i, 2)):(at(i, 9)):(at(i, 10)):(at(i, 11)) with yerrorlines pt 7 ps 0.7 lc rgb colour(i) notitle
unset multiplot
