# The learning curve of one ppo_tmaze run from its curve.csv: the success rate of the training
# episodes that ended between two points, against environment steps.
#   gnuplot -e "csv='curve.csv'; out='curve.png'; title='PPO, corridor 64, trace'; memory='trace'" ppo_tmaze_curve.gp
# Columns: 1 steps, 2 success (empty where no episode ended). memory (trace, trace+norm,
# trace-slow, trace-slow+norm, memoryless, frame-stack; optional) picks the memory's colour of Figure 5.
if (!exists("memory")) memory = 'trace'
dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
eval terminal(900, 520, 12, 1.5)
colour = memory eq 'trace-slow' ? c_trace2 : memory eq 'memoryless' ? c_memoryless : memory eq 'frame-stack' ? c_frame_stack : \
         memory eq 'trace+norm' ? c_trace_norm : memory eq 'trace-slow+norm' ? c_trace2_norm : c_trace
set datafile separator ','
set datafile missing ''
set grid lc rgb c_grid
set yrange [0:1.02]
set xlabel "environment steps (millions)"
set ylabel "success rate of the episodes that ended"
set key bottom right
set title title
plot 0.5 with lines dt dt_optimal lc rgb c_memoryless title "0.5: the best memoryless success rate", \
     csv using ($1/1e6):2 with linespoints pt 7 ps 0.6 lc rgb colour title "training episodes"
