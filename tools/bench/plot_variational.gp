# plot_variational.gp — the figures of docs/benchmarks.md, "Linear-time variational integrator",
# from the data tools/bench/bench_variational.c writes (figs. 2-4 of Lee et al., WAFR 2016).
#   gnuplot -e "datadir='build/bench_variational'; imgdir='docs/images'" tools/bench/plot_variational.gp
# make bench-variational runs it when gnuplot is installed.
if (!exists("datadir")) datadir = 'build/bench_variational'
if (!exists("imgdir")) imgdir = 'docs/images'

set terminal pngcairo size 1100,800 font ",11"
set grid
set key box opaque

# ---- fig. 2: energy of the 10-link pendulum under gravity
set output imgdir.'/variational_energy.png'
set multiplot layout 2,1 title "10-link pendulum under gravity, 1 ms steps: total energy (at mid-step)"
set xlabel "frame"
set ylabel "energy (J)"
set key bottom left
plot datadir.'/energy.dat' u 1:4 w l lw 2 lc rgb "#d62728" t "semi-implicit Euler (symplectic\\_euler)", \
     '' u 1:2 w l lw 2 lc rgb "#1f77b4" t "variational (DRNEA + RIQN)"
stats datadir.'/energy.dat' u 2 nooutput name "EV"
set ylabel "E - mean(E) (mJ)"
set key top left
plot datadir.'/energy.dat' u 1:(1000 * ($2 - EV_mean)) w l lw 1 lc rgb "#1f77b4" t "variational: deviation from its mean (oscillation, no trend)"
unset multiplot

# ---- fig. 3: time per step against DOF (the log panel with the SVI baseline of tools/bench/svi.c)
set output imgdir.'/variational_performance.png'
set multiplot layout 1,2 title "N-link roll pendulum, no gravity, 1 ms steps, tol 1e-9 x DOF N m s: time per step"
set xlabel "DOF"
set ylabel "time per step (µs)"
set key top left
plot datadir.'/performance.dat' u 1:3 w lp pt 7 lw 2 lc rgb "#d62728" t "DRNEA + Newton", \
     '' u 1:4 w lp pt 5 lw 2 lc rgb "#2ca02c" t "DRNEA + Broyden", \
     '' u 1:2 w lp pt 9 lw 2 lc rgb "#1f77b4" t "DRNEA + RIQN", \
     '' u 1:5 w lp pt 11 lw 2 lc rgb "#9467bd" t "DRNEA + tree Newton (ours)"
set logscale xy
set key top left
set xlabel "DOF (log)"
set ylabel "time (µs, log)"
set xrange [1.8:120]
set yrange [0.1:3e5]   # room above the curves for the key
plot datadir.'/performance.dat' u 1:3 w lp pt 7 lw 2 lc rgb "#d62728" t "DRNEA + Newton", \
     '' u 1:4 w lp pt 5 lw 2 lc rgb "#2ca02c" t "DRNEA + Broyden", \
     '' u 1:2 w lp pt 9 lw 2 lc rgb "#1f77b4" t "DRNEA + RIQN", \
     '' u 1:5 w lp pt 11 lw 2 lc rgb "#9467bd" t "DRNEA + tree Newton (ours)", \
     '' u 1:10 w lp pt 13 lw 1 dt 2 lc rgb "#1f77b4" t "one RIQN iteration (DRNEA + ABI)", \
     datadir.'/svi.dat' u 1:2 w lp pt 6 lw 2 lc rgb "#ff7f0e" t "SVI + Newton (Johnson and Murphey)", \
     '' u 1:3 w lp pt 8 lw 2 lc rgb "#8c564b" t "SVI + RIQN", \
     [10:100] 1.0 * x w l dt 3 lc rgb "black" t "slope 1", \
     [10:100] 0.15 * x**2 w l dt 4 lc rgb "gray" t "slope 2", \
     [10:100] 0.01 * x**3 w l dt 5 lc rgb "gray" t "slope 3"
unset logscale
unset xrange
unset yrange
unset multiplot

# ---- fig. 4: convergence on 50 links
set output imgdir.'/variational_convergence.png'
set multiplot layout 1,2 title "50 links under gravity, tol 1e-8 N m s"
set xlabel "iteration"
set ylabel "|f(q^{k+1})| (N m s)"
set logscale y
set format y "10^{%L}"
set key top right
plot datadir.'/convergence.dat' u 1:3 w lp pt 7 lw 2 lc rgb "#d62728" t "Newton", \
     '' u 1:2 w lp pt 9 lw 2 lc rgb "#1f77b4" t "RIQN"
unset logscale y
set format y "%g"
set xlabel "frame"
set ylabel "iterations per step"
set yrange [0:*]
set key top left
plot datadir.'/iterations.dat' u 1:3 w steps lw 2 lc rgb "#d62728" t "Newton", \
     '' u 1:2 w steps lw 2 lc rgb "#1f77b4" t "RIQN"
unset multiplot
