# The paper's Figure 3 (§5.2): two heat maps over the (p, q) grid of two_state_lambda.cpp.
# Variables (gnuplot -e): csv (p,q,state_estimate,lambda_star,min_lipschitz; p outer, q inner),
# out (the PNG), history (e.g. "1,1,1,0"), length (n), axis_max (the grid covers [0, axis_max]²).
if (!exists("csv")) csv = 'two_state_lambda_out/two_state_lambda.csv'
if (!exists("out")) out = 'two_state_lambda_out/two_state_lambda.png'
if (!exists("history")) history = '1,1,1,0'
if (!exists("length")) length = '4'
if (!exists("axis_max")) axis_max = '0.5'

dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
eval terminal(1500, 640, 15, 1)
set datafile separator ','

# Blue below 1/2, white at 1/2, red above: red is state 1 on the left and slow forgetting on the right.
set palette defined (0 '#2166ac', 0.25 '#92c5de', 0.5 '#f7f7f7', 0.75 '#f4a582', 1 '#b2182b')
set cbrange [0:1]
set cbtics 0.25
set xlabel 'p (switching probability)'
set ylabel 'q (observation error)'
set size ratio -1
set tics out nomirror
set key off
set xrange [0:axis_max + 0]
set yrange [0:axis_max + 0]

set multiplot layout 1,2 title "Paper Figure 3 (§5.2): the two-state HMM, switching with probability p, observation flipped with probability q\n{/*0.8 red: the newest observation is 0, yet state 1 is the more likely (left); forgetting slowly, λ* ≥ 1/2, is best (right)}"
set title sprintf('State estimate P(x_t = 1 | y = %s)', history)
set cblabel 'P(x_t = 1 | history)'
plot csv using 1:2:3 skip 1 with image

set title sprintf('λ* minimising the Lipschitz constant (length-%s histories)', length)
set cblabel 'λ*'
plot csv using 1:2:4 skip 1 with image
unset multiplot
