# The paper's Figure 5 (§6) from ppo_tmaze --figure's figure.csv: the success rate of PPO in the
# Minigrid T-maze against the corridor length k, for each memory (the best γ of each memory and k),
# averaged over the training episodes of a run (left) and in the final 100-episode evaluation
# (right); mean over seeds with 95% confidence intervals. When the file has normalised traces
# (memories named +norm), a second row shows them — memtrace's recipe — beside the frame stack, and
# every evaluation point is labelled with its seeds solved (evaluation >= 0.9) / seeds.
#   gnuplot -e "csv='figure.csv'; out='ppo_tmaze.png'; subtitle='5 seeds'" ppo_tmaze.gp
# Columns: 1 memory, 2 corridor, 3 discount, 4 seeds, 5 steps, 6 train_mean, 7 train_ci_low,
# 8 train_ci_high, 9 eval_mean, 10 eval_ci_low, 11 eval_ci_high, 12 solved, 13 half_solved,
# 14 collapsed.
dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
set datafile separator ','
memories = "trace trace-slow memoryless frame-stack trace+norm trace-slow+norm"
array present[6]
do for [i=1:6] {
  stats csv using (strcol(1) eq word(memories, i) ? 1 : 0) nooutput name 'P'
  present[i] = P_max > 0
}
# Row "official" (memories 1-4) if the file has any of the first three, row "normalised" (5, 6 and
# the frame stack) if it has any +norm memory; one row of the official kind if neither.
official_row = present[1] || present[2] || present[3] || !(present[5] || present[6])
norm_row = present[5] || present[6]
rows = official_row + norm_row
eval terminal(1200, rows == 2 ? 1100 : 640, 12, 1.5)
set datafile missing NaN  # each memory's points joined across the other memories' rows
set key autotitle columnhead
set grid lc rgb c_grid

# Success rates are in [0, 1]; a t interval of 5 seeds can reach past 1. Such a bar is clipped at
# the top edge and its end is marked there with its value.
ytop = 1.1
stats csv using 8 nooutput name 'TRAIN_HIGH'
stats csv using 11 nooutput name 'EVAL_HIGH'
row = 1
clipped(col) = column(col) > ytop && shown(row, index_of(strcol(1))) ? ytop : NaN
clip_note = (TRAIN_HIGH_max > ytop || EVAL_HIGH_max > ytop) ? "; ▲: a bar clipped at the top, labelled with its end" : ""

stats csv using 2 nooutput name 'K'
set logscale x 2
set xrange [K_min / 1.25 : K_max * 1.25]
set xtics K_min, 2, K_max
set yrange [0:ytop]
set ytics 0, 0.2, 1
set xlabel "corridor length k"
set multiplot title "Paper Figure 5 (§6): PPO in the Minigrid T-maze\n{/*0.8 ".subtitle.clip_note."}"

colour(i) = word(c_trace.' '.c_trace2.' '.c_memoryless.' '.c_frame_stack.' '.c_trace_norm.' '.c_trace2_norm, i)
at(i, col) = strcol(1) eq word(memories, i) ? column(col) : NaN
label(i) = i == 1 ? "traces λ = 0 and (k-1)/k" : i == 2 ? "trace λ = (k-1)/k" : i == 3 ? "memoryless (λ = 0)" : \
           i == 4 ? "frame stack of k+1 views" : i == 5 ? "traces λ = 0 and (k-1)/k, normalised" : "trace λ = (k-1)/k, normalised"
point(i) = word("7 5 6 9 7 5", i) + 0
# The memories of one k side by side (a few percent apart on the log axis), so that no bar hides another.
index_of(name) = name eq 'trace' ? 1 : name eq 'trace-slow' ? 2 : name eq 'memoryless' ? 3 : name eq 'frame-stack' ? 4 : name eq 'trace+norm' ? 5 : 6
slot(i) = i == 5 ? 1 : i == 6 ? 2 : i  # the second row's memories take the first row's places
# (clipped-bar labels of odd slots sit a little lower, so that two at one k do not overlap)
dodge(i) = column(2) * 2 ** ((slot(i) - 2.5) * 0.04)
clip_marks(col) = sprintf(", csv using (dodge(index_of(strcol(1)))):(clipped(%d)) with points pt 9 ps 1.2 lc rgb c_band_note notitle, '' using (dodge(index_of(strcol(1)))):(clipped(%d) - 0.05 * (slot(index_of(strcol(1))) %% 2)):(sprintf('%%.2f', column(%d))) with labels offset 0, -1.1 tc rgb c_band_note font ',10' notitle", col, col, col)
train_clipped = TRAIN_HIGH_max > ytop ? clip_marks(8) : ''
eval_clipped = EVAL_HIGH_max > ytop ? clip_marks(11) : ''
# The official row shows memories 1-4; the normalised row the normalised traces (5, 6) and the frame stack (4).
is_official(row) = official_row && row == 1
shown(row, i) = is_official(row) ? i <= 4 : (i == 4 || i >= 5)
solved_label(i) = strcol(1) eq word(memories, i) ? sprintf('%d/%d', column(12), column(4)) : ''
row_title(row) = is_official(row) ? "the official recipe" : "memtrace's recipe: traces with normalised features"

do for [row = 1:rows] {
  top = rows == 1 ? 0.86 : (row == 1 ? 0.90 : 0.45)
  bottom = rows == 1 ? 0.24 : (row == 1 ? 0.55 : 0.12)
  set tmargin at screen top; set bmargin at screen bottom
  set ylabel "success rate per training episode"
  set title (rows == 1 && official_row ? "during training" : "during training — ".row_title(row))
  set lmargin at screen 0.07; set rmargin at screen 0.48
  # One key, under the last row, for every memory in the file.
  if (row == rows) {
    set key at screen 0.5, screen (rows == 1 ? 0.07 : 0.04) center center maxrows (rows == 1 ? 2 : 3) width -4 samplen 2 box lc rgb '#bbbbbb'
  } else {
    unset key
  }
  plot 0.5 with lines dt dt_optimal lc rgb c_memoryless title (row == rows ? "0.5: the best memoryless success rate" : ''), \
       for [i=1:6] csv using (dodge(i)):(shown(row, i) ? at(i, 6) : NaN):(at(i, 7)):(at(i, 8)) with yerrorlines pt point(i) ps 0.8 lc rgb colour(i) notitle, \
       for [i=1:6] keyentry with yerrorlines pt point(i) ps 0.8 lc rgb colour(i) title (row == rows && present[i] ? label(i) : '') @train_clipped
  set ylabel "success rate, 100 evaluation episodes"
  set title "final evaluation (labels: seeds solved, evaluation ≥ 0.9)"
  set lmargin at screen 0.57; set rmargin at screen 0.98
  unset key
  plot 0.5 with lines dt dt_optimal lc rgb c_memoryless notitle, \
       for [i=1:6] csv using (dodge(i)):(shown(row, i) ? at(i, 9) : NaN):(at(i, 10)):(at(i, 11)) with yerrorlines pt point(i) ps 0.8 lc rgb colour(i) notitle @eval_clipped, \
       for [i=1:6] csv using (dodge(i)):(shown(row, i) ? at(i, 9) : NaN):(shown(row, i) ? solved_label(i) : '') with labels offset 0, 0.9 tc rgb colour(i) font ',9' notitle
}
unset multiplot
