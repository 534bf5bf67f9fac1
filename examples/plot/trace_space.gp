# The paper's Figure 2 (Figure 6 for |Y| = 4), drawn from trace_space.cpp.
# Top: one panel per λ, the traces of all length-m histories projected onto the subspace of the
# paper's eq. (4), coloured
# by the newest observation, with the window centres marked. Bottom: box counts N(ε) and the fitted
# lines of the box-counting estimate, against d_λ of Lemma 4.4.
# Variables (gnuplot -e): csv (panel,lambda,observations,length,index,newest,c1,c2[,c3]),
# boxes (panel,lambda,observations,length,epsilon,count,fit,d_lambda,estimate), out (the PNG),
# lambdas, estimates, dimensions (space-separated, one per panel), observations (3 or 4), length (m).
if (!exists("csv")) csv = 'trace_space_out/trace_space.csv'
if (!exists("boxes")) boxes = 'trace_space_out/box_counting.csv'
if (!exists("out")) out = 'trace_space_out/trace_space.png'
if (!exists("lambdas")) lambdas = '0.3 0.5 0.7'
if (!exists("estimates")) estimates = ''
if (!exists("dimensions")) dimensions = ''
if (!exists("observations")) observations = '3'
if (!exists("length")) length = '7'

n = observations + 0
m = length + 0
panels = words(lambdas)
set datafile separator ','
colour(y) = y == 0 ? '#1b9e77' : y == 1 ? '#d95f02' : y == 2 ? '#7570b3' : '#e7298a'
lcolour(k) = k == 0 ? '#000000' : k == 1 ? '#0072b2' : k == 2 ? '#cc3311' : k == 3 ? '#009e73' : k == 4 ? '#ee7733' : '#aa3377'
sel(p, len, y) = (column(1) == p && column(4) == len && (y < 0 || column(6) == y))

dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
load dir_of(ARG0).'style.gp'
eval terminal(600 * (panels < 3 ? 3 : panels), 1150, 14, 1)
set multiplot title sprintf('Trace space of one-hot observations, |Y| = %d (paper %s): Z_λ^{%d} projected onto Σ_i z_i = 1 - λ^{%d} (equation 4)', n, n == 3 ? 'Figure 2' : 'Figure 6, Appendix A', m, m) font 'Sans,17'

top = 0.45
width = 1.0 / panels
# The simplex (the hull of Z_λ) in the coordinates of trace_space_basis (Helmert basis).
s2 = sqrt(2.0); s6 = sqrt(6.0); s12 = sqrt(12.0)
do for [p = 0:panels - 1] {
  lambda = word(lambdas, p + 1) + 0
  set origin p * width, top
  set size width, 0.93 - top
  set title sprintf('λ = %s', word(lambdas, p + 1)) font 'Sans,16'
  unset key
  if (n == 3) {
    set size ratio -1
    set xrange [-0.78:0.78]
    set yrange [-0.47:0.88]
    set xlabel 'c_1' offset 0, 0.5
    set ylabel 'c_2' offset 1.5, 0
    set tics out nomirror scale 0.5
    set xtics 0.5
    set ytics 0.5
    set object 1 polygon from -1/s2, -1/s6 to 1/s2, -1/s6 to 0, 2/s6 to -1/s2, -1/s6 \
      fillstyle empty border lc rgb '#bbbbbb' dt 2 behind
    plot for [y = 0:n - 1] csv using (sel(p, m, y) ? column(7) : NaN):8 skip 1 \
           with points pt 7 ps 0.3 lc rgb colour(y) notitle, \
         csv using (sel(p, 1, -1) ? column(7) : NaN):8 skip 1 with points pt 6 ps 2.2 lw 2 lc rgb 'black' notitle, \
         csv using (sel(p, 2, -1) ? column(7) : NaN):8 skip 1 with points pt 1 ps 1.3 lw 1.5 lc rgb 'black' notitle
  } else {
    set view 64, 32, 1.65
    set margins 0, 0, 0, 0
    set view equal xyz
    unset border
    unset tics
    unset xlabel
    unset ylabel
    unset zlabel
    set xrange [-0.75:0.75]
    set yrange [-0.75:0.75]
    set zrange [-0.35:0.9]
    # The edges of the tetrahedron: e_0, e_1, e_2 at the bottom, e_3 above their centre.
    ax = -1/s2; ay = -1/s6; az = -1/s12; bx = 1/s2; by = -1/s6; bz = -1/s12
    cx = 0; cy = 2/s6; cz = -1/s12; dx = 0; dy = 0; dz = 3/s12
    set arrow 1 from ax, ay, az to bx, by, bz nohead lc rgb '#bbbbbb' dt 2
    set arrow 2 from ax, ay, az to cx, cy, cz nohead lc rgb '#bbbbbb' dt 2
    set arrow 3 from bx, by, bz to cx, cy, cz nohead lc rgb '#bbbbbb' dt 2
    set arrow 4 from ax, ay, az to dx, dy, dz nohead lc rgb '#bbbbbb' dt 2
    set arrow 5 from bx, by, bz to dx, dy, dz nohead lc rgb '#bbbbbb' dt 2
    set arrow 6 from cx, cy, cz to dx, dy, dz nohead lc rgb '#bbbbbb' dt 2
    splot for [y = 0:n - 1] csv using (sel(p, m, y) ? column(7) : NaN):8:9 skip 1 \
            with points pt 7 ps 0.3 lc rgb colour(y) notitle, \
          csv using (sel(p, 1, -1) ? column(7) : NaN):8:9 skip 1 with points pt 6 ps 2.2 lw 2 lc rgb 'black' notitle, \
          csv using (sel(p, 2, -1) ? column(7) : NaN):8:9 skip 1 with points pt 1 ps 1.3 lw 1.5 lc rgb 'black' notitle
    unset arrow
  }
  unset object 1
}

# The legend of the panels, in a strip between the rows: labels with a sample point each.
reset
set origin 0.0, top - 0.065
set size 1.0, 0.07
unset border
unset tics
unset key
set margins 0, 0, 0, 0
set xrange [0:1]
set yrange [0:1]
y_legend = top - 0.03
x0 = n == 3 ? 0.14 : 0.08
dx = n == 3 ? 0.12 : 0.1
do for [y = 0:n - 1] {
  set label y + 1 sprintf('newest y_0 = %d', y) at screen x0 + dx * y, y_legend left offset 1.2, 0 \
    point pt 7 ps 1.5 lc rgb colour(y) font 'Sans,13'
}
set label 11 'length-1 window centre (1-λ) e_{y_0}' at screen x0 + dx * n + 0.02, y_legend left \
  offset 1.5, 0 point pt 6 ps 2.2 lw 2 lc rgb 'black' font 'Sans,13'
set label 12 'length-2 window centre z_λ(y_{-1}, y_0)' at screen x0 + dx * n + 0.25, y_legend left \
  offset 1.5, 0 point pt 1 ps 1.3 lw 1.5 lc rgb 'black' font 'Sans,13'
plot NaN notitle
unset label

# Bottom: N(ε) against 1/ε on log-log axes, with the least-squares lines.
reset
set datafile separator ','
set origin 0.1, 0.0
set size 0.8, top - 0.07
set logscale xy
set format y '10^{%T}'
set xlabel '1/ε (box side ε)'
set ylabel 'occupied boxes N(ε)'
set tics out nomirror
set grid lc rgb c_grid
set key inside top left reverse Left spacing 1.3 font 'Sans,12' box lc rgb '#cccccc' opaque
set title 'Box counting of Z_λ: slope of log N(ε) against log 1/ε vs. d_λ = log|Y| / log(1/λ), the Minkowski dimension of Lemma 4.4' font 'Sans,15'
estimate(p) = words(estimates) > p ? word(estimates, p + 1) + 0 : NaN
dimension(p) = words(dimensions) > p ? word(dimensions, p + 1) + 0 : NaN
plot for [p = 0:panels - 1] boxes using (column(1) == p ? 1 / column(5) : NaN):6 skip 1 \
       with points pt 7 ps 1.2 lc rgb lcolour(p) \
       title sprintf('λ = %s: slope %.3f, d_λ = %.3f, bound min(|Y|-1, d_λ) = %.3f', \
                     word(lambdas, p + 1), estimate(p), dimension(p), dimension(p) < n - 1 ? dimension(p) : n - 1), \
     for [p = 0:panels - 1] boxes using (column(1) == p ? 1 / column(5) : NaN):7 skip 1 \
       with lines lw 1.5 lc rgb lcolour(p) notitle
unset multiplot
