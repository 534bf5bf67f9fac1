# Learning curves of ppo_pendulum: the mean return of the training episodes against environment
# steps, averaged over the seeds, one panel per observation (the velocity observed, hidden), one
# line per memory (normalised features solid, raw dashed); the dashed grey line is the uniformly
# random policy's return.
#   gnuplot -e "csv='ppo_pendulum/learning_curves.csv'; observations='full hidden'; random='-1200'; out='ppo_pendulum.png'; subtitle='...'" ppo_pendulum.gp
# Columns: 1 observation, 2 memory, 3 at_steps, 4 seeds_with_episodes, 5 mean_return (empty where
# no seed's bin saw an episode).
if (!exists("subtitle")) subtitle = ''
dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
if (!exists("observations")) observations = "full hidden"
n = words(observations)
eval terminal(650 * n + 100, 560, 12, 1.5)
set datafile separator ','
set datafile missing ''
set grid lc rgb c_grid
memories = "memoryless stack2 stack4 traces memoryless+norm stack2+norm stack4+norm traces+norm gru32 gru64 gru128 gru32+norm gru64+norm gru128+norm"
count = words(memories)
colour(i) = i > 8 ? ((i - 9) % 3 == 0 ? c_gru_small : (i - 9) % 3 == 1 ? c_gru : c_gru_large) : \
            (i - 1) % 4 == 0 ? c_memoryless : (i - 1) % 4 == 1 ? c_trace2_norm : (i - 1) % 4 == 2 ? c_frame_stack : c_trace
dash(i) = i <= 4 || (i >= 9 && i <= 11) ? 2 : 1
# Each memory's points of one observation; other rows are NaN, so gnuplot joins a curve's own points.
pick(i, o, x) = (strcol(1) eq word(observations, o) && strcol(2) eq word(memories, i)) ? x : NaN
array present[count]
do for [i = 1:count] {
  stats csv using (strcol(2) eq word(memories, i) ? 1 : 0) nooutput name 'P'
  present[i] = P_max > 0
}
set multiplot layout 1, n title "PPO with a Gaussian policy on the pendulum:\nmean return of the training episodes, mean over seeds".(subtitle eq '' ? '' : "\n".subtitle)
do for [o = 1:n] {
  set title (word(observations, o) eq "full" ? "velocity observed: (cos θ, sin θ, θ̇)" : "velocity hidden: (cos θ, sin θ)")
  set xlabel "environment steps (millions)"
  set ylabel (o == 1 ? "mean episode return" : "")
  if (o == 1) { set key bottom right } else { unset key }
  plot for [i = 1:count] csv using (pick(i, o, $3 / 1e6)):5 with linespoints pt 7 ps 0.5 dt dash(i) lc rgb colour(i) notitle, \
       (random + 0) with lines dt dt_optimal lc rgb c_reference notitle, \
       for [i = 1:count] keyentry with linespoints pt 7 dt dash(i) lc rgb colour(i) title (present[i] ? word(memories, i) : '')
}
unset multiplot
