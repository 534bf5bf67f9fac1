# Learning curves of ppo_tmaze sweeps against environment steps (top row) and against CPU seconds
# (bottom row), one column per corridor length: the success rate of the training episodes, averaged
# over the seeds, from one or more learning_curves.csv files (ppo_tmaze writes one per sweep). A
# frame stack's cost per step grows with k and a trace's does not: the bottom row compares memories
# per unit of compute.
#   gnuplot -e "files='a/learning_curves.csv b/learning_curves.csv'; corridors='64 128 256'; out='cpu.png'; subtitle='...'" ppo_tmaze_cpu.gp
# Columns: 1 memory, 2 corridor, 3 discount, 4 steps, 5 at_steps, 6 seeds_with_episodes,
# 7 success_mean (empty where no seed's bin saw an episode), 8 cpu_seconds (a run's CPU time,
# evaluation included, spread evenly over its steps).
if (!exists("subtitle")) subtitle = ''
dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
n = words(corridors)
eval terminal(450 * n + 100, 900, 12, 1.5)
set datafile separator ','
set datafile missing ''
set grid lc rgb c_grid
set yrange [0:1.02]
memories = "trace trace-slow memoryless frame-stack trace+norm trace-slow+norm gru32 gru64 gru128"
count = words(memories)
colour(i) = i == 1 ? c_trace : i == 2 ? c_trace2 : i == 3 ? c_memoryless : i == 4 ? c_frame_stack : \
            i == 5 ? c_trace_norm : i == 6 ? c_trace2_norm : i == 7 ? c_gru_small : i == 8 ? c_gru : c_gru_large
# Each memory's points of one corridor; another memory's or corridor's rows are NaN, so that
# gnuplot joins only a curve's own points.
pick(i, k, x) = (strcol(1) eq word(memories, i) && $2 == k) ? x : NaN
array present[count]
do for [i = 1:count] {
  present[i] = 0
  do for [f in files] {
    stats f using (strcol(1) eq word(memories, i) ? 1 : 0) nooutput name 'P'
    if (P_max > 0) { present[i] = 1 }
  }
}
set key autotitle columnhead
set multiplot layout 2, n title "PPO in the Minigrid T-maze:\nsuccess rate of the training episodes, mean over seeds".(subtitle eq '' ? '' : "\n".subtitle)
do for [row = 1:2] {
  do for [c = 1:n] {
    k = word(corridors, c) + 0
    set title sprintf("corridor %d", k)
    set xlabel (row == 1 ? "environment steps (millions)" : "CPU seconds a run (evaluation included)")
    set ylabel (c == 1 ? "success rate" : "")
    if (row == 2) { set logscale x } else { unset logscale x }
    if (c == n) { set key bottom right } else { unset key }
    plot for [f in files] for [i = 1:count] f using (pick(i, k, row == 1 ? $5 / 1e6 : $8)):7 \
           with linespoints pt 7 ps 0.5 lc rgb colour(i) notitle, \
         0.5 with lines dt dt_optimal lc rgb c_memoryless notitle, \
         for [i = 1:count] keyentry with linespoints pt 7 lc rgb colour(i) title (present[i] ? word(memories, i) : '')
  }
}
unset multiplot
