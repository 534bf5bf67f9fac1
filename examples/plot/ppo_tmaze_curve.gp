# The learning curve of one ppo_tmaze run from its curve.csv: the success rate of the training
# episodes that ended between two points, against environment steps.
#   gnuplot -e "csv='curve.csv'; out='curve.png'; title='PPO, corridor 64, trace'" ppo_tmaze_curve.gp
# Columns: 1 steps, 2 success (empty where no episode ended).
set terminal pngcairo size 900,520 font "DejaVu Sans,12" linewidth 1.5
set output out
set datafile separator ','
set datafile missing ''
set grid lc rgb '#dddddd'
set yrange [0:1.02]
set xlabel "environment steps (millions)"
set ylabel "success rate of the episodes that ended"
set key bottom right
set title title
plot 0.5 with lines dt 2 lc rgb '#999999' title "0.5: the memoryless ceiling", \
     csv using ($1/1e6):2 with linespoints pt 7 ps 0.6 lc rgb '#1f77b4' title "training episodes"
