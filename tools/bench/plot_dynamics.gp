# plot_dynamics.gp — the figure of docs/benchmarks.md, "Featherstone layer", from the data
# tools/bench/bench_dynamics.c writes: our speed-up over Pinocchio 3.7 per algorithm and robot, and
# time per call against the number of bodies on chains and binary trees.
#   gnuplot -e "datadir='build/bench_dynamics'; imgdir='docs/images'" tools/bench/plot_dynamics.gp
# make bench-dynamics runs it when gnuplot is installed.
if (!exists("datadir")) datadir = 'build/bench_dynamics'
if (!exists("imgdir")) imgdir = 'docs/images'

set terminal pngcairo size 1300,520 font ",11"
set output imgdir.'/dynamics.png'
set multiplot layout 1,2

# ---- left: Pinocchio's time over ours (robots.dat: name, then ours pinocchio per robot)
set title "Speed-up over Pinocchio 3.7 (its µs / ours), free-flyer robots"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set yrange [0:3.6]
set ylabel "Pinocchio time / our time"
set xtics rotate by -30 left noenhanced
set key top left horizontal
plot datadir.'/robots.dat' u ($3 == $3 ? $3/$2 : 1/0):xtic(1) t "Solo-12" lc rgb "#1f77b4", \
     '' u ($5 == $5 ? $5/$4 : 1/0) t "Romeo" lc rgb "#ff7f0e", \
     '' u ($7 == $7 ? $7/$6 : 1/0) t "Robosimian" lc rgb "#2ca02c", \
     2 w l dt 2 lw 2 lc rgb "#555555" t "2x (goal)", \
     1 w l lw 1 lc rgb "#000000" notitle

# ---- right: chains and binary trees (chains.dat, trees.dat: bodies, then one column per
# algorithm; -1 not run)
unset style
set style data linespoints
set title "Revolute chains (solid) and binary trees (dashed): µs per call against bodies"
set logscale xy
set xrange [8:250]
set yrange [*:*]
set xtics (10, 20, 50, 100, 200) norotate
set xlabel "bodies"
set ylabel "µs per call"
set key bottom right
ok(x) = x > 0 ? x : 1/0
plot datadir.'/chains.dat' u 1:(ok($2)) w lp lw 2 t "fk", \
     '' u 1:(ok($4)) w lp lw 2 t "rnea", \
     '' u 1:(ok($6)) w lp lw 2 t "aba", \
     '' u 1:(ok($5)) w lp lw 2 lc rgb "#d62728" t "crba, chain (fills n x n)", \
     '' u 1:(ok($10)) w lp lw 2 t "rnea derivatives", \
     '' u 1:(ok($9)) w lp lw 2 lc rgb "#8c564b" t "ltdl, chain", \
     datadir.'/trees.dat' u 1:(ok($9)) w lp lw 2 dt 2 lc rgb "#8c564b" t "ltdl, tree", \
     '' u 1:(ok($5)) w lp lw 2 dt 2 lc rgb "#d62728" t "crba, tree", \
     '' u 1:(0.02 * $1) w l dt 2 lc rgb "#555555" t "slope 1"
unset multiplot
