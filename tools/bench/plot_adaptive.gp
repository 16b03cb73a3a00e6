# plot_adaptive.gp — the figures of docs/benchmarks.md, "Adaptive stepping and rigid impacts", from
# the data tools/bench/bench_adaptive.c writes (figs. 3-5 of Zapolsky and Drumwright 2015).
#   gnuplot -e "data='build/bench_adaptive'; images='docs/images'" tools/bench/plot_adaptive.gp
# make bench-adaptive runs it when gnuplot is installed.
if (!exists("data")) data = 'build/bench_adaptive'
if (!exists("images")) images = 'docs/images'

set terminal pngcairo size 900,600 font ",11"
set grid

# fig. 3: failure.dat: step (ms), steps run, 1 when it failed
set output images.'/adaptive_failure.png'
set title "Solo trot, rigid contact, fixed step: steps before the kinetic energy passes 1e7 J (5 s of trot)"
set xlabel "fixed step (ms)"
set ylabel "steps"
set logscale y
set key top right
plot data.'/failure.dat' using 1:($3 == 1 ? $2 : 1/0) with linespoints pt 7 lc rgb "#d62728" title "failed after", \
     data.'/failure.dat' using 1:($3 == 0 ? $2 : 1/0) with points pt 9 ps 1.5 lc rgb "#2ca02c" title "no failure in 5 s (all steps run)"
unset logscale y

# fig. 5: dissipation.dat: λ, steps run, 1 when it failed
set output images.'/adaptive_dissipation.png'
set title "Solo trot at a fixed 5 ms, v <- (1 - λ) v after each step: steps before failure"
set xlabel "dissipation λ"
set ylabel "steps"
plot data.'/dissipation.dat' using 1:($3 == 1 ? $2 : 1/0) with linespoints pt 7 lc rgb "#d62728" title "failed after", \
     data.'/dissipation.dat' using 1:($3 == 0 ? $2 : 1/0) with points pt 9 ps 1.5 lc rgb "#2ca02c" title "no failure in 5 s"

# fig. 4: adaptive_trot.dat: t, kinetic energy (J), relative error estimate (%), sub-steps, refused,
# over one gait cycle (0.25 s) of the walk at full speed (from 2 s) and the standing start
set output images.'/adaptive_cycle.png'
set title "Error-controlled trot (nominal 5 ms, relative limit 0.25 %): estimated local kinetic-energy error"
set xlabel "time (s)"
set ylabel "largest accepted |E' - E''| / E (%)"
set y2label "sub-steps per 5 ms"
set y2tics
set ytics nomirror
set key bottom center opaque box
plot [2:2.5] data.'/adaptive_trot.dat' using 1:3 with linespoints pt 7 ps 0.6 lc rgb "#1f77b4" title "relative error estimate (walking, two gait cycles)", \
     data.'/adaptive_trot.dat' using 1:4 axes x1y2 with steps lc rgb "#ff7f0e" title "sub-steps taken"
